// SqliteHostAgentStore beyond the contract: the registry survives a restart (reopen of the
// file), migration 10 adds it to a version-9 file without touching what was there, the schema
// itself refuses a token serving two hosts, and OpenSqliteStorage opens it with the others.
#include "pulse/adapters/storage/sqlite_host_agent_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "contracts/host_agent_store_contract.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::SqliteHostAgentStore;
using host_agent_store_contract::kTokA;
using host_agent_store_contract::kTokB;
using host_agent_store_contract::ReportJson;
using host_agent_store_contract::T0;

std::unique_ptr<SqliteHostAgentStore> MustOpenStore(adapters::storage::SqliteDatabase& db) {
  auto store = SqliteHostAgentStore::Open(db);
  REQUIRE(store.ok());
  return *std::move(store);
}

TEST_CASE("the host agent registry survives a reopen of its file", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  core::HostAgentRecord web1;
  core::HostAgentRecord web2;
  {
    auto db = MustOpen(path);
    auto store = MustOpenStore(*db);
    REQUIRE(store->Bind("web1", kTokA, T0()).ok());
    REQUIRE(store->Bind("web2", kTokB, T0() + absl::Seconds(1)).ok());
    REQUIRE(*store->SaveReport("web1", kTokA, "0.4.0", ReportJson("web1", 1),
                               T0() + absl::Seconds(2)) == 1);
    REQUIRE(*store->SaveReport("web1", kTokA, "0.4.1", ReportJson("web1", 2),
                               T0() + absl::Seconds(3)) == 2);
    web1 = *store->Get("web1");
    web2 = *store->Get("web2");
  }
  auto db = MustOpen(path);
  auto store = MustOpenStore(*db);
  absl::StatusOr<std::vector<core::HostAgentRecord>> listed = store->List();
  REQUIRE(listed.ok());
  CHECK(*listed == std::vector<core::HostAgentRecord>{web1, web2});
  CHECK(web1.last_report == ReportJson("web1", 2));
  CHECK(web1.last_report_at == std::optional<absl::Time>(T0() + absl::Seconds(3)));
  // The bindings hold across the restart: token A still cannot speak for web2.
  CHECK(absl::IsFailedPrecondition(store->Bind("web2", kTokA, T0()).status()));
  CHECK(*store->SaveReport("web1", kTokA, "0.4.1", ReportJson("web1", 3), T0()) == 3);
}

TEST_CASE("a version-9 database gains the host agent registry on open", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    UndoActionPageIndexes(raw);  // migration 16
    UndoNotifications(raw);      // migration 13
    UndoAiSpend(raw);            // migration 12
    UndoAiSettings(raw);         // migration 11
    UndoHostAgents(raw);
    UndoPatrolCountColumns(raw);  // migration 15
    raw.exec("DELETE FROM schema_version WHERE version >= 10");
    raw.exec(
        "INSERT INTO suppression_rules (id, rule_json) VALUES ('sup_kept', '{\"kept\":true}')");
  }
  auto db = MustOpen(path);
  absl::StatusOr<int> version = db->SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
  CHECK(kSchemaVersion == 17);
  auto store = MustOpenStore(*db);
  CHECK(store->List()->empty());
  REQUIRE(store->Bind("web1", kTokA, T0()).ok());
  db.reset();
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(
      raw.execAndGet("SELECT rule_json FROM suppression_rules WHERE id = 'sup_kept'").getString() ==
      "{\"kept\":true}");
  CHECK(raw.execAndGet("SELECT COUNT(*) FROM host_agents").getInt() == 1);
}

TEST_CASE("the host_agents table itself refuses a token serving two hosts", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    auto db = MustOpen(path);
    auto store = MustOpenStore(*db);
    REQUIRE(store->Bind("web1", kTokA, T0()).ok());
  }
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  CHECK_THROWS_AS(
      raw.exec("INSERT INTO host_agents (host, token_id, bound_at_ns) VALUES ('web2', '" + kTokA +
               "', 0)"),
      SQLite::Exception);
  CHECK_THROWS_AS(
      raw.exec("INSERT INTO host_agents (host, token_id, bound_at_ns) VALUES ('web1', '" + kTokB +
               "', 0)"),
      SQLite::Exception);
  CHECK_THROWS_AS(raw.exec("UPDATE host_agents SET report_seq = -1"), SQLite::Exception);
  CHECK(raw.execAndGet("SELECT COUNT(*) FROM host_agents").getInt() == 1);
}

TEST_CASE("OpenSqliteStorage opens the host agent registry with the other stores",
          "[adapters][storage]") {
  TempDir dir;
  const std::string data_dir = dir.File("data");
  {
    auto storage = adapters::storage::OpenSqliteStorage(data_dir);
    REQUIRE(storage.ok());
    REQUIRE((*storage)->host_agents != nullptr);
    REQUIRE((*storage)->host_agents->Bind("web1", kTokA, T0()).ok());
  }
  auto storage = adapters::storage::OpenSqliteStorage(data_dir);
  REQUIRE(storage.ok());
  absl::StatusOr<core::HostAgentRecord> web1 = (*storage)->host_agents->FindByToken(kTokA);
  REQUIRE(web1.ok());
  CHECK(web1->host == "web1");
}

}  // namespace
}  // namespace pulse::testing::storage
