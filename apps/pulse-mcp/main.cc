// pulse-mcp: MCP over stdio (newline-delimited JSON-RPC 2.0) for external agents.
// Only --help and --version are functional in this build.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "fmt/core.h"

int main(int argc, char** argv) {
  CLI::App app{"pulse-mcp: the Pulse governed surface as an MCP stdio server"};
  app.set_version_flag("--version", std::string("pulse-mcp ") + PULSE_CORE_VERSION_STRING);
  std::string server = "http://127.0.0.1:7655";
  app.add_option("--server", server, "pulse-server base URL (token from PULSE_API_TOKEN)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fmt::print(stderr, "pulse-mcp {}: the MCP adapter is not part of this build yet.\n",
             PULSE_CORE_VERSION_STRING);
  return 2;
}
