#include "pulse/adapters/storage/sqlite_database.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "file_modes.h"
#include "migrations.h"
#include "sqlite_connection.h"

namespace pulse::adapters::storage {
namespace {

// The recorded schema version, read without writing anything: 0 for an empty database.
// FailedPrecondition when the file belongs to something else.
absl::StatusOr<int> ReadVersionWithoutWriting(SQLite::Database& db) {
  const int application_id = db.execAndGet("PRAGMA application_id").getInt();
  if (application_id != 0 && application_id != kApplicationId) {
    return absl::FailedPreconditionError(absl::StrCat(
        "not a Pulse database: the file belongs to another application (application_id ",
        application_id, ")"));
  }
  SQLite::Statement tables(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' "
                           "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
  bool has_version_table = false;
  bool has_other_tables = false;
  while (tables.executeStep()) {
    if (tables.getColumn(0).getString() == "schema_version") {
      has_version_table = true;
    } else {
      has_other_tables = true;
    }
  }
  if (!has_version_table) {
    if (has_other_tables) {
      return absl::FailedPreconditionError(
          "not a Pulse database: it has tables but no schema_version table");
    }
    return 0;
  }
  SQLite::Column max = db.execAndGet("SELECT MAX(version) FROM schema_version");
  return max.isNull() ? 0 : max.getInt();
}

absl::Status CheckNotNewer(int version) {
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("the database has schema version ", version,
                     " but this release understands versions up to ", kSchemaVersion,
                     "; it was written by a newer Pulse. Upgrade Pulse (or restore a backup "
                     "taken before the upgrade); the file was not changed"));
  }
  return absl::OkStatus();
}

absl::Status ApplySettings(SQLite::Database& db, const std::string& path,
                           const SqliteOptions& options) {
  const std::string mode =
      absl::AsciiStrToLower(db.execAndGet("PRAGMA journal_mode = WAL").getString());
  if (mode != "wal" && !(path == ":memory:" && mode == "memory")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot put the database in WAL mode (journal_mode is ", mode,
        "); the file system must support shared memory and locking (not a network share)"));
  }
  db.exec(options.durability == Durability::kFull ? "PRAGMA synchronous = FULL"
                                                  : "PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA trusted_schema = OFF");
  if (db.execAndGet("PRAGMA foreign_keys").getInt() != 1) {
    return absl::InternalError("sqlite: foreign keys could not be enabled");
  }
  return absl::OkStatus();
}

