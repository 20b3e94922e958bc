// The proxmox-ve source settings (pve_source.h): what a sources document may say, strictly.
#include "pulse/adapters/proxmox/pve_source.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"

namespace pulse::proxmox {
namespace {

constexpr char kFingerprint[] =
    "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:"
    "89";

TEST_CASE("proxmox-ve settings are read with their defaults", "[adapters][proxmox]") {
  absl::StatusOr<PveFleetOptions> options =
      ParsePveSource(std::string(R"({"name":"pve","kind":"proxmox-ve","url":"https://pve1.lab:8006",
      "token_id":"pulse@pve!pulse","fingerprint":")") +
                     kFingerprint + R"(","allow_actions":true,"action_deadline_seconds":30,
      "shutdown_timeout_seconds":20,"max_staleness_ms":0})");
  INFO(options.status().ToString());
  REQUIRE(options.ok());
  CHECK(options->client.url == "https://pve1.lab:8006");
  CHECK(options->client.token_id == "pulse@pve!pulse");
  CHECK(options->client.token_secret.empty());
  CHECK(options->client.fingerprint == kFingerprint);
  CHECK(options->allow_actions);
  CHECK(options->action_deadline == absl::Seconds(30));
  CHECK(options->shutdown_timeout == absl::Seconds(20));
  CHECK(options->max_staleness == absl::ZeroDuration());
  absl::StatusOr<PveFleetOptions> ca = ParsePveSource(
      R"({"name":"pve","kind":"proxmox-ve","url":"https://10.0.0.5:8006",
      "token_id":"pulse@pve!pulse","ca_file":"/etc/pulse/pve-ca.pem"})");
  REQUIRE(ca.ok());
  CHECK_FALSE(ca->allow_actions);
  CHECK(ca->client.ca_file == "/etc/pulse/pve-ca.pem");
  CHECK(FleetCredentialName("pve") == "fleet.pve");
}

TEST_CASE("hostile proxmox-ve settings are refused naming the setting", "[adapters][proxmox]") {
  const std::string base = R"("name":"pve","kind":"proxmox-ve",)";
  const std::string ok_url = R"("url":"https://pve1:8006",)";
  const std::string ok_token = R"("token_id":"pulse@pve!pulse")";
  struct Case {
    std::string json;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"{" + base + ok_url + ok_token + R"(,"token_secret":"s"})", "never a setting"},
           {"{" + base + ok_url + ok_token + R"(,"secret":"s"})", "fleet-credential set"},
           {"{" + base + ok_url + ok_token + R"(,"verify":false})", "unknown member"},
           {"{" + base + ok_token + "}", "url"},
           {"{" + base + ok_url + "\"x\":1}", "unknown member"},
           {"{" + base + R"("url":"http://pve1:8006",)" + ok_token + "}", "https://"},
           {"{" + base + R"("url":"https://pve1:8006/api2/json",)" + ok_token + "}", "path"},
           {"{" + base + R"("url":"https://user:pw@pve1:8006",)" + ok_token + "}", "url"},
           {"{" + base + ok_url + R"("token_id":"pulse@pve"})", "USER@REALM!TOKENID"},
           {"{" + base + ok_url + ok_token + R"(,"fingerprint":"AB:CD"})", "64 hex"},
           {"{" + base + ok_url + ok_token + R"(,"fingerprint":")" + kFingerprint +
                R"(","ca_file":"/x.pem"})",
            "not both"},
           {"{" + base + ok_url + ok_token + R"(,"ca_file":"ca.pem"})", "absolute"},
           {"{" + base + ok_url + ok_token + R"(,"action_deadline_seconds":0})",
            "action_deadline_seconds"},
           {"{" + base + ok_url + ok_token + R"(,"allow_actions":"yes"})", "allow_actions"},
           {"[]", "source"},
           {"{", "not valid JSON"}}) {
    INFO(c.json);
    absl::StatusOr<PveFleetOptions> parsed = ParsePveSource(c.json);
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::IsInvalidArgument(parsed.status()));
    INFO(parsed.status().message());
    CHECK(absl::StrContains(parsed.status().message(), c.says));
  }
}

}  // namespace
}  // namespace pulse::proxmox
