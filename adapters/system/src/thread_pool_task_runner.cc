#include "pulse/adapters/system/thread_pool_task_runner.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace pulse::adapters::system {
namespace {

// One RunAll call. Shared with the helper jobs, which may start after the batch finished:
// they then find no index left and never touch `tasks` (whose storage belongs to the caller).
struct Batch {
  explicit Batch(std::span<const std::function<void()>> t) : tasks(t) {}

  // Runs tasks until none is left unclaimed.
  void Drain() {
    for (std::size_t i = next.fetch_add(1); i < tasks.size(); i = next.fetch_add(1)) {
      try {
        tasks[i]();
      } catch (...) {  // NOLINT(bugprone-empty-catch): see RunAll's contract
      }
      absl::MutexLock lock(&mu);
      ++finished;
    }
  }

  std::span<const std::function<void()>> tasks;
  std::atomic<std::size_t> next{0};
  absl::Mutex mu;
  std::size_t finished ABSL_GUARDED_BY(mu) = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ThreadPoolTaskRunner>> ThreadPoolTaskRunner::Open(
    std::size_t threads) {
  if (threads == 0 || threads > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("a thread pool needs 1..", kMaxThreads, " threads, not ", threads));
  }
  std::unique_ptr<ThreadPoolTaskRunner> pool(new ThreadPoolTaskRunner());
  try {
    for (std::size_t i = 0; i < threads; ++i) {
      pool->workers_.emplace_back([p = pool.get()] { p->WorkerLoop(); });
    }
  } catch (const std::system_error& e) {
    return absl::UnavailableError(absl::StrCat("cannot start a worker thread: ", e.what()));
  }
  return pool;
}

ThreadPoolTaskRunner::~ThreadPoolTaskRunner() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& worker : workers_) {
    worker.join();
  }
}

void ThreadPoolTaskRunner::WorkerLoop() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPoolTaskRunner* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) {
        return;  // stopping, nothing left
      }
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

absl::Status ThreadPoolTaskRunner::RunAll(std::span<const std::function<void()>> tasks,
                                          std::size_t max_concurrency) {
  if (max_concurrency == 0) {
    return absl::InvalidArgumentError("max_concurrency must be at least 1");
  }
  if (tasks.empty()) {
    return absl::OkStatus();
  }
  auto batch = std::make_shared<Batch>(tasks);
  const std::size_t helpers = std::min({max_concurrency, tasks.size(), workers_.size() + 1}) - 1;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      for (std::size_t i = 0; i < helpers; ++i) {
        queue_.emplace_back([batch] { batch->Drain(); });
      }
    }
  }
  batch->Drain();
  absl::MutexLock lock(&batch->mu);
  batch->mu.Await(absl::Condition(
      +[](Batch* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(b->mu) { return b->finished == b->tasks.size(); },
      batch.get()));
  return absl::OkStatus();
}

void ThreadPoolTaskRunner::SleepFor(absl::Duration duration) {
  if (duration > absl::ZeroDuration()) {
    absl::SleepFor(duration);
  }
}

}  // namespace pulse::adapters::system
