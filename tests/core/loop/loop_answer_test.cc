// Final answers: the verification gate (a user-role instruction, never an assistant prefill),
// the final-text guarantee (summary call, deterministic fallback), the event stream of a plain
// answer, and what a session keeps between runs.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loop_test_support.h"
#include "pulse/core/loop/loop_texts.h"

namespace pulse::testing::loop {
namespace {

using core::LoopEventType;
using core::MessageRole;
using core::RunEnd;
using core::SessionState;

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";
constexpr const char* kQueryVm = R"({"action":"get","resource_id":"vm:101"})";
constexpr const char* kRestartWeb = R"({"op":"restart","target":"web"})";

TEST_CASE("a plain answer streams session, workflow_state, content, done", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("Hello! How can I help?").WithUsage(120, 8));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "Hello! How can I help?");
  CHECK(h.events.Types() ==
        std::vector<std::string>{"session", "workflow_state", "content", "done"});
  const rapidjson::Document done = FirstEvent(h.events, LoopEventType::kDone);
  CHECK(Str(done, "outcome") == "answered");
  CHECK(Str(done, "session_id") == "ses_test");
  CHECK(core::GetInt64(done, "input_tokens") == 120);
  CHECK(core::GetInt64(done, "output_tokens") == 8);
  CHECK(core::GetInt64(done, "provider_calls") == 1);
}

TEST_CASE("write then final answer refused then user-role verification then read then answer",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Text("Restarted successfully."));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web is running again."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "web is running again.");
  CHECK(out->fsm_state == SessionState::kReading);
  REQUIRE(h.provider.RequestCount() == 5);

  // The request after the refused answer: the model's text kept as its own message, then a
  // user-role verification instruction last — never an assistant prefill.
  const core::LlmRequest verify = h.provider.Request(3);
  const std::vector<core::Message>& m = verify.messages;
  REQUIRE(m.size() >= 2);
  CHECK(m.back().role == MessageRole::kUser);
  CHECK(m.back().content.find("Verification required") != std::string::npos);
  CHECK(m.back().content.find("svc_ops") != std::string::npos);
  CHECK(m[m.size() - 2].role == MessageRole::kAssistant);
  CHECK(m[m.size() - 2].content == "Restarted successfully.");
  CHECK_FALSE(verify.tools.empty());
  for (const core::LlmRequest& r : h.provider.Requests()) {
    CHECK(r.messages.back().role != MessageRole::kAssistant);
  }
  // The refused conclusion never reached the user; the verified one did.
  const std::string streamed = h.events.ContentText();
  CHECK(streamed.find("Restarted successfully.") == std::string::npos);
  CHECK(streamed.find("web is running again.") != std::string::npos);
  bool saw_verify = false;
  for (const rapidjson::Document& d : h.events.DataOf(LoopEventType::kWorkflowState)) {
    saw_verify = saw_verify || Str(d, "phase") == "verify";
  }
  CHECK(saw_verify);
}

TEST_CASE("a write whose own result carries verification.ok needs no separate read",
          "[core][loop]") {
  Harness h;
  h.BindDefaults({"svc_ops"});
  h.Bind(kSvcOps, Returns(R"({"status":"restarted","verification":{"ok":true}})"));
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Text("Restarted and self-verified."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.provider.RequestCount() == 3);
  CHECK(out->fsm_state == SessionState::kReading);
}

TEST_CASE("a read beside the write in the same turn does not verify it", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(
      ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb), Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("Done."));
  h.provider.Add(ScriptedTurn::Calls({Call("r2", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("Verified: running."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(h.provider.Request(3).messages.back().role == MessageRole::kUser);
  CHECK(out->final_text == "Verified: running.");
}

TEST_CASE("after tools ran an empty answer gets one tool-free summary call", "[core][loop]") {
  core::LoopOptions options;
  options.summary_max_tokens = 512;
  Harness h(options);
  h.BindDefaults();
  // A preamble before the tools is not a final answer.
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}, "Let me check."));
  h.provider.Add(ScriptedTurn::Text(""));
  h.provider.Add(ScriptedTurn::Text("web-01 is running."));
  absl::StatusOr<core::RunOutcome> out = h.Run("is web-01 up?");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "web-01 is running.");
  REQUIRE(h.provider.RequestCount() == 3);
  const core::LlmRequest summary = h.provider.Request(2);
  CHECK(summary.tools.empty());
  CHECK(summary.tool_choice == core::ToolChoice::kUnset);
  CHECK(summary.max_tokens == 512);
  CHECK(summary.messages.back().role == MessageRole::kUser);
  CHECK(summary.messages.back().content == core::kSummaryInstruction);
  // The persisted transcript ends with the summary, not with the synthetic instruction.
  const core::SessionRecord session = h.Session();
  CHECK(session.transcript.back().role == MessageRole::kAssistant);
  CHECK(session.transcript.back().content == "web-01 is running.");
}

