// Who is an agent, against the real binary: the actor kind comes from the token (minted with
// --kind), never from a request header, which can only narrow a human token to an agent; one
// credential cannot plan as an agent and approve as a human; and the token that planned an
// admin-floor action may not approve it unless the operator lowers that in pulse.json.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

const httplib::Headers kAgentSurface = {{"X-Pulse-Agent-Surface", "pulse_mcp"}};

std::string RestartPlan(const std::string& request_id, const std::string& resource = "vm:101") {
  return R"({"requestId":")" + request_id + R"(","resourceId":")" + resource +
         R"(","capabilityName":"restart","params":{},"reason":"identity e2e",)"
         R"("requestedBy":"ignored"})";
}

std::string Approve() { return R"({"outcome":"approved","reason":"identity e2e"})"; }

// Plans and returns the action id; REQUIREs a plan that waits for approval.
std::string PlanPending(int port, const std::string& token, const std::string& request_id,
                        const httplib::Headers& headers = {}) {
  const Reply planned =
      Send(port, "POST", "/api/actions/plan", token, RestartPlan(request_id), headers);
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  rapidjson::Document plan = Json(planned.body);
  REQUIRE(plan["requiresApproval"].GetBool());
  return Str(plan, "actionId");
}

std::string StateOf(int port, const std::string& token, const std::string& action_id) {
  const Reply detail = Send(port, "GET", "/api/actions/" + action_id, token);
  REQUIRE(detail.status == 200);
  return Str(Json(detail.body)["audit"], "state");
}

void WritePulseJson(const TempDir& dir, const std::string& json) {
  std::ofstream out(dir.File("pulse.json"));
  out << json;
}

