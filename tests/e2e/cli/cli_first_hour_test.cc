// The README's quick start as a newcomer follows it (README.md "Use it"): a server on its
// defaults over a clean data dir, a token minted as the README shows, then `pulse-cli findings`.
// The first scheduled Patrol run starts at start-up, so findings show within seconds instead of
// after the first 15-minute interval.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli_harness.h"
#include "pulse/core/json/json.h"

namespace pulse::testing::e2e {
namespace {

// How many findings `pulse-cli findings --json` lists; -1 when the command fails.
int FindingCount(int port, const std::string& token) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), {"--json", "findings"});
  const Captured c = RunCli(args, {.env = {TokenEnv(token)}});
  if (c.exit_code != 0) {
    return -1;
  }
  // The reply is an array or {"items": [...]} (docs/cli.md).
  rapidjson::Document doc = Json(c.out);
  const rapidjson::Value* list =
      doc.IsArray() ? &doc : (doc.IsObject() ? core::GetMember(doc, "items") : nullptr);
  return list != nullptr && list->IsArray() ? static_cast<int>(list->Size()) : -1;
}

TEST_CASE("the quick start shows findings within 10 s of the server answering /healthz",
          "[e2e][cli][first-hour]") {
  TempDir dir;
  const std::string data = dir.File("pulse-data");
  // As the README: token create --data-dir ./pulse-data --name me --scopes '*'.
  const Captured minted = RunCommand(
      {ServerBinary(), "token", "create", "--data-dir", data, "--name", "me", "--scopes", "*"});
  REQUIRE(minted.exit_code == 0);
  const std::string token = minted.out.substr(0, minted.out.find('\n'));
  // No flags beyond the data dir and an ephemeral port (the harness turns the start-up run off
  // for the suites that script their model turns; this test wants the product's default).
  ServerProcess server(data, {.patrol_on_start = true});
  REQUIRE(Send(server.port(), "GET", "/healthz", "").status == 200);
  const absl::Time healthy = absl::Now();
  int count = 0;
  while ((count = FindingCount(server.port(), token)) <= 0 &&
         absl::Now() - healthy < absl::Seconds(10)) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  INFO("seconds after /healthz: " << absl::ToDoubleSeconds(absl::Now() - healthy));
  CHECK(count > 0);
  CHECK(absl::Now() - healthy < absl::Seconds(10));
  // The start-up line says so.
  CHECK(server.Log().find("patrol every 15m, first run now") != std::string::npos);
}

TEST_CASE("patrol-on-start off waits one interval, and a bad value is refused",
          "[e2e][cli][first-hour]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  {
    ServerProcess server(dir.path());  // the harness passes --patrol-on-start off
    absl::SleepFor(absl::Seconds(2));
    const Reply runs = Send(server.port(), "GET", "/api/ai/patrol/runs", token);
    INFO(runs.body);
    REQUIRE(runs.status == 200);
    CHECK(runs.body.find("\"trigger\"") == std::string::npos);  // no run yet
    CHECK(server.Log().find("patrol every 15m)") != std::string::npos);
  }
  for (const char* bad : {"yes", "", "ON", "off;rm"}) {
    const Captured c = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                   "127.0.0.1:0", "--patrol-on-start", bad});
    INFO(c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.err.find("--patrol-on-start must be on") != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::testing::e2e
