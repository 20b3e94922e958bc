// Prepared statements kept per connection (statement_cache.h): a store's reads prepare their SQL
// once per connection and reuse it; a kept statement never carries a caller's bindings or an
// unfinished read into the next use; the same SQL run inside its own loop gets a statement of
// its own; the cache keeps its bound; SQL that SQLite refuses leaves it as it was. Real SQLite
// files and ":memory:" databases; the cache is private to adapters/storage, so some cases use
// it and the transaction runners directly.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contracts/finding_store_contract.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "sqlite_connection.h"
#include "statement_cache.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::ActiveStatementCache;
using adapters::storage::Prepared;
using adapters::storage::ReadTransaction;
using adapters::storage::SqliteDatabase;
using adapters::storage::SqliteFindingStore;
using adapters::storage::SqliteOptions;
using adapters::storage::StatementCache;
using adapters::storage::WriteTransaction;
using contracts::SimpleFinding;

// A file database whose reads all run on one reader (so they share its statements).
std::unique_ptr<SqliteDatabase> OpenWithOneReader(TempDir& dir) {
  SqliteOptions options;
  options.max_readers = 1;
  return MustOpen(dir.File("pulse.db"), options);
}

// How many statements the cache of the connection a read runs on has prepared (with one
// reader, every read runs on the same one).
std::uint64_t ReaderPrepared(const SqliteDatabase& db) {
  std::uint64_t prepared = 0;
  const absl::Status status = ReadTransaction(db, [&](SQLite::Database& conn) -> absl::Status {
    StatementCache* cache = ActiveStatementCache(conn);
    REQUIRE(cache != nullptr);
    prepared = cache->prepared();
    return absl::OkStatus();
  });
  REQUIRE(status.ok());
  return prepared;
}

std::int64_t ReadCount(const SqliteDatabase& db, const std::string& sql) {
  std::int64_t n = -1;
  const absl::Status status = ReadTransaction(db, [&](SQLite::Database& conn) -> absl::Status {
    Prepared q(conn, sql);
    REQUIRE(q->executeStep());
    n = q->getColumn(0).getInt64();
    return absl::OkStatus();
  });
  REQUIRE(status.ok());
  return n;
}

void Exec(const SqliteDatabase& db, const std::string& sql) {
  const absl::Status status = WriteTransaction(db, [&](SQLite::Database& conn) -> absl::Status {
    conn.exec(sql);
    return absl::OkStatus();
  });
  REQUIRE(status.ok());
}

TEST_CASE("a store's reads prepare their statements once per connection and reuse them",
          "[adapters][storage][statement_cache]") {
  TempDir dir;
  auto db = OpenWithOneReader(dir);
  auto opened = SqliteFindingStore::Open(*db);
  REQUIRE(opened.ok());
  SqliteFindingStore& findings = **opened;
  REQUIRE(findings.Put(SimpleFinding("f-1", "vm:1", core::Category::kGeneral), 0).ok());
  REQUIRE(findings.Put(SimpleFinding("f-2", "vm:2", core::Category::kGeneral), 0).ok());

  const std::uint64_t before = ReaderPrepared(*db);
  REQUIRE(findings.Get("f-1").ok());
  const std::uint64_t after_first = ReaderPrepared(*db);
  CHECK(after_first > before);  // the first Get prepared its statement into the cache
  for (int i = 0; i < 50; ++i) {
    auto got = findings.Get(i % 2 == 0 ? "f-1" : "f-2");
    REQUIRE(got.ok());
    CHECK(got->finding.id == (i % 2 == 0 ? "f-1" : "f-2"));  // each call binds its own id
  }
  CHECK(ReaderPrepared(*db) == after_first);
  CHECK_FALSE(findings.Get("f-3").ok());  // a miss through the same statement
  CHECK(findings.Get("f-2")->finding.id == "f-2");
}

TEST_CASE("a kept statement carries no bindings into its next use",
          "[adapters][storage][statement_cache]") {
  auto db = MustOpen(":memory:");
  const auto read = [&](bool bind) {
    bool null = false;
    std::int64_t value = 0;
    const absl::Status status = ReadTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
      Prepared q(conn, "SELECT ?");
      if (bind) {
        q->bind(1, std::int64_t{42});
      }
      REQUIRE(q->executeStep());
      null = q->getColumn(0).isNull();
      value = null ? 0 : q->getColumn(0).getInt64();
      return absl::OkStatus();
    });
    REQUIRE(status.ok());
    return null ? std::int64_t{-1} : value;
  };
  CHECK(read(true) == 42);
  CHECK(read(false) == -1);  // NULL, not the 42 bound by the use before
}

