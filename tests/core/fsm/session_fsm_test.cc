// The raw session state machine (docs/architecture.md "The session state machine"): vocabulary, the
// write gate, error rendering, transitions, the final-answer gate, verification and resets.
#include "pulse/core/fsm/session_fsm.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "fsm_test_support.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/testing/fake_clock.h"
#include "rapidjson/document.h"

namespace {

using namespace pulse::testing::fsm;  // NOLINT(google-build-using-namespace): shared fixtures

using pulse::core::FsmBlockedError;
using pulse::core::kFsmReasonAnswerUnverified;
using pulse::core::kFsmReasonNoValidatedTarget;
using pulse::core::kFsmReasonWriteUnverified;
using pulse::core::ParseSessionState;
using pulse::core::SessionFsm;
using pulse::core::SessionSnapshot;
using pulse::core::SessionState;
using pulse::core::ToolError;
using pulse::core::ToolErrorCode;
using pulse::core::ToolKind;
using pulse::testing::FakeClock;

constexpr ToolKind kAllKinds[] = {ToolKind::kResolve, ToolKind::kRead, ToolKind::kWrite,
                                  ToolKind::kUserInput};

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.IsObject());
  return doc;
}

TEST_CASE("session states render and parse as their exact wire strings", "[core][fsm]") {
  const std::vector<std::pair<SessionState, std::string_view>> table = {
      {SessionState::kResolving, "RESOLVING"},
      {SessionState::kReading, "READING"},
      {SessionState::kWriting, "WRITING"},
      {SessionState::kVerifying, "VERIFYING"},
  };
  for (const auto& [state, wire] : table) {
    CHECK(pulse::core::ToString(state) == wire);
    CHECK(ParseSessionState(wire) == state);
  }
  for (std::string_view bad :
       {"", "reading", "Reading", " READING", "READING ", "UNKNOWN", "VERIFIED", "resolving"}) {
    CHECK_FALSE(ParseSessionState(bad).has_value());
  }
}

TEST_CASE("a new session starts in RESOLVING with nothing recorded", "[core][fsm]") {
  FakeClock clock;
  const SessionFsm fsm(clock);
  CHECK(fsm.State() == SessionState::kResolving);
  CHECK_FALSE(fsm.WroteThisEpisode());
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
  CHECK(fsm.LastWriteTool().empty());
  CHECK_FALSE(fsm.LastWriteAt().has_value());
  CHECK(fsm.LastReadTool().empty());
  CHECK_FALSE(fsm.LastReadAt().has_value());
  CHECK(fsm.PendingRecoveryCount() == 0);
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("block reasons are the exact reference texts", "[core][fsm]") {
  CHECK(kFsmReasonNoValidatedTarget == kR1);
  CHECK(kFsmReasonWriteUnverified == kR2);
  CHECK(kFsmReasonAnswerUnverified == kR3);
}

TEST_CASE("block reasons carry POLICY_BLOCKED and never dictate the next tool", "[core][fsm]") {
  for (std::string_view reason :
       {kFsmReasonNoValidatedTarget, kFsmReasonWriteUnverified, kFsmReasonAnswerUnverified}) {
    CHECK(reason.find("POLICY_BLOCKED") != std::string_view::npos);
    for (std::string_view forbidden :
         {"Call pulse_query", "Call pulse_read", "pulse_query first", "pulse_read NEXT",
          "required next tool", "Discover \xE2\x86\x92 Investigate \xE2\x86\x92 Act"}) {
      CHECK(reason.find(forbidden) == std::string_view::npos);
    }
  }
}

TEST_CASE("a write in RESOLVING is blocked with R1 and leaves the counter unchanged",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  CHECK(blocked->state == SessionState::kResolving);
  CHECK(blocked->tool == "pulse_control");
  CHECK(blocked->kind == ToolKind::kWrite);
  CHECK(blocked->reason == kR1);
  CHECK(blocked->recoverable);
  CHECK(fsm.State() == SessionState::kResolving);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
}

TEST_CASE("100 blocked writes in RESOLVING never touch the counter", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  }
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
  CHECK(fsm.State() == SessionState::kResolving);
}

TEST_CASE("a write in READING is allowed and changes nothing", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  const SessionSnapshot before = fsm.Snapshot();
  CHECK_FALSE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  CHECK(fsm.Snapshot() == before);
}

TEST_CASE("a write in VERIFYING is blocked with R2 and counted", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_file_edit");
  REQUIRE(blocked.has_value());
  CHECK(blocked->state == SessionState::kVerifying);
  CHECK(blocked->tool == "pulse_file_edit");
  CHECK(blocked->kind == ToolKind::kWrite);
  CHECK(blocked->reason == kR2);
  CHECK(blocked->recoverable);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 1);
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK_FALSE(fsm.ReadAfterWrite());
}

