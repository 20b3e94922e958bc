// The `agents` fleet source kind (docs/agent.md): the hosts pulse-agent processes report, served
// by an AgentHub the server owns. pulse-server adds one such source to every fleet it opens
// (named `agents`) unless the configuration lists one itself. Settings, all optional:
// "allow_actions" (boolean, default false), "action_allowlist" (array of unit names or "*"),
// "allow_exec" (boolean, default true), "stale_after_seconds" (integer 2..86400; default 3 ×
// each host's report interval + 10 s).
// Thread-safety: parsing is pure; the factory borrows the hub.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/agents/fleet_sources.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/adapters/hostagent/agents_fleet.h"

namespace pulse::adapters::hostagent {

inline constexpr std::string_view kAgentsSourceKind = "agents";
inline constexpr std::size_t kMaxActionAllowlist = 256;

struct AgentsSourceSettings {
  AgentsFleetOptions fleet;
  absl::Duration stale_after = absl::ZeroDuration();
};

// InvalidArgument naming the member for an unknown member or a value of the wrong type or range.
[[nodiscard]] absl::StatusOr<AgentsSourceSettings> ParseAgentsSource(std::string_view source_json);

// Registers the kind `agents`, opening AgentsFleet over `hub` (borrowed; must outlive every
// fleet the registry opens).
[[nodiscard]] absl::Status RegisterAgentsSource(agents::FleetSourceRegistry& registry,
                                                AgentHub& hub);

}  // namespace pulse::adapters::hostagent
