// SqliteDatabase: the one SQLite database file in the data dir that every store adapter of
// this library shares (docs/storage.md). Open applies the durability settings (WAL,
// synchronous=FULL, busy timeout, foreign keys) and the versioned schema migrations; a file
// written by a newer release is refused untouched.
// Thread-safety: safe from any thread. Writes share one connection guarded by one mutex and
// take SQLite's write lock up front (BEGIN IMMEDIATE), waiting up to the busy timeout for
// another process's. Reads of a file database run on a small pool of read-only connections
// (WAL snapshots), so they run in parallel and wait neither for the writer mutex nor for another
// process's write lock; ":memory:" reads use the writer.
// Lifetime: the stores borrow the database, which must outlive them; it closes its readers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::adapters::storage {

// The schema version this code writes and understands. Opening a database whose version is
// higher fails with FailedPrecondition and changes nothing.
inline constexpr int kSchemaVersion = 17;

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

// The default bound of the read pool (SqliteOptions::max_readers).
inline constexpr int kDefaultMaxReaders = 4;

struct SqliteOptions {
  Durability durability = Durability::kFull;
  // How long a writer waits for another process's write lock before Unavailable (readers use
  // the same timeout for WAL's rare reader locks).
  absl::Duration busy_timeout = absl::Seconds(5);
  // Read-only connections that read transactions of a file database may use at once, opened on
  // demand and kept open; a read finding all of them busy waits for one. 0 sends every read
  // through the writer (one connection, as before the pool). Ignored for ":memory:", which is
  // private to its one connection.
  int max_readers = kDefaultMaxReaders;
};

// The read pool as it is now (for diagnostics and tests).
struct SqliteReadPoolStats {
  int max_readers = 0;   // the effective bound: 0 when reads use the writer (":memory:")
  int open_readers = 0;  // readers open now, idle or in use (never above max_readers)
  // Reads that ran on the writer because a reader could not be opened, and SQLite's reason
  // for the last such failure ("" when none failed).
  std::int64_t writer_fallbacks = 0;
  std::string last_open_error;
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
  // applies the settings and migrates the schema to kSchemaVersion. A file database and its
  // -wal and -shm files are made mode 0600 first (created so, or changed and reported in
  // mode_repairs()); a symbolic link there is refused. Errors: FailedPrecondition
  // (written by a newer release, or not a Pulse database: another application's tables or
  // application id), DataLoss (the file is not a SQLite database or is corrupt), Unavailable
  // (cannot be opened or locked: permissions, missing directory, busy), Internal (anything
  // else SQLite reports), InvalidArgument (an empty path, a negative max_readers). Nothing is
  // written when it fails before migrating.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteDatabase>> Open(
      const std::string& path, const SqliteOptions& options = {});

  SqliteDatabase(std::unique_ptr<Connection> connection, std::string path);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  const std::string& path() const { return path_; }

  // What Open changed to make the database files private (one sentence each, e.g. "<path> had
  // mode 0644; changed to 0600 ..."), for the operator's log; empty when nothing was changed.
  const std::vector<std::string>& mode_repairs() const { return mode_repairs_; }

  // The schema version recorded in the file (kSchemaVersion after a successful Open).
  [[nodiscard]] absl::StatusOr<int> SchemaVersion() const;

  // The settings in effect on the writer connection.
  [[nodiscard]] absl::StatusOr<SqliteSettings> Settings() const;

  // The read pool's bound, size and fallbacks to the writer.
  SqliteReadPoolStats ReadPoolStats() const;

  // PRAGMA integrity_check: OK, or DataLoss with SQLite's first findings.
  [[nodiscard]] absl::Status CheckIntegrity() const;

  // For the store adapters of this library: the writer and the read pool.
  Connection& connection() const { return *connection_; }

 private:
  std::unique_ptr<Connection> connection_;
  std::string path_;
  std::vector<std::string> mode_repairs_;
};

}  // namespace pulse::adapters::storage
