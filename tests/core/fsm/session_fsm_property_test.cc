// Random walks over the whole SessionFsm / BatchGate surface, checked step by step against a
// deliberately naive reference model written from the seed and the semantics reference.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fmt/format.h"
#include "fsm_test_support.h"
#include "pulse/core/fsm/batch_gate.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/testing/fake_clock.h"

namespace {

using namespace pulse::testing::fsm;  // NOLINT(google-build-using-namespace): shared fixtures

using pulse::core::BatchCall;
using pulse::core::BatchGate;
using pulse::core::FsmBlockedError;
using pulse::core::InvocationClass;
using pulse::core::MutationTarget;
using pulse::core::PendingRecovery;
using pulse::core::SessionFsm;
using pulse::core::SessionSnapshot;
using pulse::core::SessionState;
using pulse::core::ToolKind;
using pulse::testing::FakeClock;

enum class Role { kRead, kWrite, kIgnored };

// The role of each of the 12 classes, as a table rather than as logic.
Role RoleOf(InvocationClass c) {
  struct Row {
    ToolKind kind;
    MutationTarget target;
    Role role;
  };
  static constexpr Row kTable[] = {
      {ToolKind::kResolve, MutationTarget::kNone, Role::kRead},
      {ToolKind::kRead, MutationTarget::kNone, Role::kRead},
      {ToolKind::kWrite, MutationTarget::kNone, Role::kWrite},
      {ToolKind::kUserInput, MutationTarget::kNone, Role::kIgnored},
      {ToolKind::kResolve, MutationTarget::kPulseState, Role::kIgnored},
      {ToolKind::kRead, MutationTarget::kPulseState, Role::kIgnored},
      {ToolKind::kWrite, MutationTarget::kPulseState, Role::kIgnored},
      {ToolKind::kUserInput, MutationTarget::kPulseState, Role::kIgnored},
      {ToolKind::kResolve, MutationTarget::kInfrastructure, Role::kWrite},
      {ToolKind::kRead, MutationTarget::kInfrastructure, Role::kWrite},
      {ToolKind::kWrite, MutationTarget::kInfrastructure, Role::kWrite},
      {ToolKind::kUserInput, MutationTarget::kInfrastructure, Role::kWrite},
  };
  for (const Row& row : kTable) {
    if (row.kind == c.kind && row.target == c.mutation) {
      return row.role;
    }
  }
  FAIL("class outside the table");
  return Role::kWrite;
}

struct ModelRecovery {
  std::string id;
  std::string code;
  std::string tool;
  absl::Time at;
};

// The reference model: plain fields and the rules of the seed, nothing shared with the code
// under test.
struct Model {
  SessionState state = SessionState::kResolving;
  bool wrote = false;
  bool raw = false;  // read after write
  std::int64_t blocks = 0;
  std::string write_tool;
  std::optional<absl::Time> write_at;
  std::string read_tool;
  std::optional<absl::Time> read_at;
  std::vector<ModelRecovery> recoveries;

  // Expected verdict of a write attempt in `in` (the live state or a simulated one).
  std::optional<FsmBlockedError> Write(SessionState in, const std::string& tool) {
    if (in == SessionState::kResolving) {
      return FsmBlockedError{in, tool, ToolKind::kWrite, std::string(kR1), true};
    }
    if (in == SessionState::kVerifying) {
      ++blocks;
      return FsmBlockedError{in, tool, ToolKind::kWrite, std::string(kR2), true};
    }
    return std::nullopt;
  }

  void Read(const std::string& tool, absl::Time now, bool evidence) {
    if (state == SessionState::kResolving) {
      state = SessionState::kReading;
    }
    read_tool = tool;
    read_at = now;
    if (state == SessionState::kVerifying && evidence) {
      raw = true;
      blocks = 0;
    }
  }

  void Wrote(const std::string& tool, absl::Time now) {
    state = SessionState::kVerifying;
    wrote = true;
    raw = false;
    write_tool = tool;
    write_at = now;
  }

  void Complete() {
    if (state == SessionState::kVerifying && raw) {
      state = SessionState::kReading;
      raw = false;
      blocks = 0;
    }
  }

  void Prune(absl::Time now) {
    std::vector<ModelRecovery> kept;
    for (const ModelRecovery& r : recoveries) {
      if (!(r.at < now - absl::Minutes(10))) {
        kept.push_back(r);
      }
    }
    recoveries = kept;
  }

