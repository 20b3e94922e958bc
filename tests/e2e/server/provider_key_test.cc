// One provider-key story (docs/providers.md): pulse-server reads the key from
// PULSE_PROVIDER_API_KEY, else from the provider's own variable (ANTHROPIC_API_KEY, GEMINI_API_KEY
// or GOOGLE_API_KEY, ...); never from pulse.json. Every refusal names exactly these variables.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

ScriptedResponse Models() {
  ScriptedResponse r = JsonResponse(
      200, R"({"data":[{"id":"claude-e2e","type":"model","display_name":"Claude E2E"}],)"
           R"("has_more":false})");
  r.path = "/v1/models";
  return r;
}

// The x-api-key header the fake Anthropic endpoint saw when the server listed its models.
std::string KeySeenByProvider(const std::vector<std::string>& env) {
  auto fake = FakeProviderServer::Start();
  REQUIRE(fake.ok());
  // One listing for the start-up (no --model: the first chat model listed), one for the route.
  (*fake)->Enqueue(Models());
  (*fake)->Enqueue(Models());
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path(),
                       {.args = {"--provider", "anthropic", "--provider-base-url",
                                 (*fake)->base_url() + "/v1", "--patrol-interval", "0"},
                        .extra_env = env});
  const Reply models = Send(server.port(), "GET", "/api/ai/models", token);
  INFO(models.body);
  CHECK(models.status == 200);
  const std::vector<RecordedRequest> seen = (*fake)->Requests();
  REQUIRE_FALSE(seen.empty());
  CHECK(server.Stop() == "exited 0");
  for (const std::string& e : env) {
    const std::string value = e.substr(e.find('=') + 1);
    CHECK((value.empty() || server.Log().find(value) == std::string::npos));  // never logged
  }
  return seen.back().Header("x-api-key");
}

TEST_CASE("the provider key comes from PULSE_PROVIDER_API_KEY or the provider's own variable",
          "[e2e][server][provider]") {
  CHECK(KeySeenByProvider({"ANTHROPIC_API_KEY=sk-ant-vendor-variable"}) ==
        "sk-ant-vendor-variable");
  CHECK(KeySeenByProvider({"PULSE_PROVIDER_API_KEY=sk-ant-pulse-variable"}) ==
        "sk-ant-pulse-variable");
  // Both set: Pulse's own variable wins.
  CHECK(KeySeenByProvider({"ANTHROPIC_API_KEY=sk-ant-vendor", "PULSE_PROVIDER_API_KEY=sk-ant-pulse"}) ==
        "sk-ant-pulse");
  // An empty variable counts as unset.
  CHECK(KeySeenByProvider({"PULSE_PROVIDER_API_KEY=", "ANTHROPIC_API_KEY=sk-ant-fallback"}) ==
        "sk-ant-fallback");
}

TEST_CASE("a missing provider key is refused at start naming exactly where a key may come from",
          "[e2e][server][provider]") {
  TempDir dir;
  struct Case {
    std::string provider;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {"anthropic", "Anthropic needs an API key: set PULSE_PROVIDER_API_KEY or "
                         "ANTHROPIC_API_KEY"},
           {"gemini", "needs an API key: set PULSE_PROVIDER_API_KEY or GEMINI_API_KEY or "
                      "GOOGLE_API_KEY"}}) {
    const Captured run = RunCommand(
        {"/usr/bin/env", "-u", "PULSE_PROVIDER_API_KEY", "-u", "ANTHROPIC_API_KEY", "-u",
         "GEMINI_API_KEY", "-u", "GOOGLE_API_KEY", ServerBinary(), "--data-dir", dir.File("d"),
         "--listen", "127.0.0.1:0", "--provider", c.provider});
    INFO(run.err);
    CHECK(run.exit_code != 0);
    CHECK(run.err.find(c.expected) != std::string::npos);
  }

  // A key in pulse.json is refused (keys stay out of files), naming the variables instead.
  REQUIRE(std::filesystem::create_directories(dir.File("j")));
  std::filesystem::permissions(dir.File("j"), std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
  std::ofstream(dir.File("j/pulse.json")) << R"({"provider":"anthropic","api_key":"sk-ant-x"})";
  const Captured in_file = RunCommand({ServerBinary(), "--data-dir", dir.File("j"), "--listen",
                                       "127.0.0.1:0"});
  INFO(in_file.err);
  CHECK(in_file.exit_code == 2);
  CHECK(in_file.err.find("set PULSE_PROVIDER_API_KEY or the provider's own variable") !=
        std::string::npos);
  CHECK(in_file.err.find("sk-ant-x") == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
