#include "pulse/core/notifications/notification_events.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/capability.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

NotificationEvent Bounded(NotificationEvent event) {
  event.key = TruncateUtf8(event.key, kMaxEventKeyBytes);
  event.title = TruncateUtf8(event.title, kMaxNotificationTitleBytes);
  event.message = TruncateUtf8(event.message, kMaxNotificationMessageBytes);
  return event;
}

std::string ResourceLabel(const Finding& f) {
  return f.resource_name.empty() || f.resource_name == f.resource_id
             ? f.resource_id
             : absl::StrCat(f.resource_name, " (", f.resource_id, ")");
}

NotificationEvent FindingEvent(NotificationEventKind kind, std::string key, const Finding& f,
                               absl::string_view what) {
  NotificationEvent e;
  e.kind = kind;
  e.key = std::move(key);
  e.severity = f.severity;
  e.title = absl::StrCat(what, ": ", f.title);
  e.message = absl::StrCat(ResourceLabel(f), " — ", ToAbsl(ToString(f.severity)), " ",
                           ToAbsl(ToString(f.category)), ". ", f.description);
  e.resource_id = f.resource_id;
  e.subject_id = f.id;
  e.occurred_at = f.last_seen_at;
  return Bounded(std::move(e));
}

}  // namespace

std::optional<NotificationEvent> FindingWriteEvent(const std::optional<FindingBefore>& before,
                                                   const Finding& after) {
  if (after.suppressed || after.resolved_at.has_value() || after.dismissed_reason.has_value()) {
    return std::nullopt;
  }
  const std::string id = after.id;
  if (!before.has_value() ||
      (before->resolved && after.regression_count > before->regression_count)) {
    if (IsRuntimeFinding(after)) {
      NotificationEvent e =
          FindingEvent(NotificationEventKind::kProviderUnusable,
                       absl::StrCat("provider.unusable:", id, ":", after.regression_count), after,
                       "AI provider unusable");
      e.severity = Severity::kCritical;
      return e;
    }
    if (!before.has_value()) {
      return FindingEvent(NotificationEventKind::kFindingCreated,
                          absl::StrCat("finding.created:", id), after, "New finding");
    }
    return FindingEvent(NotificationEventKind::kFindingRegressed,
                        absl::StrCat("finding.regressed:", id, ":", after.regression_count), after,
                        "Finding regressed");
  }
  if (!before->resolved && SeverityRank(after.severity) > SeverityRank(before->severity)) {
    return FindingEvent(NotificationEventKind::kFindingEscalated,
                        absl::StrCat("finding.escalated:", id, ":",
                                     ToAbsl(ToString(after.severity)), ":", after.regression_count),
                        after,
                        absl::StrCat("Finding escalated to ", ToAbsl(ToString(after.severity))));
  }
  if (!before->resolved && before->dismissed) {
    return FindingEvent(NotificationEventKind::kFindingCreated,
                        absl::StrCat("finding.created:", id), after, "Finding active again");
  }
  return std::nullopt;
}

std::optional<NotificationEvent> ActionWriteEvent(std::optional<ActionState> before,
                                                  const ActionRecord& after) {
  if (before.has_value() && *before == after.state) {
    return std::nullopt;
  }
  const ActionRequest& r = after.request;
  NotificationEvent e;
  e.resource_id = r.resource_id;
  e.subject_id = after.id();
  e.occurred_at = after.updated_at;
  const std::string what = absl::StrCat(r.capability_name, " on ", r.resource_id);
  if (after.state == ActionState::kPendingApproval) {
    e.kind = NotificationEventKind::kApprovalPending;
    e.key = absl::StrCat("approval.pending:", after.id(), ":", after.decision_revision);
    e.severity = after.plan.risk == ActionRisk::kHigh ? Severity::kCritical : Severity::kWarning;
    e.title = absl::StrCat("Approval needed: ", what);
    e.message = absl::StrCat("Risk ", ToAbsl(ToString(after.plan.risk)), ". ", r.reason,
                             " Decide with POST /api/actions/", after.id(), "/decision.");
    return Bounded(std::move(e));
  }
  if ((after.state != ActionState::kCompleted && after.state != ActionState::kFailed) ||
      !after.result.has_value()) {
    return std::nullopt;
  }
  const ActionExecutionResult& result = *after.result;
  if (after.state == ActionState::kFailed || result.execution.status == ExecutionStatus::kFailed) {
    e.kind = NotificationEventKind::kActionFailed;
    e.severity = Severity::kWarning;
    e.title = absl::StrCat("Action failed: ", what);
  } else if (result.execution.status == ExecutionStatus::kInconclusive ||
             result.verification.status != VerificationStatus::kConfirmed) {
    e.kind = NotificationEventKind::kActionInconclusive;
    e.severity = Severity::kWarning;
    e.title = absl::StrCat("Action inconclusive: ", what);
  } else {
    e.kind = NotificationEventKind::kActionCompleted;
    e.severity = Severity::kInfo;
    e.title = absl::StrCat("Action completed: ", what);
  }
  e.key = absl::StrCat(ToAbsl(ToString(e.kind)), ":", after.id());
  e.message =
      absl::StrCat("Execution ", ToAbsl(ToString(result.execution.status)), ", verification ",
                   ToAbsl(ToString(result.verification.status)), ". ", result.execution.summary,
                   result.error_message.empty() ? "" : " ", result.error_message);
  return Bounded(std::move(e));
}

std::optional<NotificationEvent> PatrolRunWriteEvent(const PatrolRunRecord& run) {
  if (run.status != PatrolRunStatus::kError) {
    return std::nullopt;
  }
  NotificationEvent e;
  e.kind = NotificationEventKind::kPatrolRunError;
  e.key = absl::StrCat("patrol.run_error:", run.id);
  e.severity = Severity::kWarning;
  e.title = absl::StrCat("Patrol run failed: ", run.error_summary);
  e.message = run.error_detail;
  e.subject_id = run.id;
  e.occurred_at = run.completed_at.value_or(run.started_at);
  return Bounded(std::move(e));
}

}  // namespace pulse::core
