// Migration 9 on a file release 8 wrote: the database is built by running migrations 1..8 and
// inserting findings as release 8's SqliteFindingStore did (no order columns). Opening it with
// this code fills severity_key, detected_key and is_resolved from each finding's JSON, so the
// paged list reads the old findings in the documented order, and later Puts keep them current.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contracts/finding_page_contract.h"
#include "contracts/finding_store_contract.h"
#include "migrations.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/core/findings/finding_json.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::Migration;
using adapters::storage::SqliteFindingStore;
using contracts::kContractT0;

void CreateRelease8(SQLite::Database& raw) {
  for (const Migration& m : adapters::storage::Migrations()) {
    if (m.version > 8) {
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

// Release 8's Put of a new finding.
void InsertAsRelease8(SQLite::Database& raw, const core::Finding& f) {
  SQLite::Statement insert(raw,
                           "INSERT INTO findings (id, version, resource_id, category, is_open, "
                           "snoozed_until_ns, record_json, resource_name, may_be_storage) "
                           "VALUES (?, 1, ?, 'performance', ?, NULL, ?, ?, 0)");
  insert.bind(1, f.id);
  insert.bind(2, f.resource_id);
  insert.bind(3, f.resolved_at.has_value() ? 0 : 1);
  insert.bind(4, core::FindingToJson(f));
  insert.bind(5, f.resource_name);
  insert.exec();
}

core::Finding Old(const std::string& id, core::Severity severity, absl::Time detected) {
  core::Finding f = contracts::SimpleFinding(id, "vm:101", core::Category::kPerformance);
  f.severity = severity;
  f.detected_at = detected;
  return f;
}

TEST_CASE("a release 8 database gets the findings order columns from each finding's JSON",
          "[adapters][storage][findings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    CreateRelease8(raw);
    InsertAsRelease8(raw, Old("warn-old", core::Severity::kWarning, kContractT0 - absl::Hours(5)));
    // sub-second detection times keep their nanoseconds through the SQL conversion
    InsertAsRelease8(raw, Old("crit-a", core::Severity::kCritical,
                              kContractT0 - absl::Hours(1) + absl::Nanoseconds(123456789)));
    InsertAsRelease8(raw, Old("crit-b", core::Severity::kCritical,
                              kContractT0 - absl::Hours(1) + absl::Nanoseconds(123456790)));
    InsertAsRelease8(raw, Old("watch", core::Severity::kWatch, kContractT0));
    core::Finding resolved = Old("resolved", core::Severity::kWarning, kContractT0);
    resolved.resolved_at = kContractT0;
    InsertAsRelease8(raw, resolved);
  }
  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  CHECK(db->CheckIntegrity().ok());
  auto store = *SqliteFindingStore::Open(*db);

  core::FindingPageQuery q;
  q.now = kContractT0 + absl::Hours(1);
  q.limit = 10;
  CHECK(contracts::Ids(*store->ListPage(q)) ==
        std::vector<std::string>{"crit-b", "crit-a", "warn-old"});
  q.include_resolved = true;
  CHECK(contracts::Ids(*store->ListPage(q)) ==
        std::vector<std::string>{"crit-b", "crit-a", "resolved", "warn-old"});
  q.include_resolved = false;
  q.min_severity = core::Severity::kInfo;
  CHECK(contracts::Ids(*store->ListPage(q)) ==
        std::vector<std::string>{"crit-b", "crit-a", "warn-old", "watch"});

  // a later Put of a migrated finding moves it in the order
  absl::StatusOr<core::StoredFinding> got = store->Get("warn-old");
  REQUIRE(got.ok());
  got->finding.severity = core::Severity::kCritical;
  got->finding.detected_at = kContractT0;
  REQUIRE(store->Put(got->finding, got->version).ok());
  q.min_severity = core::Severity::kWarning;
  CHECK(contracts::Ids(*store->ListPage(q)) ==
        std::vector<std::string>{"warn-old", "crit-b", "crit-a"});
  q.limit = 1;
  q.after = core::PagePositionOf(store->Get("warn-old")->finding);
  CHECK(contracts::Ids(*store->ListPage(q)) == std::vector<std::string>{"crit-b"});
}

TEST_CASE("a release 14 database gets the status count columns from each finding's JSON",
          "[adapters][storage][findings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const absl::Time since = kContractT0 - absl::Hours(24);
  {
    auto db = MustOpen(path);
    auto store = *SqliteFindingStore::Open(*db);
    core::Finding seen = Old("seen", core::Severity::kWarning, kContractT0 - absl::Hours(30));
    seen.last_seen_at = since + absl::Nanoseconds(123456789);  // nanoseconds survive the SQL
    REQUIRE(store->Put(seen, 0).ok());
    core::Finding before = Old("before", core::Severity::kCritical, kContractT0 - absl::Hours(30));
    before.last_seen_at = since - absl::Nanoseconds(1);
    REQUIRE(store->Put(before, 0).ok());
    core::Finding runtime = Old("runtime", core::Severity::kCritical, kContractT0);
    runtime.resource_id = core::kRuntimeFindingResourceId;
    runtime.key = core::kRuntimeFindingKey;
    REQUIRE(store->Put(runtime, 0).ok());
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);   // migration 17 (first: its indexes name older columns)
    UndoActionPageIndexes(raw);   // migration 16
    UndoPatrolCountColumns(raw);  // migration 15
    raw.exec("DELETE FROM schema_version WHERE version >= 15");
  }
  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  CHECK(db->CheckIntegrity().ok());
  auto store = *SqliteFindingStore::Open(*db);
  auto counts = store->CountPatrolFindings(since, kContractT0);
  REQUIRE(counts.ok());
  CHECK(counts->seen_since == 1);
  CHECK(counts->issues_seen_since == 1);
  CHECK(counts->active_issues == 2);  // seen and before; the runtime finding never counts
  CHECK(*counts == contracts::PatrolCountsByDecodingEvery(*store, since, kContractT0));
  auto one_ns_later = store->CountPatrolFindings(since + absl::Nanoseconds(123456790), kContractT0);
  REQUIRE(one_ns_later.ok());
  CHECK(one_ns_later->seen_since == 0);
}

TEST_CASE("a release 16 database marks the findings awaiting their fix from each finding's JSON",
          "[adapters][storage][findings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto with_fix = [](const std::string& id, std::optional<core::InvestigationOutcome> outcome,
                     const std::string& action) {
    core::Finding f = Old(id, core::Severity::kWarning, kContractT0);
    f.investigation_outcome = outcome;
    f.fix_action_id = action;
    return f;
  };
  {
    auto db = MustOpen(path);
    auto store = *SqliteFindingStore::Open(*db);
    REQUIRE(
        store->Put(with_fix("queued", core::InvestigationOutcome::kFixQueued, "act-1"), 0).ok());
    REQUIRE(store->Put(with_fix("executed", core::InvestigationOutcome::kFixExecuted, "act-2"), 0)
                .ok());
    REQUIRE(store->Put(with_fix("verified", core::InvestigationOutcome::kFixVerified, "act-3"), 0)
                .ok());
    REQUIRE(store->Put(with_fix("no-link", core::InvestigationOutcome::kFixQueued, ""), 0).ok());
    REQUIRE(store->Put(with_fix("plain", std::nullopt, ""), 0).ok());
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    raw.exec("DELETE FROM schema_version WHERE version >= 17");
  }
  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  CHECK(db->CheckIntegrity().ok());
  auto store = *SqliteFindingStore::Open(*db);
  auto waiting = store->ListAwaitingFixOutcome();
  REQUIRE(waiting.ok());
  CHECK(contracts::Ids(*waiting) == std::vector<std::string>{"executed", "queued"});
  // A later Put keeps the mark current: the executed fix is verified, the queued one executes.
  auto executed = *store->Get("executed");
  executed.finding.investigation_outcome = core::InvestigationOutcome::kFixVerified;
  REQUIRE(store->Put(executed.finding, executed.version).ok());
  auto plain = *store->Get("plain");
  plain.finding.investigation_outcome = core::InvestigationOutcome::kFixExecuted;
  plain.finding.fix_action_id = "act-4";
  REQUIRE(store->Put(plain.finding, plain.version).ok());
  CHECK(contracts::Ids(*store->ListAwaitingFixOutcome()) ==
        std::vector<std::string>{"plain", "queued"});
}

}  // namespace
}  // namespace pulse::testing::storage
