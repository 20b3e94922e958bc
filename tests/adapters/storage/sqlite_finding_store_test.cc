// SqliteFindingStore beyond the contract: migration 5 fills the sibling-lookup columns
// (resource_name, may_be_storage) of the findings a version-4 file already holds, and the
// findings service still merges a new report into its sibling through SQLite when many
// unrelated findings are stored, and a batch that fails in the database writes nothing.
#include "pulse/adapters/storage/sqlite_finding_store.h"

#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "contracts/finding_store_contract.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::SqliteFindingStore;
using contracts::Ids;
using contracts::SimpleFinding;

TEST_CASE("a version-4 database gains the sibling-lookup columns filled from its findings",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  core::Finding named = SimpleFinding("a-named", "vm:1", core::Category::kPerformance);
  named.resource_name = "Web-01";
  core::Finding typed = SimpleFinding("b-typed", "dev:7", core::Category::kCapacity);
  typed.resource_type = "storage";
  core::Finding pool = SimpleFinding("c-pool", "node/Pool-1", core::Category::kCapacity);
  core::Finding plain = SimpleFinding("d-plain", "vm:2", core::Category::kPerformance);
  {
    auto db = MustOpen(path);
    auto store = SqliteFindingStore::Open(*db);
    REQUIRE(store.ok());
    for (const core::Finding* f : {&named, &typed, &pool, &plain}) {
      REQUIRE((*store)->Put(*f, 0).ok());
    }
  }
  {
    // Roll the file back to what release 4 wrote.
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    raw.exec("DROP INDEX findings_by_resource_name");
    raw.exec("DROP INDEX findings_on_storage");
    raw.exec("ALTER TABLE findings DROP COLUMN resource_name");
    raw.exec("ALTER TABLE findings DROP COLUMN may_be_storage");
    raw.exec("ALTER TABLE api_tokens DROP COLUMN kind");  // migration 6
    raw.exec("ALTER TABLE action_approvals DROP COLUMN actor_name");
    raw.exec("DROP INDEX sessions_by_owner");  // migration 7
    raw.exec("ALTER TABLE sessions DROP COLUMN kind");
    raw.exec("ALTER TABLE sessions DROP COLUMN owner_token_id");
    raw.exec("ALTER TABLE sessions DROP COLUMN owner_token_name");
    UndoActionIdentityColumns(raw);  // migration 8
    UndoPatrolCountColumns(raw);     // migration 15
    UndoFindingPageColumns(raw);     // migration 9
    UndoActionPageIndexes(raw);      // migration 16
    UndoNotifications(raw);          // migration 13
    UndoAiSpend(raw);                // migration 12
    UndoAiSettings(raw);             // migration 11
    UndoHostAgents(raw);             // migration 10
    raw.exec("DELETE FROM schema_version WHERE version >= 5");
  }
  auto db = MustOpen(path);
  absl::StatusOr<int> version = db->SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
  {
    // The name column is filled (kept for readers of the file; sibling search no longer
    // matches on display names).
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    CHECK(raw.execAndGet("SELECT resource_name FROM findings WHERE id = 'a-named'").getString() ==
          "Web-01");
  }
  auto store = SqliteFindingStore::Open(*db);
  REQUIRE(store.ok());
  core::FindingFilter storage;
  storage.related_to = core::RelatedResourceFilter{"", "dev-7"};
  auto listed = (*store)->List(storage);
  REQUIRE(listed.ok());
  CHECK(Ids(*listed) == std::vector<std::string>{"b-typed"});
  storage.related_to = core::RelatedResourceFilter{"", "node-1"};
  listed = (*store)->List(storage);
  REQUIRE(listed.ok());
  CHECK(Ids(*listed) == std::vector<std::string>{"c-pool"});
}

