// The state of one source of a fleet made of several (docs/fleet.md): what Fleet::SourceStatuses
// reports, and what fleet-context, /metrics and Patrol's run record show. Plain values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace pulse::core {

struct FleetSourceStatus {
  std::string name;           // unique in the fleet: [a-z0-9][a-z0-9-]{0,31}
  std::string kind;           // demo, local, docker, ...
  bool up = false;            // its last listing succeeded
  std::string error;          // why it is down, bounded ("" when up or never listed)
  std::size_t resources = 0;  // resources known from it (shown `unknown` while it is down)
  std::optional<absl::Time> last_ok_at;

  friend bool operator==(const FleetSourceStatus&, const FleetSourceStatus&) = default;
};

}  // namespace pulse::core
