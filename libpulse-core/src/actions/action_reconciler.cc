#include "pulse/core/actions/action_reconciler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "json_reader.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {

absl::StatusOr<ReconcileReport> ReconcileInterruptedExecutions(ActionStore& store, AuditLog& audit,
                                                               const Clock& clock,
                                                               std::size_t limit) {
  limit = std::clamp<std::size_t>(limit, 1, 1000);
  PULSE_ASSIGN_OR_RETURN(std::vector<ActionRecord> stranded,
                         store.ListByState({ActionState::kExecuting}, limit));
  ReconcileReport report;
  for (const ActionRecord& record : stranded) {
    const absl::Time now = clock.Now();
    const std::string message = absl::StrCat(
        action_internal::Sv(kExecutionInterruptedPrefix),
        " the engine stopped while this action was executing; whether the capability ran is "
        "unknown, and it will not be dispatched again");
    ActionExecutionResult result;
    result.execution.status = ExecutionStatus::kInconclusive;
    result.execution.reason_code = "execution_interrupted";
    result.execution.summary = message;
    result.verification.status = VerificationStatus::kNotAttempted;
    result.verification.evidence_class = EvidenceClass::kNone;
    result.error_message = message;
    result.dispatched = false;  // unknown; never claim a dispatch that cannot be shown
    result.started_at = record.updated_at;
    result.finished_at = now;

    ActionTransition t;
    t.action_id = record.id();
    t.expected_states = {ActionState::kExecuting};
    t.expected_plan_hash = record.plan.plan_hash;
    t.expected_decision_revision = record.decision_revision;
    t.new_state = ActionState::kFailed;
    t.new_decision_revision = record.decision_revision;
    t.result = result;
    t.updated_at = now;
    ActionLifecycleEvent event;
    event.action_id = record.id();
    event.at = now;
    event.state = ActionState::kFailed;
    event.kind = LifecycleEventKind::kTransition;
    event.message = message;
    t.events = {event};
    absl::StatusOr<ActionRecord> settled = store.Transition(t);
    if (!settled.ok()) {
      if (GetActionCasConflict(settled.status()).has_value()) {
        ++report.skipped;
        continue;
      }
      return settled.status();
    }
    report.settled.push_back(record.id());
    AuditEntry entry;
    entry.at = now;
    entry.category = "action";
    entry.event = "reconciled";
    entry.subject_id = record.id();
    entry.resource_id = record.plan.resource_id;
    entry.message = message;
    // Best effort: the failed transition and its event are already committed.
    audit.Append(entry).IgnoreError();
  }
  return report;
}

}  // namespace pulse::core
