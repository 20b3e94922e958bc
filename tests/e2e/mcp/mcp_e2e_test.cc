// pulse-mcp against the real pulse-server: an MCP session over the binary's pipes (negotiate,
// list and call tools, read resources, render prompts), scope refusals and the agent-surface
// marker as tool results, and the start-up failures (no server, no token).
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mcp_stdio_client.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

std::string McpBinary() { return PULSE_MCP_BINARY; }

// An integer value, or a sentinel that fails any comparison a test makes.
int Int(const rapidjson::Value& v) { return v.IsInt() ? v.GetInt() : -999999; }
// The error code of a reply; 0 for a result.
int ErrorCodeOf(const rapidjson::Value& reply) {
  return reply.HasMember("error") ? Int(reply["error"]["code"]) : 0;
}

class Session {
 public:
  Session(int port, const std::string& token, const TempDir& dir)
      : client_({McpBinary(), "--server", "http://127.0.0.1:" + std::to_string(port)},
                {"PULSE_API_TOKEN=" + token}, dir.File("mcp-stderr.log")) {}

  // Sends one request and returns its reply, REQUIRE-ing a JSON-RPC line with the same id.
  // `params_json` may be written across lines in the source; it is sent as one line.
  rapidjson::Document Request(const std::string& method, std::string params_json) {
    std::replace(params_json.begin(), params_json.end(), '\n', ' ');
    const int id = ++next_id_;
    REQUIRE(client_.Write(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" +
                          method + R"(","params":)" + params_json + "}\n"));
    std::optional<std::string> line = client_.ReadLine();
    REQUIRE(line.has_value());
    INFO(*line);
    rapidjson::Document reply = Json(*line);
    REQUIRE(reply.IsObject());
    CHECK(Str(reply, "jsonrpc") == "2.0");
    REQUIRE(reply.HasMember("id"));
    CHECK(Int(reply["id"]) == id);
    return reply;
  }
  McpStdioClient& client() { return client_; }

 private:
  McpStdioClient client_;
  int next_id_ = 0;
};

rapidjson::Document ToolCall(Session& s, const std::string& name, const std::string& args) {
  rapidjson::Document reply =
      s.Request("tools/call", R"({"name":")" + name + R"(","arguments":)" + args + "}");
  INFO(core::ToJsonString(reply));
  REQUIRE(reply.HasMember("result"));
  return reply;
}

TEST_CASE("pulse-mcp serves the manifest tools, resources and prompts of a real pulse-server",
          "[e2e][mcp]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "mcp", "agent");
  ServerProcess server(dir.path());
  Session s(server.port(), token, dir);

  rapidjson::Document init =
      s.Request("initialize", R"({"protocolVersion":"2025-03-26","capabilities":{},
                                  "clientInfo":{"name":"e2e","version":"1"}})");
  CHECK(Str(init["result"], "protocolVersion") == "2025-03-26");
  CHECK(Str(init["result"]["serverInfo"], "name") == "pulse-mcp");
  REQUIRE(s.client().Write(R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n"));

  rapidjson::Document tools = s.Request("tools/list", "{}");
  std::vector<std::string> names;
  for (const rapidjson::Value& tool : tools["result"]["tools"].GetArray()) {
    names.push_back(Str(tool, "name"));
  }
  CHECK(names == core::McpToolCapabilityNames());
  CHECK(std::find(names.begin(), names.end(), "subscribe_events") == names.end());

  rapidjson::Document fleet = ToolCall(s, "get_fleet_context", "{}");
  CHECK_FALSE(fleet["result"].HasMember("isError"));
  REQUIRE(fleet["result"]["structuredContent"]["resources"].IsArray());
  CHECK(fleet["result"]["structuredContent"]["resources"].Size() > 0);

  rapidjson::Document refused = s.Request("tools/call", R"({"name":"subscribe_events"})");
  CHECK(ErrorCodeOf(refused) == -32602);

  rapidjson::Document resources = s.Request("resources/list", "{}");
  const rapidjson::Value& list = resources["result"]["resources"];
  REQUIRE(list.Size() > 0);
  const std::string uri = Str(list[0], "uri");
  CHECK(uri.rfind("pulse://resource/", 0) == 0);
  rapidjson::Document read = s.Request("resources/read", R"({"uri":")" + uri + "\"}");
  REQUIRE(read.HasMember("result"));
  const rapidjson::Document context = Json(Str(read["result"]["contents"][0], "text"));
  CHECK(context.IsObject());

  rapidjson::Document prompt = s.Request(
      "prompts/get", R"({"name":"pulse_investigate_resource","arguments":{"resourceId":"vm:101"}})");
  REQUIRE(prompt.HasMember("result"));
  CHECK(Str(prompt["result"]["messages"][0]["content"], "text").find("vm:101") !=
        std::string::npos);

  // Garbage between requests is answered and does not end the session.
  REQUIRE(s.client().Write("this is not json\n"));
  std::optional<std::string> garbage = s.client().ReadLine();
  REQUIRE(garbage.has_value());
  CHECK(ErrorCodeOf(Json(*garbage)) == -32700);
  CHECK(s.Request("ping", "{}").HasMember("result"));

  CHECK(s.client().CloseAndWait() == 0);
}

