// SqliteActionStore beyond the port contract: the dispatch record written with the admission,
// a schema that refuses rewriting history, persistence across reopen, and a compare-and-swap
// that holds across separate connections (the database decides, not an in-process mutex).
#include "pulse/adapters/storage/sqlite_action_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "contracts/action_store_contract.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::SqliteActionStore;
using adapters::storage::SqliteDatabase;
using namespace action_store_contract;  // NOLINT: shared record builders

const absl::Time kT1 = T0() + absl::Seconds(10) + absl::Nanoseconds(3);

TEST_CASE("entering executing writes exactly one dispatch record in the same commit",
          "[adapters][storage]") {
  auto db = MustOpen(":memory:");
  auto store = MustOpenActionStore(*db);
  const core::ActionRecord r = NewRecord("disp", false);
  MustInsert(store, r);
  auto none = store->ListDispatches(r.id());
  REQUIRE(none.ok());
  CHECK(none->empty());
  const core::ActionRecord running = MustMove(store, Move(r, core::ActionState::kExecuting, kT1));
  core::ActionTransition done = Move(running, core::ActionState::kCompleted, kT1);
  done.result = Result(core::ExecutionStatus::kSucceeded, kT1);
  MustMove(store, done);
  auto dispatches = store->ListDispatches(r.id());
  REQUIRE(dispatches.ok());
  REQUIRE(dispatches->size() == 1);
  CHECK(dispatches->front().attempt_id == r.id() + ".dispatch.1");
  // The store records the very attempt id the action service sends to the fleet.
  CHECK(dispatches->front().attempt_id == core::DispatchAttemptId(r.id()));
  CHECK(dispatches->front().admitted_at == kT1);
  CHECK(absl::IsNotFound(store->ListDispatches("act_unknown").status()));
}

TEST_CASE("the schema refuses rewriting action history or the audit trail", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  auto store = MustOpenActionStore(*db);
  const core::ActionRecord r = NewRecord("hist", false);
  MustInsert(store, r);
  const core::ActionRecord running = MustMove(store, Move(r, core::ActionState::kExecuting, kT1));
  core::ActionTransition done = Move(running, core::ActionState::kCompleted, kT1);
  done.result = Result(core::ExecutionStatus::kSucceeded, kT1);
  const core::ActionRecord completed = MustMove(store, done);

  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  const std::vector<std::string> forbidden = {
      "UPDATE action_events SET message = 'rewritten'",
      "DELETE FROM action_events",
      "UPDATE actions SET plan_hash = 'sha256:forged'",
      "UPDATE action_identities SET params_json = '{}'",
      "DELETE FROM action_identities",
      "DELETE FROM actions",
      "UPDATE action_results SET execution_status = 'failed'",
      "DELETE FROM action_results",
      "UPDATE action_dispatches SET attempt_id = 'x'",
      "DELETE FROM action_dispatches",
      "INSERT INTO action_dispatches (action_id, attempt_id, admitted_at_ns) VALUES ('" + r.id() +
          "', 'second', 0)",
      "INSERT INTO action_events (action_id, sequence, at_ns, state, kind, message) VALUES ('" +
          r.id() + "', 2, 0, 'failed', 'transition', 'duplicate sequence')",
      "INSERT INTO action_events (action_id, sequence, at_ns, state, kind, message) VALUES "
      "('act_missing', 1, 0, 'planned', 'transition', 'orphan')",
      "INSERT INTO audit_log (at_ns, category, event, subject_id, resource_id, actor_kind, "
      "actor_id, code, message, details_json) VALUES (0, 'c', 'e', '', '', '', '', '', '', '{}')",
  };
  for (std::size_t i = 0; i < forbidden.size(); ++i) {
    INFO(forbidden[i]);
    if (i + 1 == forbidden.size()) {
      // Appending to the audit log is allowed; rewriting it is not.
      CHECK_NOTHROW(raw.exec(forbidden[i]));
      CHECK_THROWS_AS(raw.exec("UPDATE audit_log SET message = 'rewritten'"), SQLite::Exception);
      CHECK_THROWS_AS(raw.exec("DELETE FROM audit_log"), SQLite::Exception);
      continue;
    }
    raw.exec("PRAGMA foreign_keys = ON");
    CHECK_THROWS_AS(raw.exec(forbidden[i]), SQLite::Exception);
  }
  RequireUnchanged(store, completed, 3);
}

