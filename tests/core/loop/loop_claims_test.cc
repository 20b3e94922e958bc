// Refused claims (issue 20 item 1): a final answer refused while a change is unverified is
// never streamed and is kept only as a typed refused_claim entry; text beside tool calls while
// verifying is held until the turn's calls ran and the change is verified, else it becomes a
// refused_claim too. The model still sees its own words, then the verification instruction.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loop_test_support.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/core/loop/session_record_json.h"
#include "pulse/core/loop/transcript.h"

namespace pulse::testing::loop {
namespace {

using core::LoopEventType;
using core::Message;
using core::MessageRole;
using core::RunEnd;
using core::SessionState;

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";
constexpr const char* kQueryVm = R"({"action":"get","resource_id":"vm:101"})";
constexpr const char* kRestartWeb = R"({"op":"restart","target":"web"})";

int CountRole(const std::vector<Message>& transcript, MessageRole role, std::string_view text) {
  int n = 0;
  for (const Message& m : transcript) {
    n += m.role == role && m.content == text ? 1 : 0;
  }
  return n;
}

TEST_CASE("a refused final answer is stored as a refused_claim, never as an assistant message",
          "[core][loop][claims]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Text("Restarted successfully."));
  h.provider.Add(ScriptedTurn::Text("It is definitely fixed."));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web is running again."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  const std::vector<Message> transcript = h.Session().transcript;
  for (const char* claim : {"Restarted successfully.", "It is definitely fixed."}) {
    CHECK(CountRole(transcript, MessageRole::kAssistant, claim) == 0);
    CHECK(CountRole(transcript, MessageRole::kRefusedClaim, claim) == 1);
    CHECK(h.events.ContentText().find(claim) == std::string::npos);
  }
  CHECK(CountRole(transcript, MessageRole::kAssistant, "web is running again.") == 1);
  // The model saw each refused claim as its own text, then the user-role instruction.
  const core::LlmRequest second_refusal = h.provider.Request(4);
  const std::vector<Message>& m = second_refusal.messages;
  REQUIRE(m.size() >= 4);
  CHECK(m.back().role == MessageRole::kUser);
  CHECK(m[m.size() - 2].role == MessageRole::kAssistant);
  CHECK(m[m.size() - 2].content == "It is definitely fixed.");
  for (const core::LlmRequest& r : h.provider.Requests()) {
    for (const Message& sent : r.messages) {
      CHECK(sent.role != MessageRole::kRefusedClaim);
    }
  }
  // The stored record round-trips with its typed entries.
  absl::StatusOr<core::SessionRecord> back =
      core::SessionRecordFromJson(core::SessionRecordToJson(h.Session()));
  REQUIRE(back.ok());
  CHECK(back->transcript == transcript);
}

TEST_CASE("text beside a refused write while verifying is held and becomes a refused_claim",
          "[core][loop][claims]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  // A claim beside a second write: the FSM blocks the write, so nothing of the turn ran.
  h.provider.Add(ScriptedTurn::Calls({Call("w2", "svc_ops", R"({"op":"restart","target":"db"})")},
                                     "web is fixed; restarting db too."));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web is running again."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(CodeFor(h.provider.Request(3), "w2") == "FSM_BLOCKED");
  CHECK(h.events.ContentText().find("web is fixed") == std::string::npos);
  const std::vector<Message> transcript = h.Session().transcript;
  CHECK(CountRole(transcript, MessageRole::kRefusedClaim, "web is fixed; restarting db too.") == 1);
  for (std::size_t i = 0; i < transcript.size(); ++i) {
    if (transcript[i].role == MessageRole::kRefusedClaim) {
      // Just before the assistant message whose text it was, which now has none.
      REQUIRE(i + 1 < transcript.size());
      CHECK(transcript[i + 1].role == MessageRole::kAssistant);
      CHECK(transcript[i + 1].content.empty());
      REQUIRE(transcript[i + 1].tool_calls.size() == 1);
      CHECK(transcript[i + 1].tool_calls[0].id == "w2");
    }
  }
  // The model's view is unchanged: its text with its call, then the call's refusal.
  bool seen = false;
  for (const Message& sent : h.provider.Request(3).messages) {
    if (sent.role == MessageRole::kAssistant && !sent.tool_calls.empty() &&
        sent.tool_calls[0].id == "w2") {
      seen = sent.content == "web is fixed; restarting db too.";
    }
  }
  CHECK(seen);
}

TEST_CASE("text beside a verifying read is released after the read verified the change",
          "[core][loop][claims]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(
      ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}, "Checking that web came back."));
  h.provider.Add(ScriptedTurn::Text("web is running again."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  const std::vector<std::string> types = h.events.Types();
  const std::vector<rapidjson::Document> contents = h.events.DataOf(LoopEventType::kContent);
  REQUIRE(contents.size() == 2);
  CHECK(Str(contents[0], "text") == "Checking that web came back.");
  // The content event comes after the read's tool_end.
  std::size_t last_tool_end = 0;
  std::size_t first_content = 0;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "tool_end") {
      last_tool_end = i;
    }
    if (types[i] == "content" && first_content == 0) {
      first_content = i;
    }
  }
  CHECK(first_content > last_tool_end);
  CHECK(CountRole(h.Session().transcript, MessageRole::kRefusedClaim,
                  "Checking that web came back.") == 0);
}

