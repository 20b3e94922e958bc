// SqliteDatabase: the one SQLite database file in the data dir that every store adapter of
// this library shares (docs/storage.md). Open applies the durability settings (WAL,
// synchronous=FULL, busy timeout, foreign keys) and the versioned schema migrations; a file
// written by a newer release is refused untouched.
// Thread-safety: one connection guarded by one mutex; every store method holds it for its
// whole transaction, so the adapters are safe to call from any thread. Other processes may
// open the same file: write transactions take SQLite's write lock up front (BEGIN IMMEDIATE)
// and wait up to the busy timeout for it.
// Lifetime: the stores borrow the database, which must outlive them.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::adapters::storage {

// The schema version this code writes and understands. Opening a database whose version is
// higher fails with FailedPrecondition and changes nothing.
inline constexpr int kSchemaVersion = 5;

// The file names inside a data dir (sqlite_storage.h opens them together).
inline constexpr char kDatabaseFileName[] = "pulse.db";
inline constexpr char kSecretKeyFileName[] = "secret.key";
inline constexpr char kTokenKeyFileName[] = "token.key";

enum class Durability {
  // synchronous=FULL: a commit is on stable storage before it returns. The default and the
  // only setting for real data: an action's `executing` row must survive a power loss that
  // follows its dispatch, or the action could be dispatched again after restart.
  kFull,
  // synchronous=NORMAL: crash-safe (never corrupt) but a power loss may roll back the last
  // commits. For benchmarks and throwaway databases only.
  kNormal,
};

struct SqliteOptions {
  Durability durability = Durability::kFull;
  // How long a writer waits for another process's write lock before Unavailable.
  absl::Duration busy_timeout = absl::Seconds(5);
};

// The connection's effective settings, as SQLite reports them (for diagnostics and tests).
struct SqliteSettings {
  std::string journal_mode;  // "wal" ("memory" for ":memory:")
  int synchronous = 0;       // 2 = FULL, 1 = NORMAL
  bool foreign_keys = false;
  int busy_timeout_ms = 0;
};

class SqliteDatabase final {
 public:
  // The connection state, defined privately (src/sqlite_connection.h).
  struct Connection;

  // Opens or creates the database at `path` (":memory:" for a private in-memory database),
  // applies the settings and migrates the schema to kSchemaVersion. Errors: FailedPrecondition
  // (written by a newer release, or not a Pulse database: another application's tables or
  // application id), DataLoss (the file is not a SQLite database or is corrupt), Unavailable
  // (cannot be opened or locked: permissions, missing directory, busy), Internal (anything
  // else SQLite reports). Nothing is written when it fails before migrating.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteDatabase>> Open(
      const std::string& path, const SqliteOptions& options = {});

  SqliteDatabase(std::unique_ptr<Connection> connection, std::string path);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  const std::string& path() const { return path_; }

  // The schema version recorded in the file (kSchemaVersion after a successful Open).
  [[nodiscard]] absl::StatusOr<int> SchemaVersion() const;

  // The settings in effect on the connection.
  [[nodiscard]] absl::StatusOr<SqliteSettings> Settings() const;

  // PRAGMA integrity_check: OK, or DataLoss with SQLite's first findings.
  [[nodiscard]] absl::Status CheckIntegrity() const;

  // For the store adapters of this library: the guarded connection.
  Connection& connection() const { return *connection_; }

 private:
  std::unique_ptr<Connection> connection_;
  std::string path_;
};

}  // namespace pulse::adapters::storage