TEST_CASE("an agent pages through findings with the next cursor pulse-mcp passes on",
          "[e2e][mcp]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "mcp", "agent");
  ServerProcess server(dir.path());
  // A deterministic Patrol pass over the demo fleet stores its findings.
  const Reply started = Send(server.port(), "POST", "/api/ai/patrol/run", token, "{}");
  REQUIRE(started.status == 200);
  const std::string run = Str(Json(started.body), "run_id");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline &&
         Str(Json(Send(server.port(), "GET", "/api/ai/patrol/runs/" + run, token).body),
             "status") == "running") {
    absl::SleepFor(absl::Milliseconds(50));
  }
  const rapidjson::Document all =
      Json(Send(server.port(), "GET", "/api/ai/patrol/findings", token).body);
  REQUIRE(all.IsArray());
  REQUIRE(all.Size() >= 2);

  Session s(server.port(), token, dir);
  std::vector<std::string> seen;
  std::string cursor;
  for (rapidjson::SizeType page = 0; page <= all.Size(); ++page) {
    const std::string args = cursor.empty() ? std::string(R"({"limit":1})")
                                            : R"({"limit":1,"cursor":")" + cursor + "\"}";
    rapidjson::Document reply = ToolCall(s, "list_findings", args);
    REQUIRE_FALSE(reply["result"].HasMember("isError"));
    const rapidjson::Value& content = reply["result"]["structuredContent"];
    REQUIRE(content["items"].Size() == 1);
    seen.push_back(Str(content["items"][0], "id"));
    if (!content.HasMember("next_cursor")) {
      CHECK(reply["result"]["content"].Size() == 1);
      break;
    }
    cursor = Str(content, "next_cursor");
    CHECK(Str(reply["result"]["content"][1], "text").find(cursor) != std::string::npos);
  }
  // Every finding once, in the list's order, and the last page says no more.
  std::vector<std::string> listed;
  for (const rapidjson::Value& f : all.GetArray()) {
    listed.push_back(Str(f, "id"));
  }
  CHECK(seen == listed);
  CHECK(s.client().CloseAndWait() == 0);
}

TEST_CASE("governance refusals reach the agent as error results with the stable code",
          "[e2e][mcp]") {
  TempDir dir;
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string operator_token = MintToken(dir.path(), "*", "mcp", "agent");
  ServerProcess server(dir.path());

  SECTION("a missing scope") {
    Session s(server.port(), reader, dir);
    rapidjson::Document reply = ToolCall(s, "list_findings", R"({"include_resolved":true})");
    CHECK(core::GetBool(reply["result"], "isError") == std::optional<bool>(true));
    CHECK(Str(reply["result"]["structuredContent"], "error") == "missing_scope");
  }
  SECTION("pulse-mcp calls as an agent, which may plan but not approve") {
    Session s(server.port(), operator_token, dir);
    rapidjson::Document plan = ToolCall(s, "plan_action", R"({"requestId":"e2e-mcp-1",
        "resourceId":"vm:101","capabilityName":"restart","params":{},"reason":"e2e",
        "requestedBy":"e2e-agent"})");
    INFO(core::ToJsonString(plan));
    REQUIRE_FALSE(plan["result"].HasMember("isError"));
    const std::string action_id = Str(plan["result"]["structuredContent"], "actionId");
    rapidjson::Document decide = ToolCall(s, "decide_action", R"({"actionId":")" + action_id +
                                                                   R"(","outcome":"approved",
        "reason":"e2e"})");
    CHECK(core::GetBool(decide["result"], "isError") == std::optional<bool>(true));
    CHECK(Str(decide["result"]["structuredContent"], "error") == "action_approval_forbidden");
    // The same agent token over plain HTTP, without the agent-surface header, is still an agent.
    const Reply direct = Send(server.port(), "POST", "/api/actions/" + action_id + "/decision",
                              operator_token, R"({"outcome":"approved","reason":"e2e"})");
    CHECK(direct.status == 403);
    CHECK(ErrorCode(direct.body) == "action_approval_forbidden");
  }
}

