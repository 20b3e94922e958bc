#include "pulse/adapters/system/thread_pool_task_runner.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pulse::adapters::system {
namespace {

// Counts tasks in flight; each task holds its slot until `want` tasks are in flight at once
// (or a timeout passes), so any overlap the runner allows really happens.
struct Overlap {
  absl::Mutex mu;
  int in_flight = 0;
  int max_in_flight = 0;
  int want = 0;
  void Run() {
    absl::MutexLock lock(&mu);
    max_in_flight = std::max(max_in_flight, ++in_flight);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return max_in_flight >= want; };
    mu.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(300));
    --in_flight;
  }
};

std::unique_ptr<ThreadPoolTaskRunner> Pool(std::size_t threads) {
  auto pool = ThreadPoolTaskRunner::Open(threads);
  REQUIRE(pool.ok());
  return std::move(pool).value();
}

TEST_CASE("every task runs exactly once", "[adapters][system]") {
  auto pool = Pool(4);
  std::vector<std::atomic<int>> runs(50);
  std::vector<std::function<void()>> tasks;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    tasks.emplace_back([&runs, i] { ++runs[i]; });
  }
  REQUIRE(pool->RunAll(tasks, 4).ok());
  for (const std::atomic<int>& n : runs) {
    CHECK(n.load() == 1);
  }
}

TEST_CASE("the concurrency cap is reached and never exceeded", "[adapters][system]") {
  auto pool = Pool(8);
  Overlap overlap;
  overlap.want = 4;
  std::vector<std::function<void()>> tasks(10, [&overlap] { overlap.Run(); });
  REQUIRE(pool->RunAll(tasks, 4).ok());
  CHECK(overlap.max_in_flight == 4);
}

TEST_CASE("max_concurrency 1 runs tasks one after another in index order", "[adapters][system]") {
  auto pool = Pool(4);
  absl::Mutex mu;
  std::vector<int> order;
  Overlap overlap;
  overlap.want = 2;  // would be reached if two ever overlapped
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 6; ++i) {
    tasks.emplace_back([&, i] {
      overlap.Run();
      absl::MutexLock lock(&mu);
      order.push_back(i);
    });
  }
  REQUIRE(pool->RunAll(tasks, 1).ok());
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(overlap.max_in_flight == 1);
}

TEST_CASE("a RunAll from inside a task completes even when every worker is busy",
          "[adapters][system]") {
  auto pool = Pool(2);
  std::atomic<int> inner_runs{0};
  std::vector<std::function<void()>> inner(3, [&inner_runs] { ++inner_runs; });
  std::vector<std::function<void()>> outer(4, [&] { REQUIRE(pool->RunAll(inner, 3).ok()); });
  REQUIRE(pool->RunAll(outer, 4).ok());
  CHECK(inner_runs.load() == 12);
}

TEST_CASE("a throwing task does not take down the pool or its batch", "[adapters][system]") {
  auto pool = Pool(2);
  std::atomic<int> runs{0};
  std::vector<std::function<void()>> tasks = {[] { throw std::runtime_error("bug"); },
                                              [&runs] { ++runs; }, [&runs] { ++runs; }};
  REQUIRE(pool->RunAll(tasks, 2).ok());
  CHECK(runs.load() == 2);
  REQUIRE(pool->RunAll(tasks, 2).ok());
  CHECK(runs.load() == 4);
}

TEST_CASE("invalid pool sizes and caps are refused", "[adapters][system]") {
  CHECK(absl::IsInvalidArgument(ThreadPoolTaskRunner::Open(0).status()));
  CHECK(absl::IsInvalidArgument(
      ThreadPoolTaskRunner::Open(ThreadPoolTaskRunner::kMaxThreads + 1).status()));
  auto pool = Pool(1);
  std::vector<std::function<void()>> tasks(1, [] {});
  CHECK(absl::IsInvalidArgument(pool->RunAll(tasks, 0)));
  CHECK(pool->RunAll({}, 3).ok());
  CHECK(pool->threads() == 1);
}

TEST_CASE("SleepFor blocks for about the duration asked", "[adapters][system]") {
  auto pool = Pool(1);
  const absl::Time start = absl::Now();
  pool->SleepFor(absl::Milliseconds(20));
  CHECK(absl::Now() - start >= absl::Milliseconds(20));
  pool->SleepFor(absl::Milliseconds(-5));  // returns at once
}

}  // namespace
}  // namespace pulse::adapters::system
