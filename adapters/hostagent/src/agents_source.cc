#include "pulse/adapters/hostagent/agents_source.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::hostagent {

absl::StatusOr<AgentsSourceSettings> ParseAgentsSource(std::string_view source_json) {
  core::JsonLimits limits;
  limits.max_bytes = 64 * 1024;
  limits.max_depth = 4;
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(source_json, limits);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("source: not valid JSON: ", doc.status().message()));
  }
  core::JsonObjectReader reader(*doc, "source");
  PULSE_RETURN_IF_ERROR(reader.ExpectMembers(
      {"name", "kind", "allow_actions", "action_allowlist", "allow_exec", "stale_after_seconds"}));
  AgentsSourceSettings settings;
  if (const std::optional<bool> allow = reader.Bool("allow_actions")) {
    settings.fleet.allow_actions = *allow;
  }
  settings.fleet.action_allowlist =
      reader.StringArray("action_allowlist", kMaxActionAllowlist, 128);
  if (const std::optional<bool> exec = reader.Bool("allow_exec")) {
    settings.fleet.allow_exec = *exec;
  }
  if (const auto stale = reader.Int("stale_after_seconds", 2, 86400)) {
    settings.stale_after = absl::Seconds(*stale);
  }
  PULSE_RETURN_IF_ERROR(reader.Finish());
  for (const std::string& unit : settings.fleet.action_allowlist) {
    const bool plain = !unit.empty() && unit[0] != '-' &&
                       unit.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789._-@:") == std::string::npos;
    if (unit != "*" && !plain) {
      return absl::InvalidArgumentError(absl::StrCat("source.action_allowlist: \"",
                                                     core::ToAbsl(unit),
                                                     "\" is neither a plain unit name nor \"*\""));
    }
  }
  return settings;
}

absl::Status RegisterAgentsSource(agents::FleetSourceRegistry& registry, AgentHub& hub) {
  return registry.Register(
      std::string(kAgentsSourceKind),
      [&hub](const agents::FleetSourceSpec& spec) -> absl::StatusOr<std::unique_ptr<core::Fleet>> {
        PULSE_ASSIGN_OR_RETURN(AgentsSourceSettings settings, ParseAgentsSource(spec.json));
        hub.SetStaleAfter(settings.stale_after);
        return std::make_unique<AgentsFleet>(hub, std::move(settings.fleet));
      });
}

}  // namespace pulse::adapters::hostagent
