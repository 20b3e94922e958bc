// The three-phase pipeline of one provider turn: pre-check (advertised, policy, repeated denial,
// batch FSM gate), execution (concurrency cap, sequential batches, question isolation) and
// post-processing in provider order.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "loop_test_support.h"

namespace pulse::testing::loop {
namespace {

using core::ControlLevel;
using core::ExecutionProfile;
using core::LoopEventType;
using core::RunEnd;
using core::SessionState;

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";
constexpr const char* kQueryVm = R"({"action":"get","resource_id":"vm:101"})";
constexpr const char* kRestartWeb = R"({"op":"restart","target":"web"})";

TEST_CASE("a write before any target is resolved is blocked with FSM_BLOCKED and never runs",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Text("I need to find the service first."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.log.Count(kSvcOps) == 0);
  REQUIRE(h.provider.RequestCount() == 2);
  CHECK(CodeFor(h.provider.Request(1), "c1") == "FSM_BLOCKED");
  CHECK(ResultFor(h.provider.Request(1), "c1")->is_error);
  CHECK(out->fsm_state == SessionState::kResolving);
  std::vector<rapidjson::Document> ends = h.events.DataOf(LoopEventType::kToolEnd);
  REQUIRE(ends.size() == 1);
  CHECK_FALSE(core::GetBool(ends[0], "success").value_or(true));
}

TEST_CASE("seven identical successful reads across turns all execute without refusal",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  for (int i = 0; i < 7; ++i) {
    h.provider.Add(ScriptedTurn::Calls({Call("r" + std::to_string(i), "pulse_read", kReadVm)}));
  }
  h.provider.Add(ScriptedTurn::Text("web-01 is running."));
  absl::StatusOr<core::RunOutcome> out = h.Run("is web-01 up?");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.log.Count(core::kToolPulseRead) == 7);
  REQUIRE(h.provider.RequestCount() == 8);
  const core::LlmRequest last = h.provider.Request(7);
  for (int i = 0; i < 7; ++i) {
    std::optional<core::Message> result = ResultFor(last, "r" + std::to_string(i));
    REQUIRE(result.has_value());
    CHECK_FALSE(result->is_error);
    CHECK_FALSE(core::ExtractToolErrorCode(result->content).has_value());
  }
  CHECK(h.events.Count(LoopEventType::kError) == 0);
}

TEST_CASE("seven identical reads in one turn all execute", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  std::vector<core::ToolCall> calls;
  for (int i = 0; i < 7; ++i) {
    calls.push_back(Call("r" + std::to_string(i), "pulse_read", kReadVm));
  }
  h.provider.Add(ScriptedTurn::Calls(calls));
  h.provider.Add(ScriptedTurn::Text("Running."));
  REQUIRE(h.Run("check").ok());
  CHECK(h.log.Count(core::kToolPulseRead) == 7);
}

TEST_CASE("two writes in one turn: the first runs and the second is FSM_BLOCKED", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb),
                                      Call("w2", "svc_ops", R"({"op":"restart","target":"db"})")}));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web restarted and verified."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web and db");
  REQUIRE(out.ok());
  CHECK(h.log.Count(kSvcOps) == 1);
  const core::LlmRequest after = h.provider.Request(2);
  CHECK_FALSE(ResultFor(after, "w1")->is_error);
  CHECK(CodeFor(after, "w2") == "FSM_BLOCKED");
  REQUIRE(h.log.Calls().size() == 3);
  CHECK(h.log.Calls()[1].second == R"({"op":"restart","target":"web"})");
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->fsm_state == SessionState::kReading);
}

TEST_CASE("a repeated denied call is terminated on its second attempt with zero dispatches",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  // read_only offers svc_ops (op=status) but refuses op=restart.
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "svc_ops", kRestartWeb)}));
  // The same call again, member order changed: canonical arguments are equal.
  h.provider.Add(
      ScriptedTurn::Calls({Call("c2", "svc_ops", R"({"target":"web","op":"restart"})")}));
  h.provider.Add(ScriptedTurn::Text("never reached"));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web", Policy(ControlLevel::kReadOnly));
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "repeated_denied_tool_call");
  CHECK(h.provider.RequestCount() == 2);
  CHECK(h.log.Total() == 0);
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(CodeFor(h.provider.Request(1), "c1") == "POLICY_BLOCKED");

  const std::vector<std::string> types = h.events.Types();
  REQUIRE_FALSE(types.empty());
  CHECK(types.back() == "done");
  CHECK(h.events.Count(LoopEventType::kError) == 1);
  CHECK(h.events.Count(LoopEventType::kDone) == 1);
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "reason") == "repeated_denied_tool_call");
  CHECK(Str(error, "code") == "TOOL_LOOP_BOUNDED_FAILURE");
  CHECK(Str(error, "tool_name") == "svc_ops");
  CHECK(core::GetInt64(error, "provider_calls") == 2);

  // The refused call is persisted paired with its refusal: no unanswered call remains.
  const core::SessionRecord session = h.Session();
  const core::Message& last = session.transcript.back();
  CHECK(last.tool_call_id == "c2");
  CHECK(core::ExtractToolErrorCode(last.content) == "LOOP_DETECTED");
  CHECK(session.status == core::SessionStatus::kIdle);
}