TEST_CASE("text beside a read that leaves the change unverified is not released",
          "[core][loop][claims]") {
  Harness h;
  h.BindDefaults({std::string(core::kToolPulseRead)});
  h.Bind(core::kToolPulseRead, [](const rapidjson::Value&) {
    core::ToolError error;
    error.code = core::ToolErrorCode::kExecutionFailed;
    error.message = "agent offline";
    error.failed = true;
    return core::ToolResult::Failure(std::move(error));
  });
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("w1", "svc_ops", kRestartWeb)}));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}, "All good now."));
  h.provider.Add(ScriptedTurn::Text("I could not verify the restart."));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web");
  REQUIRE(out.ok());
  CHECK(h.events.ContentText().find("All good now.") == std::string::npos);
  CHECK(CountRole(h.Session().transcript, MessageRole::kRefusedClaim, "All good now.") == 1);
}

TEST_CASE("the provider view turns refused claims back into the model's text",
          "[core][loop][claims]") {
  core::ToolCall call{"c1", "svc_ops", R"({"op":"restart","target":"db"})"};
  const std::vector<Message> transcript = {
      Message::User("restart web"),
      Message::RefusedClaim("held beside a call"),
      Message::Assistant("", {call}),
      Message::ToolResult("c1", "svc_ops", R"({"error":{"code":"FSM_BLOCKED"}})", true),
      Message::RefusedClaim("it is fixed"),
      Message::User("Verification required"),
      Message::RefusedClaim("   "),
  };
  const std::vector<Message> view = core::RefusedClaimsAsAssistantText(transcript);
  REQUIRE(view.size() == 5);
  CHECK(view[1].role == MessageRole::kAssistant);
  CHECK(view[1].content == "held beside a call");
  CHECK(view[1].tool_calls.size() == 1);
  CHECK(view[2].role == MessageRole::kTool);
  CHECK(view[3] == Message::Assistant("it is fixed"));
  CHECK(view[4].role == MessageRole::kUser);
  // Not a final answer: only assistant text counts.
  CHECK_FALSE(core::HasFinalText({Message::User("hi"), Message::RefusedClaim("fixed")}));
}

TEST_CASE("the session codec keeps refused claims typed and refuses malformed ones",
          "[core][loop][claims]") {
  core::SessionRecord record;
  record.id = "ses_a";
  record.transcript = {Message::User("restart web"), Message::RefusedClaim("it is fixed")};
  const std::string json = core::SessionRecordToJson(record);
  CHECK(json.find(R"("role":"refused_claim")") != std::string::npos);
  absl::StatusOr<core::SessionRecord> back = core::SessionRecordFromJson(json);
  REQUIRE(back.ok());
  CHECK(back->transcript == record.transcript);
  CHECK(core::ValidateSessionRecord(record).ok());

  auto rejected = [&](const std::string& from, const std::string& to) {
    std::string bad = json;
    const std::size_t at = bad.find(from);
    REQUIRE(at != std::string::npos);
    bad.replace(at, from.size(), to);
    absl::StatusOr<core::SessionRecord> parsed = core::SessionRecordFromJson(bad);
    INFO(bad);
    CHECK(absl::IsInvalidArgument(parsed.status()));
  };
  rejected(R"("content":"it is fixed")", R"("content":"it is fixed","tool_call_id":"c1")");
  rejected(R"("content":"it is fixed")", R"("content":"it is fixed","tool_name":"svc_ops")");
  rejected(R"("content":"it is fixed","is_error":false)", R"("content":"x","is_error":true)");
  rejected(R"("content":"it is fixed")",
           R"("content":"it is fixed","tool_calls":[{"id":"c1","name":"svc_ops"}])");
  rejected(R"("content":"it is fixed",)", "");
  core::SessionRecord invalid = record;
  invalid.transcript[1].tool_name = "svc_ops";
  CHECK(absl::IsInvalidArgument(core::ValidateSessionRecord(invalid)));
}

}  // namespace
}  // namespace pulse::testing::loop
