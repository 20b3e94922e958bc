// pulse-cli: one-shot queries and operations against a pulse-server.
// Only --help and --version are functional in this build.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "fmt/core.h"

int main(int argc, char** argv) {
  CLI::App app{"pulse-cli: ask, review findings and actions, approve plans from a shell"};
  app.set_version_flag("--version", std::string("pulse-cli ") + PULSE_CORE_VERSION_STRING);
  std::string server = "http://127.0.0.1:7655";
  app.add_option("--server", server, "pulse-server base URL (token from PULSE_API_TOKEN)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fmt::print(stderr, "pulse-cli {}: no subcommands are part of this build yet.\n",
             PULSE_CORE_VERSION_STRING);
  return 2;
}
