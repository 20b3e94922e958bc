// PatrolStreamHub (adapters/server/patrol_stream.h) in isolation, with a fake clock: the bounds
// the end-to-end tests cannot reach cheaply (replay-buffer eviction, the ping frame, a slow
// subscriber) and the rule that a heartbeat finding write is not a change.
#include "pulse/adapters/server/patrol_stream.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/testing/fake_clock.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;

// Everything queued on `stream` now.
std::string Drain(http::SseStream& stream) {
  std::string all;
  std::string out;
  while (true) {
    out.clear();
    std::optional<http::SseStream::Pull> pull = stream.TryNext(out);
    if (!pull.has_value() || *pull != http::SseStream::Pull::kWrite) {
      return all;
    }
    all += out;
  }
}

// The `id:` values of the data frames in `text`, in order.
std::vector<std::uint64_t> Ids(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::size_t at = 0;
  while ((at = text.find("id: ", at)) != std::string::npos) {
    at += 4;
    out.push_back(std::stoull(text.substr(at, text.find('\n', at) - at)));
  }
  return out;
}

std::string Snapshot(const std::string& text) {
  const std::size_t at = text.find("data: {\"type\":\"snapshot\"");
  REQUIRE(at != std::string::npos);
  return text.substr(at + 6, text.find('\n', at) - at - 6);
}

core::Finding FindingAt(absl::Time at, core::LifecycleEventType type) {
  core::Finding f;
  f.id = "f-1";
  f.resource_id = "vm:101";
  f.title = "db-01 is out of memory";
  f.severity = core::Severity::kCritical;
  core::LifecycleEvent e;
  e.at = at;
  e.type = type;
  f.lifecycle.push_back(e);
  return f;
}

TEST_CASE("a Last-Event-ID that fell out of the bounded replay buffer gets a snapshot",
          "[server][patrol_stream]") {
  testing::FakeClock clock;
  PatrolStreamOptions options;
  options.replay_events = 4;
  PatrolStreamHub hub(clock, options);
  for (int i = 0; i < 10; ++i) {
    hub.OnPhase("patrol-1", core::kPatrolPhaseTriage);
  }
  REQUIRE(hub.last_seq() == 10);
  // 7..10 are kept: an id of 6 or later resumes, an older one cannot.
  std::shared_ptr<http::SseStream> resumed = hub.Subscribe(6);
  const std::string replay = Drain(*resumed);
  CHECK(replay.rfind(": connected\n\n", 0) == 0);
  CHECK(Ids(replay) == std::vector<std::uint64_t>{7, 8, 9, 10});
  CHECK(replay.find("snapshot") == std::string::npos);

  std::shared_ptr<http::SseStream> stale = hub.Subscribe(5);
  const std::string text = Drain(*stale);
  rapidjson::Document snapshot = *core::ParseJson(Snapshot(text));
  CHECK(core::GetString(snapshot, "resync_reason") == "stale_last_event_id");
  CHECK(*core::GetInt64(snapshot, "buffer_start_seq") == 7);
  CHECK(*core::GetInt64(snapshot, "buffer_end_seq") == 10);
  CHECK(Ids(text) == std::vector<std::uint64_t>{10});  // resume from here next time

  // Both get what comes next, live.
  hub.OnPhase("patrol-1", core::kPatrolPhaseWatch);
  CHECK(Ids(Drain(*resumed)) == std::vector<std::uint64_t>{11});
  CHECK(Ids(Drain(*stale)) == std::vector<std::uint64_t>{11});
}

TEST_CASE("the replay buffer is bounded in bytes too, and long tool text is cut",
          "[server][patrol_stream]") {
  testing::FakeClock clock;
  PatrolStreamOptions options;
  options.replay_bytes = 4096;
  options.max_text_bytes = 100;
  PatrolStreamHub hub(clock, options);
  const std::string big(5000, 'x');
  for (int i = 0; i < 50; ++i) {
    hub.OnModelEvent("patrol-1", core::LoopEvent{core::LoopEventType::kToolEnd,
                                                 R"({"id":"c1","name":"pulse_read","output":")" +
                                                     big + R"(","success":true})"});
  }
  std::shared_ptr<http::SseStream> from_start = hub.Subscribe(0);
  const std::string text = Drain(*from_start);
  CHECK(text.find("stale_last_event_id") != std::string::npos);         // 1 fell out
  CHECK(text.find("\"content_truncated\":true") == std::string::npos);  // a snapshot only
  std::shared_ptr<http::SseStream> recent = hub.Subscribe(49);
  const std::string last = Drain(*recent);
  CHECK(Ids(last) == std::vector<std::uint64_t>{50});
  CHECK(last.find("\"content_truncated\":true") != std::string::npos);
  CHECK(last.find(std::string(101, 'x')) == std::string::npos);
  CHECK(last.find(std::string(100, 'x')) != std::string::npos);
}