TEST_CASE("records and events survive closing and reopening the file", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const core::ActionRecord r = NewRecord("keep", true);
  core::ActionRecord decided;
  std::vector<core::ActionLifecycleEvent> events;
  {
    auto db = MustOpen(path);
    auto store = MustOpenActionStore(*db);
    MustInsert(store, r);
    decided = MustMove(store, Decide(r, Human("alice"), core::DecisionOutcome::kApproved,
                                     core::ActionState::kApproved, kT1));
    auto listed = store->ListEvents(r.id());
    REQUIRE(listed.ok());
    events = *listed;
  }
  auto db = MustOpen(path);
  auto store = MustOpenActionStore(*db);
  auto got = store->Get(r.id());
  REQUIRE(got.ok());
  CHECK(*got == decided);
  auto listed = store->ListEvents(r.id());
  REQUIRE(listed.ok());
  CHECK(*listed == events);
}

TEST_CASE("a transition races across separate connections: exactly one wins",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  constexpr int kConnections = 8;
  std::vector<std::unique_ptr<SqliteDatabase>> dbs;
  std::vector<std::unique_ptr<SqliteActionStore>> stores;
  for (int i = 0; i < kConnections; ++i) {
    dbs.push_back(MustOpen(path));
    stores.push_back(MustOpenActionStore(*dbs.back()));
  }
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const core::ActionRecord r = NewRecord("conn" + std::to_string(round), false);
    MustInsert(stores.front(), r);
    std::atomic<int> wins{0};
    std::atomic<int> conflicts{0};
    std::atomic<int> others{0};
    std::latch start(kConnections);
    std::vector<std::thread> threads;
    for (int i = 0; i < kConnections; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        auto out = stores[static_cast<std::size_t>(i)]->Transition(
            Move(r, core::ActionState::kExecuting, kT1));
        if (out.ok()) {
          ++wins;
        } else if (core::GetActionCasConflict(out.status()).has_value()) {
          ++conflicts;
        } else {
          ++others;
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    CHECK(wins.load() == 1);
    CHECK(conflicts.load() == kConnections - 1);
    CHECK(others.load() == 0);
    CHECK(EventCount(stores.back(), r.id()) == 2);
    auto dispatches = stores.back()->ListDispatches(r.id());
    REQUIRE(dispatches.ok());
    CHECK(dispatches->size() == 1);
  }
}

TEST_CASE("a decision computed from a stale read on another connection loses",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db_a = MustOpen(path);
  auto db_b = MustOpen(path);
  auto a = MustOpenActionStore(*db_a);
  auto b = MustOpenActionStore(*db_b);
  const core::ActionRecord r = NewRecord("stale", true);
  MustInsert(a, r);
  auto seen_by_a = a->Get(r.id());
  REQUIRE(seen_by_a.ok());
  MustMove(b, Decide(r, Human("bob"), core::DecisionOutcome::kRejected,
                     core::ActionState::kRejected, kT1));
  auto lost = a->Transition(Decide(*seen_by_a, Human("alice"), core::DecisionOutcome::kApproved,
                                   core::ActionState::kApproved, kT1));
  std::optional<core::ActionCasConflict> conflict = core::GetActionCasConflict(lost.status());
  REQUIRE(conflict.has_value());
  CHECK(conflict->current_state == core::ActionState::kRejected);
  CHECK(conflict->current_decision_revision == 1);
  CHECK_FALSE(conflict->identity_mismatch);
}

}  // namespace
}  // namespace pulse::testing::storage
