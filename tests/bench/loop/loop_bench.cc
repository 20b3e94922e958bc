// The agentic loop's own cost per tool call, against baselines measured in the same run:
//   BM_HandlerDirect     — the no-op handler called directly (the floor: the tool itself);
//   BM_ExecutorExecute   — the enforcement pipeline per call (name, bounds, Decide, schema);
//   BM_LoopToolCalls/K   — whole runs through AgenticLoop (scripted provider, no-op tools,
//                          inline runner): 8 tool turns of K calls, then a final answer.
//   BM_LoopToolCallsPool/K — the same on the real thread pool (4 workers);
//   BM_LoopWithLatency/K — the pool again, with a 2 ms provider and 0.5 ms tools, to show the
//                          loop's share of wall time when the provider and tools cost something.
// Loop counters: loop_ns_per_call (wall time per tool call), overhead_ns_per_call (wall time
// outside the provider and the tools, per call) and outside_pct (that share of wall time).
// Time inside the provider counts only the provider's own work, not the loop's handling of
// the events it delivers; tool time is measured inside the handler.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "pulse/adapters/system/thread_pool_task_runner.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/json/json.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_registry.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/in_memory_session_store.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/sequential_id_source.h"

namespace {

using Clock = std::chrono::steady_clock;
using pulse::core::LlmRequest;
using pulse::core::LlmStreamEvent;

std::int64_t Nanos(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

constexpr int kToolTurns = 8;
constexpr const char* kReadArgs = R"({"action":"status","resource_id":"vm:101"})";

// Answers with `calls_per_turn` pulse_read calls until kToolTurns assistant turns are in the
// history, then with a final text. Accumulates the time of its own work only.
class CyclingProvider final : public pulse::core::LlmProvider {
 public:
  explicit CyclingProvider(int calls_per_turn, std::chrono::microseconds latency = {})
      : calls_per_turn_(calls_per_turn), latency_(latency) {}

  absl::Status Stream(const LlmRequest& request,
                      absl::FunctionRef<void(const LlmStreamEvent&)> on_event) override {
    const Clock::time_point start = Clock::now();
    int assistant_turns = 0;
    for (const pulse::core::Message& m : request.messages) {
      assistant_turns += m.role == pulse::core::MessageRole::kAssistant ? 1 : 0;
    }
    std::vector<LlmStreamEvent> events;
    if (assistant_turns < kToolTurns) {
      for (int i = 0; i < calls_per_turn_; ++i) {
        events.push_back(LlmStreamEvent::ToolCallDone(pulse::core::ToolCall{
            "call_" + std::to_string(assistant_turns) + "_" + std::to_string(i), "pulse_read",
            kReadArgs}));
      }
      events.push_back(LlmStreamEvent::Finish(pulse::core::FinishReason::kToolCalls));
    } else {
      events.push_back(LlmStreamEvent::ContentDelta("vm:101 is running."));
      events.push_back(LlmStreamEvent::Finish(pulse::core::FinishReason::kStop));
    }
    if (latency_.count() > 0) {
      std::this_thread::sleep_for(latency_);
    }
    own_ns_ += Nanos(Clock::now() - start);
    for (const LlmStreamEvent& e : events) {
      on_event(e);
    }
    return absl::OkStatus();
  }

  std::int64_t own_ns() const { return own_ns_; }

 private:
  int calls_per_turn_;
  std::chrono::microseconds latency_;
  std::int64_t own_ns_ = 0;
};

// The time tool handlers were running, as the union of their intervals (calls of one turn may
// overlap on the pool; overlapping time counts once). Thread-safe.
class ToolTime {
 public:
  void Add(Clock::time_point start, Clock::time_point end) {
    absl::MutexLock lock(&mu_);
    intervals_.emplace_back(start, end);
  }
  std::int64_t UnionNs() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::pair<Clock::time_point, Clock::time_point>> sorted = intervals_;
    std::sort(sorted.begin(), sorted.end());
    std::int64_t total = 0;
    for (std::size_t i = 0; i < sorted.size();) {
      Clock::time_point start = sorted[i].first;
      Clock::time_point end = sorted[i].second;
      for (++i; i < sorted.size() && sorted[i].first <= end; ++i) {
        end = std::max(end, sorted[i].second);
      }
      total += Nanos(end - start);
    }
    return total;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::pair<Clock::time_point, Clock::time_point>> intervals_ ABSL_GUARDED_BY(mu_);
};

// Does nothing (but wait `latency`, when set) and records how long it ran.
class NoOpHandler final : public pulse::core::ToolHandler {
 public:
  NoOpHandler(ToolTime* time, std::chrono::microseconds latency) : time_(time), latency_(latency) {}
  pulse::core::ToolResult Run(const rapidjson::Value&, const pulse::core::ToolContext&) override {
    const Clock::time_point start = Clock::now();
    if (latency_.count() > 0) {
      std::this_thread::sleep_for(latency_);
    }
    pulse::core::ToolResult result = pulse::core::ToolResult::Success(R"({"state":"running"})");
    if (time_ != nullptr) {
      time_->Add(start, Clock::now());
    }
    return result;
  }

 private:
  ToolTime* time_;  // nullable: the direct baseline records nothing
  std::chrono::microseconds latency_;
};

class NullSink final : public pulse::core::EventSink {
 public:
  void Emit(const pulse::core::LoopEvent& event) override {
    benchmark::DoNotOptimize(event.data_json.data());
  }
};

pulse::core::InvocationPolicy BenchPolicy() {
  pulse::core::PolicyInputs inputs;
  inputs.scopes = pulse::core::ScopeSet::All();
  inputs.configured_max = pulse::core::ControlLevel::kControlled;
  inputs.profile = pulse::core::ExecutionProfile::kInteractive;
  return pulse::core::InvocationPolicy::Create(inputs);
}

// A loop over every built-in tool, each bound to its own no-op handler.
struct World {
  explicit World(int calls_per_turn, pulse::core::TaskRunner* runner = nullptr,
                 std::chrono::microseconds provider_latency = {},
                 std::chrono::microseconds tool_latency = {})
      : registry(std::move(pulse::core::ToolRegistry::WithBuiltins()).value()),
        executor(registry),
        actions(action_store, fleet, operator_state, audit, clock),
        provider(calls_per_turn, provider_latency) {
    for (const std::string& name : registry.Names()) {
      (void)executor.Bind(name, std::make_unique<NoOpHandler>(&tool_time, tool_latency)).ok();
    }
    pulse::core::LoopOptions options;
    options.max_turns = kToolTurns + 2;
    loop = std::make_unique<pulse::core::AgenticLoop>(provider, registry, executor,
                                                      runner != nullptr ? *runner : inline_runner,
                                                      clock, sessions, actions, ids, options);
  }
  std::int64_t ToolNs() const { return tool_time.UnionNs(); }

  pulse::core::ToolRegistry registry;
  pulse::core::ToolExecutor executor;
  ToolTime tool_time;
  pulse::testing::FakeClock clock;
  pulse::testing::InMemoryActionStore action_store;
  pulse::testing::FakeFleet fleet;
  pulse::testing::InMemoryOperatorStateStore operator_state;
  pulse::testing::InMemoryAuditLog audit;
  pulse::core::ActionService actions;
  pulse::testing::InMemorySessionStore sessions;
  pulse::testing::SequentialIdSource ids;
  pulse::testing::InlineTaskRunner inline_runner;
  CyclingProvider provider;
  std::unique_ptr<pulse::core::AgenticLoop> loop;
};

void BM_HandlerDirect(benchmark::State& state) {
  NoOpHandler handler(nullptr, {});
  const pulse::core::InvocationPolicy policy = BenchPolicy();
  const rapidjson::Document args = std::move(pulse::core::ParseJson(kReadArgs)).value();
  const pulse::core::ToolContext context{"pulse_read", {}, policy};
  for (auto _ : state) {
    pulse::core::ToolResult r = handler.Run(args, context);
    benchmark::DoNotOptimize(r.content.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HandlerDirect);

void BM_ExecutorExecute(benchmark::State& state) {
  World world(1);
  const pulse::core::InvocationPolicy policy = BenchPolicy();
  const rapidjson::Document args = std::move(pulse::core::ParseJson(kReadArgs)).value();
  for (auto _ : state) {
    pulse::core::ToolCallOutcome out = world.executor.Execute(policy, "pulse_read", args);
    benchmark::DoNotOptimize(out.result.content.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExecutorExecute);

void RunLoop(benchmark::State& state, World& world) {
  NullSink sink;
  const pulse::core::InvocationPolicy policy = BenchPolicy();
  const int calls_per_run = kToolTurns * static_cast<int>(state.range(0));
  std::int64_t wall_ns = 0;
  std::int64_t runs = 0;
  const std::int64_t provider_before = world.provider.own_ns();
  const std::int64_t tools_before = world.ToolNs();
  for (auto _ : state) {
    const std::string session = "ses_" + std::to_string(runs++);
    const Clock::time_point start = Clock::now();
    absl::StatusOr<pulse::core::RunOutcome> out =
        world.loop->Run(pulse::core::RunRequest{session, "is vm:101 up?", policy}, sink);
    wall_ns += Nanos(Clock::now() - start);
    if (!out.ok() || out->end != pulse::core::RunEnd::kAnswered ||
        out->counters.tool_calls != calls_per_run) {
      state.SkipWithError("the loop did not complete the scripted run");
      break;
    }
    state.PauseTiming();
    (void)world.sessions.Delete(session).ok();
    state.ResumeTiming();
  }
  const double calls = static_cast<double>(runs) * calls_per_run;
  const double provider_ns = static_cast<double>(world.provider.own_ns() - provider_before);
  const double tool_ns = static_cast<double>(world.ToolNs() - tools_before);
  const double outside_ns = static_cast<double>(wall_ns) - provider_ns - tool_ns;
  state.SetItemsProcessed(static_cast<std::int64_t>(calls));
  if (calls > 0 && wall_ns > 0) {
    state.counters["loop_ns_per_call"] = static_cast<double>(wall_ns) / calls;
    state.counters["overhead_ns_per_call"] = outside_ns / calls;
    state.counters["outside_pct"] = 100.0 * outside_ns / static_cast<double>(wall_ns);
    state.counters["provider_pct"] = 100.0 * provider_ns / static_cast<double>(wall_ns);
    state.counters["tool_pct"] = 100.0 * tool_ns / static_cast<double>(wall_ns);
  }
}

void BM_LoopToolCalls(benchmark::State& state) {
  World world(static_cast<int>(state.range(0)));
  RunLoop(state, world);
}
BENCHMARK(BM_LoopToolCalls)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);

void BM_LoopToolCallsPool(benchmark::State& state) {
  auto pool = pulse::adapters::system::ThreadPoolTaskRunner::Open(4);
  if (!pool.ok()) {
    state.SkipWithError("no thread pool");
    return;
  }
  World world(static_cast<int>(state.range(0)), pool->get());
  RunLoop(state, world);
}
BENCHMARK(BM_LoopToolCallsPool)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);

void BM_LoopWithLatency(benchmark::State& state) {
  auto pool = pulse::adapters::system::ThreadPoolTaskRunner::Open(4);
  if (!pool.ok()) {
    state.SkipWithError("no thread pool");
    return;
  }
  World world(static_cast<int>(state.range(0)), pool->get(), std::chrono::microseconds(2000),
              std::chrono::microseconds(500));
  RunLoop(state, world);
}
BENCHMARK(BM_LoopWithLatency)->Arg(4)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
