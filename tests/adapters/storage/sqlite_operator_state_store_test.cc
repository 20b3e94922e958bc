// SqliteOperatorStateStore beyond the contract: migration 3 adds local_only to a version-2 file
// without touching its rows, and the column refuses anything but 0 and 1.
#include "pulse/adapters/storage/sqlite_operator_state_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "contracts/operator_state_store_contract.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::SqliteOperatorStateStore;

TEST_CASE("a version-2 database keeps its operator state and gains local_only on open",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  core::OperatorState before = operator_state_contract::LockedState("vm:101");
  before.local_only = false;
  {
    auto db = MustOpen(path);
    auto store = SqliteOperatorStateStore::Open(*db);
    REQUIRE(store.ok());
    REQUIRE((*store)->Set(before).ok());
  }
  {
    // Roll the file back to what release 2 wrote (migration 5 is undone too).
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    raw.exec("DROP INDEX findings_by_resource_name");
    raw.exec("DROP INDEX findings_on_storage");
    raw.exec("ALTER TABLE findings DROP COLUMN resource_name");
    raw.exec("ALTER TABLE findings DROP COLUMN may_be_storage");
    raw.exec("DROP INDEX operator_state_local_only");
    raw.exec("ALTER TABLE operator_state DROP COLUMN local_only");
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
    raw.exec("DELETE FROM schema_version WHERE version >= 3");
  }
  auto db = MustOpen(path);
  absl::StatusOr<int> version = db->SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
  CHECK(kSchemaVersion == 17);
  auto store = SqliteOperatorStateStore::Open(*db);
  REQUIRE(store.ok());
  absl::StatusOr<core::OperatorState> kept = (*store)->Get("vm:101");
  REQUIRE(kept.ok());
  CHECK(*kept == before);  // an existing row is not local-only
  CHECK((*store)->LocalOnlyResourceIds()->empty());

  core::OperatorState marked = before;
  marked.local_only = true;
  REQUIRE((*store)->Set(marked).ok());
  CHECK(*(*store)->LocalOnlyResourceIds() == std::vector<std::string>{"vm:101"});
}

TEST_CASE("the local_only column refuses values other than 0 and 1", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    auto db = MustOpen(path);
    auto store = SqliteOperatorStateStore::Open(*db);
    REQUIRE(store.ok());
    REQUIRE((*store)->Set(operator_state_contract::LockedState("vm:101")).ok());
  }
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  CHECK_THROWS_AS(raw.exec("UPDATE operator_state SET local_only = 2"), SQLite::Exception);
  CHECK(raw.execAndGet("SELECT local_only FROM operator_state").getInt() == 1);
}

}  // namespace
}  // namespace pulse::testing::storage
