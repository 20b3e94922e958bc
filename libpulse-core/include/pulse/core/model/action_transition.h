// The typed compare-and-swap an ActionStore commits: which record, which states it may be in,
// which immutable identity it must have, which mutable columns change, and the lifecycle
// events appended in the same commit. The pure checks here are shared by every store adapter
// (in-memory and SQL) so they enforce identical rules; the conflict payload lets a service map
// a lost CAS to a typed refusal without a second read. Plain values; pure functions.
//
// A SQL adapter implements Transition as one transaction:
//   SELECT state, plan_hash, decision_revision, result_json FROM action_audits WHERE id=?
//     -> no row: NotFound; CheckCas(...) fails: Aborted + ActionCasConflict payload;
//        CheckTransitionAgainst(...) fails: return it
//   UPDATE action_audits SET state=?, decision_revision=?, updated_at=?,
//          approvals_json=json_insert(...), result_json=?
//    WHERE id=? AND state IN (<expected>) AND plan_hash=? [AND decision_revision=?]
//     -> changes() != 1: re-read and answer Aborted + payload
//   INSERT INTO action_lifecycle_events ... (one row per event, sequence = max+1)
//   COMMIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/model/action_types.h"

namespace pulse::core {

struct ActionTransition {
  std::string action_id;
  // The compare: state IN expected_states AND plan_hash = expected_plan_hash
  // [AND decision_revision = *expected_decision_revision].
  std::vector<ActionState> expected_states;
  std::string expected_plan_hash;
  std::optional<std::uint32_t> expected_decision_revision;
  // The swap: only these mutable columns change.
  ActionState new_state = ActionState::kFailed;
  std::uint32_t new_decision_revision = 0;          // current + 1 iff appended_approval is set
  std::optional<ApprovalRecord> appended_approval;  // appended; earlier ones never change
  std::optional<ActionExecutionResult> result;      // set once; required for completed/failed
  absl::Time updated_at;
  // Appended in the same commit, in order; at least one, the last naming new_state. The store
  // assigns their sequence numbers.
  std::vector<ActionLifecycleEvent> events;
};

struct ActionInsertOutcome {
  ActionRecord record;  // the stored record (the existing one when created is false)
  bool created = false;
};

// Why a compare failed, read from the current row.
struct ActionCasConflict {
  ActionState current_state = ActionState::kPlanned;
  std::uint32_t current_decision_revision = 0;
  bool identity_mismatch = false;  // the stored plan_hash differs from the expected one

  friend bool operator==(const ActionCasConflict&, const ActionCasConflict&) = default;
};

// Aborted status carrying `conflict` as a payload (type URL kActionCasConflictPayload).
absl::Status MakeActionCasConflict(const ActionCasConflict& conflict, std::string_view message);
// The conflict carried by `status`; nullopt when it is not an Aborted CAS conflict.
std::optional<ActionCasConflict> GetActionCasConflict(const absl::Status& status);
inline constexpr char kActionCasConflictPayload[] = "type.pulse.dev/pulse.core.ActionCasConflict";

// Shape checks independent of the stored row. InvalidArgument when: action_id is empty;
// expected_states is empty; an expected state has no edge to new_state; expected_plan_hash is
// empty; events are empty, name another action, or the last one does not name new_state; a
// result accompanies a non-terminal-by-execution state (anything but completed/failed) or is
// missing for completed/failed; completed carries an execution status other than succeeded;
// appended_approval is set with a new state other than pending_approval/approved/rejected.
[[nodiscard]] absl::Status ValidateActionTransition(const ActionTransition& transition);

// The compare against the current row: the Aborted conflict (with payload) or OK.
[[nodiscard]] absl::Status CheckCas(const ActionRecord& current,
                                    const ActionTransition& transition);

// Rules that need the current row, checked after the compare succeeded. FailedPrecondition
// when: the edge current.state -> new_state is illegal; a result is already recorded; the
// revision does not advance by exactly one with an appended approval (or changes without
// one); the approval binds another plan hash; the approver already decided.
[[nodiscard]] absl::Status CheckTransitionAgainst(const ActionRecord& current,
                                                  const ActionTransition& transition);

// Applies a checked transition to `record` (state, revision, approval, result, updated_at).
void ApplyActionTransition(const ActionTransition& transition, ActionRecord& record);

// Checks a new record and its initial events before InsertIfAbsent. InvalidArgument unless:
// state is planned or pending_approval; revision 0, no approvals, no result; ids agree across
// request and plan; plan_hash non-empty; events non-empty, all naming the action, the last
// naming the record's state.
[[nodiscard]] absl::Status ValidateNewActionRecord(const ActionRecord& record,
                                                   const std::vector<ActionLifecycleEvent>& events);

}  // namespace pulse::core
