#include "pulse/adapters/server/fleet_change_publisher.h"

#include <string>
#include <vector>

#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::server {

FleetChangePublisher::FleetChangePublisher(core::Fleet& fleet, AgentEventBus& bus,
                                           absl::Duration interval)
    : fleet_(fleet), bus_(bus), interval_(interval) {}

FleetChangePublisher::~FleetChangePublisher() { Stop(); }

void FleetChangePublisher::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) {
    return;
  }
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
}

void FleetChangePublisher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void FleetChangePublisher::Loop() {
  while (true) {
    PollOnce();
    if (trigger_ != nullptr) {
      (void)trigger_->Tick();  // the ledger says what it started, or why not
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval_)) {
      return;
    }
  }
}

std::string FleetChangePublisher::PayloadJson(const core::FleetChange& change) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("seq", change.seq);
  w.Member(core::agent_wire::kResourceId, change.resource_id);
  w.Member("change", change.kind);
  w.MemberIfNotEmpty("detail", change.detail);
  w.MemberIfNotEmpty("source", change.source);
  w.TimeMember("occurredAt", change.at);
  w.EndObject();
  return w.Take();
}

std::size_t FleetChangePublisher::PollOnce() {
  absl::MutexLock lock(&poll_mu_);
  std::size_t published = 0;
  // A few batches per poll drain a burst; the rest waits for the next poll.
  for (int round = 0; round < 4; ++round) {
    const std::vector<core::FleetChange> changes =
        fleet_.ChangesSince(cursor_, core::kFleetMaxChanges);
    for (const core::FleetChange& change : changes) {
      if (change.seq <= cursor_) {
        continue;  // never published twice, whatever the fleet answers
      }
      if (change.seq > cursor_ + 1) {
        // The fleet dropped changes this publisher never saw.
        core::FleetChange lost;
        lost.seq = change.seq - 1;
        lost.kind = "changes_lost";
        lost.detail = std::to_string(change.seq - cursor_ - 1) + " changes missed";
        lost.at = change.at;
        const std::string payload = PayloadJson(lost);
        bus_.Publish(kEventFleetChange, payload, payload);
        ++published;
      }
      const std::string payload = PayloadJson(change);
      bus_.Publish(kEventFleetChange, payload, payload);
      if (trigger_ != nullptr) {
        trigger_->Offer(change);
      }
      ++published;
      cursor_ = change.seq;
    }
    if (changes.size() < core::kFleetMaxChanges) {
      break;
    }
  }
  return published;
}

}  // namespace pulse::server
