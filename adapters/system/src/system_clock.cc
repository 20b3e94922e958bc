#include "pulse/adapters/system/system_clock.h"

#include "absl/time/clock.h"

namespace pulse::adapters::system {

absl::Time SystemClock::Now() const { return absl::Now(); }

}  // namespace pulse::adapters::system
