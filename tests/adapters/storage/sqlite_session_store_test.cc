// SqliteSessionStore beyond the contract: migration 2 upgrades a version-1 file, records that
// cannot be stored exactly are refused, and a tampered row reads as DataLoss.
#include "pulse/adapters/storage/sqlite_session_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"
#include "contracts/session_store_contract.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::SqliteSessionStore;

TEST_CASE("a version-1 database gains the sessions table on open", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  {
    // Roll the file back to what release 1 wrote (migrations 3 and 5 are undone too).
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    raw.exec("DROP INDEX findings_by_resource_name");
    raw.exec("DROP INDEX findings_on_storage");
    raw.exec("ALTER TABLE findings DROP COLUMN resource_name");
    raw.exec("ALTER TABLE findings DROP COLUMN may_be_storage");
    raw.exec("DROP TABLE sessions");
    raw.exec("DROP INDEX operator_state_local_only");
    raw.exec("ALTER TABLE operator_state DROP COLUMN local_only");
    raw.exec("ALTER TABLE api_tokens DROP COLUMN kind");  // migration 6
    raw.exec("ALTER TABLE action_approvals DROP COLUMN actor_name");
    UndoActionIdentityColumns(raw);  // migration 8
    UndoPatrolCountColumns(raw);     // migration 15
    UndoFindingPageColumns(raw);     // migration 9
    UndoActionPageIndexes(raw);      // migration 16
    UndoNotifications(raw);          // migration 13
    UndoAiSpend(raw);                // migration 12
    UndoAiSettings(raw);             // migration 11
    UndoHostAgents(raw);             // migration 10
    raw.exec("DELETE FROM schema_version WHERE version >= 2");
  }
  auto db = MustOpen(path);
  absl::StatusOr<int> version = db->SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
  CHECK(kSchemaVersion == 17);
  auto store = SqliteSessionStore::Open(*db);
  REQUIRE(store.ok());
  REQUIRE((*store)->Create(session_contract::FullSession("ses_up")).ok());
  CHECK((*store)->Get("ses_up")->revision == 1);
}

TEST_CASE("sessions stored before ownership become unowned chat sessions", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  core::SessionRecord r = session_contract::FullSession("ses_legacy");
  r.owner = {};
  {
    auto db = MustOpen(path);
    auto store = SqliteSessionStore::Open(*db);
    REQUIRE(store.ok());
    REQUIRE((*store)->Create(r).ok());
  }
  {
    // Roll the file back to what release 6 wrote: no owner or kind anywhere.
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    const std::string json =
        raw.execAndGet("SELECT record_json FROM sessions WHERE id = 'ses_legacy'").getString();
    REQUIRE(json.find("owner") == std::string::npos);
    REQUIRE(json.find("kind") == std::string::npos);
    raw.exec("DROP INDEX sessions_by_owner");
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
    raw.exec("DELETE FROM schema_version WHERE version >= 7");
  }
  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  auto store = SqliteSessionStore::Open(*db);
  REQUIRE(store.ok());
  absl::StatusOr<core::SessionRecord> got = (*store)->Get("ses_legacy");
  REQUIRE(got.ok());
  CHECK_FALSE(got->owner.owned());
  CHECK(got->kind == core::SessionKind::kChat);
  core::SessionListQuery unowned;
  unowned.kind = core::SessionKind::kChat;
  unowned.owner_token_id = "";
  absl::StatusOr<std::vector<core::SessionSummary>> listed = (*store)->List(unowned);
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].id == "ses_legacy");
}

TEST_CASE("a row written before usage accounting still loads", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  core::SessionRecord r = session_contract::FullSession("ses_old");
  r.usage.clear();
  r.usage_totals = {};
  r.suspended->counters.cost_usd = 0;
  r.suspended->counters.cost_unknown = false;
  {
    auto db = MustOpen(path);
    auto store = SqliteSessionStore::Open(*db);
    REQUIRE(store.ok());
    REQUIRE((*store)->Create(r).ok());
  }
  {
    // Strip what usage accounting added, leaving the JSON an older release wrote.
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    std::string json =
        raw.execAndGet("SELECT record_json FROM sessions WHERE id = 'ses_old'").getString();
    const std::string added = R"(,"cost_usd":0.0,"cost_unknown":false)";
    const std::size_t at = json.find(added);
    REQUIRE(at != std::string::npos);
    json.erase(at, added.size());
    REQUIRE(json.find("usage") == std::string::npos);
    SQLite::Statement update(raw, "UPDATE sessions SET record_json = ? WHERE id = 'ses_old'");
    update.bind(1, json);
    REQUIRE(update.exec() == 1);
  }
  auto db = MustOpen(path);
  auto store = SqliteSessionStore::Open(*db);
  REQUIRE(store.ok());
  absl::StatusOr<core::SessionRecord> got = (*store)->Get("ses_old");
  REQUIRE(got.ok());
  r.revision = 1;
  CHECK(*got == r);
}

TEST_CASE("a session that cannot be stored exactly is refused", "[adapters][storage]") {
  auto store = MakeOwned<SqliteSessionStore>(
      false, [](adapters::storage::SqliteDatabase& db, const TempDir&) {
        return SqliteSessionStore::Open(db);
      });
  const absl::Time t0 = absl::FromUnixMillis(1'800'000'000'000);
  core::SessionRecord bad_utf8 = session_contract::IdleSession("ses_a", t0);
  bad_utf8.transcript.push_back(core::Message::User("bad \xC3( byte"));
  CHECK(absl::IsInvalidArgument(store->Create(bad_utf8).status()));
  core::SessionRecord far_future = session_contract::IdleSession("ses_b", t0);
  far_future.updated_at = absl::FromUnixSeconds(std::int64_t{1} << 40);  // beyond int64 ns
  CHECK(absl::IsInvalidArgument(store->Create(far_future).status()));
  CHECK(absl::IsNotFound(store->Get("ses_a").status()));
  CHECK(absl::IsNotFound(store->Get("ses_b").status()));

  REQUIRE(store->Create(session_contract::IdleSession("ses_c", t0)).ok());
  core::SessionRecord r = *store->Get("ses_c");
  r.transcript.push_back(core::Message::User("bad \xC3( byte"));
  CHECK(absl::IsInvalidArgument(store->Update(r).status()));
  r.revision = 99;  // stale, and valid: Aborted
  r.transcript.back() = core::Message::User("fine");
  CHECK(absl::IsAborted(store->Update(r).status()));
  CHECK(store->Get("ses_c")->revision == 1);
}

TEST_CASE("a tampered session row reads as DataLoss", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    auto db = MustOpen(path);
    auto store = SqliteSessionStore::Open(*db);
    REQUIRE(store.ok());
    REQUIRE((*store)->Create(session_contract::FullSession("ses_a")).ok());
    REQUIRE((*store)->Create(session_contract::FullSession("ses_b")).ok());
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("UPDATE sessions SET record_json = '{\"id\":1}' WHERE id = 'ses_a'");
    raw.exec("UPDATE sessions SET revision = 5 WHERE id = 'ses_b'");
  }
  auto db = MustOpen(path);
  auto store = SqliteSessionStore::Open(*db);
  REQUIRE(store.ok());
  CHECK(absl::IsDataLoss((*store)->Get("ses_a").status()));
  CHECK(absl::IsDataLoss((*store)->Get("ses_b").status()));
}

}  // namespace
}  // namespace pulse::testing::storage
