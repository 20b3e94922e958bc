// `findings --all` lists snoozed and dismissed findings with their state, and `findings
// unsnooze` and `findings reopen` undo a snooze and a dismissal (docs/cli.md, "findings"),
// through the server's unsnooze_finding and reopen_finding routes (docs/api.md).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/core/json/json.h"

namespace pulse::testing::e2e {
namespace {

std::vector<std::string> Args(int port, std::vector<std::string> rest) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

// The state of finding `id` in `findings --json [--all]`: "" when it is not listed.
std::string StateOf(int port, const CliOptions& auth, const std::string& id, bool all) {
  std::vector<std::string> rest = {"--json", "findings"};
  if (all) {
    rest.push_back("--all");
  }
  const Captured c = RunCli(Args(port, rest), auth);
  REQUIRE(c.exit_code == 0);
  const rapidjson::Document doc = Json(c.out);
  REQUIRE(doc.IsArray());
  for (const rapidjson::Value& f : doc.GetArray()) {
    if (Str(f, "id") != id) {
      continue;
    }
    if (!Str(f, "resolved_at").empty()) {
      return "resolved";
    }
    if (!Str(f, "dismissed_reason").empty()) {
      return "dismissed";
    }
    return Str(f, "snoozed_until").empty() ? "active" : "snoozed";
  }
  return "";
}

TEST_CASE("findings --all shows snoozed and dismissed findings, and unsnooze and reopen undo",
          "[e2e][cli][findings]") {
  TempDir dir;
  const std::vector<std::string> ids =
      SeedFindings(dir.path(), {{"vm:105", "critical", "Memory pressure on db-01"},
                                {"vm:106", "warning", "Disk filling on db-02"},
                                {"vm:101", "warning", "Backup late on web-01"}});
  const std::string token = MintToken(dir.path(), "ai:execute");
  ServerProcess server(dir.path());
  const int port = server.port();
  const CliOptions auth{.env = {TokenEnv(token)}};

  REQUIRE(RunCli(Args(port, {"findings", "snooze", ids[0], "--hours", "4"}), auth).exit_code == 0);
  REQUIRE(RunCli(Args(port, {"findings", "dismiss", ids[1], "--reason", "expected_behavior"}),
                 auth)
              .exit_code == 0);
  REQUIRE(RunCli(Args(port, {"findings", "resolve", ids[2]}), auth).exit_code == 0);

  // The default list hides all three; --all shows each with its state.
  for (const std::string& id : ids) {
    CHECK(StateOf(port, auth, id, false).empty());
  }
  CHECK(StateOf(port, auth, ids[0], true) == "snoozed");
  CHECK(StateOf(port, auth, ids[1], true) == "dismissed");
  CHECK(StateOf(port, auth, ids[2], true) == "resolved");
  const Captured table = RunCli(Args(port, {"findings", "--all"}), auth);
  INFO(table.out);
  CHECK(table.out.find("snoozed") != std::string::npos);
  CHECK(table.out.find("dismissed") != std::string::npos);
  CHECK(table.out.find("3 findings") != std::string::npos);

  // unsnooze and reopen (by a unique prefix) make them active again.
  const Captured unsnoozed = RunCli(Args(port, {"findings", "unsnooze", ids[0].substr(0, 8)}), auth);
  INFO(unsnoozed.err);
  CHECK(unsnoozed.exit_code == 0);
  CHECK(unsnoozed.out.find("Finding active again") != std::string::npos);
  CHECK(StateOf(port, auth, ids[0], false) == "active");
  const Captured reopened = RunCli(Args(port, {"--json", "findings", "reopen", ids[1]}), auth);
  CHECK(reopened.exit_code == 0);
  CHECK(reopened.out.find("\"success\":true") != std::string::npos);
  CHECK(StateOf(port, auth, ids[1], false) == "active");

  // Undoing what is not there is refused with the server's code (exit 1), never a crash.
  const Captured again = RunCli(Args(port, {"findings", "unsnooze", ids[0]}), auth);
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("finding_action_not_allowed") != std::string::npos);
  const Captured not_dismissed = RunCli(Args(port, {"findings", "reopen", ids[0]}), auth);
  CHECK(not_dismissed.exit_code == 1);
  CHECK(not_dismissed.err.find("finding_action_not_allowed") != std::string::npos);
  const Captured unknown = RunCli(Args(port, {"findings", "reopen", "0000000000000000"}), auth);
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("finding_not_found") != std::string::npos);
  // A hostile id goes as data, answered by the server.
  CHECK(RunCli(Args(port, {"findings", "unsnooze", "x\"}\r\n"}), auth).exit_code == 1);
  // The routes need ai:execute like the other finding operations.
  const std::string reader = MintToken(dir.path(), "monitoring:read");
  CHECK(RunCli(Args(port, {"findings", "reopen", ids[1]}), {.env = {TokenEnv(reader)}}).exit_code ==
        4);
}

}  // namespace
}  // namespace pulse::testing::e2e
