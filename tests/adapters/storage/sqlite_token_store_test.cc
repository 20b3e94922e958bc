// SqliteTokenStore beyond the port contract: the raw token never reaches the disk, the stored
// value is a hash keyed with the server key (not a plain hash), the token key is its own 0600
// file, tokens survive a restart, and a replaced token key is refused at Open.
#include "pulse/adapters/storage/sqlite_token_store.h"

#include <SQLiteCpp/Database.h>
#include <sodium/crypto_generichash.h>

#include <array>
#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/storage/secret_box.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::SqliteTokenStore;

core::NewApiToken Request(std::string name) {
  core::NewApiToken r;
  r.name = std::move(name);
  r.scopes = {"ai:chat", "monitoring:read"};
  r.created_at = absl::FromUnixSeconds(1'800'000'000);
  return r;
}

std::string UnkeyedBlake2b(const std::string& text) {
  std::array<unsigned char, crypto_generichash_BYTES> out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(text.data()),
                     text.size(), nullptr, 0);
  return std::string(out.begin(), out.end());
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST_CASE("only a keyed hash of a token is stored, the raw token never reaches the disk",
          "[adapters][storage][tokens]") {
  TempDir dir;
  const std::string db_path = dir.File("pulse.db");
  std::string token;
  {
    auto db = MustOpen(db_path);
    auto store = SqliteTokenStore::Open(*db, dir.File("token.key"));
    REQUIRE(store.ok());
    auto issued = (*store)->Create(Request("ci"));
    REQUIRE(issued.ok());
    token = issued->token;
    const std::string body = token.substr(core::kApiTokenPrefix.size());
    CHECK_FALSE(Contains(ReadFileBytes(db_path), body));
    CHECK_FALSE(Contains(ReadFileBytes(db_path + "-wal"), body));

    SQLite::Database raw(db_path, SQLite::OPEN_READONLY);
    SQLite::Column hash = raw.execAndGet("SELECT token_hash FROM api_tokens");
    const std::string stored(static_cast<const char*>(hash.getBlob()),
                             static_cast<std::size_t>(hash.getBytes()));
    CHECK(stored.size() == crypto_generichash_BYTES);
    CHECK(stored != UnkeyedBlake2b(token));
    CHECK(raw.execAndGet("SELECT scopes FROM api_tokens").getString() == "monitoring:read,ai:chat");
  }
  CHECK_FALSE(Contains(ReadFileBytes(db_path), token.substr(core::kApiTokenPrefix.size())));
  CHECK(FileMode(dir.File("token.key")) == 0600);

  // A restart with the same key file: the token still authenticates.
  auto db = MustOpen(db_path);
  auto store = SqliteTokenStore::Open(*db, dir.File("token.key"),
                                      adapters::storage::KeyFileMode::kMustExist);
  REQUIRE(store.ok());
  auto who = (*store)->Authenticate(token, absl::FromUnixSeconds(1'800'000'100));
  REQUIRE(who.ok());
  CHECK(who->name == "ci");
}

TEST_CASE("a token minted before kinds existed is a human token after migration 6",
          "[adapters][storage][tokens]") {
  TempDir dir;
  const std::string db_path = dir.File("pulse.db");
  std::string token;
  {
    auto db = MustOpen(db_path);
    auto store = SqliteTokenStore::Open(*db, dir.File("token.key"));
    REQUIRE(store.ok());
    core::NewApiToken request = Request("old");
    request.kind = core::ApiTokenKind::kAgent;  // forgotten by the rollback below
    auto issued = (*store)->Create(request);
    REQUIRE(issued.ok());
    token = issued->token;
  }
  {
    // Roll the file back to what release 5 wrote.
    SQLite::Database raw(db_path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    raw.exec("ALTER TABLE api_tokens DROP COLUMN kind");
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
    raw.exec("DELETE FROM schema_version WHERE version >= 6");
  }
  auto db = MustOpen(db_path);
  auto store = SqliteTokenStore::Open(*db, dir.File("token.key"));
  REQUIRE(store.ok());
  auto who = (*store)->Authenticate(token, absl::FromUnixSeconds(1'800'000'100));
  REQUIRE(who.ok());
  CHECK(who->kind == core::ApiTokenKind::kHuman);
  // The column refuses a kind outside the three.
  SQLite::Database raw(db_path, SQLite::OPEN_READWRITE);
  CHECK_THROWS(raw.exec("UPDATE api_tokens SET kind = 'root'"));
  CHECK_THROWS(raw.exec("UPDATE api_tokens SET kind = 'Human'"));
}

TEST_CASE("the token key is separate from the secret-box key", "[adapters][storage][tokens]") {
  TempDir dir;
  auto db = MustOpen(":memory:");
  REQUIRE(SqliteTokenStore::Open(*db, dir.File("token.key")).ok());
  REQUIRE(adapters::storage::SecretBox::Open(dir.File("secret.key")).ok());
  CHECK(ReadFileBytes(dir.File("token.key")) != ReadFileBytes(dir.File("secret.key")));
}

TEST_CASE("a replaced token key is refused at Open instead of failing every token",
          "[adapters][storage][tokens]") {
  TempDir dir;
  const std::string db_path = dir.File("pulse.db");
  {
    auto db = MustOpen(db_path);
    auto store = SqliteTokenStore::Open(*db, dir.File("token.key"));
    REQUIRE(store.ok());
    REQUIRE((*store)->Create(Request("ci")).ok());
  }
  std::filesystem::remove(dir.File("token.key"));
  auto db = MustOpen(db_path);
  auto missing = SqliteTokenStore::Open(*db, dir.File("token.key"),
                                        adapters::storage::KeyFileMode::kMustExist);
  CHECK(absl::IsFailedPrecondition(missing.status()));
  auto replaced = SqliteTokenStore::Open(*db, dir.File("token.key"));
  REQUIRE_FALSE(replaced.ok());
  CHECK(absl::IsFailedPrecondition(replaced.status()));
  CHECK(Contains(std::string(replaced.status().message()), "token.key"));
}

}  // namespace
}  // namespace pulse::testing::storage
