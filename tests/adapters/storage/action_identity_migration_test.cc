// Migration 8 on a file release 7 wrote: the database is built here by running migrations 1..7
// and inserting actions as release 7's SqliteActionStore did (the identity as
// core::ActionRecordToJson in actions.identity_json). Opening it with this code converts every
// identity to columns, and each action loads as the same record, keeps its events and moves on;
// a row that does not convert exactly reads as DataLoss with its JSON kept for an operator, and
// the database still opens.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "contracts/action_store_contract.h"
#include "migrations.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/core/actions/action_json.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::Migration;
using adapters::storage::SqliteActionStore;
using namespace action_store_contract;  // NOLINT: shared record builders

// An empty database at schema version 7, migrated the way Open did in release 7.
void CreateRelease7(SQLite::Database& raw) {
  for (const Migration& m : adapters::storage::Migrations()) {
    if (m.version > 7) {
      break;
    }
    SQLite::Transaction tx(raw);
    raw.exec(m.sql);
    SQLite::Statement record(raw,
                             "INSERT INTO schema_version (version, description) VALUES (?, ?)");
    record.bind(1, m.version);
    record.bind(2, m.description);
    record.exec();
    tx.commit();
  }
}

// Release 7's InsertIfAbsent of a new record with its initial events, `identity` standing for
// core::ActionRecordToJson(r) (or a tampered text).
void InsertAsRelease7(SQLite::Database& raw, const core::ActionRecord& r,
                      const std::string& identity) {
  SQLite::Statement insert(
      raw,
      "INSERT INTO actions (id, request_id, resource_id, capability_name, plan_hash, "
      "created_at_ns, identity_json, state, decision_revision, updated_at_ns) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)");
  insert.bind(1, r.id());
  insert.bind(2, r.request.request_id);
  insert.bind(3, r.plan.resource_id);
  insert.bind(4, r.plan.capability_name);
  insert.bind(5, r.plan.plan_hash);
  insert.bind(6, static_cast<std::int64_t>(absl::ToUnixNanos(r.created_at)));
  insert.bind(7, identity);
  insert.bind(8, std::string(core::ToString(r.state)));
  insert.bind(9, static_cast<std::int64_t>(absl::ToUnixNanos(r.updated_at)));
  insert.exec();
  std::int64_t sequence = 1;
  for (const core::ActionLifecycleEvent& e : InitialEvents(r)) {
    SQLite::Statement event(raw,
                            "INSERT INTO action_events (action_id, sequence, at_ns, state, kind, "
                            "message) VALUES (?, ?, ?, ?, 'transition', ?)");
    event.bind(1, r.id());
    event.bind(2, static_cast<std::int64_t>(sequence++));
    event.bind(3, static_cast<std::int64_t>(absl::ToUnixNanos(e.at)));
    event.bind(4, std::string(core::ToString(e.state)));
    event.bind(5, e.message);
    event.exec();
  }
}

// Release 7 stored a record only when its JSON decoded back to exactly the record.
std::string Release7Identity(const core::ActionRecord& r) {
  const std::string json = core::ActionRecordToJson(r);
  absl::StatusOr<core::ActionRecord> back = core::ParseActionRecordJson(json);
  INFO(r.id() << ": " << back.status().ToString());
  REQUIRE(back.ok());
  REQUIRE(*back == r);
  return json;
}

