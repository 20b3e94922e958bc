#include "pulse/adapters/server/server_config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/adapters/agents/fleet_sources.h"
#include "pulse/adapters/providers/provider_registry.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::server {
namespace {

// pulse.json is a handful of strings; anything near this size is not a config file.
constexpr std::size_t kMaxConfigFileBytes = 64 * 1024;

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

bool IsV6Char(char c) {
  return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
         c == '.';
}

std::optional<int> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int port = 0;
  for (char c : text) {
    port = port * 10 + (c - '0');
  }
  return port <= 65535 ? std::optional<int>(port) : std::nullopt;
}

std::string Quoted(std::string_view key) { return absl::StrCat("\"", std::string(key), "\""); }

// The sentence for a key pulse.json deliberately does not take, or "" for an unknown one.
std::string MisplacedKeyMessage(std::string_view key) {
  if (key == "data_dir" || key == "data-dir") {
    return "data_dir cannot be set in pulse.json, which is read from the data dir: use "
           "--data-dir";
  }
  if (key == "api_key" || key == "provider_api_key" || key == "PULSE_PROVIDER_API_KEY") {
    return absl::StrCat("the provider API key is not read from files: set ",
                        std::string(kApiKeyEnv),
                        " or the provider's own variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, "
                        "...) in pulse-server's environment (docs/providers.md)");
  }
  return "";
}

absl::StatusOr<std::optional<std::string>> ReadConfigFile(const std::string& data_dir) {
  const std::filesystem::path path = std::filesystem::path(data_dir) / kConfigFileName;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("pulse.json: cannot check ", path.string(), ": ", ec.message()));
    }
    return std::optional<std::string>();
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pulse.json: ", path.string(), " is not a regular file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("pulse.json: cannot read ", path.string(), ": ", std::strerror(errno)));
  }
  std::string text;
  char buffer[4096];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxConfigFileBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pulse.json: ", path.string(), " is larger than ", kMaxConfigFileBytes, " bytes"));
    }
  }
  return std::optional<std::string>(std::move(text));
}

const std::optional<std::string>& Pick(const std::optional<std::string>& flag,
                                       const std::optional<std::string>& file) {
  return flag.has_value() ? flag : file;
}

// A run setting (--run-workers, --run-queue): unset gives `fallback`; otherwise 1..6 decimal
// digits (no sign, space or exponent) whose value is in [low, high]. `where` names the source.
absl::Status RunSetting(const std::optional<std::string>& given, const std::string& where,
                        std::size_t low, std::size_t high, std::size_t fallback,
                        std::size_t& into) {
  if (!given.has_value()) {
    into = fallback;
    return absl::OkStatus();
  }
  const bool digits =
      !given->empty() && given->size() <= 6 &&
      std::all_of(given->begin(), given->end(), [](char c) { return c >= '0' && c <= '9'; });
  const std::size_t value = digits ? static_cast<std::size_t>(std::stoul(*given)) : high + 1;
  if (value < low || value > high) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be an integer from ", low, " to ", high));
  }
  into = value;
  return absl::OkStatus();
}

}  // namespace

std::string ListenAddress::ToString() const {
  if (host.find(':') != std::string::npos) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--listen: ", std::string(why),
                                                   " (expected host:port, e.g. ",
                                                   std::string(kDefaultListen), ")"));
  };
  ListenAddress out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad("an IPv6 address must be written [address]:port");
    }
    const std::string_view host = text.substr(1, close - 1);
    if (host.empty() || !std::all_of(host.begin(), host.end(), IsV6Char)) {
      return bad("the IPv6 address is not well-formed");
    }
    out.host = std::string(host);
    port_text = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return bad("the port is missing");
    }
    const std::string_view host = text.substr(0, colon);
    if (host.empty()) {
      return bad("the host is missing");
    }
    if (host.size() > 253 || !std::all_of(host.begin(), host.end(), IsHostChar)) {
      return bad("the host is not an address or host name");
    }
    out.host = std::string(host);
    port_text = text.substr(colon + 1);
  }
  const std::optional<int> port = ParsePort(port_text);
  if (!port.has_value()) {
    return bad("the port must be a number from 0 to 65535");
  }
  out.port = *port;
  return out;
}

