// Secrets at rest: the key file's creation and permission checks, SecretBox sealing, and the
// provider credential store — a wrong or missing key is always a clear error, never plaintext.
#include <SQLiteCpp/Database.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pulse/adapters/storage/secret_box.h"
#include "pulse/adapters/storage/sqlite_credential_store.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::KeyFileMode;
using adapters::storage::SecretBox;
using adapters::storage::SqliteCredentialStore;

std::unique_ptr<SecretBox> MustBox(const std::string& path,
                                   KeyFileMode mode = KeyFileMode::kCreateIfMissing) {
  auto box = SecretBox::Open(path, mode);
  INFO(box.status().ToString());
  REQUIRE(box.ok());
  return *std::move(box);
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST_CASE("a missing key file is created with mode 0600 and 32 bytes, whatever the umask",
          "[adapters][storage][secrets]") {
  TempDir dir;
  const std::string path = dir.File("secret.key");
  const mode_t old_umask = umask(0);
  auto box = MustBox(path);
  umask(old_umask);
  CHECK(FileMode(path) == 0600);
  CHECK(ReadFileBytes(path).size() == 32);
  // No temporary file is left behind.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  CHECK(names == std::vector<std::string>{"secret.key"});
  // The same file gives the same key.
  auto again = MustBox(path, KeyFileMode::kMustExist);
  CHECK(again->key_id() == box->key_id());
  auto opened = again->Unseal(box->Seal("sk-live-123"));
  REQUIRE(opened.ok());
  CHECK(*opened == "sk-live-123");
}

TEST_CASE("a key file others could read is refused with a fix in the message",
          "[adapters][storage][secrets]") {
  TempDir dir;
  const std::string path = dir.File("secret.key");
  MustBox(path);
  for (mode_t mode : {0640, 0604, 0644, 0660, 0606}) {
    REQUIRE(chmod(path.c_str(), mode) == 0);
    auto box = SecretBox::Open(path);
    INFO("mode " << std::oct << mode);
    REQUIRE_FALSE(box.ok());
    CHECK(absl::IsFailedPrecondition(box.status()));
    CHECK(Contains(std::string(box.status().message()), "chmod 600"));
  }
  REQUIRE(chmod(path.c_str(), 0400) == 0);
  CHECK(SecretBox::Open(path).ok());  // owner read-only is fine
}

TEST_CASE("a missing key under kMustExist, a symlink, or a wrong-sized file is refused",
          "[adapters][storage][secrets]") {
  TempDir dir;
  auto missing = SecretBox::Open(dir.File("secret.key"), KeyFileMode::kMustExist);
  CHECK(absl::IsFailedPrecondition(missing.status()));
  CHECK(Contains(std::string(missing.status().message()), "missing"));
  CHECK_FALSE(std::filesystem::exists(dir.File("secret.key")));

  MustBox(dir.File("real.key"));
  REQUIRE(symlink(dir.File("real.key").c_str(), dir.File("link.key").c_str()) == 0);
  CHECK(absl::IsFailedPrecondition(SecretBox::Open(dir.File("link.key")).status()));

  const std::string short_key = dir.File("short.key");
  {
    std::ofstream out(short_key, std::ios::binary);
    out << "0123456789";
  }
  REQUIRE(chmod(short_key.c_str(), 0600) == 0);
  auto wrong_size = SecretBox::Open(short_key);
  CHECK(absl::IsFailedPrecondition(wrong_size.status()));
  CHECK(Contains(std::string(wrong_size.status().message()), "10 bytes"));

  CHECK(absl::IsUnavailable(SecretBox::Open(dir.File("no/such/dir/secret.key")).status()));
}

TEST_CASE("concurrent first opens agree on one key", "[adapters][storage][secrets]") {
  TempDir dir;
  const std::string path = dir.File("secret.key");
  constexpr int kThreads = 8;
  std::vector<std::string> ids(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto box = SecretBox::Open(path);
      ids[static_cast<std::size_t>(i)] = box.ok() ? (*box)->key_id() : "error";
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 1);
  CHECK(ids.front() != "error");
}

TEST_CASE("sealing uses a fresh nonce and round-trips any bytes", "[adapters][storage][secrets]") {
  TempDir dir;
  auto box = MustBox(dir.File("secret.key"));
  const std::string secret = "sk-ant-api03-abcdefghijklmnop";
  const std::string a = box->Seal(secret);
  const std::string b = box->Seal(secret);
  CHECK(a != b);
  CHECK_FALSE(Contains(a, secret));
  for (const std::string& plain :
       {std::string(), std::string("\0\x01\xFF binary", 10), std::string(1 << 20, 'k')}) {
    auto opened = box->Unseal(box->Seal(plain));
    REQUIRE(opened.ok());
    CHECK(*opened == plain);
  }
}

TEST_CASE("a wrong key or an altered value is an error, never plaintext",
          "[adapters][storage][secrets]") {
  TempDir dir;
  auto box = MustBox(dir.File("secret.key"));
  auto other = MustBox(dir.File("other.key"));
  const std::string sealed = box->Seal("hunter2-provider-key");

  auto wrong = other->Unseal(sealed);
  REQUIRE_FALSE(wrong.ok());
  CHECK(absl::IsFailedPrecondition(wrong.status()));
  CHECK(Contains(std::string(wrong.status().message()), "different key"));
  CHECK_FALSE(Contains(std::string(wrong.status().message()), "hunter2"));

  std::string flipped = sealed;
  flipped.back() = static_cast<char>(flipped.back() ^ 0x01);
  CHECK(absl::IsDataLoss(box->Unseal(flipped).status()));
  std::string nonce_flipped = sealed;
  nonce_flipped[20] = static_cast<char>(nonce_flipped[20] ^ 0x80);
  CHECK(absl::IsDataLoss(box->Unseal(nonce_flipped).status()));
  CHECK(absl::IsDataLoss(box->Unseal(sealed.substr(0, 30)).status()));
  CHECK(absl::IsDataLoss(box->Unseal("").status()));
  CHECK(absl::IsDataLoss(box->Unseal("hunter2-provider-key").status()));
}

TEST_CASE("provider credentials are stored sealed and read back only with the right key",
          "[adapters][storage][secrets]") {
  TempDir dir;
  const std::string db_path = dir.File("pulse.db");
  const std::string secret = "sk-proj-ThisIsAProviderKeyThatMustNeverHitDisk0123";
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000) + absl::Nanoseconds(9);
  {
    auto db = MustOpen(db_path);
    auto box = MustBox(dir.File("secret.key"));
    auto store = SqliteCredentialStore::Open(*db, *box);
    REQUIRE(store.ok());
    REQUIRE((*store)->Put("openai", secret, now).ok());
    REQUIRE((*store)->Put("anthropic", "sk-ant-second", now).ok());
    auto got = (*store)->Get("openai");
    REQUIRE(got.ok());
    CHECK(*got == secret);
    auto listed = (*store)->List();
    REQUIRE(listed.ok());
    CHECK(*listed ==
          std::vector<adapters::storage::CredentialInfo>{{"anthropic", now}, {"openai", now}});
    CHECK(absl::IsNotFound((*store)->Get("groq").status()));
    CHECK(absl::IsInvalidArgument((*store)->Put("Open AI", secret, now)));
    CHECK(absl::IsInvalidArgument((*store)->Put("groq", "", now)));
    // Neither the database file nor its write-ahead log holds the plaintext.
    CHECK_FALSE(Contains(ReadFileBytes(db_path), secret));
    CHECK_FALSE(Contains(ReadFileBytes(db_path + "-wal"), secret));
  }
  CHECK_FALSE(Contains(ReadFileBytes(db_path), secret));

  // Reopened with the same key file: readable.
  {
    auto db = MustOpen(db_path);
    auto box = MustBox(dir.File("secret.key"), KeyFileMode::kMustExist);
    auto store = SqliteCredentialStore::Open(*db, *box);
    REQUIRE(store.ok());
    auto got = (*store)->Get("openai");
    REQUIRE(got.ok());
    CHECK(*got == secret);
  }
  // Reopened with another key file: refused at Open, before any use.
  {
    auto db = MustOpen(db_path);
    auto box = MustBox(dir.File("replacement.key"));
    auto store = SqliteCredentialStore::Open(*db, *box);
    REQUIRE_FALSE(store.ok());
    CHECK(absl::IsFailedPrecondition(store.status()));
    CHECK(Contains(std::string(store.status().message()), "secret.key"));
  }
}

