// pulse-cli's one-shot commands against the real server: findings in human and JSON form and
// their lifecycle, the action queue (approve with --yes or not at all off a terminal, then
// execute), the read-only views, and every documented exit code provoked once.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::testing::e2e {
namespace {

std::vector<std::string> Args(int port, std::vector<std::string> rest) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

// A loopback port nothing listens on.
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string PlanRestart(int port, const std::string& token, const std::string& resource) {
  const Reply planned = Send(port, "POST", "/api/actions/plan", token,
                             R"({"requestId":"cli-)" + resource +
                                 R"(","resourceId":")" + resource +
                                 R"(","capabilityName":"restart","params":{},)"
                                 R"("reason":"cli e2e","requestedBy":"e2e"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  return Str(Json(planned.body), "actionId");
}

TEST_CASE("findings list in human and JSON form, and the finding lifecycle commands",
          "[e2e][cli][findings]") {
  TempDir dir;
  const std::vector<std::string> ids =
      SeedFindings(dir.path(), {{"vm:105", "critical", "Memory pressure on db-01"},
                                {"vm:106", "warning", "Disk filling on web-01"}});
  const std::string token = MintToken(dir.path(), "ai:execute");
  ServerProcess server(dir.path());
  const CliOptions auth{.env = {TokenEnv(token)}};

  const Captured human = RunCli(Args(server.port(), {"findings", "list"}), auth);
  INFO(human.out << human.err);
  REQUIRE(human.exit_code == 0);
  CHECK(human.out.rfind("SEVERITY", 0) == 0);
  CHECK(human.out.find(ids[0]) != std::string::npos);
  CHECK(human.out.find(ids[1]) != std::string::npos);
  CHECK(human.out.find("Memory pressure on db-01") != std::string::npos);
  CHECK(human.out.find("2 findings") != std::string::npos);
  // Most severe first.
  CHECK(human.out.find("critical") < human.out.find("warning"));
  CHECK(human.out.find('\x1b') == std::string::npos);

  // `findings` alone lists too; --json is exactly one document with the server's data.
  const Captured json = RunCli(Args(server.port(), {"findings", "--json"}), auth);
  INFO(json.out << json.err);
  REQUIRE(json.exit_code == 0);
  const rapidjson::Document list = Json(json.out);
  REQUIRE(list.IsArray());
  REQUIRE(list.Size() == 2);
  CHECK(Str(list[0], "id") == ids[0]);
  CHECK(Str(list[0], "severity") == "critical");
  CHECK(Str(list[1], "title") == "Disk filling on web-01");

  const Captured ack = RunCli(Args(server.port(), {"findings", "ack", ids[1]}), auth);
  INFO(ack.out << ack.err);
  CHECK(ack.exit_code == 0);
  CHECK(ack.out.rfind("ok ", 0) == 0);
  const Captured acked = RunCli(Args(server.port(), {"findings", "list"}), auth);
  CHECK(acked.out.find("acknowledged") != std::string::npos);

  const Captured snooze =
      RunCli(Args(server.port(), {"--json", "findings", "snooze", ids[1], "--hours", "2"}), auth);
  INFO(snooze.out << snooze.err);
  CHECK(snooze.exit_code == 0);
  CHECK(Json(snooze.out)["success"].GetBool());

  const Captured dismiss = RunCli(
      Args(server.port(), {"findings", "dismiss", ids[0], "--reason", "expected_behavior",
                           "--note", "planned load test"}),
      auth);
  INFO(dismiss.out << dismiss.err);
  CHECK(dismiss.exit_code == 0);
  // Resolved and dismissed findings leave the default list.
  const Captured after = RunCli(Args(server.port(), {"--json", "findings"}), auth);
  REQUIRE(after.exit_code == 0);
  const rapidjson::Document remaining = Json(after.out);
  for (const rapidjson::Value& f : remaining.GetArray()) {
    CHECK(Str(f, "id") != ids[0]);
  }

  // Unknown finding: the server's code, exit 1.
  const Captured missing =
      RunCli(Args(server.port(), {"findings", "resolve", "fnd_does_not_exist"}), auth);
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("finding_not_found") != std::string::npos);

  // Bad values never reach the server.
  CHECK(RunCli(Args(server.port(), {"findings", "snooze", ids[1], "--hours", "169"}), auth)
            .exit_code == 2);
  CHECK(RunCli(Args(server.port(), {"findings", "snooze", ids[1], "--hours", "soon"}), auth)
            .exit_code == 2);
  CHECK(RunCli(Args(server.port(), {"findings", "dismiss", ids[1], "--reason", "meh"}), auth)
            .exit_code == 2);
}

