// The seam between the agentic loop and the real ThreadPoolTaskRunner (issue 20 item 8): a
// write handler that throws after it dispatched is swallowed by the runner, and the loop must
// still count the call as a dispatched, unverified change (VERIFYING), never as a no-op.
#include <catch2/catch.hpp>
#include <memory>
#include <stdexcept>
#include <string>

#include "../../core/loop/loop_test_support.h"
#include "pulse/adapters/system/thread_pool_task_runner.h"
#include "pulse/core/loop/loop_texts.h"

namespace pulse::testing::loop {
namespace {

using core::RunEnd;
using core::SessionState;

constexpr const char* kQueryVm = R"({"action":"get","resource_id":"vm:101"})";
constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";
constexpr const char* kRestartWeb = R"({"op":"restart","target":"web"})";

// A harness whose loop runs its tool calls on a real thread pool.
struct PoolHarness {
  explicit PoolHarness(core::LoopOptions options = {}) {
    auto opened = adapters::system::ThreadPoolTaskRunner::Open(2);
    REQUIRE(opened.ok());
    pool = std::move(opened).value();
    h.loop = std::make_unique<core::AgenticLoop>(h.provider, h.registry, h.executor, *pool, h.clock,
                                                 h.sessions, h.actions, h.ids, std::move(options));
  }
  Harness h;
  std::unique_ptr<adapters::system::ThreadPoolTaskRunner> pool;
};

// Dispatches (records the call) and then throws, as an adapter bug would after the change.
FakeHandler::Fn DispatchThenThrow(int& dispatched) {
  return [&dispatched](const rapidjson::Value&) -> core::ToolResult {
    ++dispatched;
    throw std::runtime_error("executor connection reset after the change was applied");
  };
}

TEST_CASE("a write handler that throws after dispatching leaves the session verifying",
          "[adapters][system][loop]") {
  core::LoopOptions options;
  options.max_turns = 3;
  PoolHarness p(options);
  Harness& h = p.h;
  int dispatched = 0;
  h.BindDefaults({std::string(kSvcOps)});
  h.Bind(kSvcOps, [&dispatched](const rapidjson::Value& args) -> core::ToolResult {
    if (Str(args, "op") == "restart") {
      return DispatchThenThrow(dispatched)(args);
    }
    return core::ToolResult::Success(R"({"target":"web","status":"running"})");
  });
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Text("web was restarted and is fine."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(dispatched == 1);
  // The failed write counts as dispatched: the claim is refused and the budget ends unverified.
  CHECK(out->fsm_state == SessionState::kVerifying);
  CHECK(out->end == RunEnd::kUnverified);
  CHECK(h.events.ContentText().find("web was restarted and is fine.") == std::string::npos);
  // The model was told to take the change as made, with a stable code.
  REQUIRE(h.provider.RequestCount() >= 3);
  const core::LlmRequest after = h.provider.Request(2);
  CHECK(CodeFor(after, "w1") == "EXECUTION_FAILED");
  const std::optional<core::Message> result = ResultFor(after, "w1");
  REQUIRE(result.has_value());
  CHECK(result->content.find("may have been made") != std::string::npos);
  CHECK(h.Session().fsm.state == "VERIFYING");
}

TEST_CASE("after a throwing write a verifying read lets the model answer",
          "[adapters][system][loop]") {
  PoolHarness p;
  Harness& h = p.h;
  int dispatched = 0;
  h.BindDefaults({std::string(kSvcOps)});
  h.Bind(kSvcOps, DispatchThenThrow(dispatched));
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web is running."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(dispatched == 1);
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "web is running.");
  CHECK(out->fsm_state == SessionState::kReading);
}

TEST_CASE("a read handler that throws changes no safety state", "[adapters][system][loop]") {
  PoolHarness p;
  Harness& h = p.h;
  h.BindDefaults({std::string(core::kToolPulseRead)});
  h.Bind(core::kToolPulseRead, [](const rapidjson::Value&) -> core::ToolResult {
    throw std::runtime_error("reader crashed");
  });
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("I could not read vm:101."));
  absl::StatusOr<core::RunOutcome> out = h.Run("status of vm:101");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->fsm_state != SessionState::kVerifying);
  CHECK(CodeFor(h.provider.Request(2), "r1") == "EXECUTION_FAILED");
}

}  // namespace
}  // namespace pulse::testing::loop
