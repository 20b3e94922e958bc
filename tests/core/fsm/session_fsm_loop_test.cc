// What the agentic loop and the session store rely on beyond the raw state machine: the
// class-aware entry points (docs/architecture.md "The session state machine"), pending recoveries,
// and snapshots.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fsm_test_support.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/testing/fake_clock.h"

namespace {

using namespace pulse::testing::fsm;  // NOLINT(google-build-using-namespace): shared fixtures

using pulse::core::EffectOf;
using pulse::core::FsmBlockedError;
using pulse::core::FsmEffect;
using pulse::core::InvocationClass;
using pulse::core::kPendingRecoveryTtl;
using pulse::core::MutationTarget;
using pulse::core::PendingRecovery;
using pulse::core::SessionFsm;
using pulse::core::SessionSnapshot;
using pulse::core::SessionState;
using pulse::core::ToolKind;
using pulse::testing::FakeClock;

TEST_CASE("EffectOf maps every invocation class, failing closed on incoherent ones",
          "[core][fsm]") {
  using K = ToolKind;
  using M = MutationTarget;
  const std::vector<std::pair<InvocationClass, FsmEffect>> table = {
      {{K::kResolve, M::kNone}, FsmEffect::kRead},
      {{K::kRead, M::kNone}, FsmEffect::kRead},
      {{K::kWrite, M::kNone}, FsmEffect::kWrite},
      {{K::kUserInput, M::kNone}, FsmEffect::kNone},
      {{K::kResolve, M::kPulseState}, FsmEffect::kNone},
      {{K::kRead, M::kPulseState}, FsmEffect::kNone},
      {{K::kWrite, M::kPulseState}, FsmEffect::kNone},
      {{K::kUserInput, M::kPulseState}, FsmEffect::kNone},
      {{K::kResolve, M::kInfrastructure}, FsmEffect::kWrite},
      {{K::kRead, M::kInfrastructure}, FsmEffect::kWrite},
      {{K::kWrite, M::kInfrastructure}, FsmEffect::kWrite},
      {{K::kUserInput, M::kInfrastructure}, FsmEffect::kWrite},
      {{static_cast<K>(99), M::kNone}, FsmEffect::kWrite},
      {{K::kRead, static_cast<M>(99)}, FsmEffect::kWrite},
  };
  for (const auto& [invocation, effect] : table) {
    CHECK(EffectOf(invocation) == effect);
  }
  CHECK(EffectOf(pulse::core::kFailClosedClass) == FsmEffect::kWrite);
}

TEST_CASE("CanExecute gates an infrastructure write exactly like CanExecuteTool", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  auto blocked = resolving.CanExecute(kInfraWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  CHECK(*blocked == FsmBlockedError{SessionState::kResolving, "pulse_control", ToolKind::kWrite,
                                    std::string(kR1), true});
  SessionFsm verifying = Verifying(clock);
  blocked = verifying.CanExecute(kInfraWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  CHECK(blocked->reason == kR2);
  CHECK(verifying.ConsecutiveVerifyBlocks() == 1);
  SessionFsm reading = Reading(clock);
  CHECK_FALSE(reading.CanExecute(kInfraWrite, "pulse_control").has_value());
}

TEST_CASE("an incoherent class that may touch infrastructure is gated as a write", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const auto blocked =
      fsm.CanExecute({ToolKind::kRead, MutationTarget::kInfrastructure}, "odd_tool");
  REQUIRE(blocked.has_value());
  CHECK(blocked->kind == ToolKind::kWrite);
  CHECK(fsm.CanExecute({ToolKind::kWrite, MutationTarget::kNone}, "odd_tool").has_value());
}

TEST_CASE("a finding-lifecycle write passes the gate in every state without counting",
          "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  SessionFsm reading = Reading(clock);
  SessionFsm verifying = Verifying(clock);
  for (SessionFsm* fsm : {&resolving, &reading, &verifying}) {
    const SessionSnapshot before = fsm->Snapshot();
    CHECK_FALSE(fsm->CanExecute(kFindingWrite, "patrol_report_finding").has_value());
    CHECK(fsm->Snapshot() == before);
  }
}

TEST_CASE("a finding-lifecycle write never enters or satisfies verification", "[core][fsm]") {
  FakeClock clock;
  SessionFsm reading = Reading(clock);
  SessionFsm verifying = Verifying(clock);
  for (SessionFsm* fsm : {&reading, &verifying}) {
    const SessionSnapshot before = fsm->Snapshot();
    clock.Advance(absl::Seconds(1));
    fsm->OnToolSucceeded(kFindingWrite, "patrol_resolve_finding", /*mutation_dispatched=*/true);
    CHECK(fsm->Snapshot() == before);
  }
  CHECK(verifying.CanFinalAnswer().has_value());
  CHECK(verifying.CanExecute(kInfraWrite, "pulse_control").has_value());
}

TEST_CASE("a read that would mutate Pulse state is never verification evidence", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const SessionSnapshot before = fsm.Snapshot();
  const InvocationClass odd{ToolKind::kRead, MutationTarget::kPulseState};
  CHECK_FALSE(fsm.CanExecute(odd, "odd_tool").has_value());
  fsm.OnToolSucceeded(odd, "odd_tool", false);
  CHECK(fsm.Snapshot() == before);
}

TEST_CASE("an infrastructure write that was not dispatched changes nothing", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  const SessionSnapshot before = fsm.Snapshot();
  clock.Advance(absl::Seconds(1));
  fsm.OnToolSucceeded(kInfraWrite, "pulse_control", /*mutation_dispatched=*/false);
  CHECK(fsm.Snapshot() == before);
  CHECK_FALSE(fsm.CanExecute(kInfraWrite, "pulse_control").has_value());
}

TEST_CASE("a dispatched infrastructure write enters VERIFYING", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  fsm.OnToolSucceeded(kInfraWrite, "pulse_control", /*mutation_dispatched=*/true);
  CHECK(fsm.State() == SessionState::kVerifying);
  CHECK(fsm.WroteThisEpisode());
  CHECK(fsm.LastWriteTool() == "pulse_control");
  CHECK(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("a read through the loop API completes verification at once", "[core][fsm]") {
  for (const InvocationClass read : {kReadCall, kResolveCall}) {
    FakeClock clock;
    SessionFsm fsm = Reading(clock);
    fsm.OnToolSucceeded(kInfraWrite, "pulse_control", true);
    REQUIRE(fsm.CanExecute(kInfraWrite, "pulse_control").has_value());
    fsm.OnToolSucceeded(read, "pulse_read", false);
    CHECK(fsm.State() == SessionState::kReading);
    CHECK_FALSE(fsm.ReadAfterWrite());
    CHECK(fsm.ConsecutiveVerifyBlocks() == 0);
    CHECK(fsm.WroteThisEpisode());
    CHECK(fsm.LastReadTool() == "pulse_read");
    CHECK_FALSE(fsm.CanFinalAnswer().has_value());
    CHECK_FALSE(fsm.CanExecute(kInfraWrite, "pulse_control").has_value());
  }
}

TEST_CASE("a read through the loop API in RESOLVING establishes the target", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  fsm.OnToolSucceeded(kResolveCall, "pulse_query", false);
  CHECK(fsm.State() == SessionState::kReading);
}

TEST_CASE("a question through the loop API never advances state", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  SessionFsm verifying = Verifying(clock);
  for (SessionFsm* fsm : {&resolving, &verifying}) {
    const SessionSnapshot before = fsm->Snapshot();
    CHECK_FALSE(fsm->CanExecute(kQuestion, "pulse_question").has_value());
    fsm->OnToolSucceeded(kQuestion, "pulse_question", false);
    CHECK(fsm->Snapshot() == before);
  }
}

TEST_CASE("self-verification completes a write without a separate read", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  fsm.OnToolSucceeded(kInfraWrite, "pulse_control", true);
  clock.Advance(absl::Seconds(2));
  fsm.OnSelfVerified();
  CHECK(fsm.State() == SessionState::kReading);
  CHECK(fsm.WroteThisEpisode());
  CHECK(fsm.LastReadTool() == "self_verify");
  CHECK(fsm.LastReadAt() == clock.Now());
  CHECK_FALSE(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("self-verification outside VERIFYING only records the read", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  fsm.OnSelfVerified();
  CHECK(fsm.State() == SessionState::kReading);
  CHECK_FALSE(fsm.WroteThisEpisode());
  CHECK(fsm.LastReadTool() == "self_verify");
}

TEST_CASE("a target established before the loop moves only RESOLVING to READING", "[core][fsm]") {
  FakeClock clock;
  SessionFsm resolving(clock);
  resolving.OnTargetEstablished();
  CHECK(resolving.State() == SessionState::kReading);
  CHECK(resolving.LastReadTool().empty());
  SessionFsm verifying = Verifying(clock);
  const SessionSnapshot before = verifying.Snapshot();
  verifying.OnTargetEstablished();
  CHECK(verifying.Snapshot() == before);
}

TEST_CASE("TrackPendingRecovery stores an entry under tool-unixnanos", "[core][fsm]") {
  FakeClock clock(absl::FromUnixNanos(1'800'000'000'123'456'789));
  SessionFsm fsm(clock);
  const std::string id = fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  CHECK(id == "pulse_control-1800000000123456789");
  const std::vector<PendingRecovery> live = fsm.PendingRecoveries();
  REQUIRE(live.size() == 1);
  CHECK(live[0] == PendingRecovery{id, "FSM_BLOCKED", "pulse_control", clock.Now(), 1});
  CHECK(fsm.PendingRecoveryCount() == 1);
}

TEST_CASE("recovery ids stay unique while the clock stands still", "[core][fsm]") {
  FakeClock clock(absl::FromUnixNanos(5));
  SessionFsm fsm(clock);
  CHECK(fsm.TrackPendingRecovery("FSM_BLOCKED", "a") == "a-5");
  CHECK(fsm.TrackPendingRecovery("STRICT_RESOLUTION", "a") == "a-5-2");
  CHECK(fsm.TrackPendingRecovery("FSM_BLOCKED", "a") == "a-5-3");
  // A tool whose name looks like an earlier id cannot collide with it either.
  clock.Set(absl::FromUnixNanos(2));
  CHECK(fsm.TrackPendingRecovery("FSM_BLOCKED", "a-5") == "a-5-2-2");
  CHECK(fsm.PendingRecoveryCount() == 4);
}

TEST_CASE("entries are never merged: each block adds one", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  for (int i = 0; i < 3; ++i) {
    fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
    clock.Advance(absl::Seconds(1));
  }
  CHECK(fsm.PendingRecoveryCount() == 3);
  for (const PendingRecovery& entry : fsm.PendingRecoveries()) {
    CHECK(entry.attempts == 1);
  }
}

TEST_CASE("CheckRecoverySuccess removes the oldest entry of exactly that tool", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const std::string first = fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  clock.Advance(absl::Seconds(1));
  const std::string other = fsm.TrackPendingRecovery("STRICT_RESOLUTION", "pulse_read");
  clock.Advance(absl::Seconds(1));
  const std::string second = fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  CHECK_FALSE(fsm.CheckRecoverySuccess("pulse_contro").has_value());
  CHECK_FALSE(fsm.CheckRecoverySuccess("PULSE_CONTROL").has_value());
  CHECK_FALSE(fsm.CheckRecoverySuccess("pulse_query").has_value());
  auto found = fsm.CheckRecoverySuccess("pulse_control");
  REQUIRE(found.has_value());
  CHECK(found->recovery_id == first);
  found = fsm.CheckRecoverySuccess("pulse_control");
  REQUIRE(found.has_value());
  CHECK(found->recovery_id == second);
  CHECK_FALSE(fsm.CheckRecoverySuccess("pulse_control").has_value());
  const auto read = fsm.CheckRecoverySuccess("pulse_read");
  REQUIRE(read.has_value());
  CHECK(read->recovery_id == other);
  CHECK(read->error_code == "STRICT_RESOLUTION");
  CHECK(fsm.PendingRecoveryCount() == 0);
}

TEST_CASE("a pending recovery exactly ten minutes old is still present", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  const std::string id = fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  clock.Advance(absl::Minutes(10));
  CHECK(kPendingRecoveryTtl == absl::Minutes(10));
  CHECK(fsm.PendingRecoveryCount() == 1);
  REQUIRE(fsm.PendingRecoveries().size() == 1);
  const auto found = fsm.CheckRecoverySuccess("pulse_control");
  REQUIRE(found.has_value());
  CHECK(found->recovery_id == id);
}

TEST_CASE("a pending recovery is gone one nanosecond after ten minutes", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  clock.Advance(absl::Minutes(10) + absl::Nanoseconds(1));
  CHECK(fsm.PendingRecoveryCount() == 0);
  CHECK(fsm.PendingRecoveries().empty());
  CHECK_FALSE(fsm.CheckRecoverySuccess("pulse_control").has_value());
}

TEST_CASE("tracking drops expired entries and keeps live ones", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm(clock);
  fsm.TrackPendingRecovery("FSM_BLOCKED", "old");
  clock.Advance(absl::Minutes(6));
  const std::string young = fsm.TrackPendingRecovery("FSM_BLOCKED", "young");
  clock.Advance(absl::Minutes(5));
  const std::string fresh = fsm.TrackPendingRecovery("FSM_BLOCKED", "fresh");
  const std::vector<PendingRecovery> live = fsm.PendingRecoveries();
  REQUIRE(live.size() == 2);
  CHECK(live[0].recovery_id == young);
  CHECK(live[1].recovery_id == fresh);
}

TEST_CASE("a pending recovery never changes what the FSM allows", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  const auto blocked = fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control");
  REQUIRE(blocked.has_value());
  fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  const SessionSnapshot before = fsm.Snapshot();
  REQUIRE(fsm.CheckRecoverySuccess("pulse_control").has_value());
  CHECK(fsm.Snapshot() == before);
  CHECK(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  CHECK(fsm.CanFinalAnswer().has_value());
}

TEST_CASE("Snapshot and Restore round-trip every persistent field", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Reading(clock);
  clock.Advance(absl::Nanoseconds(7));
  fsm.OnToolSuccess(ToolKind::kWrite, "pulse_control");
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  clock.Advance(absl::Seconds(3));
  fsm.OnToolSuccess(ToolKind::kRead, "pulse_read");
  REQUIRE(fsm.CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  const SessionSnapshot snapshot = fsm.Snapshot();
  CHECK(snapshot.state == "VERIFYING");
  CHECK(snapshot.read_after_write);
  CHECK(snapshot.consecutive_verify_blocks == 1);
  CHECK(snapshot.last_write_at_unix_nanos == absl::ToUnixNanos(*fsm.LastWriteAt()));

  auto restored = SessionFsm::Restore(clock, snapshot);
  REQUIRE(restored.ok());
  CHECK(restored->Snapshot() == snapshot);
  CHECK(restored->State() == SessionState::kVerifying);
  CHECK(restored->LastWriteAt() == fsm.LastWriteAt());
  CHECK(restored->LastReadAt() == fsm.LastReadAt());
  CHECK(restored->LastWriteTool() == "pulse_control");
  CHECK(restored->LastReadTool() == "pulse_read");
}

TEST_CASE("a default snapshot restores a fresh session", "[core][fsm]") {
  FakeClock clock;
  auto restored = SessionFsm::Restore(clock, SessionSnapshot{});
  REQUIRE(restored.ok());
  CHECK(restored->Snapshot() == SessionFsm(clock).Snapshot());
}

TEST_CASE("a restored session has no pending recoveries", "[core][fsm]") {
  FakeClock clock;
  SessionFsm fsm = Verifying(clock);
  fsm.TrackPendingRecovery("FSM_BLOCKED", "pulse_control");
  auto restored = SessionFsm::Restore(clock, fsm.Snapshot());
  REQUIRE(restored.ok());
  CHECK(restored->PendingRecoveryCount() == 0);
}

TEST_CASE("a restored unverified session still blocks writes and the final answer", "[core][fsm]") {
  FakeClock clock;
  auto restored = SessionFsm::Restore(clock, Verifying(clock).Snapshot());
  REQUIRE(restored.ok());
  CHECK(restored->CanExecuteTool(ToolKind::kWrite, "pulse_control").has_value());
  CHECK(restored->CanFinalAnswer().has_value());
}

TEST_CASE("Restore refuses a state it cannot parse", "[core][fsm]") {
  FakeClock clock;
  for (const char* bad : {"", "reading", "READING ", "UNKNOWN", "WRITTEN", "0"}) {
    SessionSnapshot snapshot;
    snapshot.state = bad;
    const auto restored = SessionFsm::Restore(clock, snapshot);
    CHECK(restored.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("Restore refuses WRITING, which no transition produces", "[core][fsm]") {
  FakeClock clock;
  SessionSnapshot snapshot;
  snapshot.state = "WRITING";
  CHECK(SessionFsm::Restore(clock, snapshot).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Restore refuses a snapshot no session could have produced", "[core][fsm]") {
  FakeClock clock;
  const SessionSnapshot valid = Verifying(clock).Snapshot();
  REQUIRE(SessionFsm::Restore(clock, valid).ok());

  SessionSnapshot negative = valid;
  negative.consecutive_verify_blocks = -1;
  SessionSnapshot read_outside_verifying = Reading(clock).Snapshot();
  read_outside_verifying.read_after_write = true;
  SessionSnapshot verifying_without_write = valid;
  verifying_without_write.wrote_this_episode = false;
  SessionSnapshot write_without_time = valid;
  write_without_time.last_write_at_unix_nanos.reset();
  for (const SessionSnapshot& bad :
       {negative, read_outside_verifying, verifying_without_write, write_without_time}) {
    CHECK(SessionFsm::Restore(clock, bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
