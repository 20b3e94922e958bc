// SqliteActionStore beyond the port contract: the dispatch record written with the admission,
// a schema that refuses rewriting history, persistence across reopen, and a compare-and-swap
// that holds across separate connections (the database decides, not an in-process mutex).
#include "pulse/adapters/storage/sqlite_action_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

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

// The queries of SqliteActionStore::ListPage, word for word: SQLite must read each view's
// partial index of migration 16 from the cursor on (a SEARCH), never scan the table and sort
// (INDEXED BY fails the prepare if the WHERE term stops matching the index's). The session
// list's page of one owner's chat sessions seeks sessions_by_owner the same way.
TEST_CASE("an action queue page is an index range of its view's partial index",
          "[adapters][storage]") {
  TempDir dir;
  auto db = MustOpen(dir.File("pulse.db"));
  SQLite::Database raw(dir.File("pulse.db"), SQLite::OPEN_READONLY);
  const auto plan = [&raw](const std::string& sql) {
    SQLite::Statement q(raw, "EXPLAIN QUERY PLAN " + sql);
    std::string out;
    while (q.executeStep()) {
      out += q.getColumn(3).getString() + "\n";
    }
    return out;
  };
  const std::string in_flight =
      "SELECT id FROM actions INDEXED BY actions_in_flight_page WHERE state IN ('planned', "
      "'pending_approval', 'approved', 'executing')";
  const std::string settled =
      "SELECT id FROM actions INDEXED BY actions_settled_page WHERE state IN ('rejected', "
      "'expired', 'completed', 'failed')";
  const std::string first_in_flight = plan(in_flight + " ORDER BY created_at_ns, id LIMIT ?3");
  const std::string next_in_flight =
      plan(in_flight + " AND (created_at_ns, id) > (?1, ?2) ORDER BY created_at_ns, id LIMIT ?3");
  const std::string first_settled = plan(settled + " ORDER BY updated_at_ns DESC, id LIMIT ?3");
  const std::string next_settled =
      plan(settled +
           " AND updated_at_ns <= ?1 AND (updated_at_ns < ?1 OR id > ?2) ORDER BY "
           "updated_at_ns DESC, id LIMIT ?3");
  INFO(first_in_flight << next_in_flight << first_settled << next_settled);
  CHECK(first_in_flight.find("actions_in_flight_page") != std::string::npos);
  CHECK(next_in_flight.find("SEARCH actions USING INDEX actions_in_flight_page") !=
        std::string::npos);
  CHECK(first_settled.find("actions_settled_page") != std::string::npos);
  CHECK(next_settled.find("SEARCH actions USING INDEX actions_settled_page") != std::string::npos);
  const std::string sessions = plan(
      "SELECT id, status, message_count, updated_at_ns, kind, owner_token_id FROM sessions "
      "WHERE 1 AND kind = ?1 AND owner_token_id = ?2 AND updated_at_ns <= ?4 AND "
      "(updated_at_ns < ?4 OR id > ?5) ORDER BY updated_at_ns DESC, id ASC LIMIT ?3");
  INFO(sessions);
  CHECK(sessions.find("SEARCH sessions USING INDEX sessions_by_owner") != std::string::npos);
  for (const std::string* p :
       {&first_in_flight, &next_in_flight, &first_settled, &next_settled, &sessions}) {
    CHECK(p->find("TEMP B-TREE") == std::string::npos);
  }
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