std::vector<core::ActionRecord> ConvertibleRecords() {
  std::vector<core::ActionRecord> records = {NewRecord("planned", false),
                                             NewRecord("pending", true)};
  core::ActionRecord full = NewRecord("full", true, T0() + absl::Nanoseconds(123456789));
  const std::string params =
      R"({"a":[1,-2.5e-7,1.7976931348623157e308,true,null,{"z":"\u0001\n\"q\\/"}],)"
      R"("b":"日本語 😀","c":{},"d":[],"e":-9223372036854775808})";
  full.request.params_json = full.plan.params_json = params;
  full.request.reason = "why — ünïcödé 😀 'single' \"double\" tab";
  full.request.actor = {core::ActorKind::kHuman, "alice@example", "Alice ✓"};
  full.request.approval_posture = "control_level:controlled";
  full.plan.allowed = false;
  full.plan.approval_policy = core::ApprovalLevel::kMfa;
  full.plan.approval_requirement = {core::ApprovalLevel::kDryRunOnly, 16, true};
  full.plan.auto_authorization = core::AutoAuthorization::kElevated;
  full.plan.risk = core::ActionRisk::kLow;
  full.plan.predicted_blast_radius = {"vm:101", "", "node:pve1 \"q\" \\ b", "ストレージ"};
  full.plan.message = "";
  full.plan.planned_at = absl::UnixEpoch() + absl::Nanoseconds(1);
  full.plan.expires_at = absl::FromUnixNanos(9'223'372'035'999'999'999);  // 2262-04-11
  full.plan.preflight = {"vm:101", "running", "Restart", true, "sum", {}, {"x", "y z"}};
  records.push_back(full);
  core::ActionRecord whole_seconds =
      NewRecord("whole", false, absl::FromUnixSeconds(1'800'000'000));
  whole_seconds.plan.expires_at = absl::FromUnixSeconds(1'800'000'300);
  records.push_back(whole_seconds);
  return records;
}

TEST_CASE("actions written by release 7 load as the same records after migration 8",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const std::vector<core::ActionRecord> records = ConvertibleRecords();
  // Stored by release 7 but not convertible exactly, or tampered with since.
  core::ActionRecord sub_ns = NewRecord("subns", false);
  sub_ns.plan.planned_at += absl::Nanoseconds(0.25);
  core::ActionRecord far = NewRecord("far", false);
  far.plan.expires_at = absl::FromUnixSeconds(10'000'000'000);  // 2286
  core::ActionRecord tampered = NewRecord("tampered", false);
  core::ActionRecord garbage = NewRecord("garbage", false);
  core::ActionRecord renamed = NewRecord("renamed", false);
  std::string renamed_json = Release7Identity(renamed);
  renamed_json.replace(renamed_json.find("\"risk\""), 6, "\"riskLevel\"");
  const std::vector<std::pair<core::ActionRecord, std::string>> unconvertible = {
      {sub_ns, Release7Identity(sub_ns)},
      {far, Release7Identity(far)},
      {tampered, R"({"id":"act_tampered"})"},
      {garbage, "not json at all"},
      {renamed, renamed_json},
  };
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    CreateRelease7(raw);
    for (const core::ActionRecord& r : records) {
      InsertAsRelease7(raw, r, Release7Identity(r));
    }
    for (const auto& [r, json] : unconvertible) {
      InsertAsRelease7(raw, r, json);
    }
  }

  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  auto store = *SqliteActionStore::Open(*db);
  for (const core::ActionRecord& r : records) {
    INFO(r.id());
    absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
    REQUIRE(got.ok());
    CHECK(*got == r);
    absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events = store->ListEvents(r.id());
    REQUIRE(events.ok());
    CHECK(events->size() == InitialEvents(r).size());
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    CHECK(raw.execAndGet("SELECT COUNT(*) FROM pragma_table_info('actions') "
                         "WHERE name = 'identity_json'")
              .getInt() == 0);
    for (const auto& [r, json] : unconvertible) {
      INFO(r.id());
      CHECK(absl::IsDataLoss(store->Get(r.id()).status()));
      SQLite::Statement kept(raw,
                             "SELECT identity_json FROM unconverted_action_identities "
                             "WHERE action_id = ?");
      kept.bind(1, r.id());
      REQUIRE(kept.executeStep());
      CHECK(kept.getColumn(0).getString() == json);
    }
    CHECK(raw.execAndGet("SELECT COUNT(*) FROM unconverted_action_identities").getInt() ==
          static_cast<int>(unconvertible.size()));
  }

  // A migrated action moves on under the new code and keeps its identity.
  const core::ActionRecord& pending = records[1];
  const absl::Time t1 = T0() + absl::Seconds(3);
  const core::ActionRecord approved =
      MustMove(store, Decide(pending, Human("bob"), core::DecisionOutcome::kApproved,
                             core::ActionState::kApproved, t1));
  const core::ActionRecord running =
      MustMove(store, Move(approved, core::ActionState::kExecuting, t1));
  CHECK(running.plan == pending.plan);
  CHECK(running.request == pending.request);
  CHECK(EventCount(store, pending.id()) == 4);

  // Reopening does not migrate again and changes nothing.
  store.reset();
  db.reset();
  auto again = MustOpen(path);
  auto reopened = *SqliteActionStore::Open(*again);
  absl::StatusOr<core::ActionRecord> got = reopened->Get(pending.id());
  REQUIRE(got.ok());
  CHECK(*got == running);
  absl::StatusOr<core::ActionRecord> full = reopened->Get(records[2].id());
  REQUIRE(full.ok());
  CHECK(*full == records[2]);
}

TEST_CASE("a release 7 database without actions migrates to an empty identity table",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    CreateRelease7(raw);
  }
  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  CHECK(db->CheckIntegrity().ok());
  auto store = *SqliteActionStore::Open(*db);
  const core::ActionRecord r = NewRecord("after", true);
  MustInsert(store, r);
  absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
  REQUIRE(got.ok());
  CHECK(*got == r);
}

}  // namespace
}  // namespace pulse::testing::storage
