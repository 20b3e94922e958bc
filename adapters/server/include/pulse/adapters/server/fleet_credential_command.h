// `pulse-server fleet-credential set|delete NAME`: the secret a fleet source needs (a proxmox-ve
// or proxmox-backup source's API token secret, docs/fleet.md), sealed with the data dir's SecretBox
// in its credential store under "fleet.NAME" — never in pulse.json or a sources file, never
// echoed, never listed. The server reads it when the source opens. Thread-compatible; each call
// opens the storage for its duration.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pulse::server {

// The largest secret accepted on stdin.
inline constexpr std::size_t kMaxFleetSecretBytes = 4096;

// Seals `secret` for source `name` in `data_dir` (created when missing, as token create does).
// InvalidArgument for a name that is not a fleet source name (1..32 of [a-z0-9-]), an empty
// secret, one over kMaxFleetSecretBytes or with whitespace or control characters inside (one
// trailing newline is not part of it); the storage's errors otherwise.
[[nodiscard]] absl::Status SetFleetCredential(const std::string& data_dir, std::string_view name,
                                              std::string_view secret, absl::Time now);

// Removes the secret of source `name`. NotFound when none is stored.
[[nodiscard]] absl::Status DeleteFleetCredential(const std::string& data_dir,
                                                 std::string_view name);

// The subcommands: set reads the secret from `in` (stdin; nothing is echoed), then prints one
// line naming the source and the data dir. Exit codes: 0; 2 for a refused argument; 1 otherwise.
int RunFleetCredentialSet(const std::string& data_dir, const std::string& name, std::FILE* in);
int RunFleetCredentialDelete(const std::string& data_dir, const std::string& name);

}  // namespace pulse::server