  std::vector<std::string> LiveIds(absl::Time now) const {
    std::vector<std::string> ids;
    for (const ModelRecovery& r : recoveries) {
      if (r.at + absl::Minutes(10) >= now) {
        ids.push_back(r.id);
      }
    }
    return ids;
  }
};

constexpr const char* kTools[] = {"pulse_query",
                                  "pulse_read",
                                  "pulse_control",
                                  "pulse_file_edit",
                                  "patrol_report_finding",
                                  "pulse_question",
                                  "a",
                                  "a-1"};

class Walk {
 public:
  explicit Walk(std::uint32_t seed) : rng_(seed), fsm_(clock_) {}

  void Run(int steps) {
    for (int step = 0; step < steps; ++step) {
      const Model before = model_;
      const bool wrote_before = fsm_.WroteThisEpisode();
      const int op = Pick(0, 15);
      INFO("step " << step << " op " << op);
      bool resets = false;
      switch (op) {
        case 0:
          RawGate();
          break;
        case 1:
          RawSuccess();
          break;
        case 2:
          LoopGate();
          break;
        case 3:
        case 4:
          LoopSuccess();
          break;
        case 5:
        case 6:
        case 7:
          Batch();
          break;
        case 8:
          fsm_.CompleteVerification();
          model_.Complete();
          break;
        case 9:
          if (Pick(0, 3) == 0) {
            fsm_.Reset();
            Model fresh;
            fresh.recoveries = model_.recoveries;  // Reset keeps pending recoveries
            model_ = fresh;
            resets = true;
          } else {
            fsm_.ResetKeepProgress();
            if (model_.state == SessionState::kVerifying) {
              model_.state = SessionState::kReading;
            }
            model_.wrote = model_.raw = false;
            model_.blocks = 0;
            resets = true;
          }
          break;
        case 10:
          fsm_.OnSelfVerified();
          model_.Read("self_verify", clock_.Now(), true);
          model_.Complete();
          break;
        case 11:
          fsm_.OnTargetEstablished();
          if (model_.state == SessionState::kResolving) {
            model_.state = SessionState::kReading;
          }
          break;
        case 12:
          AdvanceClock();
          break;
        case 13:
          Track();
          break;
        case 14:
          Check();
          break;
        case 15:
          RoundTrip();
          break;
        default:
          FAIL("unreachable op");
      }
      Verify(before, wrote_before, resets);
    }
  }

 private:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin() { return Pick(0, 1) == 1; }
  std::string Tool() { return kTools[Pick(0, 7)]; }
  ToolKind Kind() { return static_cast<ToolKind>(Pick(0, 3)); }
  InvocationClass Class() {
    // Mostly the coherent classes real tools have, sometimes any of the 12.
    static constexpr InvocationClass kCommon[] = {
        {ToolKind::kResolve, MutationTarget::kNone},
        {ToolKind::kRead, MutationTarget::kNone},
        {ToolKind::kWrite, MutationTarget::kInfrastructure},
        {ToolKind::kWrite, MutationTarget::kPulseState},
        {ToolKind::kUserInput, MutationTarget::kNone},
    };
    if (Pick(0, 4) == 0) {
      return {Kind(), static_cast<MutationTarget>(Pick(0, 2))};
    }
    return kCommon[Pick(0, 4)];
  }

  void RawGate() {
    const ToolKind kind = Kind();
    const std::string tool = Tool();
    const auto got = fsm_.CanExecuteTool(kind, tool);
    const auto want = kind == ToolKind::kWrite ? model_.Write(model_.state, tool) : std::nullopt;
    REQUIRE(got == want);
  }

  void RawSuccess() {
    const ToolKind kind = Kind();
    const std::string tool = Tool();
    fsm_.OnToolSuccess(kind, tool);
    if (kind == ToolKind::kWrite) {
      model_.Wrote(tool, clock_.Now());
    } else if (kind != ToolKind::kUserInput) {
      model_.Read(tool, clock_.Now(), true);
    }
  }

  void LoopGate() {
    const InvocationClass c = Class();
    const std::string tool = Tool();
    const auto got = fsm_.CanExecute(c, tool);
    const auto want = RoleOf(c) == Role::kWrite ? model_.Write(model_.state, tool) : std::nullopt;
    REQUIRE(got == want);
  }