TEST_CASE("approve a pending action with --yes, then execute it", "[e2e][cli][actions]") {
  TempDir dir;
  const std::string planner = MintToken(dir.path(), "actions:plan", "planner");
  const std::string approver =
      MintToken(dir.path(), "actions:approve,actions:execute", "approver");
  ServerProcess server(dir.path());
  const CliOptions auth{.env = {TokenEnv(approver)}};
  const std::string action_id = PlanRestart(server.port(), planner, "vm:101");

  const Captured listed = RunCli(Args(server.port(), {"actions"}), auth);
  INFO(listed.out << listed.err);
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out.find(action_id) != std::string::npos);
  CHECK(listed.out.find("pending_approval") != std::string::npos);

  // Off a terminal, approving without --yes is a usage error and changes nothing.
  const Captured unconfirmed = RunCli(Args(server.port(), {"actions", "approve", action_id}),
                                      {.env = {TokenEnv(approver)}, .stdin_text = "y\n"});
  INFO(unconfirmed.out << unconfirmed.err);
  CHECK(unconfirmed.exit_code == 2);
  CHECK(unconfirmed.err.find("--yes") != std::string::npos);
  const Reply still = Send(server.port(), "GET", "/api/actions/" + action_id, approver);
  CHECK(Str(Json(still.body)["audit"], "state") == "pending_approval");

  const Captured shown = RunCli(Args(server.port(), {"actions", "show", action_id}), auth);
  INFO(shown.out << shown.err);
  REQUIRE(shown.exit_code == 0);
  const std::string plan_hash = Str(Json(still.body)["audit"]["plan"], "planHash");
  CHECK(shown.out.find(plan_hash) != std::string::npos);
  CHECK(shown.out.find("vm:101") != std::string::npos);

  const Captured approved =
      RunCli(Args(server.port(), {"actions", "approve", action_id, "--yes", "--reason", "ok"}),
             auth);
  INFO(approved.out << approved.err);
  REQUIRE(approved.exit_code == 0);
  CHECK(approved.out.find(plan_hash) != std::string::npos);  // the card showed what was approved
  CHECK(approved.out.find("is now approved") != std::string::npos);
  const Reply decided = Send(server.port(), "GET", "/api/actions/" + action_id, approver);
  const rapidjson::Document audit = Json(decided.body);
  CHECK(Str(audit["audit"], "state") == "approved");
  REQUIRE(audit["audit"]["approvals"].Size() == 1);
  CHECK(Str(audit["audit"]["approvals"][0], "planHash") == plan_hash);

  const Captured executed =
      RunCli(Args(server.port(), {"--json", "actions", "execute", action_id}), auth);
  INFO(executed.out << executed.err);
  REQUIRE(executed.exit_code == 0);
  const rapidjson::Document result = Json(executed.out);
  CHECK(Str(result, "state") == "completed");
  CHECK(Str(result["result"]["execution"], "status") == "succeeded");

  // Approving it again is refused by the server (this approver already decided): exit 1, the
  // code on stderr and, with --json, the envelope as the one document on stdout.
  const Captured again =
      RunCli(Args(server.port(), {"--json", "actions", "approve", action_id, "--yes"}), auth);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 1);
  CHECK(ErrorCode(again.out) == "action_decision_conflict");
  CHECK(again.err.find("pulse-cli: action_decision_conflict: ") != std::string::npos);

  const Captured settled = RunCli(Args(server.port(), {"actions", "list", "--settled"}), auth);
  CHECK(settled.out.find(action_id) != std::string::npos);
  CHECK(settled.out.find("completed") != std::string::npos);

  // Reject: a second plan, rejected.
  const std::string second = PlanRestart(server.port(), planner, "vm:106");
  const Captured rejected = RunCli(Args(server.port(), {"actions", "reject", second}), auth);
  INFO(rejected.out << rejected.err);
  CHECK(rejected.exit_code == 0);
  CHECK(rejected.out.find("rejected") != std::string::npos);
}

