// The settings of a fleet source of kind "proxmox-ve" (docs/fleet.md, "proxmox-ve"), read
// strictly from the source's JSON object as written in a sources document:
//   {"name": "pve", "kind": "proxmox-ve", "url": "https://pve1:8006",
//    "token_id": "pulse@pve!pulse", "fingerprint": "AB:CD:...", "allow_actions": false,
//    "action_deadline_seconds": 120, "shutdown_timeout_seconds": 90, "max_staleness_ms": 5000}
// with "ca_file" (an absolute path) instead of "fingerprint" for a certificate signed by a CA.
// The token's secret is never a setting: it is sealed in the data dir's credential store
// (`pulse-server fleet-credential set NAME`) under FleetCredentialName(NAME). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/proxmox/pve_fleet.h"

namespace pulse::proxmox {

// `base` with the source's settings applied (the secret left empty). InvalidArgument naming the
// member for an unknown or repeated member (a "token_secret" or "secret" member included: the
// message says where the secret goes), a wrong type, a number out of range, a URL that is not
// https://HOST[:PORT], a malformed token id or fingerprint, both fingerprint and ca_file, or a
// ca_file that is not an absolute path.
[[nodiscard]] absl::StatusOr<PveFleetOptions> ParsePveSource(std::string_view source_json,
                                                             PveFleetOptions base = {});

// The credential store's name of a source's secret: "fleet.<source name>".
std::string FleetCredentialName(std::string_view source_name);

}  // namespace pulse::proxmox
