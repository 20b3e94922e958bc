#include "pulse/core/fsm/batch_gate.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fsm_test_support.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/testing/fake_clock.h"

namespace {

using namespace pulse::testing::fsm;  // NOLINT(google-build-using-namespace): shared fixtures

using pulse::core::BatchCall;
using pulse::core::BatchGate;
using pulse::core::InvocationClass;
using pulse::core::kFsmReasonNoValidatedTarget;
using pulse::core::kFsmReasonWriteUnverified;
using pulse::core::MutationTarget;
using pulse::core::SessionFsm;
using pulse::core::SessionSnapshot;
using pulse::core::SessionState;
using pulse::core::ToolKind;
using pulse::testing::FakeClock;

BatchCall Query() { return {"pulse_query", kResolveCall}; }
BatchCall Read() { return {"pulse_read", kReadCall}; }
BatchCall Control() { return {"pulse_control", kInfraWrite}; }
BatchCall FileEdit() { return {"pulse_file_edit", kInfraWrite}; }
BatchCall Report() { return {"patrol_report_finding", kFindingWrite}; }
BatchCall Ask() { return {"pulse_question", kQuestion}; }

std::vector<bool> AllowedPattern(const BatchGate& gate) {
  std::vector<bool> allowed;
  for (std::size_t i = 0; i < gate.Calls().size(); ++i) {
    allowed.push_back(gate.Allowed(i));
  }
  return allowed;
}

TEST_CASE("an empty batch admits nothing and changes nothing", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const SessionSnapshot before = fsm.Snapshot();
  const BatchGate gate = BatchGate::Admit(fsm, {});
  CHECK(gate.Verdicts().empty());
  CHECK_FALSE(gate.AdmittedWrite());
  CHECK_FALSE(gate.Allowed(0));
  CHECK(fsm.Snapshot() == before);
}

TEST_CASE("a single call is judged exactly as CanExecute judges it", "[core][fsm]") {
  FakeClock clock;
  const std::vector<SessionFsm> sessions = {SessionFsm(clock), Reading(clock), Verifying(clock)};
  for (const BatchCall& call : {Query(), Read(), Control(), Report(), Ask()}) {
    for (const SessionFsm& session : sessions) {
      SessionFsm via_gate = session;
      SessionFsm direct = session;
      const BatchGate gate = BatchGate::Admit(via_gate, {call});
      REQUIRE(gate.Verdicts().size() == 1);
      CHECK(gate.Verdicts()[0] == direct.CanExecute(call.invocation, call.tool));
      CHECK(via_gate.Snapshot() == direct.Snapshot());
    }
  }
}

TEST_CASE("two infrastructure writes in one READING turn: only the first passes", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Control(), FileEdit()});
  CHECK(gate.Allowed(0));
  REQUIRE_FALSE(gate.Allowed(1));
  const auto& blocked = *gate.Verdicts()[1];
  CHECK(blocked.state == SessionState::kVerifying);
  CHECK(blocked.tool == "pulse_file_edit");
  CHECK(blocked.kind == ToolKind::kWrite);
  CHECK(blocked.reason == kFsmReasonWriteUnverified);
  CHECK(blocked.recoverable);
  CHECK(gate.AdmittedWrite());
  // Admission simulates; the session itself only counts the block.
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 1);
}

TEST_CASE("read then write in RESOLVING blocks the write because the read has not run",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Query(), Control()});
  CHECK(AllowedPattern(gate) == std::vector<bool>{true, false});
  CHECK(gate.Verdicts()[1]->state == SessionState::kResolving);
  CHECK(gate.Verdicts()[1]->reason == kFsmReasonNoValidatedTarget);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
  CHECK(fsm.State() == SessionState::kResolving);
}

TEST_CASE("read then write in VERIFYING blocks the write", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Read(), Control()});
  CHECK(AllowedPattern(gate) == std::vector<bool>{true, false});
  CHECK(gate.Verdicts()[1]->reason == kFsmReasonWriteUnverified);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 1);
  // The read does verify the earlier write once it has run, so the next turn may write.
  REQUIRE(gate.OnSucceeded(0, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
  CHECK_FALSE(fsm.CanExecute(kInfraWrite, "pulse_control").has_value());
}

TEST_CASE("READING write-read-write blocks only the second write", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Control(), Read(), FileEdit()});
  CHECK(AllowedPattern(gate) == std::vector<bool>{true, true, false});
  CHECK(gate.Verdicts()[2]->reason == kFsmReasonWriteUnverified);
}

