#include "pulse/core/actions/action_reconciler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "service_internal.h"

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
        ToAbsl(kExecutionInterruptedPrefix),
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

    ActionTransition t = action_internal::SameRevisionTransition(record, ActionState::kExecuting,
                                                                 ActionState::kFailed, now);
    t.result = result;
    t.events = {action_internal::MakeEvent(record, now, ActionState::kFailed, nullptr, message)};
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
