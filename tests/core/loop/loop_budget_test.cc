// Budgets bound every run by construction: turns (the last one offers no tools), provider
// calls, tokens, evidence calls, consecutive all-error turns, calls per turn.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loop_test_support.h"

namespace pulse::testing::loop {
namespace {

using core::ControlLevel;
using core::ExecutionProfile;
using core::LoopEventType;
using core::RunEnd;

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";
constexpr const char* kQueryVm = R"({"action":"get","resource_id":"vm:101"})";

TEST_CASE("turn budget exhaustion ends with a tool-free turn", "[core][loop]") {
  core::LoopOptions options;
  options.max_turns = 3;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r2", "pulse_read", kReadVm)}));
  // The model still asks for a tool on the tool-free turn: the call is dropped, never run.
  h.provider.Add(ScriptedTurn::Calls({Call("r3", "pulse_read", kReadVm)}, "web-01 is running."));
  absl::StatusOr<core::RunOutcome> out = h.Run("watch web-01");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "web-01 is running.");
  REQUIRE(h.provider.RequestCount() == 3);
  CHECK_FALSE(h.provider.Request(0).tools.empty());
  CHECK_FALSE(h.provider.Request(1).tools.empty());
  CHECK(h.provider.Request(2).tools.empty());
  for (const core::LlmRequest& r : h.provider.Requests()) {
    CHECK(r.tool_choice == core::ToolChoice::kUnset);
  }
  CHECK(h.log.Count(core::kToolPulseRead) == 2);
  const core::SessionRecord session = h.Session();
  CHECK(session.transcript.back().tool_calls.empty());
}

TEST_CASE("a write left unverified when the turns run out ends with a caveat, not a claim",
          "[core][loop]") {
  core::LoopOptions options;
  options.max_turns = 3;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(
      ScriptedTurn::Calls({Call("w1", "svc_ops", R"({"op":"restart","target":"web"})")}));
  h.provider.Add(ScriptedTurn::Text("All good, restarted."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kUnverified);
  CHECK(out->final_text.find("could not be verified") != std::string::npos);
  CHECK(h.events.ContentText().find("All good") == std::string::npos);
  CHECK(h.provider.RequestCount() == 3);
  const rapidjson::Document done = FirstEvent(h.events, LoopEventType::kDone);
  CHECK(Str(done, "outcome") == "unverified");
  CHECK(Str(done, "state") == "VERIFYING");
}

TEST_CASE("the provider-call budget ends the run with a typed failure", "[core][loop]") {
  core::LoopOptions options;
  options.max_provider_calls = 2;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r2", "pulse_metrics", R"({"resource_id":"vm:101"})")}));
  h.provider.Add(ScriptedTurn::Text("unreachable"));
  absl::StatusOr<core::RunOutcome> out = h.Run("investigate");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "max_provider_calls");
  CHECK(h.provider.RequestCount() == 2);
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "code") == "TOOL_LOOP_BOUNDED_FAILURE");
  CHECK(core::GetInt64(error, "max_provider_calls") == 2);
  CHECK(h.events.Types().back() == "done");
}

TEST_CASE("a spent token allowance refuses the turn's calls before they run", "[core][loop]") {
  core::LoopOptions options;
  options.max_total_tokens = 1000;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(
      ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm), Call("r2", "pulse_query", kQueryVm)})
          .WithUsage(900, 200));
  absl::StatusOr<core::RunOutcome> out = h.Run("investigate");
  REQUIRE(out.ok());
  CHECK(out->failure_reason == "token_allowance_exhausted");
  CHECK(h.log.Total() == 0);
  const core::SessionRecord session = h.Session();
  const std::vector<core::Message>& t = session.transcript;
  REQUIRE(t.size() == 4);
  for (std::size_t i : {std::size_t{2}, std::size_t{3}}) {
    CHECK(t[i].is_error);
    CHECK(core::ExtractToolErrorCode(t[i].content) == "BUDGET_EXHAUSTED");
  }
}

TEST_CASE("the investigation evidence budget refuses extra evidence and removes evidence tools",
          "[core][loop]") {
  core::LoopOptions options;
  options.max_evidence_calls = 2;
  Harness h(options);
  h.BindDefaults();
  const core::InvocationPolicy policy =
      Policy(ControlLevel::kReadOnly, ExecutionProfile::kPatrolInvestigation);
  h.provider.Add(ScriptedTurn::Calls({Call("e1", "pulse_read", kReadVm),
                                      Call("e2", "pulse_metrics", R"({"resource_id":"vm:101"})"),
                                      Call("e3", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Text("Disk pressure on vm:101; propose growing it."));
  absl::StatusOr<core::RunOutcome> out = h.Run("investigate finding f-1", policy);
  REQUIRE(out.ok());
  CHECK(h.log.Total() == 2);
  const core::LlmRequest second = h.provider.Request(1);
  CHECK(CodeFor(second, "e3") == "BUDGET_EXHAUSTED");
  CHECK(ResultFor(second, "e3")->content.find("EVIDENCE_BUDGET_EXHAUSTED") != std::string::npos);
  const std::vector<std::string> first_tools = ToolNames(h.provider.Request(0));
  CHECK(std::find(first_tools.begin(), first_tools.end(), "pulse_read") != first_tools.end());
  CHECK(ToolNames(second) == std::vector<std::string>{"patrol_propose_action"});
  CHECK(out->counters.evidence_calls == 2);
}

TEST_CASE("consecutive all-error turns brake into a tool-free turn", "[core][loop]") {
  core::LoopOptions options;
  options.max_consecutive_error_turns = 2;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("x1", "pulse_read", R"({"action":"status"})")}));
  h.provider.Add(ScriptedTurn::Calls({Call("x2", "pulse_read", R"({"action":"logs"})")}));
  h.provider.Add(ScriptedTurn::Text("I could not read the resource."));
  absl::StatusOr<core::RunOutcome> out = h.Run("read it");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  REQUIRE(h.provider.RequestCount() == 3);
  CHECK_FALSE(h.provider.Request(1).tools.empty());
  CHECK(h.provider.Request(2).tools.empty());
}

TEST_CASE("calls beyond the per-turn cap are refused, not run", "[core][loop]") {
  core::LoopOptions options;
  options.max_calls_per_turn = 2;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(
      ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm), Call("r2", "pulse_read", kReadVm),
                           Call("r3", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("ok"));
  REQUIRE(h.Run("read").ok());
  CHECK(h.log.Count(core::kToolPulseRead) == 2);
  CHECK(CodeFor(h.provider.Request(1), "r3") == "BUDGET_EXHAUSTED");
}

}  // namespace
}  // namespace pulse::testing::loop