TEST_CASE("an agent locks a service whose id holds a slash, and HTTP reads the same lock",
          "[e2e][mcp]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "mcp", "agent");
  ServerProcess server(dir.path());
  Session s(server.port(), token, dir);
  // pulse-mcp encodes the id as one segment (service%3Apve2%2Fpostfix); the server decodes it
  // once and validates it as a canonical resource id.
  rapidjson::Document set = ToolCall(s, "set_operator_state", R"({
      "resourceId":"service:pve2/postfix","intentionallyOffline":false,
      "neverAutoRemediate":true,"note":"flapping mail relay"})");
  INFO(core::ToJsonString(set));
  REQUIRE_FALSE(set["result"].HasMember("isError"));
  rapidjson::Document get =
      ToolCall(s, "get_operator_state", R"({"resourceId":"service:pve2/postfix"})");
  REQUIRE_FALSE(get["result"].HasMember("isError"));
  CHECK(Str(get["result"]["structuredContent"], "canonicalId") == "service:pve2/postfix");
  const Reply http =
      Send(server.port(), "GET", "/api/resources/service%3Apve2%2Fpostfix/operator-state", token);
  REQUIRE(http.status == 200);
  CHECK(Json(http.body)["neverAutoRemediate"].GetBool());
  // A traversal spelled as an id is refused with the transport code, as a tool error.
  rapidjson::Document bad =
      ToolCall(s, "get_operator_state", R"({"resourceId":"service:pve2/../postfix"})");
  CHECK(core::GetBool(bad["result"], "isError") == std::optional<bool>(true));
  CHECK(Str(bad["result"]["structuredContent"], "error") == "invalid_request");
  CHECK(s.client().CloseAndWait() == 0);
}

TEST_CASE("when pulse-server goes away, a tool call is a service_unavailable result and the "
          "session goes on", "[e2e][mcp]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "mcp", "agent");
  ServerProcess server(dir.path());
  Session s(server.port(), token, dir);
  CHECK_FALSE(ToolCall(s, "get_fleet_context", "{}")["result"].HasMember("isError"));
  CHECK(server.Stop() == "exited 0");

  rapidjson::Document gone = ToolCall(s, "get_fleet_context", "{}");
  CHECK(core::GetBool(gone["result"], "isError") == std::optional<bool>(true));
  CHECK(Str(gone["result"]["structuredContent"], "error") == "service_unavailable");
  CHECK(Str(gone["result"]["structuredContent"], "message")
            .rfind("call Pulse: GET /api/agent/fleet-context: ", 0) == 0);
  // Resources have no isError: the same failure is a JSON-RPC internal error there.
  CHECK(ErrorCodeOf(s.Request("resources/list", "{}")) == -32603);
  CHECK(s.Request("ping", "{}").HasMember("result"));
  CHECK(s.client().CloseAndWait() == 0);
}

TEST_CASE("pulse-mcp exits non-zero with a message when it cannot start", "[e2e][mcp]") {
  SECTION("no server") {
    const Captured c = RunCommand({"/usr/bin/env", "PULSE_API_TOKEN=x", McpBinary(), "--server",
                                   "http://127.0.0.1:1"});
    CHECK(c.exit_code == 1);
    CHECK(c.out.empty());
    CHECK(c.err.find("cannot reach pulse-server at http://127.0.0.1:1") != std::string::npos);
  }
  SECTION("no token") {
    const Captured c = RunCommand({"/usr/bin/env", "-u", "PULSE_API_TOKEN", McpBinary()});
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK(c.err.find("PULSE_API_TOKEN") != std::string::npos);
  }
  SECTION("not a URL") {
    const Captured c =
        RunCommand({"/usr/bin/env", "PULSE_API_TOKEN=x", McpBinary(), "--server", "127.0.0.1"});
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
  }
}

