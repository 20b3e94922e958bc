// Shared between LocalHostFleet's two files (reads in local_host_fleet.cc, actions and exec in
// local_host_actions.cc): the per-call probe of the host and the trust domains of its executor
// and observer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "local_probes.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::adapters::agents {

namespace internal {
// The executor runs systemctl; the observer asks systemd itself what state the unit is in.
inline constexpr std::string_view kLocalExecutorDomain = "local-exec";
inline constexpr std::string_view kLocalObserverDomain = "systemd-manager";
}  // namespace internal

// What one probe of the host saw.
struct LocalHostFleet::Snapshot {
  std::map<std::string, core::FleetResource> resources;
  std::vector<core::FleetRelationship> relationships;
  std::map<std::string, internal::UnitInfo> units;     // by service id
  std::map<std::string, internal::MountEntry> mounts;  // by storage id
  std::map<std::string, internal::FsUsage> usage;      // by storage id
  double cpu_pct = 0;
  internal::MemInfo memory;
  std::optional<internal::LoadAvg> load;
  std::int64_t uptime_seconds = 0;
  bool systemd = false;
};

}  // namespace pulse::adapters::agents