TEST_CASE("two identical denied calls in one response end the run at the first provider call",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "pulse_control", std::string(kRestartVmArgs)),
                                      Call("c2", "pulse_control", std::string(kRestartVmArgs))}));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart", Policy(ControlLevel::kReadOnly));
  REQUIRE(out.ok());
  CHECK(out->failure_reason == "repeated_denied_tool_call");
  CHECK(h.provider.RequestCount() == 1);
  CHECK(h.action_store
            .ListByState({core::ActionState::kPlanned, core::ActionState::kPendingApproval}, 10)
            ->empty());
  // The first refusal was TOOL_NOT_ADVERTISED: read_only never offers pulse_control.
  const core::SessionRecord session = h.Session();
  CHECK(core::ExtractToolErrorCode(session.transcript[session.transcript.size() - 2].content) ==
        "TOOL_NOT_ADVERTISED");
}

TEST_CASE("an FSM-blocked write retried after resolution is not a denied repeat and runs",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w2", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("Restarted and verified."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.log.Count(kSvcOps) == 1);
  CHECK(CodeFor(h.provider.Request(1), "w1") == "FSM_BLOCKED");
  CHECK_FALSE(ResultFor(h.provider.Request(3), "w2")->is_error);
}

TEST_CASE("a call of a tool not offered this turn gets TOOL_NOT_ADVERTISED naming the offer",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_run_command", R"({"command":"ls"})"), Call("c2", "get", R"({})")}));
  h.provider.Add(ScriptedTurn::Text("ok"));
  REQUIRE(h.Run("list files").ok());
  const core::LlmRequest second = h.provider.Request(1);
  CHECK(CodeFor(second, "c1") == "TOOL_NOT_ADVERTISED");
  CHECK(CodeFor(second, "c2") == "TOOL_NOT_ADVERTISED");
  const std::string content = ResultFor(second, "c2")->content;
  CHECK(content.find("pulse_read") != std::string::npos);
  CHECK(content.find("pulse_control") != std::string::npos);
  CHECK(h.log.Total() == 0);
}

TEST_CASE("malformed arguments and handler failures reach the model as JSON codes",
          "[core][loop]") {
  Harness h;
  h.BindDefaults({"pulse_query", "pulse_read"});
  h.Bind(core::kToolPulseQuery, [](const rapidjson::Value&) {
    core::ToolError e;
    e.code = core::ToolErrorCode::kNotFound;
    e.message = "no resource vm:999";
    e.failed = true;
    return core::ToolResult::Failure(e);
  });
  h.Bind(core::kToolPulseRead, Returns("{}"));
  h.provider.Add(
      ScriptedTurn::Calls({Call("c1", "pulse_read", R"({"action":)"),
                           Call("c2", "pulse_query", R"({"action":"get","resource_id":"vm:999"})"),
                           Call("c3", "pulse_read", R"({"action":"status"})")}));
  h.provider.Add(ScriptedTurn::Text("vm:999 does not exist."));
  REQUIRE(h.Run("check vm:999").ok());
  const core::LlmRequest second = h.provider.Request(1);
  CHECK(CodeFor(second, "c1") == "INVALID_INPUT");
  CHECK(CodeFor(second, "c2") == "NOT_FOUND");
  CHECK(CodeFor(second, "c3") == "INVALID_INPUT");  // schema: resource_id is required
  for (const char* id : {"c1", "c2", "c3"}) {
    const core::Message m = *ResultFor(second, id);
    CHECK(m.is_error);
    CHECK(m.content.rfind("{\"error\":", 0) == 0);  // pure JSON, no framing or prose
  }
}

