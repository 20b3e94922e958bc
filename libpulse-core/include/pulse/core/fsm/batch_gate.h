// BatchGate: the session FSM's view of one provider turn whose calls run in parallel
// (docs/architecture.md "The session state machine"). Admission simulates the state across the
// batch, so two infrastructure writes cannot both pass and a read cannot clear the way for a write
// in the same turn; the post-process half makes sure a read that ran beside a write is never taken
// as evidence of it. Lives for one turn; borrows the SessionFsm, which must outlive it. Not
// thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/tools/tool_kind.h"

namespace pulse::core {

// One call of the turn, as classified.
struct BatchCall {
  std::string tool;
  InvocationClass invocation;
};

class BatchGate {
 public:
  // Phase 1. `calls` are the turn's calls that passed every earlier pre-check, in provider
  // order; their positions are the indexes used below. Each is judged against a state
  // simulated from the session's current one: reads and resolves pass and change nothing
  // (they have not run yet); kNone effects pass untouched; an infrastructure write is judged
  // as CanExecuteTool would judge it in the simulated state and, if it passes, the simulation
  // moves to VERIFYING, so every later write is blocked (R2). Blocks in a real or simulated
  // VERIFYING add to the session's ConsecutiveVerifyBlocks; nothing else in the session changes.
  [[nodiscard]] static BatchGate Admit(SessionFsm& fsm, std::vector<BatchCall> calls);

  BatchGate(BatchGate&&) = default;
  BatchGate& operator=(BatchGate&&) = default;
  BatchGate(const BatchGate&) = delete;
  BatchGate& operator=(const BatchGate&) = delete;

  const std::vector<BatchCall>& Calls() const { return calls_; }
  // One verdict per call: nullopt when it may execute, else the block to return to the model.
  const std::vector<std::optional<FsmBlockedError>>& Verdicts() const { return verdicts_; }
  // True when call `index` exists and was admitted.
  bool Allowed(std::size_t index) const;
  // True when an infrastructure write was admitted; then no read of this turn is evidence.
  bool AdmittedWrite() const { return admitted_write_; }

  // Phase 3: call `index` executed successfully (order does not matter, each at most once); a
  // write that failed after its mutation was dispatched is reported here too, as dispatched.
  // Applies SessionFsm::OnToolSucceeded, except that when this turn admitted an infrastructure
  // write a read is recorded without counting as verification evidence: it ran in parallel
  // with the write, so it says nothing about the write's effect. InvalidArgument for an index
  // out of range; FailedPrecondition for a blocked call or one already reported. Either way
  // the session is unchanged.
  [[nodiscard]] absl::Status OnSucceeded(std::size_t index, bool mutation_dispatched);

  // Phase 3: the result of call `index` carried verification.ok. Applies
  // SessionFsm::OnSelfVerified only for an infrastructure write already reported as
  // dispatched, once; anything else (notably a finding-lifecycle write, which must never
  // satisfy verification) is FailedPrecondition (InvalidArgument out of range) and changes
  // nothing.
  [[nodiscard]] absl::Status OnSelfVerified(std::size_t index);

 private:
  enum class Outcome { kNotReported, kSucceeded, kDispatched, kSelfVerified };

  explicit BatchGate(SessionFsm& fsm) : fsm_(&fsm) {}
  absl::Status CheckIndex(std::size_t index) const;

  SessionFsm* fsm_;  // non-null, borrowed
  std::vector<BatchCall> calls_;
  std::vector<std::optional<FsmBlockedError>> verdicts_;
  std::vector<Outcome> outcomes_;
  bool admitted_write_ = false;
};

}  // namespace pulse::core