absl::StatusOr<ServerSettings> ParseConfigFile(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, {kMaxConfigFileBytes, 8});
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pulse.json: not valid JSON: ", std::string(doc.status().message())));
  }
  if (!doc->IsObject()) {
    return absl::InvalidArgumentError("pulse.json: must be one JSON object");
  }
  ServerSettings out;
  std::set<std::string> seen;
  for (const auto& member : std::as_const(*doc).GetObject()) {
    const std::string key(core::StringViewOf(member.name));
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("pulse.json: key ", Quoted(key), " appears more than once"));
    }
    std::optional<std::string>* slot = nullptr;
    if (key == "listen") {
      slot = &out.listen;
    } else if (key == "fleet") {
      slot = &out.fleet;
    } else if (key == "provider") {
      slot = &out.provider;
    } else if (key == "provider_base_url") {
      slot = &out.provider_base_url;
    } else if (key == "model") {
      slot = &out.model;
    } else if (key == "control_level") {
      slot = &out.control_level;
    } else if (key == "patrol_interval") {
      slot = &out.patrol_interval;
    } else if (key == "patrol_on_start") {
      slot = &out.patrol_on_start;
    } else if (key == "patrol_event_window") {
      slot = &out.patrol_event_window;
    } else if (key == "patrol_event_cooldown") {
      slot = &out.patrol_event_cooldown;
    } else if (key == "patrol_event_runs_per_hour") {
      slot = &out.patrol_event_runs_per_hour;
    } else if (key == "provider_locality") {
      slot = &out.provider_locality;
    } else if (key == "requester_separation") {
      slot = &out.requester_separation;
    } else if (key == "max_event_streams") {
      slot = &out.max_event_streams;
    } else if (key == "max_run_streams") {
      slot = &out.max_run_streams;
    } else if (key == "max_streams_per_token") {
      slot = &out.max_streams_per_token;
    } else if (key == "run_workers") {
      slot = &out.run_workers;
    } else if (key == "run_queue") {
      slot = &out.run_queue;
    } else if (key == "notify_retry_base") {
      slot = &out.notify_retry_base;
    } else if (key == "notify_max_attempts") {
      slot = &out.notify_max_attempts;
    } else if (key == "notify_ca_file") {
      slot = &out.notify_ca_file;
    }
    if (slot == nullptr) {
      const std::string misplaced = MisplacedKeyMessage(key);
      if (!misplaced.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("pulse.json: ", misplaced));
      }
      std::vector<std::string> known;
      for (std::string_view k : kConfigKeys) {
        known.emplace_back(k);
      }
      return absl::InvalidArgumentError(absl::StrCat("pulse.json: unknown key ", Quoted(key),
                                                     "; known keys: ", absl::StrJoin(known, ", ")));
    }
    if ((key.rfind("max_", 0) == 0 || key.rfind("run_", 0) == 0 || key == "notify_max_attempts") &&
        member.value.IsUint()) {
      *slot = absl::StrCat(member.value.GetUint());
      continue;
    }
    if (key == "fleet" && member.value.IsObject()) {
      out.fleet_sources = core::CanonicalJson(member.value);
      continue;
    }
    if (!member.value.IsString()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pulse.json: the value of ", Quoted(key), " must be a string",
                       key == "fleet" ? " or an object {\"sources\": [...]} (docs/fleet.md)" : ""));
    }
    *slot = std::string(core::StringViewOf(member.value));
  }
  return out;
}