TEST_CASE("one token cannot plan as an agent, then approve without the header and execute",
          "[e2e][server][identity]") {
  TempDir dir;
  const std::string dual =
      MintToken(dir.path(), "actions:plan,actions:approve,actions:execute", "dual");
  ServerProcess server(dir.path());
  const int port = server.port();
  const std::string id = PlanPending(port, dual, "attack-1", kAgentSurface);

  const Reply approve = Send(port, "POST", "/api/actions/" + id + "/decision", dual, Approve());
  INFO(approve.body);
  CHECK(approve.status == 403);
  CHECK(ErrorCode(approve.body) == "action_approval_forbidden");
  const Reply execute = Send(port, "POST", "/api/actions/" + id + "/execute", dual, "{}");
  CHECK(ErrorCode(execute.body) == "action_not_approved");
  CHECK(StateOf(port, dual, id) == "pending_approval");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("an agent or service token never approves, with or without the agent header",
          "[e2e][server][identity]") {
  TempDir dir;
  const std::string planner = MintToken(dir.path(), "actions:plan,actions:approve", "planner");
  const std::string robot = MintToken(dir.path(), "*", "robot", "agent");
  const std::string script = MintToken(dir.path(), "*", "script", "service");
  const std::string human = MintToken(dir.path(), "*", "human");
  ServerProcess server(dir.path());
  const int port = server.port();
  const std::string id = PlanPending(port, planner, "agent-1");

  for (const std::string* token : {&robot, &script}) {
    for (const httplib::Headers* headers :
         {&kAgentSurface, static_cast<const httplib::Headers*>(nullptr)}) {
      const Reply reply = Send(port, "POST", "/api/actions/" + id + "/decision", *token, Approve(),
                               headers == nullptr ? httplib::Headers{} : *headers);
      INFO(reply.body);
      CHECK(reply.status == 403);
      CHECK(ErrorCode(reply.body) == "action_approval_forbidden");
    }
    // Neither may acknowledge Autopilot for a human.
    CHECK(ErrorCode(Send(port, "POST", "/api/ai/patrol/autonomy/acknowledgements", *token,
                         R"({"acknowledgement_id":"ack-1"})")
                        .body) == "autopilot_acknowledgement_forbidden");
  }
  CHECK(StateOf(port, human, id) == "pending_approval");
  // A human token sending the header is narrowed to an agent.
  const Reply narrowed =
      Send(port, "POST", "/api/actions/" + id + "/decision", human, Approve(), kAgentSurface);
  CHECK(ErrorCode(narrowed.body) == "action_approval_forbidden");
  // The same human token without it approves.
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", human, Approve());
  INFO(approved.body);
  CHECK(approved.status == 200);
  CHECK(StateOf(port, human, id) == "approved");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE(
    "the planner's token cannot approve its own admin plan, a second human's can, and the "
    "approval and audit row carry the approver's token name",
    "[e2e][server][identity]") {
  TempDir dir;
  const std::string alice = MintToken(dir.path(), "actions:plan,actions:approve", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve", "bob");
  ServerProcess server(dir.path());
  const int port = server.port();
  const Reply planned = Send(port, "POST", "/api/actions/plan", alice, RestartPlan("sep-1"));
  REQUIRE(planned.status == 200);
  rapidjson::Document plan = Json(planned.body);
  CHECK(Str(plan["approvalRequirement"], "floor") == "admin");
  CHECK(plan["approvalRequirement"]["disallowRequester"].GetBool());
  const std::string id = Str(plan, "actionId");

  const Reply own = Send(port, "POST", "/api/actions/" + id + "/decision", alice, Approve());
  INFO(own.body);
  CHECK(own.status == 403);
  CHECK(ErrorCode(own.body) == "action_separation_required");
  CHECK(StateOf(port, bob, id) == "pending_approval");

  const Reply other = Send(port, "POST", "/api/actions/" + id + "/decision", bob, Approve());
  INFO(other.body);
  REQUIRE(other.status == 200);
  rapidjson::Document audit = Json(other.body);
  const rapidjson::Value& approval = audit["audit"]["approvals"][0];
  CHECK(Str(approval["actor"], "kind") == "human");
  CHECK(Str(approval["actor"], "name") == "bob");
  CHECK(Str(approval["actor"], "id").rfind("tok_", 0) == 0);
  CHECK(Str(audit["audit"]["request"]["actor"], "name") == "alice");
  CHECK(server.Stop() == "exited 0");

  // The audit log rows carry the name beside the id too (refusals included).
  SQLite::Database db(dir.File("pulse.db"), SQLite::OPEN_READONLY);
  SQLite::Statement decided(db,
                            "SELECT actor_id, details_json FROM audit_log WHERE event = 'decided'");
  REQUIRE(decided.executeStep());
  CHECK(decided.getColumn(0).getString() == Str(approval["actor"], "id"));
  CHECK(decided.getColumn(1).getString().find(R"("actor_name":"bob")") != std::string::npos);
  SQLite::Statement refused(
      db, "SELECT details_json FROM audit_log WHERE code = 'action_separation_required'");
  REQUIRE(refused.executeStep());
  CHECK(refused.getColumn(0).getString().find(R"("actor_name":"alice")") != std::string::npos);
}

TEST_CASE(
    "requester separation can be turned off only in pulse.json, and the header attack "
    "stays refused then",
    "[e2e][server][identity]") {
  TempDir dir;
  const std::string alice =
      MintToken(dir.path(), "actions:plan,actions:approve,actions:execute", "alice");
  SECTION("off: the planner approves its own plan; one credential still cannot flip kinds") {
    WritePulseJson(dir, R"({"requester_separation":"off"})");
    ServerProcess server(dir.path());
    const int port = server.port();
    const std::string id = PlanPending(port, alice, "off-1");
    const Reply own = Send(port, "POST", "/api/actions/" + id + "/decision", alice, Approve());
    INFO(own.body);
    CHECK(own.status == 200);
    const std::string flipped = PlanPending(port, alice, "off-2", kAgentSurface);
    const Reply flip =
        Send(port, "POST", "/api/actions/" + flipped + "/decision", alice, Approve());
    CHECK(ErrorCode(flip.body) == "action_approval_forbidden");
    CHECK(server.Stop() == "exited 0");
    CHECK(server.Log().find("requester separation is off") != std::string::npos);
  }
  SECTION("on, written out, is the default") {
    WritePulseJson(dir, R"({"requester_separation":"on"})");
    ServerProcess server(dir.path());
    const std::string id = PlanPending(server.port(), alice, "on-1");
    CHECK(
        ErrorCode(Send(server.port(), "POST", "/api/actions/" + id + "/decision", alice, Approve())
                      .body) == "action_separation_required");
    CHECK(server.Stop() == "exited 0");
  }
  SECTION("a bad value or a command-line flag is refused at start-up") {
    for (const char* json :
         {R"({"requester_separation":"maybe"})", R"({"requester_separation":"OFF"})",
          R"({"requester_separation":false})"}) {
      WritePulseJson(dir, json);
      const Captured c =
          RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen", "127.0.0.1:0"});
      INFO(json << " -> " << c.err);
      CHECK(c.exit_code == 2);
      CHECK(c.err.find("requester_separation") != std::string::npos);
    }
    std::remove(dir.File("pulse.json").c_str());
    const Captured flag = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                      "127.0.0.1:0", "--requester-separation", "off"});
    CHECK(flag.exit_code == 2);
  }
}

}  // namespace
}  // namespace pulse::testing::e2e