TEST_CASE("100 consecutive blocked writes in VERIFYING stay blocked and the counter reaches 100",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  for (int i = 1; i <= 100; ++i) {
    const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
    REQUIRE(blocked.has_value());
    REQUIRE(blocked->reason == kR2);
    REQUIRE(fsm.ConsecutiveVerifyBlocks() == i);
  }
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("at the raw level a read does not lift the VERIFYING block", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  fsm.OnToolSuccess(ToolKind::kRead, "pulse_read");
  REQUIRE(fsm.ReadAfterWrite());
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  CHECK(blocked->reason == kR2);
  fsm.CompleteVerification();
  CHECK_FALSE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
}

TEST_CASE("reads, resolves and questions are allowed in every reachable state", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  SessionFsm reading = Reading(clock);
  SessionFsm verifying = Verifying(clock);
  SessionFsm verified = Verifying(clock);
  verified.OnToolSuccess(ToolKind::kRead, "pulse_read");
  for (SessionFsm* fsm : {&resolving, &reading, &verifying, &verified}) {
    const SessionSnapshot before = fsm->Snapshot();
    for (ToolKind kind : {ToolKind::kResolve, ToolKind::kRead, ToolKind::kUserInput}) {
      CHECK_FALSE(fsm->CanExecuteTool(kind, "any_tool").has_value());
    }
    CHECK(fsm->Snapshot() == before);
  }
}

TEST_CASE("a tool kind outside the enum is gated and recorded as a write", "[core][fsm]") {
  FakeClock clock;
  const auto unknown = static_cast<ToolKind>(99);
  SessionFsm fsm(clock);
  const auto blocked = fsm.CanExecuteTool(unknown, "mystery");
  REQUIRE(blocked.has_value());
  CHECK(blocked->kind == ToolKind::kWrite);
  CHECK(blocked->reason == kR1);
  SessionFsm reading = Reading(clock);
  reading.OnToolSuccess(unknown, "mystery");
  CHECK(reading.State() == SessionState::kVerifying);
  CHECK(reading.LastWriteTool() == "mystery");
}

TEST_CASE("a tool block renders the reference error text", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  CHECK(blocked->Message() ==
        "FSM blocked tool 'pulse_control' (write) in state RESOLVING: " + std::string(kR1));
}

TEST_CASE("a final-answer block renders without a tool", "[core][fsm]") {
  FakeClock clock;
  const SessionFsm fsm = Verifying(clock);
  const auto blocked = fsm.CanFinalAnswer();
  REQUIRE(blocked.has_value());
  CHECK(blocked->Message() == "FSM blocked in state VERIFYING: " + std::string(kR3));
}

TEST_CASE("every tool kind renders its wire string in the error text", "[core][fsm]") {
  const FsmBlockedError error{SessionState::kReading, "t", ToolKind::kUserInput, "why", true};
  CHECK(error.Message() == "FSM blocked tool 't' (user_input) in state READING: why");
}

TEST_CASE("a tool block converts to an FSM_BLOCKED tool error with every detail", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  const ToolError error = blocked->ToToolError();
  CHECK(error.code == ToolErrorCode::kFsmBlocked);
  CHECK(error.message == blocked->Message());
  CHECK(error.blocked);
  CHECK_FALSE(error.failed);
  CHECK_FALSE(error.retryable);
  using Detail = pulse::core::ToolErrorDetail;
  const std::vector<std::pair<std::string, Detail>> expected = {
      {"state", Detail(std::string("VERIFYING"))},
      {"tool", Detail(std::string("pulse_control"))},
      {"kind", Detail(std::string("write"))},
      {"reason", Detail(std::string(kR2))},
      {"recoverable", Detail(true)},
  };
  CHECK(error.details == expected);
}

TEST_CASE("a tool block renders as JSON with code FSM_BLOCKED and its details", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  const std::string json = blocked->ToToolError().ToJson();
  const rapidjson::Document doc = ParseJson(json);
  REQUIRE(doc.HasMember("error"));
  const rapidjson::Value& error = doc["error"];
  REQUIRE(error.IsObject());
  CHECK(std::string(error["code"].GetString()) == "FSM_BLOCKED");
  CHECK(std::string(error["message"].GetString()) == blocked->Message());
  CHECK(error["blocked"].GetBool());
  CHECK_FALSE(error.HasMember("retryable"));
  REQUIRE(error.HasMember("details"));
  const rapidjson::Value& details = error["details"];
  CHECK(std::string(details["state"].GetString()) == "RESOLVING");
  CHECK(std::string(details["tool"].GetString()) == "pulse_control");
  CHECK(std::string(details["kind"].GetString()) == "write");
  CHECK(std::string(details["reason"].GetString()) == kR1);
  CHECK(details["recoverable"].IsBool());
  CHECK(details["recoverable"].GetBool());
  // Unlike the reference's plain text, the shared extractor finds the code.
  CHECK(pulse::core::ExtractToolErrorCode(json) == std::optional<std::string>("FSM_BLOCKED"));
}

TEST_CASE("a final-answer block's JSON names the state and omits tool and kind", "[core][fsm]") {
  FakeClock clock;
  const SessionFsm fsm = Verifying(clock);
  const auto blocked = fsm.CanFinalAnswer();
  REQUIRE(blocked.has_value());
  const rapidjson::Document doc = ParseJson(blocked->ToToolError().ToJson());
  const rapidjson::Value& error = doc["error"];
  CHECK(std::string(error["code"].GetString()) == "FSM_BLOCKED");
  const rapidjson::Value& details = error["details"];
  CHECK(std::string(details["state"].GetString()) == "VERIFYING");
  CHECK(std::string(details["reason"].GetString()) == kR3);
  CHECK_FALSE(details.HasMember("tool"));
  CHECK_FALSE(details.HasMember("kind"));
  CHECK(details["recoverable"].GetBool());
}

TEST_CASE("a resolve or read in RESOLVING moves to READING and records the read", "[core][fsm]") {
  for (ToolKind kind : {ToolKind::kResolve, ToolKind::kRead}) {
    FakeClock clock;
    SessionFsm fsm(clock);
    fsm.OnToolSuccess(kind, "pulse_query");
    CHECK(fsm.State() == SessionState::kReading);
    CHECK(fsm.LastReadTool() == "pulse_query");
    CHECK(fsm.LastReadAt() == clock.Now());
    CHECK_FALSE(fsm.WroteThisEpisode());
    CHECK_FALSE(fsm.ReadAfterWrite());
  }
}

TEST_CASE("any number of reads in READING leave the state and WroteThisEpisode alone",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  for (int i = 0; i < 50; ++i) {
    clock.Advance(absl::Seconds(1));
    fsm.OnToolSuccess(i % 2 == 0 ? ToolKind::kRead : ToolKind::kResolve, "pulse_metrics");
  }
  CHECK(fsm.State() == SessionState::kReading);
  CHECK_FALSE(fsm.WroteThisEpisode());
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.LastReadAt() == clock.Now());
}