absl::StatusOr<ServerConfig> ResolveServerConfig(const ServerSettings& flags,
                                                 const std::optional<std::string>& api_key) {
  ServerConfig config;
  config.data_dir = flags.data_dir.value_or(std::string(kDefaultDataDir));
  if (config.data_dir.empty()) {
    return absl::InvalidArgumentError("--data-dir must not be empty");
  }
  ServerSettings file;
  absl::StatusOr<std::optional<std::string>> text = ReadConfigFile(config.data_dir);
  if (!text.ok()) {
    return text.status();
  }
  if (text->has_value()) {
    absl::StatusOr<ServerSettings> parsed = ParseConfigFile(**text);
    if (!parsed.ok()) {
      return parsed.status();
    }
    file = *std::move(parsed);
  }
  // Where a value came from, for messages: a bad value in the file names the file.
  const auto source = [&](const std::optional<std::string>& flag, std::string_view flag_name,
                          std::string_view key) {
    return flag.has_value() ? absl::StrCat("--", std::string(flag_name))
                            : absl::StrCat("pulse.json ", Quoted(key));
  };

  const std::string listen = Pick(flags.listen, file.listen).value_or(std::string(kDefaultListen));
  absl::StatusOr<ListenAddress> address = ParseListenAddress(listen);
  if (!address.ok()) {
    std::string message(address.status().message());
    if (!flags.listen.has_value() && file.listen.has_value()) {
      message.replace(0, std::string_view("--listen").size(), "pulse.json \"listen\"");
    }
    return absl::InvalidArgumentError(message);
  }
  config.listen = *address;

  if (!flags.fleet.has_value() && file.fleet_sources.has_value()) {
    absl::StatusOr<std::vector<adapters::agents::FleetSourceSpec>> sources =
        adapters::agents::ParseFleetSources(*file.fleet_sources);
    if (!sources.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pulse.json \"fleet\": ", sources.status().message()));
    }
    config.fleet_sources = *file.fleet_sources;
    file.fleet = "pulse.json";
  }
  config.fleet = Pick(flags.fleet, file.fleet).value_or(std::string(kDefaultFleet));
  if (config.fleet.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source(flags.fleet, "fleet", "fleet"),
                                                   " must be demo, local or a fleet JSON file"));
  }

  const std::string level =
      Pick(flags.control_level, file.control_level).value_or(std::string("read_only"));
  const std::optional<core::ControlLevel> parsed_level = core::ParseControlLevel(level);
  if (!parsed_level.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source(flags.control_level, "control-level", "control_level"),
                     " must be read_only, controlled or autonomous"));
  }
  config.control_level = *parsed_level;

  config.provider = Pick(flags.provider, file.provider).value_or("");
  config.provider_base_url = Pick(flags.provider_base_url, file.provider_base_url).value_or("");
  config.model = Pick(flags.model, file.model).value_or("");
  if (config.provider.empty() && !config.provider_base_url.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source(flags.provider_base_url, "provider-base-url", "provider_base_url"),
                     " needs a provider (--provider)"));
  }
  if (config.provider.empty() && !config.model.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source(flags.model, "model", "model"), " needs a provider (--provider)"));
  }
  if (const std::optional<std::string> locality =
          Pick(flags.provider_locality, file.provider_locality);
      locality.has_value()) {
    const std::string where =
        source(flags.provider_locality, "provider-locality", "provider_locality");
    if (config.provider.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " needs a provider (--provider)"));
    }
    const std::optional<adapters::providers::LocalitySetting> setting =
        adapters::providers::ParseLocalitySetting(*locality);
    if (!setting.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " must be auto (decided from the base URL), local or remote"));
    }
    config.provider_locality = *setting;
  }
  const std::string interval =
      Pick(flags.patrol_interval, file.patrol_interval).value_or(std::string("15m"));
  absl::StatusOr<absl::Duration> parsed_interval = ParsePatrolInterval(interval);
  if (!parsed_interval.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source(flags.patrol_interval, "patrol-interval", "patrol_interval"), " ",
                     parsed_interval.status().message()));
  }
  config.patrol_interval = *parsed_interval;
  const std::string on_start =
      Pick(flags.patrol_on_start, file.patrol_on_start).value_or(std::string("on"));
  if (on_start != "on" && on_start != "off") {
    return absl::InvalidArgumentError(absl::StrCat(
        source(flags.patrol_on_start, "patrol-on-start", "patrol_on_start"),
        " must be on (the default: the first scheduled run starts at start-up) or off"));
  }
  config.patrol_on_start = on_start == "on";
  const auto duration_setting =
      [&](const std::optional<std::string>& flag, const std::optional<std::string>& in_file,
          std::string_view flag_name, std::string_view key, absl::Duration low, absl::Duration high,
          absl::Duration& into) -> absl::Status {
    const std::optional<std::string> given = Pick(flag, in_file);
    if (!given.has_value()) {
      return absl::OkStatus();
    }
    absl::Duration d;
    if (!absl::ParseDuration(*given, &d) || d < low || d > high) {
      return absl::InvalidArgumentError(
          absl::StrCat(source(flag, flag_name, key), " must be a duration from ",
                       absl::FormatDuration(low), " to ", absl::FormatDuration(high)));
    }
    into = d;
    return absl::OkStatus();
  };
  PULSE_RETURN_IF_ERROR(duration_setting(
      flags.patrol_event_window, file.patrol_event_window, "patrol-event-window",
      "patrol_event_window", absl::Seconds(1), absl::Minutes(10), config.patrol_event_window));
  PULSE_RETURN_IF_ERROR(duration_setting(flags.patrol_event_cooldown, file.patrol_event_cooldown,
                                         "patrol-event-cooldown", "patrol_event_cooldown",
                                         absl::ZeroDuration(), absl::Hours(24),
                                         config.patrol_event_cooldown));
  PULSE_RETURN_IF_ERROR(
      RunSetting(Pick(flags.patrol_event_runs_per_hour, file.patrol_event_runs_per_hour),
                 source(flags.patrol_event_runs_per_hour, "patrol-event-runs-per-hour",
                        "patrol_event_runs_per_hour"),
                 0, 60, 6, config.patrol_event_runs_per_hour));
  const std::string separation = file.requester_separation.value_or("on");
  if (separation != "on" && separation != "off") {
    return absl::InvalidArgumentError(
        "pulse.json \"requester_separation\" must be \"on\" (the default: whoever planned an "
        "admin or mfa action may not approve it) or \"off\"");
  }
  config.requester_separation = separation == "on";
  const auto count = [&](const std::optional<std::string>& flag,
                         const std::optional<std::string>& in_file, std::string_view flag_name,
                         std::string_view key, std::size_t fallback,
                         std::size_t& into) -> absl::Status {
    const std::optional<std::string>& given = Pick(flag, in_file);
    if (!given.has_value()) {
      into = fallback;
      return absl::OkStatus();
    }
    const bool digits =
        !given->empty() && given->size() <= 6 &&
        std::all_of(given->begin(), given->end(), [](char c) { return c >= '0' && c <= '9'; });
    into = digits ? static_cast<std::size_t>(std::stoul(*given)) : 0;
    if (into == 0 || into > kMaxStreamBudgets) {
      return absl::InvalidArgumentError(absl::StrCat(
          source(flag, flag_name, key), " must be an integer from 1 to ", kMaxStreamBudgets));
    }
    return absl::OkStatus();
  };
  for (absl::Status s :
       {count(flags.max_event_streams, file.max_event_streams, "max-event-streams",
              "max_event_streams", kDefaultMaxEventStreams, config.max_event_streams),
        count(flags.max_run_streams, file.max_run_streams, "max-run-streams", "max_run_streams",
              kDefaultMaxRunStreams, config.max_run_streams),
        count(flags.max_streams_per_token, file.max_streams_per_token, "max-streams-per-token",
              "max_streams_per_token", kDefaultMaxStreamsPerToken, config.max_streams_per_token)}) {
    if (!s.ok()) {
      return s;
    }
  }
  if (config.max_event_streams + config.max_run_streams > kMaxStreamBudgets) {
    return absl::InvalidArgumentError(
        absl::StrCat("max-event-streams + max-run-streams must not exceed ", kMaxStreamBudgets));
  }
  for (absl::Status s : {RunSetting(Pick(flags.run_workers, file.run_workers),
                                    source(flags.run_workers, "run-workers", "run_workers"), 1,
                                    kMaxRunWorkers, kDefaultRunWorkers, config.run_workers),
                         RunSetting(Pick(flags.run_queue, file.run_queue),
                                    source(flags.run_queue, "run-queue", "run_queue"), 0,
                                    kMaxRunQueue, kDefaultRunQueue, config.run_queue)}) {
    if (!s.ok()) {
      return s;
    }
  }
  PULSE_RETURN_IF_ERROR(
      RunSetting(Pick(flags.notify_max_attempts, file.notify_max_attempts),
                 source(flags.notify_max_attempts, "notify-max-attempts", "notify_max_attempts"), 1,
                 100, 8, config.notify_max_attempts));
  if (const std::optional<std::string> base = Pick(flags.notify_retry_base, file.notify_retry_base);
      base.has_value()) {
    absl::Duration d;
    if (!absl::ParseDuration(*base, &d) || d < absl::Milliseconds(100) || d > absl::Hours(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source(flags.notify_retry_base, "notify-retry-base", "notify_retry_base"),
                       " must be a duration from 100ms to 1h, e.g. 2s"));
    }
    config.notify_retry_base = d;
  }
  if (const std::optional<std::string> ca = Pick(flags.notify_ca_file, file.notify_ca_file);
      ca.has_value()) {
    if (ca->empty() || ::access(ca->c_str(), R_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(source(flags.notify_ca_file, "notify-ca-file", "notify_ca_file"),
                       " must name a readable PEM file of CA certificates"));
    }
    config.notify_ca_file = *ca;
  }
  config.api_key = api_key.value_or("");
  return config;
}