  void LoopSuccess() {
    const InvocationClass c = Class();
    const std::string tool = Tool();
    const bool dispatched = Coin();
    fsm_.OnToolSucceeded(c, tool, dispatched);
    ApplySuccess(RoleOf(c), tool, dispatched, /*evidence=*/true);
  }

  void ApplySuccess(Role role, const std::string& tool, bool dispatched, bool evidence) {
    if (role == Role::kWrite && dispatched) {
      model_.Wrote(tool, clock_.Now());
    } else if (role == Role::kRead) {
      model_.Read(tool, clock_.Now(), evidence);
      model_.Complete();
    }
  }

  void Batch() {
    std::vector<BatchCall> calls;
    const int n = Pick(1, 5);
    calls.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      calls.push_back(BatchCall{Tool(), Class()});
    }
    BatchGate gate = BatchGate::Admit(fsm_, calls);

    // Model: simulate in provider order; reads never help a later write.
    SessionState simulated = model_.state;
    bool admitted_write = false;
    std::vector<std::optional<FsmBlockedError>> want;
    for (const BatchCall& call : calls) {
      if (RoleOf(call.invocation) == Role::kWrite) {
        want.push_back(model_.Write(simulated, call.tool));
        if (!want.back().has_value()) {
          simulated = SessionState::kVerifying;
          admitted_write = true;
        }
      } else {
        want.push_back(std::nullopt);
      }
    }
    REQUIRE(gate.Verdicts() == want);
    REQUIRE(gate.AdmittedWrite() == admitted_write);
    int admitted_writes = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (RoleOf(calls[i].invocation) == Role::kWrite && !want[i].has_value()) {
        ++admitted_writes;
      }
    }
    REQUIRE(admitted_writes <= 1);  // never two infrastructure writes in one turn

    // Execute: report a random subset of the admitted calls in a random order.
    std::vector<std::size_t> order(calls.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<bool> dispatched_write(calls.size(), false);
    for (std::size_t i : order) {
      if (want[i].has_value()) {
        REQUIRE(gate.OnSucceeded(i, Coin()).code() == absl::StatusCode::kFailedPrecondition);
        continue;
      }
      if (Pick(0, 5) == 0) {
        continue;  // the call failed; nothing is reported
      }
      if (Pick(0, 3) == 0) {
        clock_.Advance(absl::Milliseconds(Pick(1, 500)));
      }
      const bool dispatched = Coin();
      REQUIRE(gate.OnSucceeded(i, dispatched).ok());
      const Role role = RoleOf(calls[i].invocation);
      ApplySuccess(role, calls[i].tool, dispatched, /*evidence=*/!admitted_write);
      dispatched_write[i] = role == Role::kWrite && dispatched;
      if (Pick(0, 2) == 0) {
        const absl::Status verified = gate.OnSelfVerified(i);
        if (dispatched_write[i]) {
          REQUIRE(verified.ok());
          model_.Read("self_verify", clock_.Now(), true);
          model_.Complete();
        } else {
          REQUIRE(verified.code() == absl::StatusCode::kFailedPrecondition);
        }
      }
    }
    REQUIRE(gate.OnSucceeded(calls.size(), true).code() == absl::StatusCode::kInvalidArgument);
  }

