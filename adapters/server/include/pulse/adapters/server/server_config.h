// pulse-server's configuration (docs/server.md): the command-line flags, the optional
// pulse.json in the data dir (the same settings; a flag given on the command line wins), the
// defaults, and the provider API key from PULSE_PROVIDER_API_KEY. Everything is checked here,
// once, with messages an operator can act on; none of them repeats the API key. Pure
// functions apart from reading pulse.json; thread-compatible values.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/providers/endpoint_locality.h"
#include "pulse/core/policy/control_level.h"

namespace pulse::server {

inline constexpr std::string_view kDefaultListen = "127.0.0.1:7655";
inline constexpr std::string_view kDefaultDataDir = "./pulse-data";
inline constexpr std::string_view kDefaultFleet = "demo";
inline constexpr std::string_view kConfigFileName = "pulse.json";
inline constexpr std::string_view kApiKeyEnv = "PULSE_PROVIDER_API_KEY";
// --fleet values that are not a file.
inline constexpr std::string_view kFleetDemo = "demo";
inline constexpr std::string_view kFleetLocal = "local";
// Scheduled Patrol runs: every 15 minutes unless configured; 0 means manual runs only.
inline constexpr absl::Duration kDefaultPatrolInterval = absl::Minutes(15);
inline constexpr absl::Duration kMinPatrolInterval = absl::Seconds(1);
inline constexpr absl::Duration kMaxPatrolInterval = absl::Hours(24 * 7);

// A Patrol interval: "0" (manual only) or a duration of 1s..168h written with units, e.g.
// "15m", "90s", "1h30m". InvalidArgument otherwise (a bare number other than 0 is refused, so
// "15" is not silently read as 15 seconds or minutes).
[[nodiscard]] absl::StatusOr<absl::Duration> ParsePatrolInterval(std::string_view text);

struct ListenAddress {
  std::string host;  // an IPv4 literal, a host name, or an IPv6 literal without brackets
  int port = 0;      // 0: an ephemeral port