TEST_CASE("when the summary call fails the deterministic fallback names the tools that ran",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("call_abc", "pulse_read", kReadVm),
                                      Call("call_def", "pulse_query", kQueryVm),
                                      Call("call_ghi", "pulse_read", R"({"action":"logs"})")}));
  h.provider.Add(ScriptedTurn::Text(""));
  // The script ends: the summary call fails.
  absl::StatusOr<core::RunOutcome> out = h.Run("check web-01");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFallbackSummary);
  CHECK(out->final_text ==
        "I ran 2 checks (query, read) but the model didn't return a written summary this time. "
        "Ask me again and I'll pull the results together. 1 tool error occurred during the run.");
  CHECK(out->final_text.find("call_") == std::string::npos);
  CHECK(h.events.ContentText() == out->final_text);
  CHECK(h.events.Types().back() == "done");
  CHECK(h.events.Count(LoopEventType::kError) == 0);
}

TEST_CASE("a session keeps its transcript and FSM state between runs", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Text("Found web-01."));
  REQUIRE(h.Run("find web-01").ok());
  core::SessionRecord first = h.Session();
  CHECK(first.fsm.state == "READING");
  CHECK(first.transcript.size() == 4);
  // The next run starts in READING: a write is admitted at once.
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("Restarted and running."));
  absl::StatusOr<core::RunOutcome> out = h.Run("now restart it");
  REQUIRE(out.ok());
  CHECK(h.log.Count(kSvcOps) == 1);
  const core::LlmRequest third = h.provider.Request(2);
  CHECK(third.messages[1].content == "find web-01");  // history sent back
  CHECK(h.Session().transcript.size() == 10);
}

TEST_CASE("a second run of a busy session is refused with done last", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  core::SessionRecord busy;
  busy.id = "ses_busy";
  busy.status = core::SessionStatus::kRunning;
  busy.created_at = h.clock.Now();
  busy.updated_at = h.clock.Now();
  REQUIRE(h.sessions.Create(busy).ok());
  absl::StatusOr<core::RunOutcome> out = h.Run("hi", Policy(), "ses_busy");
  CHECK(absl::IsFailedPrecondition(out.status()));
  CHECK(h.provider.RequestCount() == 0);
  CHECK(h.events.Types() == std::vector<std::string>{"session", "error", "done"});
  // A run abandoned long ago (its process died) may be claimed again.
  h.clock.Advance(absl::Hours(1));
  h.events.Clear();
  h.provider.Add(ScriptedTurn::Text("hello"));
  REQUIRE(h.Run("hi", Policy(), "ses_busy").ok());
}

TEST_CASE("an invalid session id is refused before anything runs", "[core][loop]") {
  Harness h;
  absl::StatusOr<core::RunOutcome> out = h.Run("hi", Policy(), "../etc/passwd");
  CHECK(absl::IsInvalidArgument(out.status()));
  CHECK(h.events.Types() == std::vector<std::string>{"session", "error", "done"});
}

TEST_CASE("an unnamed run creates a session with a fresh id", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("hello"));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi", Policy(), "");
  REQUIRE(out.ok());
  CHECK(out->session_id.rfind("ses_", 0) == 0);
  CHECK(h.sessions.Get(out->session_id).ok());
  const rapidjson::Document session = FirstEvent(h.events, LoopEventType::kSession);
  CHECK(Str(session, "id") == out->session_id);
}

TEST_CASE("a failing session store still ends the stream with exactly one done", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.sessions.FailNext(absl::UnavailableError("disk gone"));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  CHECK(absl::IsUnavailable(out.status()));
  CHECK(h.events.Count(LoopEventType::kDone) == 1);
  CHECK(h.events.Types().back() == "done");
}

}  // namespace
}  // namespace pulse::testing::loop