TEST_CASE("a successful write enters VERIFYING and records the write", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  clock.Advance(absl::Minutes(3));
  fsm.OnToolSuccess(ToolKind::kWrite, "pulse_control");
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK(fsm.WroteThisEpisode());
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.LastWriteTool() == "pulse_control");
  CHECK(fsm.LastWriteAt() == clock.Now());
  CHECK(fsm.LastReadTool() == "pulse_query");
}

TEST_CASE("a write success enters VERIFYING from every state", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  SessionFsm reading = Reading(clock);
  SessionFsm verified = Verifying(clock);
  verified.OnToolSuccess(ToolKind::kRead, "pulse_read");
  for (SessionFsm* fsm : {&resolving, &reading, &verified}) {
    fsm->OnToolSuccess(ToolKind::kWrite, "pulse_control");
    CHECK(fsm->State() == SessionState::kVerifying);
    CHECK(fsm->WroteThisEpisode());
    CHECK_FALSE(fsm->ReadAfterWrite());
  }
}

TEST_CASE("a write success keeps the blocked-write counter", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  fsm.OnToolSuccess(ToolKind::kWrite, "pulse_control");
  CHECK(fsm.ConsecutiveVerifyBlocks() == 2);
}

TEST_CASE("a read in VERIFYING sets read-after-write and zeroes the counter", "[core][fsm]") {
  for (ToolKind kind : {ToolKind::kResolve, ToolKind::kRead}) {
    FakeClock clock;
    SessionFsm fsm = Verifying(clock);
    REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
    REQUIRE(fsm.ConsecutiveVerifyBlocks() == 1);
    clock.Advance(absl::Seconds(5));
    fsm.OnToolSuccess(kind, "pulse_read");
    CHECK(fsm.State() == SessionState::kVerifying);
    CHECK(fsm.ReadAfterWrite());
    CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
    CHECK(fsm.LastReadTool() == "pulse_read");
    CHECK(fsm.LastReadAt() == clock.Now());
  }
}

TEST_CASE("a question never advances state or counts as a read", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  SessionFsm verifying = Verifying(clock);
  for (SessionFsm* fsm : {&resolving, &verifying}) {
    const SessionSnapshot before = fsm->Snapshot();
    clock.Advance(absl::Seconds(1));
    fsm->OnToolSuccess(ToolKind::kUserInput, "pulse_question");
    CHECK(fsm->Snapshot() == before);
  }
  CHECK(verifying.CanFinalAnswer().has_value());
}

