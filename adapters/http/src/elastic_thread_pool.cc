#include "elastic_thread_pool.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace pulse::adapters::http::internal {

ElasticThreadPool::ElasticThreadPool(std::size_t min_threads, std::size_t max_threads,
                                     std::chrono::milliseconds idle_timeout,
                                     std::shared_ptr<PoolGauges> gauges)
    : min_threads_(std::max<std::size_t>(1, min_threads)),
      max_threads_(std::max(max_threads, std::max<std::size_t>(1, min_threads))),
      idle_timeout_(idle_timeout),
      gauges_(std::move(gauges)) {
  absl::MutexLock lock(&mu_);
  for (std::size_t i = 0; i < min_threads_; ++i) {
    SpawnLocked();
  }
}

ElasticThreadPool::~ElasticThreadPool() { shutdown(); }

void ElasticThreadPool::SpawnLocked() {
  const std::uint64_t id = next_id_++;
  try {
    threads_.emplace(id, std::thread([this, id] { WorkerLoop(id); }));
  } catch (const std::system_error&) {
    return;  // the system refused a thread; the queued task waits for a running worker
  }
  ++live_;
  gauges_->threads.store(live_);
  if (live_ > gauges_->peak.load()) {
    gauges_->peak.store(live_);
  }
}

std::vector<std::thread> ElasticThreadPool::TakeRetiredLocked() {
  std::vector<std::thread> done;
  for (std::uint64_t id : retired_) {
    auto it = threads_.find(id);
    if (it != threads_.end()) {
      done.push_back(std::move(it->second));
      threads_.erase(it);
    }
  }
  retired_.clear();
  return done;
}

void ElasticThreadPool::enqueue(std::function<void()> fn) {
  std::vector<std::thread> done;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) {
      return;  // httplib stops enqueueing before it shuts the queue down
    }
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && live_ < max_threads_) {
      SpawnLocked();
    }
    done = TakeRetiredLocked();
  }
  cv_.Signal();
  for (std::thread& t : done) {
    t.join();  // a retired worker has left its loop; this only reaps it
  }
}

void ElasticThreadPool::shutdown() {
  std::map<std::uint64_t, std::thread> all;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_ && threads_.empty()) {
      return;
    }
    shutdown_ = true;
  }
  cv_.SignalAll();
  {
    absl::MutexLock lock(&mu_);
    all.swap(threads_);
    retired_.clear();
  }
  for (auto& [id, t] : all) {
    if (t.joinable()) {
      t.join();
    }
  }
}

void ElasticThreadPool::WorkerLoop(std::uint64_t id) {
  absl::MutexLock lock(&mu_);
  while (true) {
    ++idle_;
    const absl::Time deadline = absl::Now() + absl::FromChrono(idle_timeout_);
    while (jobs_.empty() && !shutdown_ && !cv_.WaitWithDeadline(&mu_, deadline)) {
    }
    const bool woke = !jobs_.empty() || shutdown_;
    --idle_;
    if (!jobs_.empty()) {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      gauges_->busy.fetch_add(1);
      mu_.Unlock();
      try {
        job();
      } catch (...) {
        // httplib catches handler exceptions itself; this only keeps the worker alive.
      }
      job = nullptr;
      gauges_->busy.fetch_sub(1);
      mu_.Lock();
      continue;
    }
    if (shutdown_) {
      break;
    }
    if (!woke && live_ > min_threads_) {
      retired_.push_back(id);
      break;
    }
  }
  --live_;
  gauges_->threads.store(live_);
}

}  // namespace pulse::adapters::http::internal
