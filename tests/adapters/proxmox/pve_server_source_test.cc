// The proxmox-ve kind in pulse-server: the token secret sealed by `fleet-credential set`
// (adapters/server/fleet_credential_command.h) in the data dir, never in pulse.json, and a
// sources document naming a proxmox-ve source opened through the server's registry
// (adapters/server/src/fleet_opening.h) against the fake PVE.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fleet_opening.h"
#include "pulse/adapters/proxmox/pve_source.h"
#include "pulse/adapters/server/fleet_credential_command.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/testing/fake_clock.h"
#include "pve_test_support.h"

namespace pulse::proxmox::testing {
namespace {

std::string Sources(const PveHarness& pve, const std::string& extra = "") {
  return absl::StrCat(R"({"sources": [{"name": "pve", "kind": "proxmox-ve", "url": ")",
                      pve.server->url(), R"(", "token_id": ")", kTokenId, R"(", "fingerprint": ")",
                      pve.cert.fingerprint, "\"", extra, "}]}");
}

server::FleetCredentialLookup FromDataDir(const std::string& data_dir) {
  return [data_dir](std::string_view name) -> absl::StatusOr<std::string> {
    absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> storage =
        adapters::storage::OpenSqliteStorage(data_dir);
    if (!storage.ok()) {
      return storage.status();
    }
    return (*storage)->credentials->Get(FleetCredentialName(name));
  };
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("fleet-credential set seals a source's secret and refuses bad input",
          "[adapters][proxmox][server]") {
  pulse::testing::TempDir dir("pulse-pve-cred");
  const std::string data = dir.File("data");
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  for (const char* name : {"", "PVE", "a b", "../x", "a/b", "-x"}) {
    INFO(name);
    CHECK(absl::IsInvalidArgument(server::SetFleetCredential(data, name, "s", now)));
  }
  for (const char* secret : {"", "\n", "two words", "tab\there", "a\nb"}) {
    INFO(secret);
    CHECK(absl::IsInvalidArgument(server::SetFleetCredential(data, "pve", secret, now)));
  }
  CHECK(absl::IsInvalidArgument(
      server::SetFleetCredential(data, "pve", std::string(5000, 'x'), now)));
  REQUIRE(server::SetFleetCredential(data, "pve", std::string(kSecret) + "\n", now).ok());
  absl::StatusOr<std::string> stored = FromDataDir(data)("pve");
  REQUIRE(stored.ok());
  CHECK(*stored == kSecret);  // the trailing newline is not part of it
  CHECK_FALSE(absl::StrContains(FileText(data + "/pulse.db"), kSecret));
  REQUIRE(server::DeleteFleetCredential(data, "pve").ok());
  CHECK(absl::IsNotFound(server::DeleteFleetCredential(data, "pve")));
  CHECK(absl::IsNotFound(server::DeleteFleetCredential(dir.File("none"), "pve")));
}

TEST_CASE("pulse-server opens a proxmox-ve source with its sealed secret",
          "[adapters][proxmox][server]") {
  PveHarness pve;
  pulse::testing::FakeClock clock;
  server::ServerConfig config;
  config.fleet_sources = Sources(pve, R"(, "allow_actions": true)");
  const std::string data = pve.dir.File("data");

  // No secret yet: refused, naming the command that enters it; nothing reached PVE.
  REQUIRE(server::SetFleetCredential(data, "other", "x", absl::Now()).ok());
  absl::StatusOr<server::OpenedFleet> missing =
      server::OpenConfiguredFleet(config, clock, FromDataDir(data));
  REQUIRE_FALSE(missing.ok());
  CHECK(absl::IsFailedPrecondition(missing.status()));
  CHECK(absl::StrContains(missing.status().message(), "fleet source \"pve\""));
  CHECK(absl::StrContains(missing.status().message(), "fleet-credential set"));
  CHECK(absl::IsFailedPrecondition(server::OpenConfiguredFleet(config, clock).status()));
  CHECK(pve.server->Requests().empty());

  // A wrong secret: PVE's 401, named.
  REQUIRE(server::SetFleetCredential(data, "pve", "not-the-secret", absl::Now()).ok());
  absl::Status wrong = server::OpenConfiguredFleet(config, clock, FromDataDir(data)).status();
  CHECK(absl::IsUnauthenticated(wrong));
  CHECK(absl::StrContains(wrong.message(), "pulse.json \"fleet\""));
  CHECK_FALSE(absl::StrContains(wrong.message(), "not-the-secret"));

  REQUIRE(server::SetFleetCredential(data, "pve", kSecret, absl::Now()).ok());
  absl::StatusOr<server::OpenedFleet> opened =
      server::OpenConfiguredFleet(config, clock, FromDataDir(data));
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  absl::StatusOr<core::FleetResource> web = opened->fleet->GetResource("vm:101");
  REQUIRE(web.ok());
  CHECK(web->attributes.at("pulse.source") == "pve");
  absl::StatusOr<std::vector<core::Capability>> caps = opened->fleet->ListCapabilities("vm:101");
  REQUIRE(caps.ok());
  CHECK(caps->size() == 3);

  // A secret in the settings is refused, saying where it goes.
  config.fleet_sources = Sources(pve, R"(, "token_secret": "x")");
  absl::Status inline_secret =
      server::OpenConfiguredFleet(config, clock, FromDataDir(data)).status();
  CHECK(absl::IsInvalidArgument(inline_secret));
  CHECK(absl::StrContains(inline_secret.message(), "fleet-credential set"));
}

}  // namespace
}  // namespace pulse::proxmox::testing
