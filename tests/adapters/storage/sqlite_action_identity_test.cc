// The action identity as columns (migration 8, docs/storage.md): every field and every enum
// value reads back exactly, edge values included; an identity over its bounds or not storable
// exactly is refused with nothing written; the schema refuses rewriting any identity column;
// and a tampered column reads as DataLoss instead of a different record.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "action_identity_rows.h"
#include "contracts/action_store_contract.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kMaxIdentityBytes;
using adapters::storage::SqliteDatabase;
using namespace action_store_contract;  // NOLINT: shared record builders

void SetParams(core::ActionRecord& r, const std::string& params) {
  r.request.params_json = params;
  r.plan.params_json = params;
}

// A record with every identity field set to something other than its default.
core::ActionRecord FullRecord(const std::string& suffix) {
  core::ActionRecord r = NewRecord(suffix, true, T0() + absl::Nanoseconds(1));
  SetParams(r, R"({"a":[1,-2.5e-7,true,null,{"z":"\u0001\n\"q\\"}],"b":"日本語 😀"})");
  r.request.reason = "why — ünïcödé 😀 'single' \"double\"\n\ttab";
  r.request.actor = {core::ActorKind::kService, "svc:deploy@ops", "Deploy bot ✓"};
  r.request.approval_posture = "control_level:controlled";
  core::ActionPlan& p = r.plan;
  p.allowed = false;
  p.approval_policy = core::ApprovalLevel::kMfa;
  p.approval_requirement = {core::ApprovalLevel::kDryRunOnly, 16, true};
  p.auto_authorization = core::AutoAuthorization::kElevated;
  p.risk = core::ActionRisk::kLow;
  p.predicted_blast_radius = {"vm:101", "", "node:pve1 \"quoted\" \\ back", "ストレージ"};
  p.rollback_available = false;
  p.message = "line 1\nline 2 — ✓";
  p.planned_at = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::min());
  p.expires_at = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::max());
  p.preflight.target = "vm:101";
  p.preflight.current_state = "running (ünïcödé)";
  p.preflight.intended_change = "Restart vm:101\r\n";
  p.preflight.dry_run_available = true;
  p.preflight.dry_run_summary = "would restart; \x01 control";
  p.preflight.safety_checks = {"a", "b\tc", "\xF0\x9F\x98\x80"};
  p.preflight.verification_steps = {"observe running", "[\"not\", \"a list\"]"};
  return r;
}

// Every identity text as EncodeIdentity counts it against kMaxIdentityBytes.
std::size_t IdentityBytes(const core::ActionRecord& r) {
  const core::ActionPlan& p = r.plan;
  std::size_t n = p.action_id.size() + r.request.request_id.size() + r.request.actor.id.size() +
                  r.request.reason.size() + r.request.resource_id.size() +
                  r.request.capability_name.size() + r.request.params_json.size() +
                  r.request.actor.name.size() + r.request.approval_posture.size() +
                  p.message.size() + p.resource_version.size() + p.policy_version.size() +
                  p.plan_hash.size() + p.preflight.target.size() +
                  p.preflight.current_state.size() + p.preflight.intended_change.size() +
                  p.preflight.dry_run_summary.size();
  for (const auto* list :
       {&p.predicted_blast_radius, &p.preflight.safety_checks, &p.preflight.verification_steps}) {
    for (const std::string& item : *list) {
      n += item.size();
    }
  }
  return n;
}

TEST_CASE("an action identity with every field set reads back exactly", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const core::ActionRecord full = FullRecord("full");

  // The empty and default edge: empty lists and texts, no posture, no name, every flag false.
  core::ActionRecord bare = NewRecord("bare", false);
  SetParams(bare, "{}");
  bare.plan.allowed = false;
  bare.plan.rollback_available = false;
  bare.plan.approval_requirement = {core::ApprovalLevel::kNone, 1, false};
  bare.plan.predicted_blast_radius = {};
  bare.plan.message = "";
  bare.plan.preflight = {};
  bare.plan.planned_at = absl::UnixEpoch();
  bare.plan.expires_at = absl::UnixEpoch();

  // Every value of every enum the identity holds, so each CHECK list matches the core's strings.
  const std::vector<core::ActorKind> actors = {core::ActorKind::kHuman, core::ActorKind::kAgent,
                                               core::ActorKind::kPolicy, core::ActorKind::kService};
  const std::vector<core::ApprovalLevel> levels = {
      core::ApprovalLevel::kNone, core::ApprovalLevel::kAdmin, core::ApprovalLevel::kMfa,
      core::ApprovalLevel::kDryRunOnly};
  const std::vector<core::AutoAuthorization> autos = {core::AutoAuthorization::kNever,
                                                      core::AutoAuthorization::kLowRisk,
                                                      core::AutoAuthorization::kElevated};
  const std::vector<core::ActionRisk> risks = {core::ActionRisk::kLow, core::ActionRisk::kMedium,
                                               core::ActionRisk::kHigh};
  std::vector<core::ActionRecord> records = {full, bare};
  for (std::size_t i = 0; i < 4; ++i) {
    core::ActionRecord r = NewRecord("enum" + std::to_string(i), i % 2 == 0);
    r.request.actor.kind = actors[i];
    r.plan.approval_policy = levels[i];
    r.plan.approval_requirement.floor = levels[3 - i];
    r.plan.auto_authorization = autos[i % autos.size()];
    r.plan.risk = risks[i % risks.size()];
    records.push_back(r);
  }
  {
    auto db = MustOpen(path);
    auto store = MustOpenActionStore(*db);
    for (const core::ActionRecord& r : records) {
      INFO(r.id());
      MustInsert(store, r);
      absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
      REQUIRE(got.ok());
      CHECK(*got == r);
    }
  }
  // From the file, through a fresh connection and the read pool.
  auto db = MustOpen(path);
  auto store = MustOpenActionStore(*db);
  for (const core::ActionRecord& r : records) {
    INFO(r.id());
    absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
    REQUIRE(got.ok());
    CHECK(*got == r);
  }
  // The params are kept as given, not re-encoded.
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("SELECT params_json FROM action_identities WHERE action_id = 'act_full'")
            .getString() == full.request.params_json);
}

