// Clock: the core's only source of time.
// Real implementation: adapters/system (absl::Now()); tests use pulse::testing::FakeClock.
// Thread-safety: implementations must be safe to call from any thread.
// Now() cannot fail, so it returns a plain absl::Time.
#pragma once

#include "absl/time/time.h"

namespace pulse::core {

class Clock {
 public:
  virtual ~Clock() = default;

  // The current wall-clock time.
  virtual absl::Time Now() const = 0;
};

}  // namespace pulse::core
