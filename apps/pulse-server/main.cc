// pulse-server: serves the governed surface over HTTP (ARCHITECTURE §7). This file only parses
// the command line (CLI11 stays in this one translation unit); server_app.h composes the server.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "server_app.h"
#include "server_config.h"
#include "token_command.h"

namespace {

// Adds a string option whose value is remembered only when given, so pulse.json and the
// defaults can fill in the rest.
CLI::Option* AddSetting(CLI::App& app, const std::string& name, std::optional<std::string>& slot,
                        const std::string& help) {
  return app.add_option_function<std::string>(
      name, [&slot](const std::string& value) { slot = value; }, help);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pulse-server: governed AI-operations engine (HTTP API, chat, Patrol)"};
  app.set_version_flag("--version", std::string("pulse-server ") + PULSE_CORE_VERSION_STRING);
  app.footer(
      "Settings may also come from <data-dir>/pulse.json (keys listen, fleet, provider, "
      "provider_base_url, model, control_level, patrol_interval, max_event_streams, "
      "max_run_streams, max_streams_per_token); the command line wins. The provider API key "
      "is read from PULSE_PROVIDER_API_KEY.");

  pulse::server::ServerSettings flags;
  AddSetting(app, "--listen", flags.listen,
             "Address to listen on, host:port (default 127.0.0.1:7655; port 0 picks one)");
  AddSetting(app, "--data-dir", flags.data_dir,
             "Directory for the database and keys (default ./pulse-data)");
  AddSetting(app, "--fleet", flags.fleet,
             "Fleet to govern: demo (default), local, or a fleet JSON file");
  AddSetting(app, "--provider", flags.provider, "Model provider name (none: the Assistant is off)");
  AddSetting(app, "--provider-base-url", flags.provider_base_url,
             "Override the provider's base URL");
  AddSetting(app, "--model", flags.model, "Model name (default: the provider's)");
  AddSetting(app, "--control-level", flags.control_level,
             "The Assistant's maximum control level: read_only (default), controlled, autonomous");

  AddSetting(app, "--patrol-interval", flags.patrol_interval,
             "Time between scheduled Patrol runs, e.g. 15m (default) or 1h; 0: manual only");
  AddSetting(app, "--max-event-streams", flags.max_event_streams,
             "Open /api/agent/events subscriptions allowed at once (default 384)");
  AddSetting(app, "--max-run-streams", flags.max_run_streams,
             "Streaming Assistant runs (chat, resume, answer) allowed at once (default 128)");
  AddSetting(app, "--max-streams-per-token", flags.max_streams_per_token,
             "Open streams of both kinds one token may hold at once (default 32)");

  CLI::App* token = app.add_subcommand("token", "Manage API tokens")->require_subcommand(1);
  CLI::App* create = token->add_subcommand("create", "Create a token; prints it on stdout");
  std::string token_dir = std::string(pulse::server::kDefaultDataDir);
  std::string token_name;
  std::string token_scopes;
  create->add_option("--data-dir", token_dir, "The server's data directory")->capture_default_str();
  create->add_option("--name", token_name, "A name for the token")->required();
  create
      ->add_option("--scopes", token_scopes, "Comma-separated scopes, e.g. monitoring:read,ai:chat")
      ->required();

  CLI11_PARSE(app, argc, argv);

  if (create->parsed()) {
    return pulse::server::RunTokenCreate(token_dir, token_name, token_scopes);
  }
  std::optional<std::string> api_key;
  if (const char* key = std::getenv(std::string(pulse::server::kApiKeyEnv).c_str())) {
    api_key = key;
  }
  absl::StatusOr<pulse::server::ServerConfig> config =
      pulse::server::ResolveServerConfig(flags, api_key);
  if (!config.ok()) {
    std::fprintf(stderr, "pulse-server: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  return pulse::server::RunServer(*config);
}
