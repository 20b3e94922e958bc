// The governed-action lifecycle (ActionService) over the SQLite stores, raced by 8 threads:
// every decision and every execution has exactly one winner, and nothing is dispatched twice.
#include <atomic>
#include <catch2/catch.hpp>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/actions/action_test_support.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_audit_log.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/core/actions/action_service.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using namespace testing::actions;  // NOLINT: shared action fixtures

constexpr int kThreads = 8;
constexpr int kActions = 12;

// ActionService wired to the SQLite stores of one file database and the fake fleet.
struct SqliteHarness {
  SqliteHarness()
      : db(MustOpen(dir.File("pulse.db"))),
        store(*adapters::storage::SqliteActionStore::Open(*db)),
        operator_state(*adapters::storage::SqliteOperatorStateStore::Open(*db)),
        audit(*adapters::storage::SqliteAuditLog::Open(*db)),
        service(*store, fleet, *operator_state, *audit, clock) {
    fleet.PutResource(Node(), {});
    fleet.PutResource(Vm101(), VmCatalogue());
    fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
  }

  core::ActionRecord Planned(int i) {
    auto out = service.Plan(Request("restart", R"({"mode":"graceful"})", Agent("assistant"),
                                    "vm:101", "req-race-" + std::to_string(i)));
    REQUIRE(out.ok());
    REQUIRE_FALSE(out->refused());
    REQUIRE(out->value().record.state == core::ActionState::kPendingApproval);
    return out->value().record;
  }

  TempDir dir;
  std::unique_ptr<adapters::storage::SqliteDatabase> db;
  std::unique_ptr<adapters::storage::SqliteActionStore> store;
  std::unique_ptr<adapters::storage::SqliteOperatorStateStore> operator_state;
  std::unique_ptr<adapters::storage::SqliteAuditLog> audit;
  FakeClock clock;
  FakeFleet fleet;
  core::ActionService service;
};

core::ActionRecord StoredRecordIn(adapters::storage::SqliteActionStore& store,
                                  const std::string& id) {
  auto record = store.Get(id);
  REQUIRE(record.ok());
  return *record;
}

// Runs body(thread_index) on kThreads threads released together.
template <class Body>
void Race(Body body) {
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
}

TEST_CASE("8 threads deciding the same actions: exactly one decision per action",
          "[adapters][storage][race]") {
  SqliteHarness h;
  std::vector<core::ActionRecord> planned;
  for (int i = 0; i < kActions; ++i) {
    planned.push_back(h.Planned(i));
  }
  std::vector<std::atomic<int>> winners(kActions);
  std::atomic<int> errors{0};
  Race([&](int t) {
    for (int i = 0; i < kActions; ++i) {
      // Half the deciders approve, half reject; each is a different human.
      const core::DecisionOutcome outcome =
          t % 2 == 0 ? core::DecisionOutcome::kApproved : core::DecisionOutcome::kRejected;
      auto out = h.service.Decide(Decision(planned[static_cast<std::size_t>(i)], outcome,
                                           Human("human-" + std::to_string(t))));
      if (!out.ok()) {
        ++errors;
      } else if (!out->refused() && !out->value().replayed) {
        ++winners[static_cast<std::size_t>(i)];
      }
    }
  });
  CHECK(errors.load() == 0);
  for (int i = 0; i < kActions; ++i) {
    const core::ActionRecord stored =
        StoredRecordIn(*h.store, planned[static_cast<std::size_t>(i)].id());
    INFO(stored.id());
    CHECK(winners[static_cast<std::size_t>(i)].load() == 1);
    CHECK(stored.approvals.size() == 1);
    CHECK(stored.decision_revision == 1);
    CHECK((stored.state == core::ActionState::kApproved ||
           stored.state == core::ActionState::kRejected));
  }
}

TEST_CASE("8 threads executing the same approved actions: each is dispatched exactly once",
          "[adapters][storage][race]") {
  SqliteHarness h;
  std::vector<core::ActionRecord> approved;
  for (int i = 0; i < kActions; ++i) {
    const core::ActionRecord planned = h.Planned(i);
    auto out = h.service.Decide(Approve(planned, Human("alice")));
    REQUIRE(out.ok());
    REQUIRE_FALSE(out->refused());
    approved.push_back(out->value().record);
  }
  std::vector<std::atomic<int>> dispatched(kActions);
  std::atomic<int> errors{0};
  Race([&](int t) {
    for (int i = 0; i < kActions; ++i) {
      auto out = h.service.Execute(
          Execution(approved[static_cast<std::size_t>(i)], Human("op-" + std::to_string(t))));
      if (!out.ok()) {
        ++errors;
      } else if (!out->refused() && out->value().dispatched) {
        ++dispatched[static_cast<std::size_t>(i)];
      }
    }
  });
  CHECK(errors.load() == 0);
  CHECK(h.fleet.dispatch_calls() == kActions);
  for (int i = 0; i < kActions; ++i) {
    const std::string& id = approved[static_cast<std::size_t>(i)].id();
    INFO(id);
    CHECK(dispatched[static_cast<std::size_t>(i)].load() == 1);
    CHECK(StoredRecordIn(*h.store, id).state == core::ActionState::kCompleted);
    auto records = h.store->ListDispatches(id);
    REQUIRE(records.ok());
    CHECK(records->size() == 1);
  }
}

}  // namespace
}  // namespace pulse::testing::storage