TEST_CASE("the ping after silence carries the time, and a subscriber that falls behind is cut off",
          "[server][patrol_stream]") {
  testing::FakeClock clock;
  PatrolStreamOptions options;
  options.subscriber_buffer = 3;
  PatrolStreamHub hub(clock, options);
  std::shared_ptr<http::SseStream> slow = hub.Subscribe(std::nullopt);
  CHECK(slow->HeartbeatFrame() ==
        ": ping " + std::to_string(absl::ToUnixSeconds(clock.Now())) + "\n\n");
  CHECK(slow->heartbeat_interval() == absl::Seconds(15));
  for (int i = 0; i < 5; ++i) {
    hub.OnPhase("patrol-1", core::kPatrolPhaseTriage);  // never drained
  }
  CHECK(slow->cancelled());
  CHECK(hub.subscribers() == 0);
  // It comes back with its last id and misses nothing still buffered.
  std::shared_ptr<http::SseStream> back = hub.Subscribe(0);
  CHECK(Ids(Drain(*back)) == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("a finding write is a change once: its heartbeat writes are not published again",
          "[server][patrol_stream]") {
  testing::FakeClock clock;
  PatrolStreamHub hub(clock);
  const absl::Time detected = clock.Now();
  hub.OnFindingWritten(FindingAt(detected, core::LifecycleEventType::kDetected), true);
  clock.Advance(absl::Seconds(5));
  hub.OnFindingWritten(FindingAt(detected, core::LifecycleEventType::kDetected), false);
  CHECK(hub.last_seq() == 1);
  clock.Advance(absl::Minutes(10));
  hub.OnFindingWritten(FindingAt(detected, core::LifecycleEventType::kDetected), false);
  CHECK(hub.last_seq() == 1);  // old: a heartbeat even once forgotten
  core::Finding resolved = FindingAt(clock.Now(), core::LifecycleEventType::kResolved);
  resolved.resolved_at = clock.Now();
  hub.OnFindingWritten(resolved, false);
  REQUIRE(hub.last_seq() == 2);
  std::shared_ptr<http::SseStream> s = hub.Subscribe(1);
  const std::string text = Drain(*s);
  CHECK(text.find(R"("type":"finding")") != std::string::npos);
  CHECK(text.find(R"("change":"resolved")") != std::string::npos);
  CHECK(text.find(R"("active":false)") != std::string::npos);
}

TEST_CASE(
    "a run's start and end come from its stored records, and a snapshot lists it while it "
    "runs",
    "[server][patrol_stream]") {
  testing::FakeClock clock;
  PatrolStreamHub hub(clock);
  core::PatrolRunRecord record;
  record.id = "patrol-7";
  record.trigger = core::PatrolTrigger::kManual;
  record.started_at = clock.Now();
  record.status = core::PatrolRunStatus::kRunning;
  hub.OnRunStored(record);
  hub.OnRunStored(record);  // stored again while running: still one start
  hub.OnPhase("patrol-7", core::kPatrolPhaseWatch);
  CHECK(hub.last_seq() == 2);
  {
    std::shared_ptr<http::SseStream> late = hub.Subscribe(std::nullopt);
    rapidjson::Document snapshot = *core::ParseJson(Snapshot(Drain(*late)));
    CHECK(core::GetString(snapshot, "resync_reason") == "late_joiner");
    const rapidjson::Value& running = snapshot["running"];
    REQUIRE(running.Size() == 1);
    CHECK(core::GetString(running[0], "run_id") == "patrol-7");
    CHECK(core::GetString(running[0], "phase") == "watch");
  }
  record.status = core::PatrolRunStatus::kError;
  record.error_summary = "model pass failed";
  record.completed_at = clock.Now();
  hub.OnRunStored(record);
  std::shared_ptr<http::SseStream> s = hub.Subscribe(2);
  const std::string text = Drain(*s);
  CHECK(text.find(R"("type":"complete")") != std::string::npos);
  CHECK(text.find(R"("status":"error")") != std::string::npos);
  CHECK(text.find(R"("error_summary":"model pass failed")") != std::string::npos);
  std::shared_ptr<http::SseStream> after = hub.Subscribe(std::nullopt);
  CHECK(Snapshot(Drain(*after)).find(R"("running":[])") != std::string::npos);
  hub.Close();
  CHECK(hub.Subscribe(std::nullopt) == nullptr);
}

}  // namespace
}  // namespace pulse::server
