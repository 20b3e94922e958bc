// Fixture of the thread_safety_rejects_violations test (expect-thread-safety-errors.sh): clean
// as written, and each PULSE_PLANT value plants one lock mistake that clang's -Wthread-safety
// must turn into a compile error. See docs/architecture.md, "Tooling: format, lint,
// thread-safety analysis".
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#ifndef PULSE_PLANT
#define PULSE_PLANT 0
#endif

class Counter {
 public:
  void Add() {
#if PULSE_PLANT != 1
    absl::MutexLock lock(&mu_);
#endif
    ++n_;  // PULSE_PLANT 1: written without its mutex
  }

  int Get() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return n_;
  }

  void Reset() {
#if PULSE_PLANT == 2
    ResetLocked();  // PULSE_PLANT 2: a *Locked helper called without the mutex
#else
    absl::MutexLock lock(&mu_);
    ResetLocked();
#endif
  }

  int Twice() {
    absl::MutexLock lock(&mu_);
#if PULSE_PLANT == 3
    return Get() * 2;  // PULSE_PLANT 3: takes the mutex it already holds (absl::Mutex is not
                       // recursive: this would deadlock)
#else
    return n_ * 2;
#endif
  }

 private:
  void ResetLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { n_ = 0; }

  mutable absl::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};

int main() {
  Counter c;
  c.Add();
  c.Reset();
  return c.Get() + c.Twice();
}
