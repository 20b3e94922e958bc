// ThreadPoolTaskRunner: the TaskRunner port over a fixed pool of std::threads. A batch is
// shared by the calling thread and up to max_concurrency - 1 pool workers, each pulling the
// next task index, so the cap holds by construction, tasks start in index order, and a batch
// always completes even when every worker is busy (the caller alone can finish it) — which
// also makes a RunAll from inside a task deadlock-free.
// Thread-safe. The destructor stops and joins the workers; RunAll calls must have returned.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/ports/task_runner.h"

namespace pulse::adapters::system {

class ThreadPoolTaskRunner final : public core::TaskRunner {
 public:
  static constexpr std::size_t kMaxThreads = 256;

  // A pool of `threads` workers. InvalidArgument for 0 or more than kMaxThreads; Unavailable
  // when the system refuses to start a thread (the ones started are joined again).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ThreadPoolTaskRunner>> Open(
      std::size_t threads);

  ~ThreadPoolTaskRunner() override;
  ThreadPoolTaskRunner(const ThreadPoolTaskRunner&) = delete;
  ThreadPoolTaskRunner& operator=(const ThreadPoolTaskRunner&) = delete;

  // See TaskRunner. A task that throws is a bug in the task; the exception is swallowed so the
  // pool (and the other tasks of the batch) survive it.
  [[nodiscard]] absl::Status RunAll(std::span<const std::function<void()>> tasks,
                                    std::size_t max_concurrency) override;
  void SleepFor(absl::Duration duration) override;

  std::size_t threads() const { return workers_.size(); }

 private:
  ThreadPoolTaskRunner() = default;
  void WorkerLoop();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace pulse::adapters::system
