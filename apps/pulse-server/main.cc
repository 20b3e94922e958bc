// pulse-server: serves the governed surface over HTTP. Flags follow ARCHITECTURE §7.
// Only --help and --version are functional in this build; the HTTP surface lands with
// the pulse-server issue.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "fmt/core.h"

int main(int argc, char** argv) {
  CLI::App app{"pulse-server: governed AI-operations engine (HTTP API, chat, Patrol)"};
  app.set_version_flag("--version", std::string("pulse-server ") + PULSE_CORE_VERSION_STRING);
  std::string listen = "127.0.0.1:7655";
  std::string data_dir = "./pulse-data";
  std::string fleet = "demo";
  std::string provider;
  std::string provider_base_url;
  std::string model;
  std::string control_level = "read_only";
  app.add_option("--listen", listen, "Address to listen on (host:port)")->capture_default_str();
  app.add_option("--data-dir", data_dir, "Directory for the SQLite database and keys")
      ->capture_default_str();
  app.add_option("--fleet", fleet, "Fleet to govern: demo, local, or a fleet JSON file")
      ->capture_default_str();
  app.add_option("--provider", provider, "LLM provider name (API key from PULSE_PROVIDER_API_KEY)");
  app.add_option("--provider-base-url", provider_base_url, "Override the provider's base URL");
  app.add_option("--model", model, "Model name");
  app.add_option("--control-level", control_level,
                 "Assistant's maximum control level: read_only, controlled, autonomous")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  fmt::print(stderr,
             "pulse-server {}: the HTTP surface is not part of this build yet; "
             "only --help and --version work.\n",
             PULSE_CORE_VERSION_STRING);
  return 2;
}
