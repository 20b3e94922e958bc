// TaskRunner: the core's only route to parallelism (the core never creates threads). The loop
// hands it one provider turn's tool executions and a concurrency cap; the runner decides which
// threads run them. It also owns blocking waits (provider retry backoff), like leveldb's Env.
// Real implementation: adapters/system ThreadPoolTaskRunner; tests use the inline and counting
// runners in tests/fakes.
// Thread-safety: implementations must be safe to call from any thread, including from inside a
// task they are running (a nested RunAll must not deadlock).
// Codes: InvalidArgument (max_concurrency is 0), Unavailable (the runner cannot run tasks now).
// On either error no task has started.
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pulse::core {

class TaskRunner {
 public:
  virtual ~TaskRunner() = default;

  // Runs every task exactly once, at most `max_concurrency` at a time, and returns when all
  // have finished. Tasks start in index order; with max_concurrency 1 each task finishes
  // before the next one starts, so a sequential batch keeps its order. Tasks must not throw.
  [[nodiscard]] virtual absl::Status RunAll(std::span<const std::function<void()>> tasks,
                                            std::size_t max_concurrency) = 0;

  // Blocks the calling thread for `duration` (non-positive: returns at once).
  virtual void SleepFor(absl::Duration duration) = 0;
};

}  // namespace pulse::core