TEST_CASE("a read that stops part way through its rows does not keep its snapshot",
          "[adapters][storage][statement_cache]") {
  TempDir dir;
  auto db = OpenWithOneReader(dir);
  Exec(*db, "CREATE TABLE t (v INTEGER)");
  Exec(*db, "INSERT INTO t VALUES (1), (2), (3)");
  const absl::Status first = ReadTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
    Prepared q(conn, "SELECT v FROM t ORDER BY v");
    REQUIRE(q->executeStep());
    CHECK(q->getColumn(0).getInt64() == 1);
    return absl::OkStatus();  // two rows left unread
  });
  REQUIRE(first.ok());
  Exec(*db, "INSERT INTO t VALUES (4)");
  // The same reader, the same kept statement: a new snapshot from its first row.
  std::vector<std::int64_t> seen;
  const absl::Status second = ReadTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
    Prepared q(conn, "SELECT v FROM t ORDER BY v");
    while (q->executeStep()) {
      seen.push_back(q->getColumn(0).getInt64());
    }
    return absl::OkStatus();
  });
  REQUIRE(second.ok());
  CHECK(seen == std::vector<std::int64_t>{1, 2, 3, 4});
}

TEST_CASE("the same SQL run inside its own loop over rows gets a statement of its own",
          "[adapters][storage][statement_cache]") {
  auto db = MustOpen(":memory:");
  Exec(*db, "CREATE TABLE t (v INTEGER)");
  Exec(*db, "INSERT INTO t VALUES (1), (2), (3)");
  const std::string sql = "SELECT v FROM t WHERE v >= ? ORDER BY v";
  std::vector<std::string> pairs;
  const absl::Status status = ReadTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
    Prepared outer(conn, sql);
    outer->bind(1, std::int64_t{2});
    while (outer->executeStep()) {
      const std::int64_t a = outer->getColumn(0).getInt64();
      Prepared inner(conn, sql);
      inner->bind(1, a);
      while (inner->executeStep()) {
        pairs.push_back(absl::StrCat(a, "-", inner->getColumn(0).getInt64()));
      }
    }
    return absl::OkStatus();
  });
  REQUIRE(status.ok());
  CHECK(pairs == std::vector<std::string>{"2-2", "2-3", "3-3"});
}

TEST_CASE("the cache keeps its bound, evicting the least recently used idle statement",
          "[adapters][storage][statement_cache]") {
  SQLite::Database conn(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  StatementCache cache(2);
  const auto use = [&](const std::string& sql) {
    SQLite::Statement* statement = cache.Acquire(conn, sql);
    REQUIRE(statement != nullptr);
    REQUIRE(statement->executeStep());
    cache.Release(statement);
  };
  use("SELECT 1");
  use("SELECT 2");
  use("SELECT 1");  // now the most recently used
  CHECK(cache.prepared() == 2);
  use("SELECT 3");  // evicts SELECT 2
  CHECK(cache.size() == 2);
  use("SELECT 1");
  CHECK(cache.prepared() == 3);
  use("SELECT 2");
  CHECK(cache.prepared() == 4);

  SECTION("a lent statement is never evicted, and its SQL is not lent twice") {
    SQLite::Statement* held = cache.Acquire(conn, "SELECT 10");
    REQUIRE(held != nullptr);
    CHECK(cache.Acquire(conn, "SELECT 10") == nullptr);
    use("SELECT 11");
    use("SELECT 12");
    REQUIRE(held->executeStep());
    CHECK(held->getColumn(0).getInt64() == 10);
    cache.Release(held);
    CHECK(cache.size() <= 2);
  }
  SECTION("another connection's statement is not lent from this cache") {
    SQLite::Database other(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    CHECK(cache.Acquire(other, "SELECT 1") == nullptr);
  }
}

TEST_CASE("SQL that SQLite refuses leaves the cache as it was",
          "[adapters][storage][statement_cache]") {
  SQLite::Database conn(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  StatementCache cache;
  CHECK_THROWS_AS(cache.Acquire(conn, "SELEC nothing"), SQLite::Exception);
  CHECK(cache.size() == 0);
  CHECK(cache.prepared() == 0);
  SQLite::Statement* statement = cache.Acquire(conn, "SELECT 7");
  REQUIRE(statement != nullptr);
  REQUIRE(statement->executeStep());
  CHECK(statement->getColumn(0).getInt64() == 7);
  cache.Release(statement);

  SECTION("and a failing statement inside a transaction fails only that transaction") {
    auto db = MustOpen(":memory:");
    const absl::Status bad = ReadTransaction(*db, [&](SQLite::Database& c) -> absl::Status {
      Prepared q(c, "SELECT * FROM no_such_table");
      return absl::OkStatus();
    });
    CHECK_FALSE(bad.ok());
    CHECK(ReadCount(*db, "SELECT count(*) FROM sqlite_master") > 0);
  }
}

TEST_CASE("closing a database whose connections keep statements removes its WAL",
          "[adapters][storage][statement_cache]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  SqliteOptions options;
  options.max_readers = 2;
  auto db = MustOpen(path, options);
  Exec(*db, "CREATE TABLE t (v INTEGER)");
  for (int i = 0; i < 10; ++i) {
    Exec(*db, absl::StrCat("INSERT INTO t VALUES (", i, ")"));
    CHECK(ReadCount(*db, "SELECT count(*) FROM t") == i + 1);
  }
  CHECK(std::filesystem::exists(path + "-wal"));
  db.reset();
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

}  // namespace
}  // namespace pulse::testing::storage
