// SystemClock: the Clock port over the machine's real-time clock.
// Stateless and thread-safe.
#pragma once

#include "pulse/core/ports/clock.h"

namespace pulse::adapters::system {

class SystemClock final : public core::Clock {
 public:
  absl::Time Now() const override;
};

}  // namespace pulse::adapters::system
