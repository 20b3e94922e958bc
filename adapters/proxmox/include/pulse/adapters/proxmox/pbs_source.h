// The settings of a fleet source of kind "proxmox-backup" (docs/fleet.md, "proxmox-backup"),
// read strictly from the source's JSON object as written in a sources document:
//   {"name": "pbs", "kind": "proxmox-backup", "url": "https://pbs1:8007",
//    "token_id": "pulse@pbs!pulse", "fingerprint": "AB:CD:...", "backup_max_age_hours": 26,
//    "max_staleness_ms": 5000}
// with "ca_file" (an absolute path) instead of "fingerprint" for a certificate signed by a CA.
// The token's secret is never a setting: like a proxmox-ve source's it is sealed in the data
// dir's credential store (`pulse-server fleet-credential set NAME`) under
// FleetCredentialName(NAME). Pure; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/proxmox/pbs_fleet.h"

namespace pulse::proxmox {

// `base` with the source's settings applied (the secret left empty; source_name from "name").
// InvalidArgument naming the member for an unknown or repeated member (a "token_secret",
// "secret" or "password" member included: the message says where the secret goes), a wrong
// type, a number out of range, a URL that is not https://HOST[:PORT], a malformed token id or
// fingerprint, both fingerprint and ca_file, or a ca_file that is not an absolute path.
[[nodiscard]] absl::StatusOr<PbsFleetOptions> ParsePbsSource(std::string_view source_json,
                                                             PbsFleetOptions base = {});

}  // namespace pulse::proxmox