core::FindingReport VmReport(const std::string& resource, const std::string& title) {
  core::FindingReport r;
  r.resource_id = resource;
  r.resource_name = resource;
  r.resource_type = "vm";
  r.category = core::Category::kPerformance;
  r.key = "cpu-high";
  r.title = title;
  r.description = "CPU has been above 95% for 40 minutes.";
  r.recommendation = "Check the top processes.";
  r.evidence = "pulse_metrics: cpu 97% avg over 40m";
  return r;
}

TEST_CASE("a new report still merges into its sibling among many unrelated stored findings",
          "[adapters][storage]") {
  auto db = MustOpen(":memory:");
  auto store = SqliteFindingStore::Open(*db);
  REQUIRE(store.ok());
  FakeClock clock;
  FakeFindingVerifier verifier;
  InMemoryMetricsHistory metrics;
  core::FindingsService service(**store, clock, verifier, metrics);
  for (int i = 0; i < 500; ++i) {
    const std::string resource = "vm:" + std::to_string(1000 + i);
    REQUIRE(service.Report(VmReport(resource, "High CPU usage on " + resource)).ok());
  }
  core::FindingReport first = VmReport("vm:100", "High CPU usage on web-1");
  first.resource_name = "Web-1";
  auto created = service.Report(first);
  REQUIRE(created.ok());
  REQUIRE(created->disposition == core::ReportDisposition::kCreated);

  core::FindingReport same_resource = VmReport("vm:100", "High CPU usage on web-1");
  same_resource.key = "cpu-saturation";
  auto by_id = service.Report(same_resource);
  REQUIRE(by_id.ok());
  CHECK(by_id->disposition == core::ReportDisposition::kMerged);
  CHECK(by_id->finding_id == created->finding_id);

  // The same display name on another resource is another finding.
  core::FindingReport same_name = VmReport("vm:101", "High CPU usage on web-1");
  same_name.resource_name = "WEB-1";
  auto by_name = service.Report(same_name);
  REQUIRE(by_name.ok());
  CHECK(by_name->disposition == core::ReportDisposition::kCreated);

  // Storage siblings are found through SQL among many storage findings, on their own node only.
  for (int i = 0; i < 200; ++i) {
    core::FindingReport pool = VmReport("storage:pve" + std::to_string(i) + "/local-zfs",
                                        "Storage local-zfs is nearly full");
    pool.resource_name = "local-zfs";
    pool.resource_type = "storage";
    pool.category = core::Category::kCapacity;
    pool.key = "storage-capacity";
    pool.description = "local-zfs is 91% used.";
    auto outcome = service.Report(pool);
    REQUIRE(outcome.ok());
    CHECK(outcome->disposition == core::ReportDisposition::kCreated);
  }
  core::FindingReport same_pool = VmReport("pool:pve7/local-zfs", "Pool local-zfs filling up");
  same_pool.resource_type = "storage";
  same_pool.category = core::Category::kCapacity;
  same_pool.key = "zfs-usage";
  same_pool.description = "92% used, 150 GB free";
  auto by_storage = service.Report(same_pool);
  REQUIRE(by_storage.ok());
  CHECK(by_storage->disposition == core::ReportDisposition::kMerged);
  CHECK(by_storage->finding_id == core::FindingIdFor("storage:pve7/local-zfs",
                                                     core::Category::kCapacity,
                                                     "storage-capacity"));

  auto fresh = service.Report(VmReport("vm:99", "High CPU usage on web-1"));
  REQUIRE(fresh.ok());
  CHECK(fresh->disposition == core::ReportDisposition::kCreated);
}