TEST_CASE("a final answer is allowed in RESOLVING and READING", "[core][fsm]") {
  FakeClock clock;
  CHECK_FALSE(SessionFsm(clock).CanFinalAnswer().has_value());
  CHECK_FALSE(Reading(clock).CanFinalAnswer().has_value());
}

TEST_CASE("a final answer is refused in VERIFYING before any read with R3", "[core][fsm]") {
  FakeClock clock;
  const SessionFsm fsm = Verifying(clock);
  const auto blocked = fsm.CanFinalAnswer();
  REQUIRE(blocked.has_value());
  CHECK(blocked->state == SessionState::kVerifying);
  CHECK(blocked->tool.empty());
  CHECK(blocked->kind == ToolKind::kResolve);
  CHECK(blocked->reason == kR3);
  CHECK(blocked->recoverable);
}

TEST_CASE("a final answer is allowed in VERIFYING once a read ran", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  fsm.OnToolSuccess(ToolKind::kRead, "pulse_read");
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE(
    "CompleteVerification returns a verified session to READING and keeps "
    "WroteThisEpisode",
    "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  fsm.OnToolSuccess(ToolKind::kRead, "pulse_read");
  fsm.CompleteVerification();
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.WroteThisEpisode());
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
  CHECK(fsm.LastWriteTool() == "pulse_control");
  CHECK(fsm.LastReadTool() == "pulse_read");
  CHECK_FALSE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
}

TEST_CASE("CompleteVerification without a read since the write is a no-op", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  SessionFsm reading = Reading(clock);
  SessionFsm verifying = Verifying(clock);
  REQUIRE(verifying.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  for (SessionFsm* fsm : {&resolving, &reading, &verifying}) {
    const SessionSnapshot before = fsm->Snapshot();
    fsm->CompleteVerification();
    CHECK(fsm->Snapshot() == before);
  }
}

TEST_CASE("Reset returns to RESOLVING and clears every field", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  fsm.OnToolSuccess(ToolKind::kRead, "pulse_read");
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  fsm.Reset();
  CHECK(fsm.Snapshot() == SessionSnapshot{});
  CHECK(fsm.State() == SessionState::kResolving);
  CHECK_FALSE(fsm.LastWriteAt().has_value());
  CHECK_FALSE(fsm.LastReadAt().has_value());
  CHECK(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
}

TEST_CASE("Reset and ResetKeepProgress keep pending recoveries", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const std::string id = fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  fsm.ResetKeepProgress();
  CHECK(fsm.PendingRecoveryCount() == 1);
  fsm.Reset();
  CHECK(fsm.PendingRecoveryCount() == 1);
  const auto found = fsm.CheckRecoverySuccess("pulse_control");
  REQUIRE(found.has_value());
  CHECK(found->recovery_id == id);
}

TEST_CASE("ResetKeepProgress moves VERIFYING to READING and keeps the Last fields", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  fsm.ResetKeepProgress();
  CHECK(fsm.State() == SessionState::kReading);
  CHECK_FALSE(fsm.WroteThisEpisode());
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
  CHECK(fsm.LastWriteTool() == "pulse_control");
  CHECK(fsm.LastWriteAt() == clock.Now());
  CHECK(fsm.LastReadTool() == "pulse_query");
  CHECK(fsm.LastReadAt() == clock.Now());
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("ResetKeepProgress keeps RESOLVING and READING", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  resolving.ResetKeepProgress();
  CHECK(resolving.State() == SessionState::kResolving);
  SessionFsm verified = Verifying(clock);
  verified.OnToolSuccess(ToolKind::kRead, "pulse_read");
  verified.CompleteVerification();
  REQUIRE(verified.WroteThisEpisode());
  verified.ResetKeepProgress();
  CHECK(verified.State() == SessionState::kReading);
  CHECK_FALSE(verified.WroteThisEpisode());
}

TEST_CASE("CanExecuteTool follows the reference table for every kind and state", "[core][fsm]") {
  FakeClock clock;
  struct Row {
    SessionFsm fsm;
    std::string_view blocked_write_reason;  // empty: writes allowed
  };
  std::vector<Row> rows;
  rows.push_back({SessionFsm(clock), kR1});
  rows.push_back({Reading(clock), ""});
  rows.push_back({Verifying(clock), kR2});
  for (Row& row : rows) {
    for (ToolKind kind : kAllKinds) {
      const auto verdict = row.fsm.CanExecuteTool(kind, "t");
      if (kind == ToolKind::kWrite && !row.blocked_write_reason.empty()) {
        REQUIRE(verdict.has_value());
        CHECK(verdict->reason == row.blocked_write_reason);
      } else {
        CHECK_FALSE(verdict.has_value());
      }
    }
  }
}

}  // namespace
