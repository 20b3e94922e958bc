// SqliteDatabase: durability settings, versioned migrations, and refusing files it must not
// touch (a newer schema, another application's database, garbage) without changing them.
#include "pulse/adapters/storage/sqlite_database.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::Durability;
using adapters::storage::kSchemaVersion;
using adapters::storage::SqliteDatabase;
using adapters::storage::SqliteOptions;

std::vector<std::string> SchemaOf(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT type || ':' || name || ':' || COALESCE(sql, '') "
                      "FROM sqlite_master ORDER BY type, name");
  std::vector<std::string> out;
  while (q.executeStep()) {
    out.push_back(q.getColumn(0).getString());
  }
  return out;
}

TEST_CASE("a new file database runs in WAL with synchronous=FULL, foreign keys and a busy timeout",
          "[adapters][storage]") {
  TempDir dir;
  SqliteOptions options;
  options.busy_timeout = absl::Milliseconds(2500);
  auto db = MustOpen(dir.File("pulse.db"), options);
  absl::StatusOr<adapters::storage::SqliteSettings> settings = db->Settings();
  REQUIRE(settings.ok());
  CHECK(settings->journal_mode == "wal");
  CHECK(settings->synchronous == 2);
  CHECK(settings->foreign_keys);
  CHECK(settings->busy_timeout_ms == 2500);
  absl::StatusOr<int> version = db->SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
  CHECK(db->CheckIntegrity().ok());
}

TEST_CASE("the NORMAL durability option is honoured for benchmarks", "[adapters][storage]") {
  TempDir dir;
  SqliteOptions options;
  options.durability = Durability::kNormal;
  auto db = MustOpen(dir.File("pulse.db"), options);
  absl::StatusOr<adapters::storage::SqliteSettings> settings = db->Settings();
  REQUIRE(settings.ok());
  CHECK(settings->synchronous == 1);
}

TEST_CASE("an in-memory database gets the same schema", "[adapters][storage]") {
  auto db = MustOpen(":memory:");
  absl::StatusOr<int> version = db->SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
  absl::StatusOr<adapters::storage::SqliteSettings> settings = db->Settings();
  REQUIRE(settings.ok());
  CHECK(settings->journal_mode == "memory");
  CHECK(settings->foreign_keys);
}

TEST_CASE("reopening runs no migration twice and keeps the schema", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  const std::vector<std::string> schema = SchemaOf(path);
  MustOpen(path).reset();
  CHECK(SchemaOf(path) == schema);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("SELECT COUNT(*) FROM schema_version").getInt() == kSchemaVersion);
  CHECK(raw.execAndGet("PRAGMA application_id").getInt() == 0x50554C53);
}

TEST_CASE("a database from a newer release is refused and left byte-identical",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("INSERT INTO schema_version (version, description) VALUES (" +
             std::to_string(kSchemaVersion + 1) + ", 'from the future')");
  }  // closing the last connection checkpoints the WAL into the main file
  const std::string before = ReadFileBytes(path);
  const std::vector<std::string> schema = SchemaOf(path);
  REQUIRE_FALSE(before.empty());

  absl::StatusOr<std::unique_ptr<SqliteDatabase>> opened = SqliteDatabase::Open(path);
  REQUIRE_FALSE(opened.ok());
  CHECK(absl::IsFailedPrecondition(opened.status()));
  const std::string message(opened.status().message());
  CHECK(message.find("schema version " + std::to_string(kSchemaVersion + 1)) != std::string::npos);
  CHECK(message.find("newer") != std::string::npos);

  CHECK(ReadFileBytes(path) == before);
  CHECK(SchemaOf(path) == schema);
}

TEST_CASE("another application's database is refused untouched", "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("other.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
  }
  const std::string before = ReadFileBytes(path);
  absl::StatusOr<std::unique_ptr<SqliteDatabase>> opened = SqliteDatabase::Open(path);
  CHECK(absl::IsFailedPrecondition(opened.status()));
  CHECK(std::string(opened.status().message()).find("not a Pulse database") != std::string::npos);
  CHECK(ReadFileBytes(path) == before);

  const std::string tagged = dir.File("tagged.db");
  {
    SQLite::Database raw(tagged, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("PRAGMA application_id = 42");
  }
  CHECK(absl::IsFailedPrecondition(SqliteDatabase::Open(tagged).status()));
}

TEST_CASE("a file that is not a SQLite database is DataLoss and stays as it was",
          "[adapters][storage]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  const std::string garbage(8192, '\x5A');
  {
    std::ofstream out(path, std::ios::binary);
    out << garbage;
  }
  absl::StatusOr<std::unique_ptr<SqliteDatabase>> opened = SqliteDatabase::Open(path);
  CHECK(absl::IsDataLoss(opened.status()));
  CHECK(ReadFileBytes(path) == garbage);
}

TEST_CASE("a database in a missing directory is Unavailable", "[adapters][storage]") {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SqliteDatabase>> opened =
      SqliteDatabase::Open(dir.File("missing/pulse.db"));
  CHECK(absl::IsUnavailable(opened.status()));
  CHECK(absl::IsInvalidArgument(SqliteDatabase::Open("").status()));
}

}  // namespace
}  // namespace pulse::testing::storage
