// pulse-mcp: MCP over stdio (newline-delimited JSON-RPC 2.0) for external agents. Reads the
// capability manifest from pulse-server once at start, then serves tools, prompts and resources
// until stdin closes. stdout carries JSON-RPC only; every log line goes to stderr.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "CLI/CLI.hpp"
#include "fmt/core.h"
#include "http_pulse_caller.h"
#include "pulse/adapters/mcp/mcp_server.h"
#include "pulse/adapters/mcp/mcp_session.h"
#include "pulse/adapters/mcp/tool_allowlist.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/policy/scope.h"
#include "stdio_loop.h"

namespace {

std::string RequiredScopes() {
  std::string out;
  for (pulse::core::Scope scope : pulse::core::ManifestRequiredScopes()) {
    out += (out.empty() ? "" : ",") + std::string(pulse::core::ToString(scope));
  }
  return out;
}

int Serve(const std::string& server) {
  namespace mcp = pulse::adapters::mcp;
  const char* token_env = std::getenv(std::string(pulse::core::kMcpTokenEnv).c_str());
  const std::string token = token_env == nullptr ? "" : token_env;
  if (token.empty()) {
    fmt::print(stderr,
               "pulse-mcp: set {} to an API token (pulse-server token create --scopes {})\n",
               pulse::core::kMcpTokenEnv, RequiredScopes());
    return 2;
  }
  auto caller = pulse::apps::mcp::HttpPulseCaller::Open(server, token, absl::Seconds(30));
  if (!caller.ok()) {
    fmt::print(stderr, "pulse-mcp: {}\n", std::string(caller.status().message()));
    return 2;
  }
  // The manifest's own route, from the surface table (the row always exists: a core test says
  // so).
  const pulse::core::SurfaceRoute* manifest_route =
      pulse::core::FindSurfaceRoute("get_capabilities");
  auto manifest = (*caller)->Send({manifest_route->method, manifest_route->path, std::nullopt});
  if (!manifest.ok()) {
    fmt::print(stderr, "pulse-mcp: cannot reach pulse-server at {}: {}\n", server,
               std::string(manifest.status().message()));
    return 1;
  }
  if (manifest->status != 200) {
    fmt::print(stderr, "pulse-mcp: {} answered HTTP {} for the capability manifest\n", server,
               manifest->status);
    return 1;
  }
  auto surface = mcp::McpSurfaceFromManifest(manifest->body);
  if (!surface.ok()) {
    fmt::print(stderr, "pulse-mcp: {}\n", std::string(surface.status().message()));
    return 1;
  }
  const std::size_t tool_count = surface->tool_names.size();
  mcp::McpServer mcp_server(**caller, *std::move(surface), PULSE_CORE_VERSION_STRING);
  mcp::McpSession session(mcp_server);
  fmt::print(stderr, "pulse-mcp {}: {} tools from {}; reading JSON-RPC on stdin\n",
             PULSE_CORE_VERSION_STRING, tool_count, server);
  return pulse::apps::mcp::RunStdioLoop(session, STDIN_FILENO, STDOUT_FILENO);
}

}  // namespace

namespace {

int Run(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away shows up as a failed write
  CLI::App app{"pulse-mcp: the Pulse governed surface as an MCP stdio server"};
  app.set_version_flag("--version", std::string("pulse-mcp ") + PULSE_CORE_VERSION_STRING);
  std::string server(pulse::core::kMcpDefaultBaseUrl);
  app.add_option(
         "--server", server,
         "pulse-server base URL (token from " + std::string(pulse::core::kMcpTokenEnv) + ")")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return Serve(server);
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