TEST_CASE("every documented exit code", "[e2e][cli][exit]") {
  TempDir dir;
  const std::string reader = MintToken(dir.path(), "monitoring:read,actions:approve", "reader");
  const std::string chatter = MintToken(dir.path(), "ai:chat", "chatter");
  ServerProcess server(dir.path());

  // 0: ok.
  const Captured ok = RunCli(Args(server.port(), {"status"}), {.env = {TokenEnv(reader)}});
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("health") != std::string::npos);

  // 1: refused by the server, with its stable code.
  const Captured refused = RunCli(Args(server.port(), {"actions", "show", "act_0000"}),
                                  {.env = {TokenEnv(reader)}});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("pulse-cli: action_not_found: ") != std::string::npos);
  CHECK(refused.out.empty());
  const Captured refused_json = RunCli(Args(server.port(), {"--json", "actions", "show",
                                                            "act_0000"}),
                                       {.env = {TokenEnv(reader)}});
  CHECK(refused_json.exit_code == 1);
  CHECK(ErrorCode(refused_json.out) == "action_not_found");

  // 2: usage.
  for (const std::vector<std::string>& usage : std::vector<std::vector<std::string>>{
           {"frobnicate"},
           {},
           {"ask"},
           {"ask", "--control-level", "godmode", "hi"},
           {"actions", "approve"},
           {"--timeout", "-1", "status"},
           {"--server", "ftp://example", "status"},
           {"completion", "tcsh"}}) {
    const Captured c = RunCli(Args(server.port(), usage), {.env = {TokenEnv(reader)}});
    INFO(c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK_FALSE(c.err.empty());
  }
  CHECK(RunCli(Args(server.port(), {"status"}), {.env = {"PULSE_API_TOKEN=bad\r\nX-Evil: 1"}})
            .exit_code == 2);

  // 3: nothing listens there.
  const Captured unreachable =
      RunCli({"--server", "http://127.0.0.1:" + std::to_string(ClosedPort()), "findings"},
             {.env = {TokenEnv(reader)}});
  INFO(unreachable.err);
  CHECK(unreachable.exit_code == 3);
  CHECK(unreachable.err.find("server_unreachable") != std::string::npos);
  const Captured unreachable_json =
      RunCli({"--json", "--server", "http://127.0.0.1:" + std::to_string(ClosedPort()), "status"});
  CHECK(unreachable_json.exit_code == 3);
  CHECK(ErrorCode(unreachable_json.out) == "server_unreachable");

  // 4: no token (401), and a token without the route's scope (403 missing_scope).
  const Captured no_token = RunCli(Args(server.port(), {"actions"}));
  INFO(no_token.err);
  CHECK(no_token.exit_code == 4);
  CHECK(no_token.err.find("unauthorized") != std::string::npos);
  CHECK(no_token.err.find("PULSE_API_TOKEN") != std::string::npos);
  const Captured bad_token = RunCli(Args(server.port(), {"actions"}),
                                    {.env = {TokenEnv("pulse_not_a_real_token")}});
  CHECK(bad_token.exit_code == 4);
  const Captured no_scope = RunCli(Args(server.port(), {"--json", "actions"}),
                                   {.env = {TokenEnv(chatter)}});
  INFO(no_scope.out << no_scope.err);
  CHECK(no_scope.exit_code == 4);
  CHECK(ErrorCode(no_scope.out) == "missing_scope");
  CHECK(no_scope.err.find("actions:approve") != std::string::npos);
}

TEST_CASE("capabilities, fleet and status read the server's views", "[e2e][cli][views]") {
  TempDir dir;
  SeedFindings(dir.path(), {{"vm:105", "critical", "Memory pressure on db-01"}});
  const std::string token = MintToken(dir.path(), "monitoring:read");
  ServerProcess server(dir.path());
  const CliOptions auth{.env = {TokenEnv(token)}};

  // The manifest is public and lists every capability of this build.
  const Captured caps = RunCli(Args(server.port(), {"--json", "capabilities"}));
  REQUIRE(caps.exit_code == 0);
  CHECK(Json(caps.out)["capabilities"].Size() == core::AgentCapabilities().size());
  const Captured caps_human = RunCli(Args(server.port(), {"capabilities"}));
  CHECK(caps_human.out.find("POST /api/actions/{actionId}/decision") != std::string::npos);

  const Captured fleet = RunCli(Args(server.port(), {"fleet", "--has-findings"}), auth);
  INFO(fleet.out << fleet.err);
  REQUIRE(fleet.exit_code == 0);
  CHECK(fleet.out.find("vm:105") != std::string::npos);
  CHECK(fleet.out.find("1 resource") != std::string::npos);
  const Captured fleet_json = RunCli(Args(server.port(), {"--json", "fleet", "list"}), auth);
  REQUIRE(fleet_json.exit_code == 0);
  CHECK(Json(fleet_json.out)["resources"].Size() > 5);

  const Captured show = RunCli(Args(server.port(), {"fleet", "show", "vm:105"}), auth);
  INFO(show.out << show.err);
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.find("db-01") != std::string::npos);
  CHECK(show.out.find("restart") != std::string::npos);
  const Captured show_json =
      RunCli(Args(server.port(), {"--json", "fleet", "show", "vm:105"}), auth);
  REQUIRE(show_json.exit_code == 0);
  const rapidjson::Document resource = Json(show_json.out);
  CHECK(Str(resource["context"], "canonicalId") == "vm:105");
  CHECK(resource["capabilities"]["capabilities"].IsArray());
  const Captured unknown = RunCli(Args(server.port(), {"fleet", "show", "vm:999"}), auth);
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("resource_not_found") != std::string::npos);

  const Captured status = RunCli(Args(server.port(), {"--json", "status"}), auth);
  INFO(status.out << status.err);
  REQUIRE(status.exit_code == 0);
  const rapidjson::Document doc = Json(status.out);
  CHECK(Str(doc["health"], "status") == "ok");
  CHECK(doc["patrol"]["activeFindingCount"].GetInt() == 1);
}

}  // namespace
}  // namespace pulse::testing::e2e