absl::StatusOr<absl::Duration> ParsePatrolInterval(std::string_view text) {
  if (text == "0") {
    return absl::ZeroDuration();
  }
  absl::Duration d;
  const bool has_unit =
      !text.empty() && !absl::ascii_isdigit(static_cast<unsigned char>(text.back()));
  if (!has_unit || !absl::ParseDuration(core::ToAbsl(text), &d) || d < kMinPatrolInterval ||
      d > kMaxPatrolInterval) {
    return absl::InvalidArgumentError(
        "must be 0 (manual runs only) or a duration from 1s to 168h with units, e.g. 15m");
  }
  return d;
}

std::optional<ProviderKey> ProviderKeyFromEnvironment(std::string_view provider,
                                                      const EnvLookup& getenv) {
  std::vector<std::string> names = {std::string(kApiKeyEnv)};
  if (const adapters::providers::ProviderEntry* entry =
          adapters::providers::FindProvider(provider)) {
    for (std::string_view var : entry->env_vars) {
      if (!var.empty()) {
        names.emplace_back(var);
      }
    }
  }
  for (const std::string& name : names) {
    const char* value = getenv(name);
    if (value != nullptr && *value != '\0') {
      return ProviderKey{value, name};
    }
  }
  return std::nullopt;
}

std::string ProviderKeyVariables(std::string_view provider) {
  std::string out(kApiKeyEnv);
  if (const adapters::providers::ProviderEntry* entry =
          adapters::providers::FindProvider(provider)) {
    for (std::string_view var : entry->env_vars) {
      if (!var.empty()) {
        absl::StrAppend(&out, " or ", std::string(var));
      }
    }
  }
  return out;
}

}  // namespace pulse::server
