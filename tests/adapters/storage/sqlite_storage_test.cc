// OpenSqliteStorage: one call opens a data dir — creating it 0700, the database and both key
// files 0600 — and reopening it finds everything where it was.
#include "pulse/adapters/storage/sqlite_storage.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::OpenSqliteStorage;

TEST_CASE("a new data dir is created private, with the database and 0600 key files",
          "[adapters][storage]") {
  TempDir root;
  const std::string data_dir = root.File("pulse-data");
  std::string token;
  {
    auto storage = OpenSqliteStorage(data_dir);
    INFO(storage.status().ToString());
    REQUIRE(storage.ok());
    CHECK(FileMode(data_dir) == 0700);
    CHECK(FileMode(data_dir + "/secret.key") == 0600);
    CHECK(FileMode(data_dir + "/token.key") == 0600);
    CHECK(std::filesystem::exists(data_dir + "/pulse.db"));
    core::NewApiToken request;
    request.name = "admin";
    request.scopes = {"*"};
    request.created_at = absl::FromUnixSeconds(1'800'000'000);
    auto issued = (*storage)->tokens->Create(request);
    REQUIRE(issued.ok());
    token = issued->token;
    REQUIRE((*storage)
                ->credentials->Put("openai", "sk-test-000000000000000000", request.created_at)
                .ok());
  }
  auto reopened = OpenSqliteStorage(data_dir);
  REQUIRE(reopened.ok());
  CHECK((*reopened)->tokens->Authenticate(token, absl::FromUnixSeconds(1'800'000'001)).ok());
  auto key = (*reopened)->credentials->Get("openai");
  REQUIRE(key.ok());
  CHECK(*key == "sk-test-000000000000000000");
}

TEST_CASE("a data dir path that is a file is refused", "[adapters][storage]") {
  TempDir root;
  const std::string not_a_dir = root.File("file");
  std::ofstream(not_a_dir) << "x";
  CHECK(absl::IsFailedPrecondition(OpenSqliteStorage(not_a_dir).status()));
  CHECK(absl::IsInvalidArgument(OpenSqliteStorage("").status()));
}

}  // namespace
}  // namespace pulse::testing::storage
