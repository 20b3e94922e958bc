// Shared fixtures for the storage adapter tests: a temporary directory under /tmp removed on
// destruction, and owners that keep a store together with the database (and directory) it
// borrows, so the contract suites can hold "a store" as one pointer-like value.
#pragma once

#include <SQLiteCpp/Database.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::testing::storage {

// A fresh directory pulse-storage-XXXXXX under the temp directory, removed with everything in it.
class TempDir : public pulse::testing::TempDir {
 public:
  TempDir() : pulse::testing::TempDir("pulse-storage") {}
};

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline unsigned FileMode(const std::string& path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Undoes migration 15 (the findings last-seen and runtime columns and their indexes), for the
// tests that roll a file back to an older release and reopen it.
inline void UndoPatrolCountColumns(SQLite::Database& raw) {
  raw.exec("DROP INDEX findings_seen");
  raw.exec("DROP INDEX findings_open_issues");
  raw.exec("ALTER TABLE findings DROP COLUMN last_seen_ns");
  raw.exec("ALTER TABLE findings DROP COLUMN is_runtime");
}

// Undoes migration 17 (the findings awaiting their fix's outcome, the active keys index), for
// the tests that roll a file back to an older release and reopen it.
inline void UndoAwaitingFixColumn(SQLite::Database& raw) {
  raw.exec("DROP INDEX findings_active_keys");
  raw.exec("DROP INDEX findings_awaiting_fix");
  raw.exec("ALTER TABLE findings DROP COLUMN awaits_fix");
}

// Undoes migration 16 (the action queue page indexes), for the tests
// that roll a file back to an older release and reopen it.
inline void UndoActionPageIndexes(SQLite::Database& raw) {
  raw.exec("DROP INDEX actions_in_flight_page");
  raw.exec("DROP INDEX actions_settled_page");
}

// Undoes migration 13 (notification channels and outbox), for the tests that roll a file back
// to an older release and reopen it.
inline void UndoNotifications(SQLite::Database& raw) {
  raw.exec("DROP TABLE notification_outbox");
  raw.exec("DROP TABLE notification_channels");
}

// Undoes migration 12 (the metered spend per month), for the tests that roll a file back to an
// older release and reopen it.
inline void UndoAiSpend(SQLite::Database& raw) { raw.exec("DROP TABLE ai_spend"); }

// Undoes migration 11 (the runtime AI settings), for the tests that roll a file back to an
// older release and reopen it.
inline void UndoAiSettings(SQLite::Database& raw) { raw.exec("DROP TABLE ai_settings"); }

// Undoes migration 10 (the host agent registry), for the tests that roll a file back to an
// older release and reopen it.
inline void UndoHostAgents(SQLite::Database& raw) { raw.exec("DROP TABLE host_agents"); }

// Undoes migration 9 (the findings order columns and page indexes), for the same tests.
inline void UndoFindingPageColumns(SQLite::Database& raw) {
  for (const char* index :
       {"findings_open_page", "findings_page", "findings_resource_page", "findings_open_counts"}) {
    raw.exec(std::string("DROP INDEX ") + index);
  }
  for (const char* column : {"severity_key", "detected_key", "is_resolved"}) {
    raw.exec(std::string("ALTER TABLE findings DROP COLUMN ") + column);
  }
}

// Undoes migration 8 on a file that holds no action, for the tests that roll a file back to an
// older release and reopen it (which re-runs every later migration): the identity is again
// actions.identity_json under release 7's trigger.
inline void UndoActionIdentityColumns(SQLite::Database& raw) {
  REQUIRE(raw.execAndGet("SELECT COUNT(*) FROM actions").getInt() == 0);
  raw.exec("DROP TABLE unconverted_action_identities");
  raw.exec("DROP TABLE action_identities");
  raw.exec("DROP TRIGGER actions_identity_is_immutable");
  raw.exec("ALTER TABLE actions ADD COLUMN identity_json TEXT NOT NULL DEFAULT ''");
  raw.exec(
      "CREATE TRIGGER actions_identity_is_immutable BEFORE UPDATE OF id, request_id, "
      "resource_id, capability_name, plan_hash, created_at_ns, identity_json ON actions "
      "BEGIN SELECT RAISE(ABORT, 'action identity is immutable'); END");
}

inline std::unique_ptr<adapters::storage::SqliteDatabase> MustOpen(
    const std::string& path, const adapters::storage::SqliteOptions& options = {}) {
  auto db = adapters::storage::SqliteDatabase::Open(path, options);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return *std::move(db);
}

// The action store over `db` (it borrows the database).
inline std::unique_ptr<adapters::storage::SqliteActionStore> MustOpenActionStore(
    adapters::storage::SqliteDatabase& db) {
  auto store = adapters::storage::SqliteActionStore::Open(db);
  REQUIRE(store.ok());
  return *std::move(store);
}

// A store with the database it borrows (and, for a file database, the directory holding it).
// Members are destroyed in reverse order: the store first, the directory last.
template <class Store>
class Owned {
 public:
  Owned() = default;
  Owned(std::unique_ptr<TempDir> dir, std::unique_ptr<adapters::storage::SqliteDatabase> db,
        std::unique_ptr<Store> store)
      : dir_(std::move(dir)), db_(std::move(db)), store_(std::move(store)) {}

  Store* operator->() const { return store_.get(); }
  Store& operator*() const { return *store_; }
  Store* get() const { return store_.get(); }
  adapters::storage::SqliteDatabase& database() const { return *db_; }
  friend bool operator==(const Owned& o, std::nullptr_t) { return o.store_ == nullptr; }
  friend bool operator!=(const Owned& o, std::nullptr_t) { return o.store_ != nullptr; }

 private:
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<adapters::storage::SqliteDatabase> db_;
  std::unique_ptr<Store> store_;
};

// A store over a fresh database: in memory, or in a file; either way with a fresh temporary
// directory for anything else it needs (key files). `open` turns the database into the store:
// (SqliteDatabase&, const TempDir&) -> StatusOr<unique_ptr<Store>>.
template <class Store, class OpenStore>
Owned<Store> MakeOwned(bool in_file, OpenStore open) {
  auto dir = std::make_unique<TempDir>();
  auto db = MustOpen(in_file ? dir->File("pulse.db") : ":memory:");
  auto store = open(*db, *dir);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return Owned<Store>(std::move(dir), std::move(db), *std::move(store));
}

}  // namespace pulse::testing::storage
