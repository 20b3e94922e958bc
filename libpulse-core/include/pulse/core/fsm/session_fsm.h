// SessionFsm: the per-session safety state machine (docs/architecture.md "The session state
// machine"). It blocks infrastructure writes until a target is established and until the previous
// write is verified, and refuses a final answer about an unverified change. Not thread-safe: the
// session that owns it serializes access. It borrows the Clock, which must outlive it.
// Copyable: a copy is an independent session on the same clock. Unknown states fail closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/model/session_state.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/tools/tool_kind.h"

namespace pulse::core {

// Model-visible block reasons (exact wire text). Each names the policy code and none
// dictates which tool to call next.
// R1: a write before any target was established.
inline constexpr std::string_view kFsmReasonNoValidatedTarget =
    "POLICY_BLOCKED: state-changing tools require a validated target/resource context. "
    "Establish the target from current context or available tools, then retry only if the "
    "requested action still fits.";
// R2: a write while the previous write is unverified.
inline constexpr std::string_view kFsmReasonWriteUnverified =
    "POLICY_BLOCKED: the previous state-changing tool call still needs current verification "
    "evidence. Gather evidence for the changed target, then retry only if another action is "
    "still needed.";
// R3: a final answer while the previous write is unverified.
inline constexpr std::string_view kFsmReasonAnswerUnverified =
    "POLICY_BLOCKED: the previous state-changing tool call needs current verification "
    "evidence before responding about the result.";

// How long a pending recovery is kept. An entry exactly this old is still present.
inline constexpr absl::Duration kPendingRecoveryTtl = absl::Minutes(10);

// A refusal by the FSM: a domain result, not an error status.
struct FsmBlockedError {
  SessionState state = SessionState::kResolving;
  std::string tool;                    // empty for a refused final answer
  ToolKind kind = ToolKind::kResolve;  // kResolve (the zero kind) for a refused final answer
  std::string reason;
  bool recoverable = true;

  // "FSM blocked tool '<tool>' (<kind>) in state <STATE>: <reason>", or without a tool
  // "FSM blocked in state <STATE>: <reason>".
  std::string Message() const;

  // Code FSM_BLOCKED, message Message(), blocked=true, retryable=false (an identical call is
  // refused again until evidence is gathered; `recoverable` says a path exists). Details, in
  // order: state, tool, kind, reason, recoverable; tool and kind are omitted when tool is
  // empty, as in Message().
  ToolError ToToolError() const;

  friend bool operator==(const FsmBlockedError&, const FsmBlockedError&) = default;
};

// How the infrastructure FSM treats a classified invocation (docs/architecture.md "The session
// state machine").
enum class FsmEffect {
  kRead,   // resolve/read: never blocked; establishes a target; verification evidence
  kWrite,  // infrastructure mutation: gated; a transition only once dispatched
  kNone,   // finding lifecycle (pulse_state) and user_input: neither gated nor a transition
};

// kNone for any pulse_state target and for user_input without a target; kWrite for any
// infrastructure target and for a write without one; kRead for resolve/read without a target.
// Incoherent classes thereby fail closed: anything that may touch infrastructure is a write,
// and a call that mutates Pulse state is never verification evidence.
FsmEffect EffectOf(InvocationClass invocation);

class BatchGate;

class SessionFsm {
 public:
  // A fresh session: RESOLVING, nothing written or read, no pending recoveries.
  explicit SessionFsm(const Clock& clock);

  // Rebuilds a session from Snapshot(). InvalidArgument, and no FSM, when the snapshot is not
  // one this class can produce: unknown or WRITING state, negative counter, read_after_write
  // outside VERIFYING, VERIFYING without a write, or a write flag without a write time. A
  // caller must never substitute a permissive state; a fresh SessionFsm (writes blocked until a
  // target is re-established) or failing the session are the safe fallbacks.
  [[nodiscard]] static absl::StatusOr<SessionFsm> Restore(const Clock& clock,
                                                          SessionSnapshot snapshot);
  // All persistent fields; Restore(clock, Snapshot()) reproduces them exactly.
  SessionSnapshot Snapshot() const;

  // --- Raw API (docs/architecture.md "The session state machine"), keyed by workflow kind only. A
  // kind outside the enum is treated as write (the reference lets it through). ---