TEST_CASE("an identity at its bounds is stored, one byte more is refused and nothing is written",
          "[adapters][storage]") {
  auto db = MustOpen(":memory:");
  auto store = MustOpenActionStore(*db);
  auto refused = [&](const core::ActionRecord& r) {
    absl::StatusOr<core::ActionInsertOutcome> out = store->InsertIfAbsent(r, InitialEvents(r));
    INFO(out.status().ToString());
    CHECK(absl::IsInvalidArgument(out.status()));
    CHECK(absl::IsNotFound(store->Get(r.id()).status()));
  };

  core::ActionRecord at_bounds = NewRecord(std::string(124, 'm'), false);  // "act_" + 124
  REQUIRE(at_bounds.id().size() == core::kMaxActionIdBytes);
  at_bounds.request.request_id = at_bounds.plan.request_id = std::string(128, 'r');
  at_bounds.request.actor.id = std::string(128, 'a');
  at_bounds.request.reason = std::string(core::kMaxActionTextBytes, 'w');
  at_bounds.plan.approval_requirement.quorum = 1;
  at_bounds.plan.predicted_blast_radius.assign(300, "node:pve");
  at_bounds.plan.message = "";
  at_bounds.plan.message = std::string(kMaxIdentityBytes - IdentityBytes(at_bounds), 'x');
  REQUIRE(IdentityBytes(at_bounds) == kMaxIdentityBytes);
  MustInsert(store, at_bounds);
  absl::StatusOr<core::ActionRecord> got = store->Get(at_bounds.id());
  REQUIRE(got.ok());
  CHECK(*got == at_bounds);

  core::ActionRecord over = NewRecord("over", false);
  over.plan.message = "";
  over.plan.message = std::string(kMaxIdentityBytes - IdentityBytes(over) + 1, 'x');
  refused(over);
  core::ActionRecord long_reason = NewRecord("reason", false);
  long_reason.request.reason = std::string(core::kMaxActionTextBytes + 1, 'w');
  refused(long_reason);
  core::ActionRecord long_actor = NewRecord("actor", false);
  long_actor.request.actor.id = std::string(core::kMaxActionIdBytes + 1, 'a');
  refused(long_actor);
  for (int quorum : {0, 17, -1}) {
    core::ActionRecord r = NewRecord("quorum" + std::to_string(quorum + 1), false);
    r.plan.approval_requirement.quorum = quorum;
    refused(r);
  }
  const std::string nul("a\0b", 3);
  const std::string bad_utf8 = "\xC3\x28";
  for (const std::string& text : {nul, bad_utf8}) {
    core::ActionRecord list = NewRecord("list", false);
    list.plan.preflight.verification_steps.push_back(text);
    refused(list);
    core::ActionRecord posture = NewRecord("posture", false);
    posture.request.approval_posture = text;
    refused(posture);
    core::ActionRecord params = NewRecord("params", false);
    SetParams(params, "{\"k\":\"" + text + "\"}");
    refused(params);
  }
  core::ActionRecord sub_ns = NewRecord("subns", false);
  sub_ns.plan.expires_at += absl::Nanoseconds(0.25);
  refused(sub_ns);
  core::ActionRecord far = NewRecord("far", false);
  far.plan.expires_at = absl::FromUnixSeconds(std::numeric_limits<std::int64_t>::max() / 1000);
  refused(far);
  auto listed = store->ListByState({core::ActionState::kPlanned}, 100);
  REQUIRE(listed.ok());
  CHECK(listed->size() == 1);
}