// Blocks each call until `want` calls have arrived (or a second passed), so calls that may
// overlap really do.
struct Rendezvous {
  absl::Mutex mu;
  int arrived = 0;
  int want = 4;
  void Arrive() {
    absl::MutexLock lock(&mu);
    ++arrived;
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return arrived >= want; };
    mu.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(1));
  }
};

TEST_CASE("at most four calls of one turn run at the same time", "[core][loop]") {
  Harness h({}, RunnerKind::kCounting);
  h.BindDefaults({"pulse_read"});
  Rendezvous rendezvous;
  h.Bind(core::kToolPulseRead, [&rendezvous](const rapidjson::Value&) {
    rendezvous.Arrive();
    return core::ToolResult::Success(R"({"state":"running"})");
  });
  std::vector<core::ToolCall> calls;
  for (int i = 0; i < 6; ++i) {
    calls.push_back(
        Call("r" + std::to_string(i), "pulse_read",
             R"({"action":"status","resource_id":"vm:10)" + std::to_string(i) + R"("})"));
  }
  h.provider.Add(ScriptedTurn::Calls(calls));
  h.provider.Add(ScriptedTurn::Text("All six are running."));
  REQUIRE(h.Run("check six vms").ok());
  CHECK(h.log.Count(core::kToolPulseRead) == 6);
  CHECK(h.counting_runner.caps() == std::vector<std::size_t>{4});
  CHECK(h.counting_runner.max_in_flight() == 4);
}

TEST_CASE("a lower configured concurrency is honoured and never exceeded", "[core][loop]") {
  core::LoopOptions options;
  options.max_concurrency = 2;
  Harness h(options, RunnerKind::kCounting);
  h.BindDefaults();
  std::vector<core::ToolCall> calls;
  for (int i = 0; i < 5; ++i) {
    calls.push_back(Call("r" + std::to_string(i), "pulse_read", kReadVm));
  }
  h.provider.Add(ScriptedTurn::Calls(calls));
  h.provider.Add(ScriptedTurn::Text("fine"));
  REQUIRE(h.Run("check").ok());
  CHECK(h.counting_runner.caps() == std::vector<std::size_t>{2});
  CHECK(h.counting_runner.max_in_flight() <= 2);
}

TEST_CASE("a findings read beside lifecycle writes runs sequentially in provider order",
          "[core][loop]") {
  Harness h({}, RunnerKind::kCounting);
  h.BindDefaults();
  // Write before read, as the model sent it: the batch is not reordered.
  h.provider.Add(ScriptedTurn::Calls(
      {Call("f1", "patrol_report_finding",
            R"({"resource_id":"vm:101","category":"capacity","severity":"warning",)"
            R"("title":"Disk high","description":"Disk is 91% full.","evidence":"df: 91%",)"
            R"("recommendation":"Grow it.","key":"disk-high"})"),
       Call("f2", "patrol_get_findings", R"({"resource_id":"vm:101"})"),
       Call("f3", "patrol_assess_finding",
            R"({"finding_id":"f-1","verdict":"present","evidence":"91%"})")}));
  h.provider.Add(ScriptedTurn::Text("Recorded."));
  REQUIRE(
      h.Run("patrol", Policy(ControlLevel::kReadOnly, ExecutionProfile::kPatrolDetection)).ok());
  CHECK(h.counting_runner.caps() == std::vector<std::size_t>{1});
  CHECK(h.counting_runner.start_order() == std::vector<std::size_t>{0, 1, 2});
  CHECK(h.log.Order() == std::vector<std::string>{"patrol_report_finding", "patrol_get_findings",
                                                  "patrol_assess_finding"});
  std::vector<std::string> end_ids;
  for (const rapidjson::Document& d : h.events.DataOf(LoopEventType::kToolEnd)) {
    end_ids.push_back(Str(d, "id"));
  }
  CHECK(end_ids == std::vector<std::string>{"f1", "f2", "f3"});
  std::vector<std::string> result_ids;
  for (const core::Message& m : h.provider.Request(1).messages) {
    if (m.role == core::MessageRole::kTool) {
      result_ids.push_back(m.tool_call_id);
    }
  }
  CHECK(result_ids == std::vector<std::string>{"f1", "f2", "f3"});
}

