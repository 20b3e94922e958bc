// ElasticThreadPool: the connection task queue of HttplibServer. cpp-httplib runs a whole
// connection — keep-alive requests, and an event stream for as long as it is open — on one
// queued task, so a fixed pool of N workers serves at most N open streams and queues every
// other request behind them. This pool keeps `min_threads` workers and starts another one
// whenever a task arrives and no worker is idle, up to `max_threads`; a worker beyond the
// minimum that stays idle for `idle_timeout` exits. 256 open streams therefore hold 256
// workers while short requests still find (or start) a free one at once. Idle workers wait
// on a condition variable. Thread-safe; shutdown() runs the queued tasks and joins every
// worker.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pulse::adapters::http::internal {

// Counters readable while the pool runs (and after it is gone).
struct PoolGauges {
  std::atomic<std::size_t> threads{0};  // live workers
  std::atomic<std::size_t> busy{0};     // workers running a task
  std::atomic<std::size_t> peak{0};     // most live workers at once
};

class ElasticThreadPool final : public httplib::TaskQueue {
 public:
  // Starts `min_threads` workers (at least one). `max_threads` is raised to min_threads if
  // smaller.
  ElasticThreadPool(std::size_t min_threads, std::size_t max_threads,
                    std::chrono::milliseconds idle_timeout, std::shared_ptr<PoolGauges> gauges);
  ~ElasticThreadPool() override;
  ElasticThreadPool(const ElasticThreadPool&) = delete;
  ElasticThreadPool& operator=(const ElasticThreadPool&) = delete;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void SpawnLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WorkerLoop(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::thread> TakeRetiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::size_t min_threads_;
  const std::size_t max_threads_;
  const std::chrono::milliseconds idle_timeout_;
  const std::shared_ptr<PoolGauges> gauges_;

  absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::uint64_t, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  // Workers that exited; joined by the next caller.
  std::vector<std::uint64_t> retired_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t live_ ABSL_GUARDED_BY(mu_) = 0;
  std::size_t idle_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pulse::adapters::http::internal
