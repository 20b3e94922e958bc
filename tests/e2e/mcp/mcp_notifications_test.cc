// pulse-mcp --emit-notifications against the real pulse-server (docs/mcp.md "Notifications"):
// the Patrol stream arrives as notifications/pulse/patrol lines between the replies, only after
// initialize, resumes after a server restart, and a token without ai:execute leaves the session
// working without notifications.
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "mcp_stdio_client.h"
#include "pulse/core/json/json.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

std::vector<std::string> McpArgs(int port) {
  return {PULSE_MCP_BINARY, "--server", "http://127.0.0.1:" + std::to_string(port),
          "--emit-notifications"};
}

// Reads lines until one satisfies `match` (returned) or `timeout` passes (nullopt). Every line
// read is appended to `seen`.
std::optional<rapidjson::Document> ReadUntil(
    McpStdioClient& client, std::vector<std::string>& seen,
    const std::function<bool(const rapidjson::Value&)>& match,
    absl::Duration timeout = absl::Seconds(30)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::optional<std::string> line = client.ReadLine(deadline - absl::Now());
    if (!line.has_value()) {
      return std::nullopt;
    }
    seen.push_back(*line);
    rapidjson::Document doc = Json(*line);
    if (match(doc)) {
      return doc;
    }
  }
  return std::nullopt;
}

bool IsPatrol(const rapidjson::Value& line, const std::string& type) {
  return line.HasMember("method") && Str(line, "method") == "notifications/pulse/patrol" &&
         Str(line["params"], "type") == type;
}

void Initialize(McpStdioClient& client) {
  REQUIRE(client.Write(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26",)"
      R"("capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}})"
      "\n"));
}

TEST_CASE(
    "pulse-mcp forwards the Patrol stream as notifications after initialize and resumes "
    "after a server restart",
    "[e2e][mcp][patrol_stream]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "mcp", "agent");
  const std::string operator_token = MintToken(dir.path(), "ai:execute", "operator");
  std::optional<ServerProcess> server;
  server.emplace(dir.path(), ServerOptions{.args = {"--patrol-interval", "0"}});
  const int port = server->port();
  McpStdioClient client(McpArgs(port), {"PULSE_API_TOKEN=" + token}, dir.File("mcp.log"));

  // A run before initialize: nothing is written to stdout for it.
  REQUIRE(Send(port, "POST", "/api/ai/patrol/run", operator_token).status == 200);
  CHECK_FALSE(client.ReadLine(absl::Seconds(2)).has_value());

  Initialize(client);
  std::vector<std::string> seen;
  std::optional<rapidjson::Document> reply =
      ReadUntil(client, seen, [](const rapidjson::Value& l) { return l.HasMember("id"); });
  REQUIRE(reply.has_value());
  CHECK(seen.size() == 1);  // the reply is the first line
  REQUIRE(client.Write(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                       "\n"));
  // The bridge joins late: a snapshot first.
  std::optional<rapidjson::Document> snapshot =
      ReadUntil(client, seen, [](const rapidjson::Value& l) { return IsPatrol(l, "snapshot"); });
  REQUIRE(snapshot.has_value());
  CHECK(Str((*snapshot)["params"], "resync_reason") == "late_joiner");

  // A run now: its events arrive in order, and a request in between still gets its reply.
  const Reply started = Send(port, "POST", "/api/ai/patrol/run", operator_token);
  REQUIRE(started.status == 200);
  const std::string run = Str(Json(started.body), "run_id");
  REQUIRE(client.Write(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})"
                       "\n"));
  bool listed = false;
  std::optional<rapidjson::Document> complete =
      ReadUntil(client, seen, [&](const rapidjson::Value& l) {
        if (l.HasMember("id") && l["id"].IsInt() && l["id"].GetInt() == 2) {
          listed = l.HasMember("result");
        }
        return IsPatrol(l, "complete") && Str(l["params"], "run_id") == run;
      });
  REQUIRE(complete.has_value());
  if (!listed) {
    CHECK(ReadUntil(client, seen, [](const rapidjson::Value& l) {
            return l.HasMember("id");
          }).has_value());
  }
  std::vector<std::string> types;
  for (const std::string& line : seen) {
    rapidjson::Document doc = Json(line);
    CHECK(Str(doc, "jsonrpc") == "2.0");
    if (doc.HasMember("method") && Str(doc["params"], "run_id") == run) {
      types.push_back(Str(doc["params"], "type"));
    }
  }
  REQUIRE_FALSE(types.empty());
  CHECK(types.front() == "start");
  CHECK(types.back() == "complete");

  // The server restarts on the same port: the bridge reconnects with its Last-Event-ID, which
  // the new process never issued, and says so with a snapshot; the next run streams again.
  server->Stop();
  server.reset();
  server.emplace(dir.path(), ServerOptions{.args = {"--patrol-interval", "0"},
                                           .listen = "127.0.0.1:" + std::to_string(port)});
  std::optional<rapidjson::Document> resync = ReadUntil(
      client, seen, [](const rapidjson::Value& l) { return IsPatrol(l, "snapshot"); },
      absl::Seconds(60));
  REQUIRE(resync.has_value());
  CHECK(Str((*resync)["params"], "resync_reason") == "stale_last_event_id");
  const Reply again = Send(port, "POST", "/api/ai/patrol/run", operator_token);
  REQUIRE(again.status == 200);
  const std::string second = Str(Json(again.body), "run_id");
  CHECK(ReadUntil(client, seen, [&](const rapidjson::Value& l) {
          return IsPatrol(l, "complete") && Str(l["params"], "run_id") == second;
        }).has_value());
  CHECK(client.CloseAndWait() == 0);
}

TEST_CASE("pulse-mcp with a token that cannot read the Patrol stream serves without notifications",
          "[e2e][mcp][patrol_stream]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "monitoring:read", "mcp", "agent");
  const std::string operator_token = MintToken(dir.path(), "ai:execute", "operator");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  McpStdioClient client(McpArgs(server.port()), {"PULSE_API_TOKEN=" + token}, dir.File("mcp.log"));
  Initialize(client);
  std::vector<std::string> seen;
  REQUIRE(ReadUntil(client, seen, [](const rapidjson::Value& l) {
            return l.HasMember("id");
          }).has_value());
  REQUIRE(Send(server.port(), "POST", "/api/ai/patrol/run", operator_token).status == 200);
  REQUIRE(client.Write(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})"
                       "\n"));
  std::optional<std::string> line = client.ReadLine();
  REQUIRE(line.has_value());
  CHECK(Json(*line).HasMember("result"));  // the reply, no notification before it
  CHECK_FALSE(client.ReadLine(absl::Seconds(2)).has_value());
  CHECK(client.CloseAndWait() == 0);
  std::ifstream log(dir.File("mcp.log"));
  std::stringstream text;
  text << log.rdbuf();
  CHECK(text.str().find("refused the token") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