TEST_CASE("the schema refuses an UPDATE of every identity column", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const core::ActionRecord r = FullRecord("immutable");
  {
    auto db = MustOpen(path);
    auto store = MustOpenActionStore(*db);
    MustInsert(store, r);
  }
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  auto columns = [&](const std::string& table) {
    std::vector<std::string> names;
    SQLite::Statement q(raw, "SELECT name FROM pragma_table_info(?)");
    q.bind(1, table);
    while (q.executeStep()) {
      names.push_back(q.getColumn(0).getString());
    }
    return names;
  };
  // A new column of `actions` must be classified here: identity (immutable) or mutable.
  const std::set<std::string> mutable_columns = {"state", "decision_revision", "updated_at_ns"};
  const std::set<std::string> actions_identity = {
      "id", "request_id", "resource_id", "capability_name", "plan_hash", "created_at_ns"};
  for (const std::string& column : columns("actions")) {
    INFO(column);
    CHECK((mutable_columns.count(column) + actions_identity.count(column)) == 1);
  }
  for (const std::string& column : actions_identity) {
    INFO(column);
    CHECK_THROWS_AS(raw.exec("UPDATE actions SET " + column + " = " + column), SQLite::Exception);
  }
  const std::vector<std::string> identity = columns("action_identities");
  CHECK(identity.size() == 29);
  for (const std::string& column : identity) {
    INFO(column);
    CHECK_THROWS_AS(raw.exec("UPDATE action_identities SET " + column + " = " + column),
                    SQLite::Exception);
  }
  CHECK_THROWS_AS(raw.exec("DELETE FROM action_identities"), SQLite::Exception);
  auto db = MustOpen(path);
  auto store = MustOpenActionStore(*db);
  absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
  REQUIRE(got.ok());
  CHECK(*got == r);
}

TEST_CASE("a tampered identity column reads as DataLoss, never as a different record",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const core::ActionRecord r = FullRecord("tamper");
  {
    auto db = MustOpen(path);
    auto store = MustOpenActionStore(*db);
    MustInsert(store, r);
  }
  {
    // What a hand edit or a damaged file could leave: the triggers and CHECKs out of the way.
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("DROP TRIGGER action_identities_are_immutable");
    raw.exec("DROP TRIGGER actions_identity_is_immutable");
  }
  const std::vector<std::pair<std::string, std::string>> tampers = {
      {"action_identities", "actor_kind = 'robot'"},
      {"action_identities", "approval_policy = 'root'"},
      {"action_identities", "approval_floor = ''"},
      {"action_identities", "auto_authorization = 'always'"},
      {"action_identities", "risk = 'extreme'"},
      {"action_identities", "allowed = 2"},
      {"action_identities", "requires_approval = 'yes'"},
      {"action_identities", "preflight_dry_run_available = -1"},
      {"action_identities", "approval_quorum = 0"},
      {"action_identities", "approval_quorum = 17"},
      {"action_identities", "planned_at_ns = 'soon'"},
      {"action_identities", "expires_at_ns = 1.5"},
      {"action_identities", "predicted_blast_radius = 'vm:101'"},
      {"action_identities", "predicted_blast_radius = '{\"a\":\"b\"}'"},
      {"action_identities", "preflight_safety_checks = '[1]'"},
      {"action_identities", "preflight_safety_checks = '[[\"nested\"]]'"},
      {"action_identities", "preflight_verification_steps = '[\"a\\u0000b\"]'"},
      {"action_identities", "preflight_verification_steps = '[\"a\"] trailing'"},
      {"action_identities", "preflight_verification_steps = '[\"\\ud800\"]'"},
      {"actions", "created_at_ns = 'yesterday'"},
  };
  for (const auto& [table, assignment] : tampers) {
    INFO(assignment);
    const std::string column = assignment.substr(0, assignment.find(' '));
    const std::string key = table == "actions" ? "id" : "action_id";
    std::string original;
    {
      SQLite::Database raw(path, SQLite::OPEN_READWRITE);
      original = raw.execAndGet("SELECT quote(" + column + ") FROM " + table).getString();
      raw.exec("PRAGMA ignore_check_constraints = ON");
      REQUIRE(raw.exec("UPDATE " + table + " SET " + assignment + " WHERE " + key + " = '" +
                       r.id() + "'") == 1);
    }
    {
      auto db = MustOpen(path);
      auto store = MustOpenActionStore(*db);
      absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
      INFO(got.status().ToString());
      CHECK(absl::IsDataLoss(got.status()));
      CHECK(absl::IsDataLoss(store->ListByState({r.state}, 10).status()));
    }
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("UPDATE " + table + " SET " + column + " = " + original);
  }
  {
    auto db = MustOpen(path);
    auto store = MustOpenActionStore(*db);
    absl::StatusOr<core::ActionRecord> restored = store->Get(r.id());
    REQUIRE(restored.ok());
    CHECK(*restored == r);
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("DROP TRIGGER action_identities_never_deleted");
    raw.exec("DELETE FROM action_identities");
  }
  auto db = MustOpen(path);
  auto store = MustOpenActionStore(*db);
  absl::StatusOr<core::ActionRecord> orphan = store->Get(r.id());
  CHECK(absl::IsDataLoss(orphan.status()));
  CHECK(orphan.status().message().find("no identity") != absl::string_view::npos);
}

}  // namespace
}  // namespace pulse::testing::storage
