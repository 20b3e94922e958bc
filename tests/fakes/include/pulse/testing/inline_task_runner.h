// InlineTaskRunner: a TaskRunner that runs every task on the calling thread, in index order,
// and records each batch (its size and the concurrency cap it was given) and each requested
// sleep (without sleeping), so tests stay deterministic and fast. OnSleep lets a test act at a
// sleep (cancel the run that is waiting). Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/ports/task_runner.h"

namespace pulse::testing {

class InlineTaskRunner final : public core::TaskRunner {
 public:
  struct Batch {
    std::size_t size = 0;
    std::size_t max_concurrency = 0;
  };

  absl::Status RunAll(std::span<const std::function<void()>> tasks,
                      std::size_t max_concurrency) override {
    if (max_concurrency == 0) {
      return absl::InvalidArgumentError("max_concurrency must be at least 1");
    }
    {
      absl::MutexLock lock(&mu_);
      if (!fail_with_.ok()) {
        return fail_with_;
      }
      batches_.push_back(Batch{tasks.size(), max_concurrency});
    }
    for (const std::function<void()>& task : tasks) {
      task();
    }
    return absl::OkStatus();
  }

  void SleepFor(absl::Duration duration) override {
    std::function<void(absl::Duration)> hook;
    {
      absl::MutexLock lock(&mu_);
      sleeps_.push_back(duration);
      hook = on_sleep_;
    }
    if (hook) {
      hook(duration);  // outside the lock: the hook may call back into the runner
    }
  }

  // `hook` runs after every later sleep is recorded, with its duration.
  void OnSleep(std::function<void(absl::Duration)> hook) {
    absl::MutexLock lock(&mu_);
    on_sleep_ = std::move(hook);
  }

  // Every later RunAll fails with `status` and runs nothing.
  void FailWith(absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_with_ = std::move(status);
  }

  std::vector<Batch> batches() const {
    absl::MutexLock lock(&mu_);
    return batches_;
  }
  std::vector<absl::Duration> sleeps() const {
    absl::MutexLock lock(&mu_);
    return sleeps_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Status fail_with_ ABSL_GUARDED_BY(mu_);
  std::vector<Batch> batches_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
  std::function<void(absl::Duration)> on_sleep_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