  // nullopt when allowed. Only writes are ever blocked: in RESOLVING (R1) and in VERIFYING
  // (R2, whatever read_after_write says; only CompleteVerification lifts it). A VERIFYING block
  // adds one to ConsecutiveVerifyBlocks, the only field this touches; no count ever waives it.
  [[nodiscard]] std::optional<FsmBlockedError> CanExecuteTool(ToolKind kind, std::string_view tool);
  // Records a successful execution. resolve/read: RESOLVING becomes READING; in VERIFYING it
  // sets read_after_write and zeroes the counter. write (from any state): VERIFYING, wrote,
  // read_after_write cleared (the counter is kept). user_input: nothing.
  void OnToolSuccess(ToolKind kind, std::string_view tool);
  // nullopt unless VERIFYING without a read since the write (then R3, no tool).
  [[nodiscard]] std::optional<FsmBlockedError> CanFinalAnswer() const;
  // VERIFYING with read_after_write becomes READING (flag and counter cleared, WroteThisEpisode
  // kept). Otherwise a no-op.
  void CompleteVerification();
  // Back to RESOLVING with every field cleared. Pending recoveries are kept: they are telemetry
  // with their own expiry, and a retry after a clear is still a genuine self-correction.
  void Reset();
  // Softer clear (context dropped, pinned target kept): VERIFYING becomes READING, other states
  // stay; clears WroteThisEpisode, read_after_write and the counter; keeps Last* fields.
  void ResetKeepProgress();

  // --- Loop API (docs/architecture.md "The session state machine"), keyed by invocation class. ---
  // One call per turn only; a provider turn with several calls goes through BatchGate.

  // kNone effects pass untouched; otherwise CanExecuteTool with the effect's kind (a kWrite
  // effect reports kind write).
  [[nodiscard]] std::optional<FsmBlockedError> CanExecute(InvocationClass invocation,
                                                          std::string_view tool);
  // kNone: nothing. kWrite: a write transition only if mutation_dispatched (a denied, expired
  // or refused plan changes nothing). kRead: OnToolSuccess, then CompleteVerification at once
  // if that verified a write (docs/architecture.md "The session state machine").
  void OnToolSucceeded(InvocationClass invocation, std::string_view tool, bool mutation_dispatched);
  // A write's own result carried verification.ok: read "self_verify", then
  // CompleteVerification.
  void OnSelfVerified();
  // A target resolved before the loop (prefetched @mention, attached resource context) counts
  // as resolution: RESOLVING becomes READING. Any other state is unchanged.
  void OnTargetEstablished();

  // --- Pending recoveries (docs/architecture.md "The session state machine"). Track and Check
  // first drop entries strictly older than kPendingRecoveryTtl; the const views below skip them.
  // ---

  // Adds an entry and returns its id "<tool>-<unix nanos>", with "-<n>" appended when that id
  // is already live (the clock may not have moved), so live ids are always unique.
  std::string TrackPendingRecovery(std::string_view error_code, std::string_view tool);
  // Removes and returns the oldest live entry for exactly this tool, or nullopt.
  std::optional<PendingRecovery> CheckRecoverySuccess(std::string_view tool);
  // Live (unexpired) entries, oldest first, and their number.
  std::vector<PendingRecovery> PendingRecoveries() const;
  std::size_t PendingRecoveryCount() const;

  SessionState State() const { return state_; }
  bool WroteThisEpisode() const { return wrote_this_episode_; }
  bool ReadAfterWrite() const { return read_after_write_; }
  std::int64_t ConsecutiveVerifyBlocks() const { return consecutive_verify_blocks_; }
  const std::string& LastWriteTool() const { return last_write_tool_; }
  std::optional<absl::Time> LastWriteAt() const { return last_write_at_; }
  const std::string& LastReadTool() const { return last_read_tool_; }
  std::optional<absl::Time> LastReadAt() const { return last_read_at_; }

 private:
  friend class BatchGate;

  // The write gate as seen from `state` (the live state, or one simulated by BatchGate).
  std::optional<FsmBlockedError> GateWrite(SessionState state, std::string_view tool);
  // A successful read; only evidence may satisfy a pending verification.
  void RecordRead(std::string_view tool, bool is_evidence);
  void PruneExpiredRecoveries(absl::Time now);

  const Clock* clock_;  // non-null, borrowed
  SessionState state_ = SessionState::kResolving;
  bool wrote_this_episode_ = false;
  bool read_after_write_ = false;
  std::int64_t consecutive_verify_blocks_ = 0;
  std::string last_write_tool_;
  std::optional<absl::Time> last_write_at_;
  std::string last_read_tool_;
  std::optional<absl::Time> last_read_at_;
  std::vector<PendingRecovery> pending_recoveries_;  // oldest first
};

}  // namespace pulse::core
