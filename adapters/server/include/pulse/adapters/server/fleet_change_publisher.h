// FleetChangePublisher: carries the fleet's change feed (Fleet::ChangesSince; docs/fleet.md,
// "Changes") to the agent event stream. A thread reads the changes after its cursor every
// `interval` and publishes each as a fleet.change event (docs/server.md "Events, metrics,
// health") with the payload {seq, resourceId, change, detail?, source?, occurredAt}. A gap in the
// fleet's sequence (the fleet kept fewer changes than arrived between two polls) is published
// as a fleet.change of change "changes_lost" naming how many were missed, so a subscriber knows
// to re-read the fleet. A fleet without a feed (demo, local) publishes nothing.
// Thread-safety: Start, Stop and PollOnce from any thread (PollOnce calls are serialized).
// Borrows the fleet and the bus, which must outlive it (Stop joins the thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/server/agent_event_bus.h"
#include "pulse/core/alerts/event_trigger.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::server {

inline constexpr std::string_view kEventFleetChange = "fleet.change";

class FleetChangePublisher {
 public:
  FleetChangePublisher(core::Fleet& fleet, AgentEventBus& bus,
                       absl::Duration interval = absl::Milliseconds(500));
  ~FleetChangePublisher();  // Stop()
  FleetChangePublisher(const FleetChangePublisher&) = delete;
  FleetChangePublisher& operator=(const FleetChangePublisher&) = delete;

  // Event-triggered Patrol (core/alerts/event_trigger.h): every change published is offered to
  // `trigger`, and each poll ticks it. Borrowed; set before Start (nullptr: none).
  void SetTrigger(core::PatrolEventTrigger* trigger) { trigger_ = trigger; }
  // Starts the thread (a second call does nothing).
  void Start();
  // Ends the thread within one interval and joins it. Idempotent.
  void Stop();
  // One poll now, what the thread does every interval: the number of events published.
  std::size_t PollOnce();

  // {seq, resourceId, change, detail?, source?, occurredAt} (pure; exposed for tests).
  static std::string PayloadJson(const core::FleetChange& change);

 private:
  void Loop();

  core::Fleet& fleet_;
  AgentEventBus& bus_;
  core::PatrolEventTrigger* trigger_ = nullptr;
  const absl::Duration interval_;
  absl::Mutex poll_mu_;
  std::uint64_t cursor_ ABSL_GUARDED_BY(poll_mu_) = 0;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace pulse::server
