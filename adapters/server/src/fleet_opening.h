// Opens the fleet a ServerConfig names: the demo fleet, this host, a demo fleet file, or a
// list of sources (a --fleet FILE whose top-level object is {"sources": [...]}, or pulse.json's
// "fleet" object) merged by agents::CompositeFleet (docs/fleet.md).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/agents/composite_fleet.h"
#include "pulse/adapters/agents/fleet_sources.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::server {

struct OpenedFleet {
  std::unique_ptr<core::Fleet> fleet;
  // The demo fleet's generated histories, for a single demo fleet; null otherwise (the server
  // then uses the metrics history of its storage).
  std::unique_ptr<core::MetricsHistory> demo_history;
  // For a sources list: the composite (owned by `fleet`) and the histories of the sources that
  // keep their own (a demo source's generated series), by source name, for an
  // agents::CompositeMetricsHistory over the storage's history.
  adapters::agents::CompositeFleet* composite = nullptr;
  std::map<std::string, std::unique_ptr<core::MetricsHistory>> source_histories;
};

// A source's sealed secret by source name (the data dir's credential store, under
// proxmox::FleetCredentialName); NotFound when none was entered.
using FleetCredentialLookup =
    std::function<absl::StatusOr<std::string>(std::string_view source_name)>;

// The source kinds pulse-server knows: demo and local (agents::RegisterBuiltinFleetSources,
// with the server's demo timings and `clock`), docker (docker/docker_source.h), proxmox-ve
// (proxmox/pve_source.h) and proxmox-backup (proxmox/pbs_source.h), each Proxmox source's token
// secret from `credentials` (without a lookup such a source cannot open), and agents
// (hostagent/agents_source.h) over `hub` when there is one. A new kind registers here.
[[nodiscard]] absl::Status RegisterServerFleetSources(
    adapters::agents::FleetSourceRegistry& registry, const core::Clock& clock,
    FleetCredentialLookup credentials = {}, adapters::hostagent::AgentHub* hub = nullptr);

// demo, local and a demo-format file open as one fleet; a sources document opens every source
// through the registry and merges them. With a `hub`, the host agents join every fleet: a source
// of kind agents named `agents` (`host-agents` when a configured source has that name) is added
// unless the sources list one (or already has kMaxFleetSources), and demo, local or a demo file
// become the first source of a composite (named demo, local, demo). Errors name the setting
// (--fleet FILE or pulse.json "fleet") and the source at fault.
[[nodiscard]] absl::StatusOr<OpenedFleet> OpenConfiguredFleet(
    const ServerConfig& config, const core::Clock& clock,
    const FleetCredentialLookup& credentials = {}, adapters::hostagent::AgentHub* hub = nullptr);

}  // namespace pulse::server
