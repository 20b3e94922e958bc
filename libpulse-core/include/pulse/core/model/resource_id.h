// Canonical resource ids: "<type>:<local id>", e.g. node:pve1, vm:101, app-container:web,
// service:pve1/nginx. The type names what the resource is, the local part is unique within
// that type. Every port and record uses this one spelling. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pulse::core {

inline constexpr std::size_t kMaxResourceIdBytes = 256;

struct CanonicalResourceId {
  std::string type;   // [a-z][a-z0-9-]{0,31}
  std::string local;  // 1.. bytes of [A-Za-z0-9._@/-], no leading '/', no "//"

  friend bool operator==(const CanonicalResourceId&, const CanonicalResourceId&) = default;
};

// Parses a canonical id; nullopt for anything else (no trimming, no case folding, total length
// at most kMaxResourceIdBytes).
std::optional<CanonicalResourceId> ParseCanonicalResourceId(std::string_view text);

// True when ParseCanonicalResourceId accepts `text`.
bool IsCanonicalResourceId(std::string_view text);

}  // namespace pulse::core
