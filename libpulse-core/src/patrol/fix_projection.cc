#include "pulse/core/patrol/fix_projection.h"

#include <vector>

#include "pulse/core/status_macros.h"

namespace pulse::core {

InvestigationOutcome FixOutcomeOf(const ActionRecord& record) {
  switch (record.state) {
    case ActionState::kPlanned:
    case ActionState::kPendingApproval:
    case ActionState::kApproved:
      return InvestigationOutcome::kFixQueued;
    case ActionState::kExecuting:
      return InvestigationOutcome::kFixExecuted;
    case ActionState::kRejected:
      // Only a human's denial is a rejected fix.
      if (!record.approvals.empty() &&
          record.approvals.back().outcome == DecisionOutcome::kRejected &&
          record.approvals.back().actor.kind == ActorKind::kHuman) {
        return InvestigationOutcome::kFixRejected;
      }
      return InvestigationOutcome::kNeedsAttention;
    case ActionState::kExpired:
      return InvestigationOutcome::kNeedsAttention;
    case ActionState::kCompleted:
    case ActionState::kFailed:
      break;
  }
  if (!record.result.has_value()) {
    return InvestigationOutcome::kFixVerificationUnknown;
  }
  const ActionExecutionResult& result = *record.result;
  if (!result.dispatched && result.execution.status == ExecutionStatus::kNotRun) {
    return InvestigationOutcome::kFixNotAdmitted;
  }
  if (IsVerifiedFix(result)) {
    return InvestigationOutcome::kFixVerified;
  }
  if (result.execution.status == ExecutionStatus::kSucceeded) {
    return result.verification.status == VerificationStatus::kContradicted
               ? InvestigationOutcome::kFixVerificationFailed
               : InvestigationOutcome::kFixVerificationUnknown;
  }
  if (result.execution.status == ExecutionStatus::kFailed) {
    return InvestigationOutcome::kFixFailed;
  }
  return InvestigationOutcome::kFixVerificationUnknown;
}

std::string PatrolFixFindingId(const ActionRecord& record) {
  const std::string& request_id = record.request.request_id;
  const std::size_t dot = request_id.rfind('.');
  if (dot == std::string::npos || dot + 1 >= request_id.size()) {
    return {};
  }
  return request_id.substr(dot + 1);
}

absl::StatusOr<bool> FixProjector::Wake(std::string_view action_id) {
  PULSE_ASSIGN_OR_RETURN(ActionRecord record, actions_.Get(action_id));
  return Project(record);
}

absl::StatusOr<bool> FixProjector::Project(const ActionRecord& record) {
  const std::string finding_id = PatrolFixFindingId(record);
  if (finding_id.empty()) {
    return false;
  }
  absl::StatusOr<bool> written = findings_.ProjectFixOutcome(
      finding_id, record.id(), FixOutcomeOf(record), ToString(record.state));
  if (absl::IsNotFound(written.status())) {
    return false;  // not a finding's fix after all
  }
  return written;
}

absl::StatusOr<std::size_t> FixProjector::ReconcileAll() {
  // Only the findings still waiting on their fix are read (an index in the SQLite store): a
  // store of 100,000 findings costs its handful of pending fixes, not a decode of every one.
  PULSE_ASSIGN_OR_RETURN(std::vector<Finding> waiting, findings_.ListAwaitingFixOutcome());
  std::size_t changed = 0;
  for (const Finding& f : waiting) {
    absl::StatusOr<ActionRecord> record = actions_.Get(f.fix_action_id);
    if (!record.ok()) {
      continue;  // unreadable or gone: the finding keeps what it says
    }
    absl::StatusOr<bool> written = findings_.ProjectFixOutcome(
        f.id, record->id(), FixOutcomeOf(*record), ToString(record->state));
    if (absl::IsFailedPrecondition(written.status()) || absl::IsNotFound(written.status())) {
      continue;  // its loop state may not move that way, or it went away meanwhile
    }
    PULSE_RETURN_IF_ERROR(written.status());
    changed += *written ? 1 : 0;
  }
  return changed;
}

}  // namespace pulse::core