TEST_CASE("a sealed credential moved to another provider's row does not open",
          "[adapters][storage][secrets]") {
  TempDir dir;
  const std::string db_path = dir.File("pulse.db");
  auto db = MustOpen(db_path);
  auto box = MustBox(dir.File("secret.key"));
  auto store = *SqliteCredentialStore::Open(*db, *box);
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  REQUIRE(store->Put("openai", "sk-openai-key-000000000000", now).ok());
  REQUIRE(store->Put("groq", "gsk_groq-key-00000000000000", now).ok());
  {
    SQLite::Database raw(db_path, SQLite::OPEN_READWRITE);
    raw.exec(
        "UPDATE provider_credentials SET sealed = (SELECT sealed FROM provider_credentials "
        "WHERE provider = 'openai') WHERE provider = 'groq'");
  }
  CHECK(absl::IsDataLoss(store->Get("groq").status()));
  REQUIRE(store->Delete("groq").ok());
  CHECK(absl::IsNotFound(store->Delete("groq")));
  auto openai = store->Get("openai");
  REQUIRE(openai.ok());
  CHECK(*openai == "sk-openai-key-000000000000");
}

TEST_CASE("an empty credential table may move to a new key", "[adapters][storage][secrets]") {
  TempDir dir;
  auto db = MustOpen(dir.File("pulse.db"));
  auto first = MustBox(dir.File("a.key"));
  REQUIRE(SqliteCredentialStore::Open(*db, *first).ok());
  auto second = MustBox(dir.File("b.key"));
  CHECK(SqliteCredentialStore::Open(*db, *second).ok());
}

}  // namespace
}  // namespace pulse::testing::storage
