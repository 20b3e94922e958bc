// pulse-mcp against the official MCP TypeScript SDK client: starts the real pulse-server on
// loopback with a fresh data dir, mints an all-scopes token and one without actions:approve,
// then runs sdk_client_test.mjs on the pinned node. The script drives the real pulse-mcp
// through the SDK's Client and StdioClientTransport for every protocol version pulse-mcp
// supports (the SDK validating each reply) and prints one line per check. This test requires
// every expected check to be reported "ok", none "FAIL", and node to exit 0.
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "interop_tools.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr std::string_view kScript = PULSE_MCP_SDK_SCRIPT;
constexpr std::string_view kMcpBinary = PULSE_MCP_BINARY;
constexpr std::string_view kBenchScript = PULSE_MCP_SDK_BENCH_SCRIPT;

// What the script checks for each protocol version it offers.
const std::vector<std::string>& PerVersionChecks() {
  static const std::vector<std::string> checks = {
      "initialize",
      "tools/list",
      "prompts/list",
      "ping",
      "read tool get_fleet_context",
      "read tool list_findings as items and count",
      "resources/list",
      "resources/read",
      "prompts/get",
      "plan_action",
      "refusal: an agent may not approve",
      "argument error is a tool result",
      "unknown tool is a protocol error",
      "refusal: a token without actions:approve",
      "every line was JSON-RPC the SDK could read",
  };
  return checks;
}

std::set<std::string> ExpectedChecks() {
  std::set<std::string> expected;
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    for (const std::string& check : PerVersionChecks()) {
      expected.insert(std::string(version) + " " + check);
    }
  }
  expected.insert("2024-10-07 negotiate: an unsupported version gets the newest");
  return expected;
}

// "ok <name> (<detail>)" -> "<name>".
std::string CheckName(const std::string& rest) {
  const std::size_t detail = rest.rfind(" (");
  return detail != std::string::npos && rest.back() == ')' ? rest.substr(0, detail) : rest;
}

TEST_CASE(
    "the official MCP SDK client negotiates every supported version with pulse-mcp and "
    "accepts every reply",
    "[interop][mcp]") {
  TempDir dir;
  // pulse-mcp's tokens are agent tokens (docs/mcp.md).
  const std::string token = MintToken(dir.path(), "*", "sdk-operator", "agent");
  const std::string planner =
      MintToken(dir.path(), "monitoring:read,ai:execute,actions:plan", "sdk-planner", "agent");
  ServerProcess server(dir.path());

  ChildProcessOptions options;
  options.argv = {std::string(kInteropNode),
                  std::string(kScript),
                  "--modules",
                  std::string(kInteropNodeModules),
                  "--mcp",
                  std::string(kMcpBinary),
                  "--server",
                  "http://127.0.0.1:" + std::to_string(server.port()),
                  "--token",
                  token,
                  "--planner-token",
                  planner};
  options.log_path = std::string(kInteropLogDir) + "/mcp-sdk-client.log";
  auto node = ChildProcess::Start(options);
  REQUIRE(node.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while ((*node)->Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string ended = (*node)->Stop();
  const std::string log = (*node)->LogTail(1 << 20);
  INFO("node " << ended << "; its output (" << options.log_path << "):\n" << log);

  std::set<std::string> passed;
  std::vector<std::string> failed;
  bool summary = false;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ok ", 0) == 0) {
      CHECK(passed.insert(CheckName(line.substr(3))).second);  // each check reported once
    } else if (line.rfind("FAIL ", 0) == 0) {
      failed.push_back(line);
    } else if (line.rfind("summary: ", 0) == 0) {
      summary = true;
    }
  }
  CHECK(failed.empty());
  CHECK(passed == ExpectedChecks());
  CHECK(summary);
  CHECK(ended == "exited 0");
  CHECK(server.Running());  // the server took every call without falling over
}

// The baseline of cmake/bench-mcp-sdk.sh: the SDK's own stdio server (sdk_baseline_server.mjs)
// answers get_fleet_context with the bytes pulse-server returned, under pulse-mcp's definition
// of the tool, and the driver (sdk_bench.mjs) gets the same result from it and from pulse-mcp.
// A few rounds only: the figures are not checked (a benchmark, not a timed test).
TEST_CASE(
    "the SDK baseline server answers get_fleet_context like pulse-mcp, and the round-trip "
    "driver runs",
    "[interop][mcp]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "monitoring:read", "sdk-bench", "agent");
  ServerProcess server(dir.path());

  ChildProcessOptions options;
  options.argv = {std::string(kInteropNode),
                  std::string(kBenchScript),
                  "--modules",
                  std::string(kInteropNodeModules),
                  "--mcp",
                  std::string(kMcpBinary),
                  "--server",
                  "http://127.0.0.1:" + std::to_string(server.port()),
                  "--token",
                  token,
                  "--rounds",
                  "20",
                  "--warmup",
                  "2"};
  options.log_path = std::string(kInteropLogDir) + "/mcp-sdk-bench.log";
  auto node = ChildProcess::Start(options);
  REQUIRE(node.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while ((*node)->Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string ended = (*node)->Stop();
  const std::string log = (*node)->LogTail(1 << 20);
  INFO("node " << ended << "; its output (" << options.log_path << "):\n" << log);

  std::set<std::string> passed;
  bool failed = false;
  bool summary = false;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ok ", 0) == 0) {
      passed.insert(CheckName(line.substr(3)));
    } else if (line.rfind("FAIL ", 0) == 0) {
      failed = true;
    } else if (line.rfind("summary: p50 ", 0) == 0) {
      summary = true;
    }
  }
  CHECK_FALSE(failed);
  CHECK(passed == std::set<std::string>{
                      "captured /api/agent/fleet-context from pulse-server",
                      "pulse-mcp lists the tool", "the SDK baseline server lists the same tool",
                      "both servers answer the tool", "2 warm-up and 20 measured rounds"});
  CHECK(summary);
  CHECK(ended == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