absl::Status Migrate(const SqliteDatabase& database) {
  for (const Migration& migration : Migrations()) {
    absl::Status status = WriteTransaction(database, [&](SQLite::Database& db) -> absl::Status {
      // Another process may have migrated since Open looked; decide inside the write lock.
      absl::StatusOr<int> current = ReadVersionWithoutWriting(db);
      if (!current.ok()) {
        return current.status();
      }
      if (absl::Status s = CheckNotNewer(*current); !s.ok()) {
        return s;
      }
      if (*current >= migration.version) {
        return absl::OkStatus();
      }
      if (*current != migration.version - 1) {
        return absl::InternalError(
            absl::StrCat("schema version ", *current, " has no migration to ", migration.version));
      }
      db.exec(migration.sql);
      SQLite::Statement record(db,
                               "INSERT INTO schema_version (version, description) VALUES (?, ?)");
      record.bind(1, migration.version);
      record.bind(2, migration.description);
      record.exec();
      return absl::OkStatus();
    });
    if (!status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

SqliteDatabase::SqliteDatabase(std::unique_ptr<Connection> connection, std::string path)
    : connection_(std::move(connection)), path_(std::move(path)) {}

SqliteDatabase::~SqliteDatabase() = default;

absl::StatusOr<std::unique_ptr<SqliteDatabase>> SqliteDatabase::Open(const std::string& path,
                                                                     const SqliteOptions& options) {
  if (path.empty()) {
    return absl::InvalidArgumentError("database path is empty");
  }
  if (options.max_readers < 0) {
    return absl::InvalidArgumentError("max_readers is negative");
  }
  std::vector<std::string> mode_repairs;
  if (path != ":memory:") {
    absl::StatusOr<std::vector<std::string>> secured = SecureDatabaseFiles(path);
    if (!secured.ok()) {
      return secured.status();
    }
    mode_repairs = *std::move(secured);
  }
  auto connection = std::make_unique<Connection>();
  const auto busy_ms = static_cast<int>(absl::ToInt64Milliseconds(options.busy_timeout));
  try {
    // Nothing else sees the connection yet; the lock only states what guards the writer.
    absl::MutexLock lock(&connection->mu);
    connection->db = std::make_unique<SQLite::Database>(
        path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, busy_ms);
    absl::StatusOr<int> version = ReadVersionWithoutWriting(*connection->db);
    if (!version.ok()) {
      return version.status();
    }
    if (absl::Status s = CheckNotNewer(*version); !s.ok()) {
      return s;
    }
    if (absl::Status s = ApplySettings(*connection->db, path, options); !s.ok()) {
      return s;
    }
    // SQLite's absolute name of the file ("" for ":memory:" and temporary databases, whose
    // contents only this connection can see: their reads stay on the writer).
    const char* file = sqlite3_db_filename(connection->db->getHandle(), "main");
    std::string reader_path = file == nullptr ? "" : file;
    const int max_readers = reader_path.empty() ? 0 : options.max_readers;
    connection->readers =
        std::make_unique<ReaderPool>(std::move(reader_path), max_readers, busy_ms);
  } catch (const std::exception& e) {
    return StatusFromException(e, absl::StrCat("open ", path));
  }
  auto database = std::make_unique<SqliteDatabase>(std::move(connection), path);
  database->mode_repairs_ = std::move(mode_repairs);
  if (absl::Status s = Migrate(*database); !s.ok()) {
    return s;
  }
  {
    // Statements are kept per connection from here on; none from before the schema's last
    // change (SQLiteCpp keeps a statement's column count from when it was prepared).
    SqliteDatabase::Connection& opened = database->connection();
    absl::MutexLock lock(&opened.mu);
    opened.statements.Clear();
  }
  return database;
}

absl::StatusOr<int> SqliteDatabase::SchemaVersion() const {
  int version = 0;
  absl::Status status = ReadTransaction(*this, [&](SQLite::Database& db) -> absl::Status {
    absl::StatusOr<int> v = ReadVersionWithoutWriting(db);
    if (!v.ok()) {
      return v.status();
    }
    version = *v;
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return version;
}

absl::StatusOr<SqliteSettings> SqliteDatabase::Settings() const {
  SqliteSettings settings;
  absl::MutexLock lock(&connection_->mu);
  try {
    SQLite::Database& db = *connection_->db;
    settings.journal_mode = absl::AsciiStrToLower(db.execAndGet("PRAGMA journal_mode").getString());
    settings.synchronous = db.execAndGet("PRAGMA synchronous").getInt();
    settings.foreign_keys = db.execAndGet("PRAGMA foreign_keys").getInt() == 1;
    settings.busy_timeout_ms = db.execAndGet("PRAGMA busy_timeout").getInt();
  } catch (const std::exception& e) {
    return StatusFromException(e, "settings");
  }
  return settings;
}

SqliteReadPoolStats SqliteDatabase::ReadPoolStats() const {
  return connection_->readers != nullptr ? connection_->readers->Stats() : SqliteReadPoolStats{};
}

absl::Status SqliteDatabase::CheckIntegrity() const {
  std::vector<std::string> findings;
  absl::Status status = ReadTransaction(*this, [&](SQLite::Database& db) -> absl::Status {
    SQLite::Statement check(db, "PRAGMA integrity_check(20)");
    while (check.executeStep()) {
      findings.push_back(check.getColumn(0).getString());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (findings.size() == 1 && findings.front() == "ok") {
    return absl::OkStatus();
  }
  return absl::DataLossError(
      absl::StrCat("sqlite integrity_check failed: ", absl::StrJoin(findings, "; ")));
}

}  // namespace pulse::adapters::storage
