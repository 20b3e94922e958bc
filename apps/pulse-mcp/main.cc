// pulse-mcp: MCP over stdio (newline-delimited JSON-RPC 2.0) for external agents. Reads the
// capability manifest from pulse-server once at start, then serves tools, prompts and resources
// until stdin closes. stdout carries JSON-RPC only; every log line goes to stderr.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "fmt/core.h"
#include "http_pulse_caller.h"
#include "notification_bridge.h"
#include "pulse/adapters/mcp/mcp_server.h"
#include "pulse/adapters/mcp/mcp_session.h"
#include "pulse/adapters/mcp/tool_allowlist.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/surface.h"
#include "rapidjson/document.h"
#include "stdio_loop.h"

namespace {

// What an agent token for pulse-mcp needs, and the command that mints one (docs/mcp.md shows the
// same line). An agent can never approve or manage tokens, so those scopes are left out.
constexpr std::string_view kAgentScopes = "monitoring:read,ai:execute,actions:plan";

std::string TokenHint(std::string_view token_env) {
  return fmt::format(
      "Create an agent token on the server's host (--data-dir is the directory pulse-server "
      "runs with):\n  pulse-server token create --data-dir ./pulse-data --name mcp-agent "
      "--kind agent --scopes {}\nthen export {}=<the printed token>.\n",
      kAgentScopes, token_env);
}

// An environment variable name: a letter or underscore, then letters, digits, underscores.
bool IsEnvName(std::string_view name) {
  if (name.empty() || name.size() > 128 || absl::ascii_isdigit(name.front())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// "<code>: <message>" from the server's error envelope {"error","message"} ("" when the body is
// not one). The message is the server's; it never holds the token.
std::string DescribeError(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return "";
  }
  const rapidjson::Value* code = pulse::core::GetMember(doc, "error");
  const rapidjson::Value* message = pulse::core::GetMember(doc, "message");
  if (code == nullptr || !code->IsString()) {
    return "";
  }
  std::string out = code->GetString();
  if (message != nullptr && message->IsString() && message->GetStringLength() > 0) {
    out += ": ";
    out.append(message->GetString(), std::min<std::size_t>(message->GetStringLength(), 200));
  }
  // Printed on a terminal: no control characters from the wire.
  std::replace_if(
      out.begin(), out.end(), [](char c) { return absl::ascii_iscntrl(c); }, '?');
  return out;
}

// Exit statuses (docs/mcp.md): 0 stdin closed, 1 cannot serve (server unreachable, no manifest,
// token refused), 2 usage (flags, no token).
constexpr int kExitCannotServe = 1;
constexpr int kExitUsage = 2;

int Serve(const std::string& server, const std::string& token_env_name, bool emit_notifications) {
  namespace mcp = pulse::adapters::mcp;
  const char* token_env = std::getenv(token_env_name.c_str());
  const std::string token = token_env == nullptr ? "" : token_env;
  if (token.empty()) {
    fmt::print(stderr, "pulse-mcp: no API token: {} is not set.\n{}", token_env_name,
               TokenHint(token_env_name));
    return kExitUsage;
  }
  auto caller = pulse::apps::mcp::HttpPulseCaller::Open(server, token, absl::Seconds(30));
  if (!caller.ok()) {
    fmt::print(stderr, "pulse-mcp: {}\n", std::string(caller.status().message()));
    return kExitUsage;
  }
  // The manifest's own route, from the surface table (the row always exists: a core test says
  // so).
  const pulse::core::SurfaceRoute* manifest_route =
      pulse::core::FindSurfaceRoute("get_capabilities");
  auto manifest = (*caller)->Send({manifest_route->method, manifest_route->path, std::nullopt});
  if (!manifest.ok()) {
    fmt::print(stderr, "pulse-mcp: cannot reach pulse-server at {}: {}\n", server,
               std::string(manifest.status().message()));
    return kExitCannotServe;
  }
  if (manifest->status != 200) {
    fmt::print(stderr, "pulse-mcp: {} answered HTTP {} for the capability manifest\n", server,
               manifest->status);
    return kExitCannotServe;
  }
  // The manifest is public, so it says nothing about the token: check it once now with a cheap
  // authenticated read, so a wrong, revoked or expired token fails here with a hint instead of
  // on the agent's first tool call. 403 (a scope the token lacks) still proves the token valid.
  const pulse::core::SurfaceRoute* probe = pulse::core::FindSurfaceRoute("get_patrol_status");
  auto checked = (*caller)->Send({probe->method, probe->path, std::nullopt});
  if (!checked.ok()) {
    fmt::print(stderr, "pulse-mcp: cannot reach pulse-server at {}: {}\n", server,
               std::string(checked.status().message()));
    return kExitCannotServe;
  }
  if (checked->status == 401) {
    const std::string why = DescribeError(checked->body);
    fmt::print(stderr, "pulse-mcp: {} refused the token in {} (HTTP 401{}{}).\n{}", server,
               token_env_name, why.empty() ? "" : ", ", why, TokenHint(token_env_name));
    return kExitCannotServe;
  }
  auto surface = mcp::McpSurfaceFromManifest(manifest->body);
  if (!surface.ok()) {
    fmt::print(stderr, "pulse-mcp: {}\n", std::string(surface.status().message()));
    return kExitCannotServe;
  }
  const std::size_t tool_count = surface->tool_names.size();
  mcp::McpServer mcp_server(**caller, *std::move(surface), PULSE_CORE_VERSION_STRING);
  mcp::McpSession session(mcp_server);
  fmt::print(stderr, "pulse-mcp {}: {} tools from {}; reading JSON-RPC on stdin\n",
             PULSE_CORE_VERSION_STRING, tool_count, server);
  pulse::apps::mcp::OutputLines out(STDOUT_FILENO);
  if (!emit_notifications) {
    return pulse::apps::mcp::RunStdioLoop(session, STDIN_FILENO, out, nullptr);
  }
  auto bridge = pulse::apps::mcp::NotificationBridge::Start(server, token, out);
  if (!bridge.ok()) {
    fmt::print(stderr, "pulse-mcp: {}\n", std::string(bridge.status().message()));
    return kExitUsage;
  }
  const int status = pulse::apps::mcp::RunStdioLoop(session, STDIN_FILENO, out, [&] {
    if (!mcp_server.protocol_version().empty()) {
      (*bridge)->Open();  // the client initialized: notifications may flow
    }
  });
  (*bridge)->Stop();
  return status;
}

int Run(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away shows up as a failed write
  // A tool call allocates and frees a few hundred KB (the reply, its parse, the result line).
  // By default glibc gives the freed top of the heap back to the kernel after every call and
  // faults fresh zeroed pages in on the next one (issue 29 profile: brk was 7% of pulse-mcp's
  // time per fleet-context call); keep up to 16 MiB for the next call instead.
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  CLI::App app{"pulse-mcp: the Pulse governed surface as an MCP stdio server"};
  app.set_version_flag("--version", std::string("pulse-mcp ") + PULSE_CORE_VERSION_STRING);
  app.footer(
      fmt::format("Exit status: 0 when stdin closes, 1 when it cannot serve (server "
                  "unreachable, token refused), 2 for a usage error or a missing token.\n"
                  "Example:\n  {}=<token> pulse-mcp --server http://127.0.0.1:7655",
                  pulse::core::kMcpTokenEnv));
  std::string server(pulse::core::kMcpDefaultBaseUrl);
  app.add_option("--server,--base-url", server, "pulse-server base URL")->capture_default_str();
  std::string token_env(pulse::core::kMcpTokenEnv);
  app.add_option("--token-env", token_env,
                 "Name of the environment variable holding the API token (never the token "
                 "itself, which would show in ps and shell history)")
      ->capture_default_str();
  bool emit_notifications = false;
  app.add_flag("--emit-notifications", emit_notifications,
               "Forward pulse-server's Patrol stream as notifications/pulse/patrol JSON-RPC "
               "notifications (after initialize; the token needs ai:execute)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  if (!IsEnvName(token_env)) {
    fmt::print(stderr, "pulse-mcp: --token-env wants an environment variable name, like {}\n",
               pulse::core::kMcpTokenEnv);
    return kExitUsage;
  }
  return Serve(server, token_env, emit_notifications);
}

}  // namespace

// Everything the process does runs inside Run; an exception that escapes it (a bug, or
// std::bad_alloc) is reported in one line with exit status 70 (EX_SOFTWARE) instead of
// std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pulse-mcp: fatal: %s\n", e.what());
  } catch (...) {
    std::fputs("pulse-mcp: fatal: unknown exception\n", stderr);
  }
  return 70;
}