TEST_CASE("independent lifecycle writes without a findings read stay parallel", "[core][loop]") {
  Harness h({}, RunnerKind::kCounting);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls(
      {Call("a1", "patrol_assess_finding",
            R"({"finding_id":"f-1","verdict":"present","evidence":"91%"})"),
       Call("a2", "patrol_assess_finding",
            R"({"finding_id":"f-2","verdict":"uncertain","evidence":"n/a"})")}));
  h.provider.Add(ScriptedTurn::Text("Assessed."));
  REQUIRE(
      h.Run("patrol", Policy(ControlLevel::kReadOnly, ExecutionProfile::kPatrolDetection)).ok());
  CHECK(h.counting_runner.caps() == std::vector<std::size_t>{2});
}

TEST_CASE("pulse_question runs alone: its siblings are skipped and the run waits for the user",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_read", kReadVm),
       Call("c2", "pulse_question", R"({"question":" Which VM? ","options":["vm:101","vm:102"]})"),
       Call("c3", "pulse_query", kQueryVm)}));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart the web vm");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAwaitingInput);
  CHECK(h.provider.RequestCount() == 1);
  CHECK(h.log.Total() == 0);

  const std::vector<std::string> types = h.events.Types();
  REQUIRE(types.size() >= 4);
  CHECK(types[types.size() - 1] == "done");
  CHECK(types[types.size() - 2] == "question");
  CHECK(types[types.size() - 3] == "workflow_state");
  CHECK(types[types.size() - 4] == "tool_end");
  const rapidjson::Document question = FirstEvent(h.events, LoopEventType::kQuestion);
  CHECK(Str(question, "session_id") == "ses_test");
  CHECK_FALSE(Str(question, "question_id").empty());
  const rapidjson::Value* asked = core::GetMember(question, "question");
  REQUIRE(asked != nullptr);
  CHECK(Str(*asked, "question") == "Which VM?");
  CHECK((*asked)["options"].Size() == 2);

  const core::SessionRecord session = h.Session();
  CHECK(session.status == core::SessionStatus::kAwaitingInput);
  const std::vector<core::Message>& t = session.transcript;
  REQUIRE(t.size() == 5);
  CHECK(t[2].tool_call_id == "c1");
  CHECK(t[2].content.find("SKIPPED") != std::string::npos);
  CHECK(t[3].tool_call_id == "c2");
  CHECK(t[3].content.find("\"asked\"") != std::string::npos);
  CHECK(t[4].content.find("SKIPPED") != std::string::npos);

  // The answer is the next user message; the run continues from there.
  h.provider.Add(ScriptedTurn::Text("Restarting vm:101 needs approval; shall I plan it?"));
  absl::StatusOr<core::RunOutcome> next = h.Run("vm:101");
  REQUIRE(next.ok());
  CHECK(next->end == RunEnd::kAnswered);
  const core::LlmRequest second = h.provider.Request(1);
  CHECK(second.messages.back().role == core::MessageRole::kUser);
  CHECK(second.messages.back().content == "vm:101");
  CHECK(h.Session().status == core::SessionStatus::kIdle);
}

TEST_CASE("a question in a Patrol run is refused and its siblings still run", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "pulse_question", R"({"question":"Which VM?"})"),
                                      Call("c2", "patrol_get_findings", R"({})")}));
  h.provider.Add(ScriptedTurn::Text("No findings."));
  absl::StatusOr<core::RunOutcome> out =
      h.Run("patrol", Policy(ControlLevel::kReadOnly, ExecutionProfile::kPatrolDetection));
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(CodeFor(h.provider.Request(1), "c1") == "TOOL_NOT_ADVERTISED");
  CHECK(h.log.Count(core::kToolPatrolGetFindings) == 1);
  CHECK(h.events.Count(LoopEventType::kQuestion) == 0);
}

TEST_CASE("tool events follow provider order: start and progress before end", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_query", kQueryVm), Call("c2", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Text("Found it."));
  REQUIRE(h.Run("find web").ok());
  std::vector<std::string> sequence;
  for (const core::LoopEvent& e : h.events.events()) {
    if (e.type == LoopEventType::kToolStart || e.type == LoopEventType::kToolProgress ||
        e.type == LoopEventType::kToolEnd) {
      const rapidjson::Document d = Parse(e.data_json);
      sequence.push_back(std::string(core::ToString(e.type)) + ":" + Str(d, "id"));
    }
  }
  // c1 runs; c2 (a write in RESOLVING) is blocked and gets its start and end in phase 3.
  CHECK(sequence == std::vector<std::string>{"tool_start:c1", "tool_progress:c1", "tool_end:c1",
                                             "tool_start:c2", "tool_end:c2"});
}

}  // namespace
}  // namespace pulse::testing::loop
