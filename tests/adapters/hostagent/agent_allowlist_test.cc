// The agent's allow.json: strict, bounded, and a missing file permits no dispatch.
#include "pulse/adapters/hostagent/agent_allowlist.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "pulse/testing/temp_dir.h"

namespace pulse::adapters::hostagent {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
}

TEST_CASE("allow.json names the capabilities and services the agent acts on",
          "[adapters][hostagent][allowlist]") {
  absl::StatusOr<AgentAllowlist> allow = DecodeAllowlist(
      R"({"capabilities": ["stop", "restart", "start"], "services": ["nginx.service",
          "pulse-demo-web"], "exec": false, "docker": true})");
  REQUIRE(allow.ok());
  CHECK(allow->capabilities == std::vector<std::string>{"restart", "start", "stop"});
  CHECK(allow->services == std::vector<std::string>{"nginx", "pulse-demo-web"});
  CHECK_FALSE(allow->exec);
  CHECK(allow->docker);
  CHECK(allow->AllowsCapability("restart"));
  CHECK(allow->AllowsService("nginx"));
  CHECK(allow->AllowsService("nginx.service"));
  CHECK(allow->AllowsService("pulse-demo-web.service"));
  CHECK_FALSE(allow->AllowsService("sshd"));
  CHECK_FALSE(allow->AllowsService("nginx.socket"));

  // Every member is optional: an empty object permits no dispatch, and exec stays on.
  allow = DecodeAllowlist("{}");
  REQUIRE(allow.ok());
  CHECK(*allow == DefaultAllowlist());
  CHECK(allow->exec);
  CHECK_FALSE(allow->docker);
  CHECK_FALSE(allow->AllowsCapability("restart"));
}

TEST_CASE("a malformed or hostile allow.json is refused whole with a stable code",
          "[adapters][hostagent][allowlist]") {
  const std::string many = [] {
    std::string list;
    for (int i = 0; i < 257; ++i) {
      list += (i == 0 ? "\"u" : ",\"u") + std::to_string(i) + "\"";
    }
    return R"({"services": [)" + list + "]}";
  }();
  struct Case {
    std::string json;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"capabilities": ["restart"], "servics": ["nginx"]})", "servics"},
           {R"({"capabilities": ["reboot"]})", "reboot"},
           {R"({"capabilities": ["restart", "restart"]})", "twice"},
           {R"({"services": ["nginx", "nginx.service"]})", "twice"},
           {R"({"services": ["nginx; rm -rf /"]})", "plain unit name"},
           {R"({"services": ["-nginx"]})", "plain unit name"},
           {R"({"services": ["../etc"]})", "plain unit name"},
           {R"({"services": "nginx"})", "services"},
           {R"({"services": [1]})", "services"},
           {R"({"exec": "yes"})", "exec"},
           {R"({"docker": 1})", "docker"},
           {R"({"exec": true, "exec": false})", "exec"},
           {R"(["restart"])", "object"},
           {R"({"capabilities": ["restart"])", ""},
           {"", ""},
           {R"({"services": [")" + std::string(200, 'a') + "\"]}", "services"},
           {many, "services"},
           {R"({"services": ["ng\u0000inx"]})", "services"},
           {"{\"services\": [\"ngin\xff\"]}", "services"},
           {std::string(70 * 1024, ' ') + "{}", "larger"},
           {std::string(100, '[') + std::string(100, ']'), ""},
       }) {
    INFO(c.json.substr(0, 120));
    absl::StatusOr<AgentAllowlist> allow = DecodeAllowlist(c.json);
    REQUIRE(absl::IsInvalidArgument(allow.status()));
    const std::string message(allow.status().message());
    CHECK(message.rfind("allowlist_invalid: ", 0) == 0);
    CHECK(message.find(c.says) != std::string::npos);
  }
}

TEST_CASE("a missing allow.json permits nothing and a bad one names the file",
          "[adapters][hostagent][allowlist]") {
  testing::TempDir dir("pulse-allow");
  absl::StatusOr<AgentAllowlist> allow = LoadAllowlist(dir.File("absent.json"));
  REQUIRE(allow.ok());
  CHECK(allow->capabilities.empty());
  CHECK(allow->services.empty());
  CHECK(allow->exec);

  WriteFile(dir.File("allow.json"), R"({"capabilities": ["restart"], "services": ["nginx"]})");
  allow = LoadAllowlist(dir.File("allow.json"));
  REQUIRE(allow.ok());
  CHECK(allow->AllowsService("nginx"));

  WriteFile(dir.File("bad.json"), R"({"capabilities": ["restart"], "sevices": ["nginx"]})");
  absl::Status bad = LoadAllowlist(dir.File("bad.json")).status();
  CHECK(absl::IsInvalidArgument(bad));
  CHECK(std::string(bad.message()).rfind("allowlist_invalid: " + dir.File("bad.json"), 0) == 0);
  CHECK(std::string(bad.message()).find("sevices") != std::string::npos);

  // A directory or a FIFO in its place is refused, never read (a FIFO would block the agent).
  REQUIRE(mkfifo(dir.File("fifo").c_str(), 0600) == 0);
  CHECK(absl::IsInvalidArgument(LoadAllowlist(dir.path()).status()));
  CHECK(absl::IsInvalidArgument(LoadAllowlist(dir.File("fifo")).status()));

  WriteFile(dir.File("big.json"), std::string(kMaxAllowlistBytes + 1, ' '));
  CHECK(absl::IsInvalidArgument(LoadAllowlist(dir.File("big.json")).status()));
}

}  // namespace
}  // namespace pulse::adapters::hostagent