  // "host:port", with brackets around an IPv6 host.
  std::string ToString() const;
};

// host:port, [v6]:port. InvalidArgument for a missing or empty host, a port that is not a
// decimal number in 0..65535, or characters outside a host name / address.
[[nodiscard]] absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

// Settings as one source states them; unset members fall through to the next source.
struct ServerSettings {
  std::optional<std::string> listen;
  std::optional<std::string> data_dir;  // command line only: pulse.json lives in the data dir
  std::optional<std::string> fleet;
  // pulse.json only: "fleet" given as an object, {"sources": [...]} (docs/fleet.md), as its
  // canonical JSON text. A --fleet flag overrides it as it overrides a "fleet" string.
  std::optional<std::string> fleet_sources;
  std::optional<std::string> provider;
  std::optional<std::string> provider_base_url;
  std::optional<std::string> model;
  std::optional<std::string> control_level;
  std::optional<std::string> patrol_interval;
  std::optional<std::string> patrol_on_start;  // on (default) | off
  // Event-triggered Patrol (docs/patrol.md "Runs the fleet starts"): the coalescing window and
  // the per-resource cooldown (durations), and the runs per hour (an integer; 0: none).
  std::optional<std::string> patrol_event_window;
  std::optional<std::string> patrol_event_cooldown;
  std::optional<std::string> patrol_event_runs_per_hour;
  std::optional<std::string> provider_locality;  // auto | local | remote
  // pulse.json only: no flag may lower a safety rule from the command line of one run.
  std::optional<std::string> requester_separation;
  // Open event streams: the budgets of agent event subscriptions and of Assistant runs, and
  // the cap per token over both (decimal integers; see the defaults below).
  std::optional<std::string> max_event_streams;
  std::optional<std::string> max_run_streams;
  std::optional<std::string> max_streams_per_token;
  // Assistant runs: the worker pool's size and how many runs may wait for a worker (decimal
  // integers; see the defaults below).
  std::optional<std::string> run_workers;
  std::optional<std::string> run_queue;
  // Notification delivery (docs/notifications.md): the first retry's delay (a duration such as
  // 2s or 500ms) and the attempts before a notification is dead (an integer).
  std::optional<std::string> notify_retry_base;
  std::optional<std::string> notify_max_attempts;
  // A PEM CA bundle the notification channels' TLS servers (HTTPS receivers, SMTP) must chain
  // to, instead of the system store: a mail relay or receiver with an internal CA.
  std::optional<std::string> notify_ca_file;
};

// The keys pulse.json takes, as written there: the flag names with '_' for '-'.
inline constexpr std::string_view kConfigKeys[] = {"listen",
                                                   "fleet",
                                                   "provider",
                                                   "provider_base_url",
                                                   "model",
                                                   "control_level",
                                                   "patrol_interval",
                                                   "patrol_on_start",
                                                   "patrol_event_window",
                                                   "patrol_event_cooldown",
                                                   "patrol_event_runs_per_hour",
                                                   "provider_locality",
                                                   "requester_separation",
                                                   "max_event_streams",
                                                   "max_run_streams",
                                                   "max_streams_per_token",
                                                   "run_workers",
                                                   "run_queue",
                                                   "notify_retry_base",
                                                   "notify_max_attempts",
                                                   "notify_ca_file"};

// Stream defaults and bounds. An open stream holds no thread (http_server.h); the bound on
// the two budgets together is the descriptor limit.
inline constexpr std::size_t kDefaultMaxEventStreams = 384;
inline constexpr std::size_t kDefaultMaxRunStreams = 128;
inline constexpr std::size_t kDefaultMaxStreamsPerToken = 32;
inline constexpr std::size_t kMaxStreamBudgets = 20000;  // event + run streams together

// Assistant runs work on a bounded pool (chat_runs.h). A run mostly waits on the provider, so
// the pool may be larger than the core count; it is bounded so a burst of chats cannot start a
// thread each. Runs beyond the workers wait in a bounded queue; one over it is refused (503).
inline constexpr std::size_t kDefaultRunWorkers = 16;
inline constexpr std::size_t kMaxRunWorkers = 256;
inline constexpr std::size_t kDefaultRunQueue = 1024;
inline constexpr std::size_t kMaxRunQueue = 65536;

// Decodes pulse.json: one JSON object whose members are kConfigKeys, each a string (the
// stream and run settings may also be a JSON integer, and "fleet" an object of sources).
// InvalidArgument naming the problem for malformed JSON, a repeated or unknown key (data_dir
// and API keys get a sentence saying where they belong instead), or a value that is not a
// string.
[[nodiscard]] absl::StatusOr<ServerSettings> ParseConfigFile(std::string_view json);

// The effective configuration.
struct ServerConfig {
  ListenAddress listen;
  std::string data_dir;
  std::string fleet;  // "demo", "local", a fleet JSON file, or "pulse.json"
  // The sources document ({"sources": [...]}) when pulse.json defines the fleet as an object
  // (fleet is then "pulse.json"); "" otherwise. Already checked by ParseFleetSources.
  std::string fleet_sources;
  std::string provider;           // empty: no model provider (the Assistant is not configured)
  std::string provider_base_url;  // empty: the registry default
  std::string model;              // empty: the registry default
  core::ControlLevel control_level = core::ControlLevel::kReadOnly;  // the Assistant's maximum
  std::string api_key;           // from the environment; never logged or echoed
  std::string api_key_variable;  // the variable it came from (logged at start), "" when none
  // Between scheduled Patrol runs; zero: manual runs only.
  absl::Duration patrol_interval = kDefaultPatrolInterval;
  // With a schedule, the first run starts right after start-up (so a fresh server shows
  // findings within seconds), then every patrol_interval; off: one interval from start.
  bool patrol_on_start = true;
  // Fleet changes that start scoped Patrol runs: coalesced for patrol_event_window (1s..10m),
  // each resource then cooled for patrol_event_cooldown (0..24h), at most
  // patrol_event_runs_per_hour such runs (0..60; 0 turns event-triggered runs off).
  absl::Duration patrol_event_window = absl::Seconds(30);
  absl::Duration patrol_event_cooldown = absl::Minutes(10);
  std::size_t patrol_event_runs_per_hour = 6;
  // Whether the provider endpoint may see unredacted context: decided from its base URL
  // (auto), or declared by the operator (--provider-locality, --provider-trusted-local).
  adapters::providers::LocalitySetting provider_locality =
      adapters::providers::LocalitySetting::kAuto;
  // Whether the token that planned an admin- or mfa-floor action is refused as its approver
  // (compared by token id). On unless pulse.json says "requester_separation": "off"; there is
  // nothing above on, so the operator can only lower it.
  bool requester_separation = true;
  std::size_t max_event_streams = kDefaultMaxEventStreams;
  std::size_t max_run_streams = kDefaultMaxRunStreams;
  std::size_t max_streams_per_token = kDefaultMaxStreamsPerToken;
  // Host agents' command streams (one per connected pulse-agent; docs/agent.md). Not a flag:
  // each is a socket and a few KiB, and the event loops serve them without threads.
  std::size_t max_host_agent_streams = 4096;
  std::size_t run_workers = kDefaultRunWorkers;  // 1..kMaxRunWorkers
  std::size_t run_queue = kDefaultRunQueue;      // 0..kMaxRunQueue (0: no waiting, refuse)
  // Notification retries: the first retry waits about this long, each next one twice as long
  // (with jitter, at most 10 minutes); after notify_max_attempts failed attempts it is dead.
  absl::Duration notify_retry_base = absl::Seconds(2);  // 100ms..1h
  std::size_t notify_max_attempts = 8;                  // 1..100
  std::string notify_ca_file;                           // "" = the system store

