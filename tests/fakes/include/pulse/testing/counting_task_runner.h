// CountingTaskRunner: a TaskRunner that really runs a batch concurrently on std::threads (tests
// may use threads; the core may not) — min(max_concurrency, batch size) workers pulling tasks
// in index order — and measures how many tasks were ever in flight at once. Tests use it to
// prove the loop's concurrency cap and sequential batches. Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/ports/task_runner.h"

namespace pulse::testing {

class CountingTaskRunner final : public core::TaskRunner {
 public:
  absl::Status RunAll(std::span<const std::function<void()>> tasks,
                      std::size_t max_concurrency) override {
    if (max_concurrency == 0) {
      return absl::InvalidArgumentError("max_concurrency must be at least 1");
    }
    {
      absl::MutexLock lock(&mu_);
      caps_.push_back(max_concurrency);
    }
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      for (std::size_t i = next++; i < tasks.size(); i = next++) {
        Enter(i);
        tasks[i]();
        Leave();
      }
    };
    const std::size_t workers = std::min(max_concurrency, tasks.size());
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back(worker);
    }
    for (std::thread& t : threads) {
      t.join();
    }
    return absl::OkStatus();
  }

  void SleepFor(absl::Duration /*duration*/) override {}

  // The most tasks ever running at the same time.
  std::size_t max_in_flight() const {
    absl::MutexLock lock(&mu_);
    return max_in_flight_;
  }
  // The concurrency cap of every batch, in order.
  std::vector<std::size_t> caps() const {
    absl::MutexLock lock(&mu_);
    return caps_;
  }
  // Task indexes (within their batch) in the order they started.
  std::vector<std::size_t> start_order() const {
    absl::MutexLock lock(&mu_);
    return start_order_;
  }

 private:
  void Enter(std::size_t index) {
    absl::MutexLock lock(&mu_);
    start_order_.push_back(index);
    max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
  }
  void Leave() {
    absl::MutexLock lock(&mu_);
    --in_flight_;
  }

  mutable absl::Mutex mu_;
  std::size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t max_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::size_t> caps_ ABSL_GUARDED_BY(mu_);
  std::vector<std::size_t> start_order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