TEST_CASE("a batch the database fails part-way writes none of its findings",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  auto store = SqliteFindingStore::Open(*db);
  REQUIRE(store.ok());
  core::Finding kept = SimpleFinding("a-kept", "vm:1", core::Category::kPerformance);
  REQUIRE((*store)->Put(kept, 0).ok());
  {
    // The third write of the batch fails inside SQLite, after two have been written.
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec(
        "CREATE TRIGGER poison BEFORE INSERT ON findings WHEN NEW.id = 'c-poison' "
        "BEGIN SELECT RAISE(ABORT, 'poisoned'); END");
  }
  core::Finding updated = kept;
  updated.times_raised = 5;
  const std::vector<core::FindingWrite> writes = {
      {updated, 1},
      {SimpleFinding("b-new", "vm:1", core::Category::kPerformance), 0},
      {SimpleFinding("c-poison", "vm:1", core::Category::kPerformance), 0},
      {SimpleFinding("d-new", "vm:1", core::Category::kPerformance), 0}};
  auto results = (*store)->PutBatch(writes);
  REQUIRE_FALSE(results.ok());
  INFO(results.status().ToString());
  CHECK(results.status().message().find("poisoned") != std::string_view::npos);
  auto got = (*store)->Get("a-kept");
  REQUIRE(got.ok());
  CHECK(got->version == 1);
  CHECK(got->finding.times_raised == kept.times_raised);
  CHECK(absl::IsNotFound((*store)->Get("b-new").status()));
  CHECK(absl::IsNotFound((*store)->Get("d-new").status()));
  // The same batch without the poisoned write lands whole.
  auto clean = (*store)->PutBatch({writes[0], writes[1], writes[3]});
  REQUIRE(clean.ok());
  CHECK(clean->at(0).value_or(0) == 2);
  CHECK(clean->at(1).value_or(0) == 1);
  CHECK(clean->at(2).value_or(0) == 1);
}

// SQLite's plan for `sql`, one step per line (EXPLAIN QUERY PLAN's detail column).
std::string QueryPlan(SQLite::Database& raw, const std::string& sql) {
  SQLite::Statement q(raw, "EXPLAIN QUERY PLAN " + sql);
  std::string out;
  while (q.executeStep()) {
    out += q.getColumn(3).getString() + "\n";
  }
  return out;
}

// The status counts read two index ranges and no finding's record (migration 15): SQLite's
// plan for each of CountPatrolFindings' queries names a covering index.
TEST_CASE("the status counts are index-only reads", "[adapters][storage][findings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  { MustOpen(path); }
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  const auto plan = [&](const std::string& sql) { return QueryPlan(raw, sql); };
  const std::string seen = plan(
      "SELECT count(*), coalesce(sum(severity_key <= 1), 0) FROM findings "
      "WHERE is_runtime = 0 AND last_seen_ns >= 5");
  CHECK(seen.find("COVERING INDEX findings_seen") != std::string::npos);
  const std::string active = plan(
      "SELECT count(*) FROM findings WHERE is_runtime = 0 AND is_open = 1 AND severity_key <= 1 "
      "AND (snoozed_until_ns IS NULL OR snoozed_until_ns <= 5)");
  CHECK(active.find("COVERING INDEX findings_open_issues") != std::string::npos);
}

// Patrol's active keys and the start-up reconciliation's candidates (migration 17) read their
// partial indexes in id order, with no sort; the keys never read a finding's row.
TEST_CASE("the active keys and the findings awaiting a fix are index reads in id order",
          "[adapters][storage][findings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  { MustOpen(path); }
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  const auto plan = [&](const std::string& sql) { return QueryPlan(raw, sql); };
  const std::string keys = plan(
      "SELECT id, resource_id, severity_key FROM findings INDEXED BY findings_active_keys "
      "WHERE is_open = 1 AND (snoozed_until_ns IS NULL OR snoozed_until_ns <= 5) ORDER BY id");
  CHECK(keys.find("COVERING INDEX findings_active_keys") != std::string::npos);
  CHECK(keys.find("TEMP B-TREE") == std::string::npos);
  const std::string waiting = plan(
      "SELECT id, record_json, version FROM findings INDEXED BY findings_awaiting_fix "
      "WHERE awaits_fix = 1 ORDER BY id");
  CHECK(waiting.find("INDEX findings_awaiting_fix") != std::string::npos);
  CHECK(waiting.find("TEMP B-TREE") == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::storage