  void AdvanceClock() {
    static constexpr absl::Duration kSteps[] = {absl::ZeroDuration(),
                                                absl::Nanoseconds(1),
                                                absl::Seconds(1),
                                                absl::Minutes(1),
                                                absl::Minutes(5),
                                                absl::Minutes(10),
                                                absl::Nanoseconds(600'000'000'001)};
    clock_.Advance(kSteps[Pick(0, 6)]);
  }

  void Track() {
    const absl::Time now = clock_.Now();
    const std::string tool = Tool();
    const std::string code = Coin() ? "FSM_BLOCKED" : "STRICT_RESOLUTION";
    const std::string id = fsm_.TrackPendingRecovery(code, tool);
    model_.Prune(now);
    const std::string base = fmt::format("{}-{}", tool, absl::ToUnixNanos(now));
    REQUIRE(id.rfind(base, 0) == 0);
    for (const ModelRecovery& r : model_.recoveries) {
      REQUIRE(r.id != id);
    }
    model_.recoveries.push_back({id, code, tool, now});
  }

  void Check() {
    const std::string tool = Tool();
    const auto got = fsm_.CheckRecoverySuccess(tool);
    model_.Prune(clock_.Now());
    auto it = std::find_if(model_.recoveries.begin(), model_.recoveries.end(),
                           [&](const ModelRecovery& r) { return r.tool == tool; });
    if (it == model_.recoveries.end()) {
      REQUIRE_FALSE(got.has_value());
      return;
    }
    REQUIRE(got.has_value());
    CHECK(got->recovery_id == it->id);
    CHECK(got->error_code == it->code);
    CHECK(got->created_at == it->at);
    model_.recoveries.erase(it);
  }

  void RoundTrip() {
    auto restored = SessionFsm::Restore(clock_, fsm_.Snapshot());
    REQUIRE(restored.ok());
    REQUIRE(restored->Snapshot() == fsm_.Snapshot());
    // A restored session carries no pending recoveries.
    fsm_ = *std::move(restored);
    model_.recoveries.clear();
  }

  void Verify(const Model& before, bool wrote_before, bool resets) {
    REQUIRE(fsm_.State() == model_.state);
    REQUIRE(fsm_.WroteThisEpisode() == model_.wrote);
    REQUIRE(fsm_.ReadAfterWrite() == model_.raw);
    REQUIRE(fsm_.ConsecutiveVerifyBlocks() == model_.blocks);
    REQUIRE(fsm_.LastWriteTool() == model_.write_tool);
    REQUIRE(fsm_.LastWriteAt() == model_.write_at);
    REQUIRE(fsm_.LastReadTool() == model_.read_tool);
    REQUIRE(fsm_.LastReadAt() == model_.read_at);

    // Structural invariants.
    REQUIRE(fsm_.State() != SessionState::kWriting);
    if (fsm_.ReadAfterWrite()) {
      REQUIRE(fsm_.State() == SessionState::kVerifying);
    }
    if (fsm_.State() == SessionState::kVerifying) {
      REQUIRE(fsm_.WroteThisEpisode());
    }
    REQUIRE(fsm_.ConsecutiveVerifyBlocks() >= 0);
    const bool unverified = fsm_.State() == SessionState::kVerifying && !fsm_.ReadAfterWrite();
    REQUIRE(fsm_.CanFinalAnswer().has_value() == unverified);
    if (wrote_before && !resets) {
      REQUIRE(fsm_.WroteThisEpisode());  // sticky until a reset
    }
    // Only reads establish a target; nothing returns a session to RESOLVING but Reset.
    if (before.state != SessionState::kResolving && !resets) {
      REQUIRE(fsm_.State() != SessionState::kResolving);
    }

    // Probe a copy: information gathering is never blocked; a write passes only in READING,
    // however many blocks were counted.
    SessionFsm probe = fsm_;
    for (ToolKind kind : {ToolKind::kResolve, ToolKind::kRead, ToolKind::kUserInput}) {
      REQUIRE_FALSE(probe.CanExecuteTool(kind, "probe").has_value());
    }
    REQUIRE(probe.CanExecuteTool(ToolKind::kWrite, "probe").has_value() ==
            (fsm_.State() != SessionState::kReading));
    REQUIRE_FALSE(
        probe.CanExecute({ToolKind::kWrite, MutationTarget::kPulseState}, "probe").has_value());

    // Pending recoveries: same live set, ids unique.
    std::vector<std::string> ids;
    for (const PendingRecovery& r : fsm_.PendingRecoveries()) {
      ids.push_back(r.recovery_id);
    }
    REQUIRE(ids == model_.LiveIds(clock_.Now()));
    REQUIRE(fsm_.PendingRecoveryCount() == ids.size());
    std::sort(ids.begin(), ids.end());
    REQUIRE(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  }

  std::mt19937 rng_;
  FakeClock clock_;
  SessionFsm fsm_;
  Model model_;
};

TEST_CASE("random walks over the FSM and batch gate always match the reference model",
          "[core][fsm]") {
  for (std::uint32_t seed = 1; seed <= 2000; ++seed) {
    INFO("seed " << seed);
    Walk walk(seed);
    walk.Run(60);
  }
}

TEST_CASE("long random walks keep the invariants", "[core][fsm]") {
  for (std::uint32_t seed = 90001; seed <= 90020; ++seed) {
    INFO("seed " << seed);
    Walk walk(seed);
    walk.Run(3000);
  }
}

}  // namespace