// Runs pulse-mcp with stdin at end of file (it serves until stdin closes) and `env` set.
Captured RunMcpUntilEof(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "-u", "PULSE_API_TOKEN"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {"/bin/sh", "-c", "exec \"$0\" \"$@\" </dev/null", McpBinary()});
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST_CASE("pulse-mcp checks its token at start, and its hint mints one that works", "[e2e][mcp]") {
  TempDir dir;
  ServerProcess server(dir.path());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());

  // No token: the hint is a command that runs as printed, given the server's data dir.
  const Captured none = RunMcpUntilEof({}, {"--base-url", url});
  INFO(none.err);
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  const std::size_t at = none.err.find("  pulse-server token create ");
  REQUIRE(at != std::string::npos);
  std::string hint = none.err.substr(at + 2, none.err.find('\n', at) - at - 2);
  CHECK(hint.find("--kind agent") != std::string::npos);
  CHECK(hint.find("actions:approve") == std::string::npos);  // an agent can never approve
  hint.replace(hint.find("./pulse-data"), std::string("./pulse-data").size(), dir.path());
  std::vector<std::string> mint = {ServerBinary()};
  std::istringstream words(hint.substr(std::string("pulse-server ").size()));
  for (std::string w; words >> w;) {
    mint.push_back(w);
  }
  const Captured minted = RunCommand(mint);
  INFO(minted.err);
  REQUIRE(minted.exit_code == 0);
  const std::string token = minted.out.substr(0, minted.out.find('\n'));

  // That token serves, read from the variable --token-env names (--base-url = --server).
  const Captured served =
      RunMcpUntilEof({"AGENT_TOKEN=" + token}, {"--base-url", url, "--token-env", "AGENT_TOKEN"});
  INFO(served.err);
  CHECK(served.exit_code == 0);
  CHECK(served.err.find("tools from " + url) != std::string::npos);

  // A wrong token fails at start, not on the agent's first call, naming the variable.
  const Captured wrong =
      RunMcpUntilEof({"PULSE_API_TOKEN=pulse_not-a-real-token"}, {"--server", url});
  INFO(wrong.err);
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.out.empty());
  CHECK(wrong.err.find("refused the token in PULSE_API_TOKEN (HTTP 401, unauthorized") !=
        std::string::npos);
  CHECK(wrong.err.find("pulse-server token create") != std::string::npos);
  CHECK(wrong.err.find("pulse_not-a-real-token") == std::string::npos);  // never echoed

  // So does a revoked one.
  REQUIRE(RunCommand({ServerBinary(), "token", "revoke", "--data-dir", dir.path(), "mcp-agent"})
              .exit_code == 0);
  const Captured revoked =
      RunMcpUntilEof({"AGENT_TOKEN=" + token}, {"--server", url, "--token-env", "AGENT_TOKEN"});
  CHECK(revoked.exit_code == 1);
  CHECK(revoked.err.find("refused the token in AGENT_TOKEN") != std::string::npos);
}

TEST_CASE("pulse-mcp usage errors exit 2 and change nothing", "[e2e][mcp]") {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--bogus"},
                                             {"--server"},
                                             {"--token-env", ""},
                                             {"--token-env", "9LIVES"},
                                             {"--token-env", "A=B"},
                                             {"--token-env", "PULSE API TOKEN"},
                                             {"--token-env", std::string(1000, 'A')},
                                             {"extra-positional"}}) {
    const Captured c = RunMcpUntilEof({"PULSE_API_TOKEN=x"}, args);
    INFO(c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK_FALSE(c.err.empty());
  }
  CHECK(RunMcpUntilEof({}, {"--help"}).exit_code == 0);
  CHECK(RunMcpUntilEof({}, {"--version"}).exit_code == 0);
}

}  // namespace
}  // namespace pulse::testing::e2e
