// The store contract suites of the core, run unchanged against the SQLite adapters (in memory
// and in a file) and, for the token store this issue adds, against its fake as well.
#include <catch2/catch.hpp>
#include <memory>

#include "contracts/action_store_contract.h"
#include "contracts/finding_page_contract.h"
#include "contracts/finding_store_contract.h"
#include "contracts/host_agent_store_contract.h"
#include "contracts/operator_state_store_contract.h"
#include "contracts/patrol_run_store_contract.h"
#include "contracts/session_store_contract.h"
#include "contracts/token_store_contract.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_host_agent_store.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/adapters/storage/sqlite_patrol_run_store.h"
#include "pulse/adapters/storage/sqlite_session_store.h"
#include "pulse/adapters/storage/sqlite_token_store.h"
#include "pulse/testing/in_memory_token_store.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::SqliteActionStore;
using adapters::storage::SqliteDatabase;
using adapters::storage::SqliteFindingStore;
using adapters::storage::SqliteHostAgentStore;
using adapters::storage::SqliteOperatorStateStore;
using adapters::storage::SqlitePatrolRunStore;
using adapters::storage::SqliteSessionStore;
using adapters::storage::SqliteTokenStore;

Owned<SqliteFindingStore> FindingStoreIn(bool in_file) {
  return MakeOwned<SqliteFindingStore>(
      in_file, [](SqliteDatabase& db, const TempDir&) { return SqliteFindingStore::Open(db); });
}
Owned<SqliteFindingStore> MemoryFindingStore() { return FindingStoreIn(false); }
Owned<SqliteFindingStore> FileFindingStore() { return FindingStoreIn(true); }

Owned<SqliteActionStore> ActionStoreIn(bool in_file) {
  return MakeOwned<SqliteActionStore>(
      in_file, [](SqliteDatabase& db, const TempDir&) { return SqliteActionStore::Open(db); });
}

Owned<SqliteOperatorStateStore> OperatorStateStoreIn(bool in_file) {
  return MakeOwned<SqliteOperatorStateStore>(in_file, [](SqliteDatabase& db, const TempDir&) {
    return SqliteOperatorStateStore::Open(db);
  });
}

Owned<SqlitePatrolRunStore> PatrolRunStoreIn(bool in_file) {
  return MakeOwned<SqlitePatrolRunStore>(
      in_file, [](SqliteDatabase& db, const TempDir&) { return SqlitePatrolRunStore::Open(db); });
}
Owned<SqlitePatrolRunStore> MemoryPatrolRunStore() { return PatrolRunStoreIn(false); }
Owned<SqlitePatrolRunStore> FilePatrolRunStore() { return PatrolRunStoreIn(true); }

Owned<SqliteSessionStore> SessionStoreIn(bool in_file) {
  return MakeOwned<SqliteSessionStore>(
      in_file, [](SqliteDatabase& db, const TempDir&) { return SqliteSessionStore::Open(db); });
}

Owned<SqliteTokenStore> TokenStoreIn(bool in_file) {
  return MakeOwned<SqliteTokenStore>(in_file, [](SqliteDatabase& db, const TempDir& dir) {
    return SqliteTokenStore::Open(db, dir.File("token.key"));
  });
}

Owned<SqliteHostAgentStore> HostAgentStoreIn(bool in_file) {
  return MakeOwned<SqliteHostAgentStore>(
      in_file, [](SqliteDatabase& db, const TempDir&) { return SqliteHostAgentStore::Open(db); });
}

}  // namespace

PULSE_FINDING_STORE_CONTRACT("SqliteFindingStore (:memory:)", MemoryFindingStore)
PULSE_FINDING_STORE_CONTRACT("SqliteFindingStore (file)", FileFindingStore)
PULSE_FINDING_PAGE_CONTRACT("SqliteFindingStore (:memory:)", MemoryFindingStore)
PULSE_FINDING_PAGE_CONTRACT("SqliteFindingStore (file)", FileFindingStore)

PULSE_PATROL_RUN_STORE_CONTRACT("SqlitePatrolRunStore (:memory:)", "[adapters][storage][contract]",
                                MemoryPatrolRunStore)
PULSE_PATROL_RUN_STORE_CONTRACT("SqlitePatrolRunStore (file)", "[adapters][storage][contract]",
                                FilePatrolRunStore)

TEST_CASE("SqliteActionStore (:memory:) honours the ActionStore contract",
          "[adapters][storage][contract]") {
  RunActionStoreContract([] { return ActionStoreIn(false); });
}

TEST_CASE("SqliteActionStore (file) honours the ActionStore contract",
          "[adapters][storage][contract]") {
  RunActionStoreContract([] { return ActionStoreIn(true); });
}

TEST_CASE("SqliteOperatorStateStore (:memory:) honours the OperatorStateStore contract",
          "[adapters][storage][contract]") {
  RunOperatorStateStoreContract([] { return OperatorStateStoreIn(false); });
}

TEST_CASE("SqliteOperatorStateStore (file) honours the OperatorStateStore contract",
          "[adapters][storage][contract]") {
  RunOperatorStateStoreContract([] { return OperatorStateStoreIn(true); });
}

TEST_CASE("SqliteSessionStore (:memory:) honours the SessionStore contract",
          "[adapters][storage][contract]") {
  RunSessionStoreContract([] { return SessionStoreIn(false); });
}

TEST_CASE("SqliteSessionStore (file) honours the SessionStore contract",
          "[adapters][storage][contract]") {
  RunSessionStoreContract([] { return SessionStoreIn(true); });
}

TEST_CASE("InMemoryTokenStore honours the TokenStore contract", "[adapters][storage][contract]") {
  RunTokenStoreContract([] { return std::make_unique<InMemoryTokenStore>(); });
}

TEST_CASE("SqliteTokenStore (:memory:) honours the TokenStore contract",
          "[adapters][storage][contract]") {
  RunTokenStoreContract([] { return TokenStoreIn(false); });
}

TEST_CASE("SqliteTokenStore (file) honours the TokenStore contract",
          "[adapters][storage][contract]") {
  RunTokenStoreContract([] { return TokenStoreIn(true); });
}

TEST_CASE("SqliteHostAgentStore (:memory:) honours the HostAgentStore contract",
          "[adapters][storage][contract]") {
  RunHostAgentStoreContract([] { return HostAgentStoreIn(false); });
}

TEST_CASE("SqliteHostAgentStore (file) honours the HostAgentStore contract",
          "[adapters][storage][contract]") {
  RunHostAgentStoreContract([] { return HostAgentStoreIn(true); });
}

}  // namespace pulse::testing::storage
