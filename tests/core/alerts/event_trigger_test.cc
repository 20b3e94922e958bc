// Event-triggered Patrol (core/alerts/event_trigger.h): which fleet changes start a run, the
// window that coalesces a burst into one run, the per-resource cooldown, the hourly limit, and
// the ledger that says what became of every change and why.
#include "pulse/core/alerts/event_trigger.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/testing/fake_clock.h"

namespace pulse::core {
namespace {

FleetChange Change(std::uint64_t seq, const std::string& resource, const std::string& kind,
                   const std::string& detail = "") {
  FleetChange c;
  c.seq = seq;
  c.resource_id = resource;
  c.kind = kind;
  c.detail = detail;
  return c;
}

struct TriggerWorld {
  testing::FakeClock clock;
  std::vector<PatrolScope> runs;
  absl::Status next = absl::OkStatus();
  PatrolEventTrigger trigger;

  explicit TriggerWorld(EventTriggerOptions options = {})
      : trigger(
            clock,
            [this](const PatrolScope& scope) -> absl::StatusOr<std::string> {
              if (!next.ok()) {
                return next;
              }
              runs.push_back(scope);
              return absl::StrCat("run-", runs.size());
            },
            options) {}

  std::vector<std::string> Decisions() const {
    std::vector<std::string> out;
    for (const TriggerLedgerEntry& e : trigger.Ledger()) {
      out.push_back(absl::StrCat(e.resource_id, " ", e.change, " ", e.decision));
    }
    return out;
  }
};

TEST_CASE("only changes that say something broke, about one resource, start investigations",
          "[core][alerts][events]") {
  CHECK(IsTriggeringChange(Change(1, "app-container:web", "die", "exit code 1")));
  CHECK(IsTriggeringChange(Change(1, "app-container:web", "OOM")));
  CHECK(IsTriggeringChange(Change(1, "app-container:web", "health_status", "unhealthy")));
  CHECK(IsTriggeringChange(Change(1, "vm:101", "task_failed", "vzdump: ERROR")));
  CHECK(IsTriggeringChange(Change(1, "vm:101", "stop")));
  CHECK_FALSE(IsTriggeringChange(Change(1, "app-container:web", "health_status", "healthy")));
  CHECK_FALSE(IsTriggeringChange(Change(1, "app-container:web", "start")));
  CHECK_FALSE(IsTriggeringChange(Change(1, "app-container:web", "create")));
  CHECK_FALSE(IsTriggeringChange(Change(1, "vm:101", "task", "qmstart: OK")));
  CHECK_FALSE(IsTriggeringChange(Change(1, "", "die")));
  CHECK_FALSE(IsTriggeringChange(Change(1, "", "events_lost")));
}

TEST_CASE("a burst of changes within the window starts one scoped run", "[core][alerts][events]") {
  TriggerWorld w;
  w.trigger.Offer(Change(1, "app-container:web", "die", "exit code 1"));
  w.trigger.Offer(Change(2, "app-container:web", "start"));
  w.clock.Advance(absl::Seconds(10));
  w.trigger.Offer(Change(3, "app-container:api", "oom"));
  w.trigger.Offer(Change(4, "app-container:web", "die", "exit code 1"));
  CHECK(w.trigger.Tick().empty());  // the window (30 s) is still open
  CHECK(w.runs.empty());
  w.clock.Advance(absl::Seconds(20));
  CHECK(w.trigger.Tick() == "run-1");
  REQUIRE(w.runs.size() == 1);
  CHECK(w.runs[0].resource_ids ==
        std::vector<std::string>{"app-container:web", "app-container:api"});
  CHECK(w.Decisions() ==
        std::vector<std::string>{"app-container:web start ignored", "app-container:web die started",
                                 "app-container:api oom started", "app-container:web die started"});
  const std::vector<TriggerLedgerEntry> ledger = w.trigger.Ledger();
  CHECK(ledger[1].run_id == "run-1");
  CHECK(ledger[1].reason.find("2 resource(s)") != std::string::npos);
  CHECK(ledger[0].reason.find("start") != std::string::npos);
  CHECK(w.trigger.Tick().empty());  // nothing pending
  CHECK(w.trigger.RunsInLastHour() == 1);
}

TEST_CASE("a flapping container is held to one run per cooldown, and the hour to its limit",
          "[core][alerts][events]") {
  EventTriggerOptions options;
  options.window = absl::Seconds(5);
  options.cooldown = absl::Minutes(10);
  options.max_runs_per_hour = 3;
  TriggerWorld w(options);
  // A container dying every 10 s for 30 minutes: 180 changes.
  std::uint64_t seq = 0;
  for (int i = 0; i < 180; ++i) {
    w.trigger.Offer(Change(++seq, "app-container:flap", "die", "exit code 1"));
    w.clock.Advance(absl::Seconds(5));
    w.trigger.Tick();
    w.clock.Advance(absl::Seconds(5));
    w.trigger.Tick();
  }
  // One run per 10-minute cooldown: at 0, 10 and 20 minutes.
  CHECK(w.runs.size() == 3);
  int cooldown = 0;
  int started = 0;
  for (const TriggerLedgerEntry& e : w.trigger.Ledger()) {
    cooldown += e.decision == "cooldown" ? 1 : 0;
    started += e.decision == "started" ? 1 : 0;
    if (e.decision == "cooldown") {
      CHECK(e.reason.find("cooldown lasts until") != std::string::npos);
    }
  }
  CHECK(w.trigger.Ledger().size() == 180);  // every change decided, none lost
  CHECK(started == 3);
  CHECK(cooldown == 177);
  // Other resources still get their runs, until the hourly limit: the fourth run is refused.
  w.trigger.Offer(Change(++seq, "app-container:other", "oom"));
  w.clock.Advance(absl::Seconds(6));
  CHECK(w.trigger.Tick().empty());
  CHECK(w.runs.size() == 3);
  CHECK(w.trigger.Ledger().back().decision == "rate_limited");
  CHECK(w.trigger.Ledger().back().reason.find("3 event-triggered runs") != std::string::npos);
  // An hour after the first run, there is room again.
  w.clock.Advance(absl::Minutes(31));
  w.trigger.Offer(Change(++seq, "app-container:other", "oom"));
  w.clock.Advance(absl::Seconds(6));
  CHECK(w.trigger.Tick() == "run-4");
}

TEST_CASE("a run that is already going or cannot start is in the ledger and cools nothing",
          "[core][alerts][events]") {
  TriggerWorld w;
  w.next = absl::FailedPreconditionError("Patrol run p-1 of this scope is running");
  w.trigger.Offer(Change(1, "vm:101", "task_failed", "vzdump: ERROR: backup failed"));
  w.clock.Advance(absl::Seconds(31));
  CHECK(w.trigger.Tick().empty());
  CHECK(w.trigger.Ledger().back().decision == "already_running");
  CHECK(w.trigger.Ledger().back().reason.find("p-1") != std::string::npos);
  w.next = absl::UnavailableError("the server is shutting down");
  w.trigger.Offer(Change(2, "vm:101", "task_failed"));
  w.clock.Advance(absl::Seconds(31));
  CHECK(w.trigger.Tick().empty());
  CHECK(w.trigger.Ledger().back().decision == "failed");
  w.next = absl::OkStatus();
  w.trigger.Offer(Change(3, "vm:101", "task_failed"));
  w.clock.Advance(absl::Seconds(31));
  CHECK(w.trigger.Tick() == "run-1");  // not cooled by the attempts that started nothing
  CHECK(w.trigger.RunsInLastHour() == 1);
}

}  // namespace
}  // namespace pulse::core
