// pulse-server: serves the governed surface over HTTP (docs/server.md). This file only parses
// the command line (CLI11 stays in this one translation unit) and wires: the application layer
// in adapters/server (pulse/adapters/server/server_app.h) composes and runs the server.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/server/fleet_credential_command.h"
#include "pulse/adapters/server/server_app.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/token_command.h"

namespace {

// Adds a string option whose value is remembered only when given, so pulse.json and the
// defaults can fill in the rest.
CLI::Option* AddSetting(CLI::App& app, const std::string& name, std::optional<std::string>& slot,
                        const std::string& help) {
  return app.add_option_function<std::string>(
      name, [&slot](const std::string& value) { slot = value; }, help);
}

}  // namespace

namespace {

// Every connected pulse-agent holds a socket (docs/agent.md); the common default soft limit of
// 1,024 open files would cap a fleet long before the server's own budgets do, so the soft limit
// is raised to the hard one the administrator allows. A failure keeps the limit as it was.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int Run(int argc, char** argv) {
  // Debian's Abseil is built with lock-order (deadlock) detection on, which takes a global graph
  // lock on every Mutex::Lock. The server turns it off as release builds of Abseil do; the unit
  // and in-process suites keep it (docs/architecture.md, "Tooling").
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"pulse-server: governed AI-operations engine (HTTP API, chat, Patrol)"};
  app.set_version_flag("--version", std::string("pulse-server ") + PULSE_CORE_VERSION_STRING);
  app.footer(
      "Settings may also come from <data-dir>/pulse.json (keys listen, fleet, provider, "
      "provider_base_url, model, control_level, patrol_interval, patrol_on_start, "
      "provider_locality, max_event_streams, max_run_streams, max_streams_per_token, "
      "run_workers, run_queue, notify_retry_base, notify_max_attempts, notify_ca_file); the "
      "command line "
      "wins. The provider API key is read from "
      "PULSE_PROVIDER_API_KEY, else from the provider's own variable (ANTHROPIC_API_KEY, "
      "OPENAI_API_KEY, GEMINI_API_KEY, ...). pulse.json alone takes "
      "requester_separation (on, the default, or off).");

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
  AddSetting(app, "--provider-locality", flags.provider_locality,
             "Whether the provider endpoint may see unredacted context: auto (default; local "
             "only for localhost and loopback, private or link-local IP addresses), local, or "
             "remote (secrets and localOnly resources redacted)");
  bool trusted_local = false;
  app.add_flag("--provider-trusted-local", trusted_local,
               "Declare the provider endpoint local although its address is not: the same as "
               "--provider-locality local");
  AddSetting(app, "--control-level", flags.control_level,
             "The Assistant's maximum control level: read_only (default), controlled, autonomous");

  AddSetting(app, "--patrol-interval", flags.patrol_interval,
             "Time between scheduled Patrol runs, e.g. 15m (default) or 1h; 0: manual only");
  AddSetting(app, "--patrol-on-start", flags.patrol_on_start,
             "on (default): the first scheduled Patrol run starts right after start-up; off: "
             "one interval after it");
  AddSetting(app, "--patrol-event-window", flags.patrol_event_window,
             "Fleet changes (a container died, a task failed, ...) within this long start one "
             "scoped Patrol run (1s-10m, default 30s)");
  AddSetting(app, "--patrol-event-cooldown", flags.patrol_event_cooldown,
             "After an event-triggered run looked at a resource, its changes start none for this "
             "long (0-24h, default 10m)");
  AddSetting(app, "--patrol-event-runs-per-hour", flags.patrol_event_runs_per_hour,
             "Event-triggered Patrol runs allowed per hour, all resources together (0-60, "
             "default 6; 0: none)");
  AddSetting(app, "--max-event-streams", flags.max_event_streams,
             "Open /api/agent/events subscriptions allowed at once (default 384)");
  AddSetting(app, "--max-run-streams", flags.max_run_streams,
             "Streaming Assistant runs (chat, resume, answer) allowed at once (default 128)");
  AddSetting(app, "--max-streams-per-token", flags.max_streams_per_token,
             "Open streams of both kinds one token may hold at once (default 32)");
  AddSetting(app, "--run-workers", flags.run_workers,
             "Assistant runs that work at once, each on a worker thread (1-256, default 16)");
  AddSetting(app, "--run-queue", flags.run_queue,
             "Assistant runs that may wait for a worker; more are refused with 503 (0-65536, "
             "default 1024)");
  AddSetting(app, "--notify-retry-base", flags.notify_retry_base,
             "The first retry of a failed notification waits about this long, each next one "
             "twice as long (100ms-1h, default 2s)");
  AddSetting(app, "--notify-max-attempts", flags.notify_max_attempts,
             "Delivery attempts before a notification is dead (1-100, default 8)");
  AddSetting(app, "--notify-ca-file", flags.notify_ca_file,
             "A PEM file of CA certificates that notification receivers and SMTP servers must "
             "chain to, instead of the system store");

  CLI::App* token = app.add_subcommand("token", "Manage API tokens")->require_subcommand(1);
  CLI::App* create = token->add_subcommand("create", "Create a token; prints it on stdout");
  pulse::server::TokenCreateOptions create_options;
  create_options.data_dir = std::string(pulse::server::kDefaultDataDir);
  create->add_option("--data-dir", create_options.data_dir, "The server's data directory")
      ->capture_default_str();
  create->add_option("--name", create_options.name, "A name for the token")->required();
  create
      ->add_option("--scopes", create_options.scopes,
                   "Comma-separated scopes, e.g. monitoring:read,ai:chat")
      ->required();
  create->add_option_function<std::string>(
      "--kind", [&create_options](const std::string& v) { create_options.kind = v; },
      "Who holds it: human (default; may approve), agent (an MCP client or other software "
      "acting on its own judgement) or service (a script); only human tokens may approve");
  create->add_option_function<std::string>(
      "--expires", [&create_options](const std::string& v) { create_options.expires = v; },
      "Lifetime in hours or days, e.g. 12h or 30d (default: never expires)");
  create->add_option_function<std::string>(
      "--host", [&create_options](const std::string& v) { create_options.host = v; },
      "Kind agent only: bind the token to this host (a pulse-agent's --hostname); it can then "
      "report and take commands for that host and no other");

  CLI::App* list = token->add_subcommand("list", "List tokens (never their secrets)");
  std::string list_dir = std::string(pulse::server::kDefaultDataDir);
  bool list_json = false;
  list->add_option("--data-dir", list_dir, "The server's data directory")->capture_default_str();
  list->add_flag("--json", list_json, "One JSON object {tokens:[...]} instead of a table");

  CLI::App* revoke = token->add_subcommand("revoke", "Revoke a token by name or id");
  std::string revoke_dir = std::string(pulse::server::kDefaultDataDir);
  std::string revoke_target;
  revoke->add_option("--data-dir", revoke_dir, "The server's data directory")
      ->capture_default_str();
  revoke->add_option("token", revoke_target, "The token's name or id (tok_...)")->required();

  CLI::App* credential =
      app.add_subcommand("fleet-credential", "Manage the secrets of fleet sources (sealed)")
          ->require_subcommand(1);
  CLI::App* credential_set = credential->add_subcommand(
      "set",
      "Seal a source's secret (a proxmox-ve or proxmox-backup token secret), read from stdin");
  std::string credential_dir = std::string(pulse::server::kDefaultDataDir);
  std::string credential_name;
  credential_set->add_option("--data-dir", credential_dir, "The server's data directory")
      ->capture_default_str();
  credential_set->add_option("name", credential_name, "The fleet source's name")->required();
  CLI::App* credential_delete =
      credential->add_subcommand("delete", "Remove a source's sealed secret");
  credential_delete->add_option("--data-dir", credential_dir, "The server's data directory")
      ->capture_default_str();
  credential_delete->add_option("name", credential_name, "The fleet source's name")->required();

  // Usage errors exit 2 (CLI11's own codes are above 100); --help and --version exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (trusted_local) {
    if (flags.provider_locality.has_value() && *flags.provider_locality != "local") {
      std::fprintf(stderr,
                   "pulse-server: --provider-trusted-local contradicts --provider-locality %s\n",
                   flags.provider_locality->c_str());
      return 2;
    }
    flags.provider_locality = "local";
  }

  if (create->parsed()) {
    return pulse::server::RunTokenCreate(create_options);
  }
  if (list->parsed()) {
    return pulse::server::RunTokenList(list_dir, list_json);
  }
  if (revoke->parsed()) {
    return pulse::server::RunTokenRevoke(revoke_dir, revoke_target);
  }
  if (credential_set->parsed()) {
    return pulse::server::RunFleetCredentialSet(credential_dir, credential_name, stdin);
  }
  if (credential_delete->parsed()) {
    return pulse::server::RunFleetCredentialDelete(credential_dir, credential_name);
  }
  absl::StatusOr<pulse::server::ServerConfig> config =
      pulse::server::ResolveServerConfig(flags, std::nullopt);
  if (!config.ok()) {
    std::fprintf(stderr, "pulse-server: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  if (std::optional<pulse::server::ProviderKey> key = pulse::server::ProviderKeyFromEnvironment(
          config->provider, [](const std::string& name) { return std::getenv(name.c_str()); })) {
    config->api_key = std::move(key->value);
    config->api_key_variable = std::move(key->variable);
  }
  RaiseOpenFileLimit();
  return pulse::server::RunServer(*config);
}

}  // namespace

// Everything the process does runs inside Run; an exception that escapes it (a bug, or
// std::bad_alloc) is reported in one line with exit status 70 (EX_SOFTWARE) instead of
// std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pulse-server: fatal: %s\n", e.what());
  } catch (...) {
    std::fputs("pulse-server: fatal: unknown exception\n", stderr);
  }
  return 70;
}