TEST_CASE("every write of a VERIFYING turn is blocked and counted", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Control(), FileEdit(), Control()});
  CHECK(AllowedPattern(gate) == std::vector<bool>{false, false, false});
  CHECK(fsm.ConsecutiveVerifyBlocks() == 3);
  CHECK_FALSE(gate.AdmittedWrite());
}

TEST_CASE("every write of a RESOLVING turn is blocked without counting", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Control(), Read(), FileEdit()});
  CHECK(AllowedPattern(gate) == std::vector<bool>{false, true, false});
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
}

TEST_CASE("admission changes nothing in the session but the blocked-write counter", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  SessionSnapshot expected = fsm.Snapshot();
  const BatchGate gate =
      BatchGate::Admit(fsm, {Query(), Control(), Read(), Report(), Ask(), FileEdit(), Control()});
  expected.consecutive_verify_blocks = 2;
  CHECK(fsm.Snapshot() == expected);
  CHECK(AllowedPattern(gate) == std::vector<bool>{true, true, true, true, true, false, false});
}

TEST_CASE("write then read are both admitted and the read does not verify the write",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Control(), Read()});
  REQUIRE(AllowedPattern(gate) == std::vector<bool>{true, true});
  REQUIRE(gate.OnSucceeded(0, /*mutation_dispatched=*/true).ok());
  clock.Advance(absl::Seconds(1));
  REQUIRE(gate.OnSucceeded(1, false).ok());
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.LastReadTool() == "pulse_read");
  CHECK(fsm.LastReadAt() == clock.Now());
  CHECK(fsm.CanFinalAnswer().has_value());
  // A read in the next turn is evidence.
  BatchGate next = BatchGate::Admit(fsm, {Read()});
  REQUIRE(next.OnSucceeded(0, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE(
    "the single-call loop API would take a parallel read as evidence, so a turn must go "
    "through BatchGate",
    "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  fsm.OnToolSucceeded(kInfraWrite, "pulse_control", true);
  fsm.OnToolSucceeded(kReadCall, "pulse_read", false);
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("no read of a turn with an admitted write is evidence, whatever the report order",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Read(), Query(), Control()});
  REQUIRE(AllowedPattern(gate) == std::vector<bool>{true, true, true});
  REQUIRE(gate.OnSucceeded(2, true).ok());
  REQUIRE(gate.OnSucceeded(1, false).ok());
  REQUIRE(gate.OnSucceeded(0, false).ok());
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK_FALSE(fsm.ReadAfterWrite());
  CHECK(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("reads of a VERIFYING turn without a write complete verification", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Read(), Query()});
  REQUIRE(gate.OnSucceeded(1, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
  REQUIRE(gate.OnSucceeded(0, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.WroteThisEpisode());
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("a read of a RESOLVING turn establishes the target once it has run", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Query(), Control()});
  REQUIRE(gate.OnSucceeded(0, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
  CHECK_FALSE(BatchGate::Admit(fsm, {Control()}).Verdicts()[0].has_value());
}

TEST_CASE("a finding-lifecycle write in VERIFYING is admitted and leaves the state unchanged",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const SessionSnapshot before = fsm.Snapshot();
  BatchGate gate = BatchGate::Admit(fsm, {Report()});
  REQUIRE(gate.Allowed(0));
  CHECK_FALSE(gate.AdmittedWrite());
  REQUIRE(gate.OnSucceeded(0, true).ok());
  CHECK(fsm.Snapshot() == before);
  CHECK(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("finding-lifecycle writes and questions never take the turn's write slot",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Report(), Ask(), Report(), Control(), Report()});
  CHECK(AllowedPattern(gate) == std::vector<bool>{true, true, true, true, true});
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
}

TEST_CASE("a finding-lifecycle write does not make a parallel read non-evidence", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Report(), Read()});
  REQUIRE(gate.OnSucceeded(0, true).ok());
  REQUIRE(gate.OnSucceeded(1, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
}

TEST_CASE("a write that was not dispatched changes nothing", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Control()});
  const SessionSnapshot before = fsm.Snapshot();
  clock.Advance(absl::Seconds(1));
  REQUIRE(gate.OnSucceeded(0, /*mutation_dispatched=*/false).ok());
  CHECK(fsm.Snapshot() == before);
  CHECK_FALSE(BatchGate::Admit(fsm, {Control()}).Verdicts()[0].has_value());
}

TEST_CASE("admission holds the write slot even if the admitted write is never dispatched",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Control(), FileEdit()});
  REQUIRE(gate.OnSucceeded(0, false).ok());
  CHECK_FALSE(gate.Allowed(1));
  CHECK(fsm.State() == SessionState::kReading);
}

TEST_CASE(
    "post-processing refuses blocked, unknown and repeated calls without changing the "
    "session",
    "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Control(), FileEdit()});
  const SessionSnapshot before = fsm.Snapshot();
  CHECK(gate.OnSucceeded(1, true).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(gate.OnSucceeded(2, true).code() == absl::StatusCode::kInvalidArgument);
  CHECK(gate.OnSelfVerified(7).code() == absl::StatusCode::kInvalidArgument);
  CHECK(fsm.Snapshot() == before);
  REQUIRE(gate.OnSucceeded(0, true).ok());
  const SessionSnapshot after = fsm.Snapshot();
  CHECK(gate.OnSucceeded(0, true).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(fsm.Snapshot() == after);
}

TEST_CASE("self-verification of the turn's dispatched write verifies it", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  BatchGate gate = BatchGate::Admit(fsm, {Control(), Read()});
  REQUIRE(gate.OnSucceeded(0, true).ok());
  REQUIRE(gate.OnSucceeded(1, false).ok());
  REQUIRE(fsm.CanFinalAnswer().has_value());
  REQUIRE(gate.OnSelfVerified(0).ok());
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.WroteThisEpisode());
  CHECK(fsm.LastReadTool() == "self_verify");
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
  CHECK(gate.OnSelfVerified(0).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("self-verification is refused for anything but a dispatched infrastructure write",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  BatchGate verifying_turn = BatchGate::Admit(fsm, {Report(), Ask()});
  REQUIRE(verifying_turn.OnSucceeded(0, true).ok());
  REQUIRE(verifying_turn.OnSucceeded(1, false).ok());
  const SessionSnapshot before = fsm.Snapshot();
  // A finding-lifecycle write carrying verification.ok must not satisfy the earlier write.
  CHECK(verifying_turn.OnSelfVerified(0).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(verifying_turn.OnSelfVerified(1).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(fsm.Snapshot() == before);
  CHECK(fsm.CanFinalAnswer().has_value());

  SessionFsm reading = Reading(clock);
  BatchGate reading_turn = BatchGate::Admit(reading, {Control(), Read(), FileEdit()});
  const SessionSnapshot start = reading.Snapshot();
  CHECK(reading_turn.OnSelfVerified(0).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(reading_turn.OnSelfVerified(2).code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(reading_turn.OnSucceeded(0, /*mutation_dispatched=*/false).ok());
  CHECK(reading_turn.OnSelfVerified(0).code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(reading_turn.OnSucceeded(1, false).ok());
  CHECK(reading_turn.OnSelfVerified(1).code() == absl::StatusCode::kFailedPrecondition);
  SessionSnapshot expected = start;
  expected.last_read_tool = "pulse_read";
  CHECK(reading.Snapshot() == expected);
}

TEST_CASE("a session writes once per verified cycle across turns", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  BatchGate turn1 = BatchGate::Admit(fsm, {Query(), Control()});
  REQUIRE(AllowedPattern(turn1) == std::vector<bool>{true, false});
  REQUIRE(turn1.OnSucceeded(0, false).ok());

  BatchGate turn2 = BatchGate::Admit(fsm, {Control(), FileEdit()});
  REQUIRE(AllowedPattern(turn2) == std::vector<bool>{true, false});
  REQUIRE(turn2.OnSucceeded(0, true).ok());
  CHECK(fsm.CanFinalAnswer().has_value());

  BatchGate turn3 = BatchGate::Admit(fsm, {Read(), FileEdit()});
  REQUIRE(AllowedPattern(turn3) == std::vector<bool>{true, false});
  REQUIRE(turn3.OnSucceeded(0, false).ok());
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.ConsecutiveVerifyBlocks() == 0);

  BatchGate turn4 = BatchGate::Admit(fsm, {FileEdit()});
  CHECK(turn4.Allowed(0));
}

TEST_CASE("a blocked batch verdict renders as an FSM_BLOCKED tool error", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  const BatchGate gate = BatchGate::Admit(fsm, {Control(), FileEdit()});
  REQUIRE(gate.Verdicts()[1].has_value());
  const auto error = gate.Verdicts()[1]->ToToolError();
  CHECK(error.code == pulse::core::ToolErrorCode::kFsmBlocked);
  CHECK(error.blocked);
  CHECK(error.message == "FSM blocked tool 'pulse_file_edit' (write) in state VERIFYING: " +
                             std::string(kFsmReasonWriteUnverified));
}

}  // namespace
