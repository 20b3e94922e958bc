// The SQLite adapter on a thread that must not wait (core/ports/no_blocking.h): a write refuses
// before its body runs or anything is queued, a read runs on a free reader, and a read that
// would wait for a lent reader refuses instead; the token store's first use, which records the
// use, refuses whole and records it when called again where waiting is allowed. Real files.
#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_token_store.h"
#include "pulse/core/ports/no_blocking.h"
#include "sqlite_connection.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::ReadTransaction;
using adapters::storage::SqliteDatabase;
using adapters::storage::SqliteOptions;
using adapters::storage::SqliteTokenStore;
using adapters::storage::WriteTransaction;

std::int64_t CountRows(const SqliteDatabase& db) {
  std::int64_t rows = -1;
  REQUIRE(ReadTransaction(db, [&](SQLite::Database& conn) {
            rows = conn.execAndGet("SELECT COUNT(*) FROM scratch").getInt64();
            return absl::OkStatus();
          }).ok());
  return rows;
}

TEST_CASE("sqlite: a thread that must not wait writes nothing and reads on a free reader",
          "[adapters][storage][no_blocking]") {
  TempDir dir;
  SqliteOptions options;
  options.max_readers = 1;
  std::unique_ptr<SqliteDatabase> db = MustOpen(dir.File("pulse.db"), options);
  REQUIRE(WriteTransaction(*db, [](SQLite::Database& conn) {
            conn.exec("CREATE TABLE scratch (x INTEGER)");
            return absl::OkStatus();
          }).ok());

  {
    core::NoBlockingScope scope;
    bool ran = false;
    const absl::Status write = WriteTransaction(*db, [&](SQLite::Database& conn) {
      ran = true;
      conn.exec("INSERT INTO scratch VALUES (1)");
      return absl::OkStatus();
    });
    CHECK(absl::IsUnavailable(write));
    CHECK_FALSE(ran);
    CHECK(scope.refused());
  }
  CHECK(CountRows(*db) == 0);

  {
    core::NoBlockingScope scope;
    CHECK(CountRows(*db) == 0);  // the one reader is free
    CHECK_FALSE(scope.refused());
  }

  // The one reader lent to another thread: a read here would wait, so it refuses.
  absl::Notification lent;
  absl::Notification give_back;
  std::thread holder([&] {
    CHECK(ReadTransaction(*db, [&](SQLite::Database&) {
            lent.Notify();
            give_back.WaitForNotificationWithTimeout(absl::Seconds(10));
            return absl::OkStatus();
          }).ok());
  });
  REQUIRE(lent.WaitForNotificationWithTimeout(absl::Seconds(5)));
  {
    core::NoBlockingScope scope;
    bool ran = false;
    const absl::Status read = ReadTransaction(*db, [&](SQLite::Database&) {
      ran = true;
      return absl::OkStatus();
    });
    CHECK(absl::IsUnavailable(read));
    CHECK_FALSE(ran);
    CHECK(scope.refused());
  }
  give_back.Notify();
  holder.join();

  // Where waiting is allowed, the same write goes ahead.
  REQUIRE(WriteTransaction(*db, [](SQLite::Database& conn) {
            conn.exec("INSERT INTO scratch VALUES (1)");
            return absl::OkStatus();
          }).ok());
  CHECK(CountRows(*db) == 1);
}

TEST_CASE("sqlite: a token's first use refuses whole where waiting is not allowed",
          "[adapters][storage][no_blocking]") {
  TempDir dir;
  std::unique_ptr<SqliteDatabase> db = MustOpen(dir.File("pulse.db"));
  absl::StatusOr<std::unique_ptr<SqliteTokenStore>> tokens =
      SqliteTokenStore::Open(*db, dir.File("server.key"));
  REQUIRE(tokens.ok());
  core::NewApiToken request;
  request.name = "loop";
  request.scopes = {"monitoring:read"};
  request.created_at = absl::Now();
  absl::StatusOr<core::IssuedApiToken> issued = (*tokens)->Create(request);
  REQUIRE(issued.ok());

  const absl::Time now = absl::Now();
  {
    core::NoBlockingScope scope;
    // Never used: this use must be recorded, which is a write.
    CHECK(absl::IsUnavailable((*tokens)->Authenticate(issued->token, now).status()));
    CHECK(scope.refused());
  }
  absl::StatusOr<core::ApiTokenInfo> used = (*tokens)->Authenticate(issued->token, now);
  REQUIRE(used.ok());
  CHECK(used->last_used_at.has_value());
  {
    // Recorded a moment ago: authenticating again only reads.
    core::NoBlockingScope scope;
    absl::StatusOr<core::ApiTokenInfo> again =
        (*tokens)->Authenticate(issued->token, now + absl::Seconds(1));
    REQUIRE(again.ok());
    CHECK(again->id == issued->info.id);
    CHECK_FALSE(scope.refused());
  }
}

}  // namespace
}  // namespace pulse::testing::storage