  bool assistant_configured() const { return !provider.empty(); }
};

// Combines `flags` (the command line), the data dir's pulse.json when it exists (read from
// flags.data_dir or the default) and the defaults, in that order of precedence, and checks
// the result. `api_key` is the environment's value (nullopt when unset). InvalidArgument
// naming the setting (and "pulse.json" when the file is at fault) for: an unreadable or
// malformed pulse.json, a bad listen address, a malformed sources list in pulse.json's
// "fleet" (agents::ParseFleetSources), an unknown control level (a typo is refused
// rather than run read_only), an empty fleet or data dir, a base URL, model or provider
// locality without a provider, a provider locality other than auto, local or remote, a bad
// patrol interval (ParsePatrolInterval), a requester_separation other than "on" or "off", a
// stream setting that is not an integer of at least 1, or stream budgets over
// kMaxStreamBudgets together, a run_workers that is not an integer from 1 to kMaxRunWorkers or
// a run_queue that is not one from 0 to kMaxRunQueue, a notify_retry_base that is not a duration
// from 100ms to 1h, a notify_max_attempts that is not an integer from 1 to 100, or a
// notify_ca_file that cannot be read.
[[nodiscard]] absl::StatusOr<ServerConfig> ResolveServerConfig(
    const ServerSettings& flags, const std::optional<std::string>& api_key);

// The provider API key comes from the environment only (never pulse.json or a flag, where it
// would sit in a file or in ps): PULSE_PROVIDER_API_KEY, else the provider's conventional
// variables in the registry's order (ANTHROPIC_API_KEY; GEMINI_API_KEY then GOOGLE_API_KEY;
// ...). An empty value counts as unset.
struct ProviderKey {
  std::string value;
  std::string variable;
};
using EnvLookup = std::function<const char*(const std::string& name)>;
[[nodiscard]] std::optional<ProviderKey> ProviderKeyFromEnvironment(std::string_view provider,
                                                                    const EnvLookup& getenv);
// The variables ProviderKeyFromEnvironment reads for `provider`, for messages:
// "PULSE_PROVIDER_API_KEY or ANTHROPIC_API_KEY".
[[nodiscard]] std::string ProviderKeyVariables(std::string_view provider);

}  // namespace pulse::server
