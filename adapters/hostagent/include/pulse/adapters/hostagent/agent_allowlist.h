// AgentAllowlist: what pulse-agent will do on its host, whatever the server sends
// (/etc/pulse-agent/allow.json, docs/agent.md "The allowlist"): which capabilities, on which
// services, whether classifier-admitted read-only commands run and whether local Docker
// containers may be acted on. The file is read strictly: an unknown member, a duplicate, a wrong
// type, an unknown capability, a name that is not a plain unit name or too many entries refuse
// it whole, so a typo can never widen or silently narrow what the host permits. Plain value;
// thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::adapters::hostagent {

// Where pulse-agent looks unless --allowlist says otherwise.
inline constexpr std::string_view kDefaultAllowlistPath = "/etc/pulse-agent/allow.json";
// Bounds of the file: its size and the entries of each list.
inline constexpr std::size_t kMaxAllowlistBytes = 64 * 1024;
inline constexpr std::size_t kMaxAllowlistEntries = 256;
// The stable code every refusal's message starts with ("allowlist_invalid: ...").
inline constexpr std::string_view kAllowlistInvalid = "allowlist_invalid";

struct AgentAllowlist {
  std::vector<std::string> capabilities;  // restart, start, stop: sorted, each once
  std::vector<std::string> services;      // unit names without ".service": sorted, each once
  bool exec = true;                       // classifier-admitted read-only commands
  bool docker = false;                    // the capabilities also apply to local containers

  // Whether `capability` may be dispatched at all.
  bool AllowsCapability(std::string_view capability) const;
  // Whether the systemd unit `unit` (nginx or nginx.service) may be acted on.
  bool AllowsService(std::string_view unit) const;

  friend bool operator==(const AgentAllowlist&, const AgentAllowlist&) = default;
};

// The allowlist of a missing file: nothing may be dispatched; exec stays on.
AgentAllowlist DefaultAllowlist();

// Parses allow.json. InvalidArgument ("allowlist_invalid: ...", naming the member) for
// anything but an object of the members above with their types; capabilities must be
// restart, start or stop; services plain unit names ([A-Za-z0-9._@:-], at most 128 bytes, not
// starting with '-' or '.'); at most kMaxAllowlistEntries each; no repeats.
[[nodiscard]] absl::StatusOr<AgentAllowlist> DecodeAllowlist(std::string_view json);

// Reads `path`: DefaultAllowlist() when the file does not exist; InvalidArgument for a file
// DecodeAllowlist refuses, one over kMaxAllowlistBytes, or one that is not a regular file;
// PermissionDenied when it cannot be read. Messages name the path.
[[nodiscard]] absl::StatusOr<AgentAllowlist> LoadAllowlist(const std::string& path);

}  // namespace pulse::adapters::hostagent
