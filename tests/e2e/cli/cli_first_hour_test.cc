// The README's quick start as a newcomer follows it (README.md "Use it"): a server on its
// defaults over a clean data dir, a token minted as the README shows, then `pulse-cli findings`.
// The first scheduled Patrol run starts at start-up, so findings show within seconds instead of
// after the first 15-minute interval.
#include <catch2/catch.hpp>
#include <regex>
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

  // status says what to do next in words, with the command to type; no jargon. The server comes
  // from PULSE_SERVER here (no --server).
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  const Captured status = RunCli({"status"}, {.env = {TokenEnv(token), "PULSE_SERVER=" + url}});
  INFO(status.out);
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("review what Patrol found") != std::string::npos);
  CHECK(status.out.find("pulse-cli findings") != std::string::npos);
  std::vector<std::string> patrol_args = ServerArgs(server.port());
  patrol_args.insert(patrol_args.end(), {"patrol", "status"});
  const Captured patrol = RunCli(patrol_args, {.env = {TokenEnv(token)}});
  INFO(patrol.out);
  CHECK(patrol.out.find("every 15 min") != std::string::npos);
  CHECK(patrol.out.find(" ms") == std::string::npos);
  // The last run, relative to now (seconds ago, however slow this machine is).
  CHECK(std::regex_search(patrol.out, std::regex(R"(UTC \((just now|[0-9]+ s ago)\))")));
  // --json keeps the exact values.
  patrol_args.insert(patrol_args.begin(), "--json");
  const Captured exact = RunCli(patrol_args, {.env = {TokenEnv(token)}});
  CHECK(exact.out.find("\"interval_ms\":900000") != std::string::npos);
  // --server wins over PULSE_SERVER.
  std::vector<std::string> both = ServerArgs(server.port());
  both.push_back("status");
  CHECK(RunCli(both, {.env = {TokenEnv(token), "PULSE_SERVER=http://127.0.0.1:1"}}).exit_code ==
        0);
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

TEST_CASE("actions plan takes a governed change from plan to verified result without curl",
          "[e2e][cli][first-hour]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> all = ServerArgs(server.port());
    all.insert(all.end(), args.begin(), args.end());
    return RunCli(all, {.env = {TokenEnv(token)}});
  };
  // Refused locally, before anything reaches the server: nothing is planned.
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"actions", "plan", "app-container:grafana", "restart"},  // no --reason
           {"actions", "plan", "app-container:grafana", "restart", "--reason", "x", "--param",
            "no-equals"},
           {"actions", "plan", "app-container:grafana", "restart", "--reason", "x", "--param",
            "=v"},
           {"actions", "plan", "app-container:grafana", "restart", "--reason", "x", "--param",
            "a=1", "--param-json", "a=2"},
           {"actions", "plan", "app-container:grafana", "restart", "--reason", "x",
            "--param-json", "n={bad"}}) {
    const Captured c = cli(bad);
    INFO(c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
  }
  const Captured none = cli({"--json", "actions", "list", "--settled"});
  CHECK(none.out.find("act_") == std::string::npos);

  const Captured planned = cli({"actions", "plan", "app-container:grafana", "restart", "--reason",
                                "grafana is stuck", "--request-id", "first-hour-1"});
  INFO(planned.out << planned.err);
  REQUIRE(planned.exit_code == 0);
  std::smatch id;
  REQUIRE(std::regex_search(planned.out, id, std::regex("act_[0-9a-f]+")));
  CHECK(planned.out.find("next       pulse-cli actions execute " + id.str()) != std::string::npos);
  // The same request id and content return the same plan.
  const Captured again = cli({"actions", "plan", "app-container:grafana", "restart", "--reason",
                              "grafana is stuck", "--request-id", "first-hour-1"});
  CHECK(again.out.find(id.str()) != std::string::npos);
  // An unknown resource is the server's refusal, with its code.
  const Captured unknown = cli({"actions", "plan", "vm:999", "restart", "--reason", "x"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("resource_not_found") != std::string::npos);

  const Captured executed = cli({"actions", "execute", id.str(), "--reason", "first hour"});
  INFO(executed.out << executed.err);
  CHECK(executed.exit_code == 0);
}

TEST_CASE("ids of findings actions and sessions take a unique prefix and a typo is an error",
          "[e2e][cli][first-hour]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> all = ServerArgs(server.port());
    all.insert(all.end(), args.begin(), args.end());
    return RunCli(all, {.env = {TokenEnv(token)}});
  };
  REQUIRE(cli({"patrol", "run"}).exit_code == 0);
  const Captured listed = cli({"--json", "findings"});
  std::smatch finding;
  REQUIRE(std::regex_search(listed.out, finding, std::regex(R"re("id":"([0-9a-f]{16})")re")));
  const Captured acked = cli({"findings", "ack", finding[1].str().substr(0, 6)});
  INFO(acked.err);
  CHECK(acked.exit_code == 0);
  const Captured not_found = cli({"findings", "ack", "zzzzzz"});
  CHECK(not_found.exit_code == 1);
  CHECK(not_found.err.find("finding_not_found") != std::string::npos);
  CHECK(cli({"findings", "ack", "0f8"}).exit_code == 2);  // too short to guess

  // Two plans: "act_" names both, a longer prefix one of them.
  for (const char* reason : {"first", "second"}) {
    REQUIRE(cli({"actions", "plan", "app-container:grafana", "restart", "--reason", reason})
                .exit_code == 0);
  }
  const Captured ambiguous = cli({"actions", "show", "act_"});
  CHECK(ambiguous.exit_code == 2);
  CHECK(ambiguous.err.find("is ambiguous: act_") != std::string::npos);
  const Captured actions = cli({"--json", "actions", "list"});
  std::smatch action;
  REQUIRE(std::regex_search(actions.out, action, std::regex(R"re("id":"(act_[0-9a-f]{32})")re")));
  // The shortest prefix that names only this one.
  std::string prefix = action[1].str().substr(0, 5);
  while (cli({"actions", "show", prefix}).exit_code != 0 && prefix.size() < 36) {
    prefix = action[1].str().substr(0, prefix.size() + 1);
  }
  CHECK(cli({"--json", "actions", "show", prefix}).out.find(action[1].str()) != std::string::npos);

  // ask --session with a session that does not exist is an error, and starts nothing.
  const Captured typo = cli({"ask", "--session", "no-such-session", "hello"});
  CHECK(typo.exit_code == 1);
  CHECK(typo.err.find("session_not_found: no session no-such-session") != std::string::npos);
  CHECK(cli({"--json", "sessions", "list"}).out.find("no-such-session") == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
