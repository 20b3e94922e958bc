// A FakePveServer scenario (fake_pve_server.h) built from any Fleet's nodes, VMs and storage,
// so the demo fleet can be served as a Proxmox VE cluster (`pulse-fake-pve --demo`; README,
// "A Proxmox source without a cluster"). The ids agree by construction: node:<name> becomes
// node <name>, vm:<vmid> a QEMU guest <vmid> on its parent node, storage:<node>/<id> storage
// <id> on <node>; statuses carry over, and sizes and the latest cpu, memory and usage samples
// become PVE's numbers (the fleet's `cpus`/`cores`, `memory_mb` and `size_gb` attributes).
// Other resources (containers in VMs, services, backup jobs) have no place in
// /cluster/resources and are left out.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::testing {

// `tokens`: token id -> secret, as the scenario's "tokens". `now`: where the latest metric
// samples are looked for (the day before it).
[[nodiscard]] absl::StatusOr<std::string> PveScenarioFromFleet(
    core::Fleet& fleet, const std::map<std::string, std::string>& tokens, absl::Time now);

}  // namespace pulse::testing
