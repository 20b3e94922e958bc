// The data dir holds operator notes, chat transcripts and keys, so nobody but its owner may
// reach it: OpenSqliteStorage refuses a data dir group or others can enter (naming the chmod
// that fixes it, and touching nothing), and the database files pulse.db, pulse.db-wal and
// pulse.db-shm are 0600 whatever the umask — an existing file that was readable by others is
// made 0600 and the repair is reported.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_format.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::OpenSqliteStorage;

// Sets the process umask for one scope (the files SQLite creates follow it unless Pulse says
// otherwise; 022 is the usual login default that made them 0644).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t old_;
};

// Writes one row so the write-ahead log and its index exist.
void WriteSomething(adapters::storage::SqliteStorage& storage) {
  core::NewApiToken request;
  request.name = "admin";
  request.scopes = {"*"};
  request.created_at = absl::FromUnixSeconds(1'800'000'000);
  REQUIRE(storage.tokens->Create(request).ok());
}

TEST_CASE("a data dir group or others can reach is refused, naming the fix",
          "[adapters][storage][modes]") {
  for (const mode_t mode : {0755, 0750, 0710, 0705, 0701, 0770, 0777}) {
    TempDir root;
    const std::string data_dir = root.File("data");
    REQUIRE(::mkdir(data_dir.c_str(), 0700) == 0);
    REQUIRE(::chmod(data_dir.c_str(), mode) == 0);
    INFO(absl::StrFormat("mode %04o", mode));
    auto storage = OpenSqliteStorage(data_dir);
    REQUIRE_FALSE(storage.ok());
    CHECK(absl::IsFailedPrecondition(storage.status()));
    const std::string message(storage.status().message());
    CHECK(message.find(absl::StrFormat("%04o", mode)) != std::string::npos);
    CHECK(message.find("chmod 700 " + data_dir) != std::string::npos);
    // Nothing was created or changed.
    CHECK_FALSE(std::filesystem::exists(data_dir + "/pulse.db"));
    CHECK_FALSE(std::filesystem::exists(data_dir + "/secret.key"));
    CHECK(FileMode(data_dir) == mode);
  }
}

TEST_CASE("a fresh data dir is 0700 and its database files 0600 under a permissive umask",
          "[adapters][storage][modes]") {
  ScopedUmask umask(022);
  TempDir root;
  const std::string data_dir = root.File("fresh");
  auto storage = OpenSqliteStorage(data_dir);
  INFO(storage.status().ToString());
  REQUIRE(storage.ok());
  WriteSomething(**storage);
  CHECK(FileMode(data_dir) == 0700);
  for (const char* name : {"pulse.db", "pulse.db-wal", "pulse.db-shm"}) {
    INFO(name);
    REQUIRE(std::filesystem::exists(data_dir + "/" + name));
    CHECK(FileMode(data_dir + "/" + name) == 0600);
  }
}

TEST_CASE("a database file others could read is made 0600 on open", "[adapters][storage][modes]") {
  ScopedUmask umask(022);
  TempDir root;
  const std::string data_dir = root.File("old");
  REQUIRE(OpenSqliteStorage(data_dir).ok());
  const std::string db = data_dir + "/pulse.db";
  REQUIRE(::chmod(db.c_str(), 0644) == 0);
  {
    // A log left behind 0644 by an older release (an empty log is a valid one).
    std::ofstream wal(db + "-wal");
  }
  REQUIRE(::chmod((db + "-wal").c_str(), 0644) == 0);
  auto storage = OpenSqliteStorage(data_dir);
  INFO(storage.status().ToString());
  REQUIRE(storage.ok());
  WriteSomething(**storage);
  CHECK(FileMode(db) == 0600);
  CHECK(FileMode(db + "-wal") == 0600);
  CHECK(FileMode(db + "-shm") == 0600);
}

TEST_CASE("a database file that is a link or not a regular file is refused, never followed",
          "[adapters][storage][modes]") {
  TempDir root;
  const std::string outside = root.File("elsewhere.db");
  { std::ofstream(outside) << ""; }
  REQUIRE(::chmod(outside.c_str(), 0644) == 0);
  {
    const std::string data_dir = root.File("linked");
    REQUIRE(::mkdir(data_dir.c_str(), 0700) == 0);
    REQUIRE(::symlink(outside.c_str(), (data_dir + "/pulse.db").c_str()) == 0);
    auto storage = OpenSqliteStorage(data_dir);
    CHECK(absl::IsFailedPrecondition(storage.status()));
    CHECK(std::string(storage.status().message()).find("symbolic link") != std::string::npos);
    CHECK(FileMode(outside) == 0644);  // the target was left alone
  }
  {
    // A FIFO where the log belongs: refused at once (opening it must not wait for a writer).
    const std::string data_dir = root.File("fifo");
    REQUIRE(::mkdir(data_dir.c_str(), 0700) == 0);
    REQUIRE(::mkfifo((data_dir + "/pulse.db-wal").c_str(), 0600) == 0);
    auto storage = OpenSqliteStorage(data_dir);
    CHECK(absl::IsFailedPrecondition(storage.status()));
    CHECK(std::string(storage.status().message()).find("not a regular file") != std::string::npos);
  }
}

TEST_CASE("a data dir owned by another user is refused", "[adapters][storage][modes]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to give a directory to another user");
    return;
  }
  TempDir root;
  const std::string data_dir = root.File("theirs");
  REQUIRE(::mkdir(data_dir.c_str(), 0700) == 0);
  REQUIRE(::chown(data_dir.c_str(), 65534, 65534) == 0);
  auto storage = OpenSqliteStorage(data_dir);
  CHECK(absl::IsFailedPrecondition(storage.status()));
  CHECK(std::string(storage.status().message()).find("owned by uid 65534") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(data_dir + "/pulse.db"));
}

}  // namespace
}  // namespace pulse::testing::storage
