// FakeClock: a Clock whose time moves only when a test says so.
// Thread-safe (a mutex guards the current time) so parallel code under test may read it.
#pragma once

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/ports/clock.h"

namespace pulse::testing {

class FakeClock final : public core::Clock {
 public:
  // Starts at a fixed, arbitrary instant so tests never depend on the real date.
  FakeClock() : now_(absl::FromUnixSeconds(1'800'000'000)) {}
  explicit FakeClock(absl::Time start) : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }

  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
