// Races between callers. The core never spawns threads; these tests do, to prove that the CAS
// store is the only synchronization the lifecycle needs.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "action_test_support.h"

namespace pulse::core {
namespace {

using namespace testing::actions;  // NOLINT: test fixtures

struct Tally {
  std::atomic<int> dispatched{0};
  std::atomic<int> replayed{0};
  std::atomic<int> already_executing{0};
  std::atomic<int> other{0};

  void Count(const absl::StatusOr<Refusable<ExecuteOutcome>>& out) {
    if (!out.ok()) {
      ++other;
    } else if (out->refused()) {
      if (out->refusal().code == AgentErrorCode::kActionAlreadyExecuting) {
        ++already_executing;
      } else {
        ++other;
      }
    } else if (out->value().dispatched) {
      ++dispatched;
    } else if (out->value().replayed) {
      ++replayed;
    } else {
      ++other;
    }
  }
};

TEST_CASE("two threads executing the same action dispatch it exactly once", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  // Hold the winner inside Dispatch until the loser has been answered, so the two calls
  // really overlap.
  absl::Notification in_dispatch;
  absl::Notification release;
  h.fleet.SetDispatchHook([&](const DispatchRequest&) {
    in_dispatch.Notify();
    release.WaitForNotification();
  });
  Tally tally;
  std::thread winner([&] { tally.Count(h.service.Execute(Execution(approved, Human("alice")))); });
  in_dispatch.WaitForNotification();
  std::thread loser(
      [&] { tally.Count(h.service.Execute(Execution(approved, Agent("assistant")))); });
  loser.join();
  release.Notify();
  winner.join();
  CHECK(tally.dispatched.load() == 1);
  CHECK(tally.already_executing.load() == 1);
  CHECK(tally.other.load() == 0);
  CHECK(h.fleet.dispatch_calls() == 1);
  CHECK(StoredRecord(h, approved.id()).state == ActionState::kCompleted);
}

TEST_CASE("losing the admission compare-and-swap is action_already_executing without dispatch",
          "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  // Another process admits the same action between this caller's gates and its CAS.
  h.store.SetBeforeTransition([&](const ActionTransition& t) {
    if (t.new_state == ActionState::kExecuting) {
      h.store.SetBeforeTransition(nullptr);
      REQUIRE(h.store.Transition(t).ok());
    }
  });
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(approved, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionAlreadyExecuting);
  REQUIRE(r.record.has_value());
  CHECK(r.record->state == ActionState::kExecuting);
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("many unsynchronized executes of many actions dispatch each exactly once",
          "[core][actions]") {
  Harness h;
  constexpr int kActions = 25;
  constexpr int kThreads = 4;
  std::vector<ActionRecord> approved;
  for (int i = 0; i < kActions; ++i) {
    const ActionRecord planned = MustPlan(
        h, Request("restart", "{}", Agent("assistant"), "vm:101", "req-" + std::to_string(i)));
    approved.push_back(MustDecide(h, Approve(planned, Human("alice"))));
  }
  Tally tally;
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (!go.load()) {
      }
      for (const ActionRecord& r : approved) {
        tally.Count(h.service.Execute(Execution(r, Human("alice"))));
      }
    });
  }
  go.store(true);
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(tally.dispatched.load() == kActions);
  CHECK(tally.dispatched.load() + tally.replayed.load() + tally.already_executing.load() ==
        kActions * kThreads);
  CHECK(tally.other.load() == 0);
  CHECK(h.fleet.dispatch_calls() == kActions);
  CHECK(h.fleet.executions() == kActions);
  for (const ActionRecord& r : approved) {
    CHECK(StoredRecord(h, r.id()).state == ActionState::kCompleted);
  }
}

TEST_CASE("concurrent approvals by distinct humans each count once", "[core][actions]") {
  ActionPolicyOptions three;
  three.approval_quorum = 3;
  Harness h(three);
  const ActionRecord planned = MustPlan(h, Request("restart", "{}", Agent("assistant")));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (const char* who : {"alice", "bob", "carol"}) {
    threads.emplace_back([&, who] {
      absl::StatusOr<Refusable<DecideOutcome>> out = h.service.Decide(Approve(planned, Human(who)));
      if (out.ok() && !out->refused()) {
        ++ok;
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(ok.load() == 3);
  const ActionRecord stored = StoredRecord(h, planned.id());
  CHECK(stored.state == ActionState::kApproved);
  CHECK(stored.decision_revision == 3);
  CHECK(stored.approvals.size() == 3);
}

TEST_CASE("an execute racing an expiry either dispatches or expires, never both",
          "[core][actions]") {
  for (int i = 0; i < 20; ++i) {
    Harness h;
    const ActionRecord approved = ApprovedRestart(h);
    h.clock.Advance(absl::Minutes(5) - absl::Milliseconds(1));
    std::thread sweeper([&] {
      h.clock.Advance(absl::Milliseconds(1));
      h.service.SweepExpired(10).IgnoreError();  // the outcome is asserted on the record below
    });
    absl::StatusOr<Refusable<ExecuteOutcome>> out =
        h.service.Execute(Execution(approved, Human("alice")));
    sweeper.join();
    REQUIRE(out.ok());
    const ActionRecord stored = StoredRecord(h, approved.id());
    if (h.fleet.dispatch_calls() == 1) {
      CHECK(stored.state == ActionState::kCompleted);
    } else {
      CHECK(h.fleet.dispatch_calls() == 0);
      CHECK(stored.state == ActionState::kExpired);
    }
  }
}

}  // namespace
}  // namespace pulse::core
