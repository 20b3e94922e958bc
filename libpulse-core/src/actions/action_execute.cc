// Execute: the readiness gates, admission into executing, the single dispatch, the independent
// postcondition observation and the terminal two-axis result (gate order in action_service.h).
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "service_internal.h"

namespace pulse::core {
namespace {

using action_internal::ActorLabel;
using action_internal::IsToken;
using action_internal::kMaxCasAttempts;
using action_internal::MakeEvent;
using action_internal::SameRevisionTransition;

constexpr std::size_t kMaxSummaryBytes = 2048;

// Reason codes from adapters are tokens; anything else is dropped rather than stored.
std::string ReasonCode(std::string_view code) {
  return IsToken(code, 64, "_.-") ? std::string(code) : std::string();
}

bool HumanBacked(const ActionRecord& record, const ActionActor& executor) {
  if (executor.kind == ActorKind::kHuman) {
    return true;
  }
  for (const ApprovalRecord& a : record.approvals) {
    if (a.outcome == DecisionOutcome::kApproved && a.actor.kind == ActorKind::kHuman) {
      return true;
    }
  }
  return false;
}

// A Dispatch error with one of these codes means the capability did not start.
bool DefinitelyNotStarted(absl::StatusCode code) {
  return code == absl::StatusCode::kNotFound || code == absl::StatusCode::kFailedPrecondition ||
         code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kPermissionDenied;
}

// The verification axis from an observation. Evidence is independent only when the observer
// names a trust domain that differs from the executor's; anything else is agent-attested.
VerificationAxis Verify(const absl::StatusOr<PostconditionObservation>& seen,
                        const std::string& executor_domain) {
  VerificationAxis v;
  if (!seen.ok()) {
    v.status = VerificationStatus::kInconclusive;
    v.evidence_class = EvidenceClass::kNone;
    v.reason_code = "observation_failed";
    v.summary = BoundedCleanText(std::string(seen.status().message()), kMaxSummaryBytes);
    return v;
  }
  v.status = seen->status == VerificationStatus::kNotAttempted ? VerificationStatus::kInconclusive
                                                               : seen->status;
  v.evidence_class = !seen->observer_trust_domain.empty() && !executor_domain.empty() &&
                             seen->observer_trust_domain != executor_domain
                         ? EvidenceClass::kIndependent
                         : EvidenceClass::kAgentAttested;
  v.reason_code = ReasonCode(seen->reason_code);
  v.summary = BoundedCleanText(seen->summary, kMaxSummaryBytes);
  v.observer_id = BoundedCleanText(seen->observer_id, 128);
  v.observed_at = seen->observed_at;
  return v;
}

std::string OutcomeSentence(const ActionExecutionResult& r) {
  std::string s = absl::StrCat("Execution ", ToAbsl(ToString(r.execution.status)),
                               "; verification ", ToAbsl(ToString(r.verification.status)));
  if (r.verification.evidence_class != EvidenceClass::kNone) {
    absl::StrAppend(&s, " (", ToAbsl(ToString(r.verification.evidence_class)), ")");
  }
  absl::StrAppend(&s, IsVerifiedFix(r) ? ": verified." : ".");
  return s;
}

}  // namespace

absl::StatusOr<Refusable<ExecuteOutcome>> ActionService::Execute(const ExecuteRequest& request) {
  if (std::optional<ActionRefusal> bad =
          CheckCallShape(request.action_id, request.actor, request.reason,
                         AgentErrorCode::kInvalidActionExecution)) {
    return *bad;
  }
  for (int attempt = 0; attempt < kMaxCasAttempts; ++attempt) {
    // Gates 2-5: identity and the states that can never start an execution.
    PULSE_ASSIGN_OR_RETURN(Refusable<ActionRecord> loaded,
                           LoadPresented(request.action_id, request.plan_hash, request.actor));
    if (loaded.refused()) {
      return loaded.refusal();
    }
    const ActionRecord record = loaded.value();
    switch (record.state) {
      case ActionState::kCompleted:
      case ActionState::kFailed:
        return ExecuteOutcome{record, true, false};
      case ActionState::kExecuting:
        return RefuseAndAudit(record, AgentErrorCode::kActionAlreadyExecuting,
                              "the action is already executing", request.actor);
      case ActionState::kRejected:
      case ActionState::kExpired:
        return RefuseAndAudit(record, AgentErrorCode::kActionExecutionFinal,
                              absl::StrCat("the action is ", ToAbsl(ToString(record.state)),
                                           " and can never execute"),
                              request.actor);
      case ActionState::kPlanned:
      case ActionState::kPendingApproval:
      case ActionState::kApproved:
        break;
    }
    PULSE_ASSIGN_OR_RETURN(Gate gate, LifecycleGates(record, request));
    if (gate.verdict == Gate::Verdict::kPass) {
      PULSE_ASSIGN_OR_RETURN(gate, DriftAndLockGates(record, request));
    }
    if (gate.verdict == Gate::Verdict::kRetry) {
      continue;
    }
    if (gate.verdict == Gate::Verdict::kRefuse) {
      return *gate.refusal;
    }
    // Gate 11b: the executor's own authority, read again now (nothing but the CAS lies between
    // this and the dispatch).
    if (request.recheck) {
      absl::StatusOr<std::optional<std::string>> withdrawn = request.recheck(record);
      if (!withdrawn.ok() || withdrawn->has_value()) {
        return RefuseAndAudit(
            record, AgentErrorCode::kActionExecutionForbidden,
            absl::StrCat(ToAbsl(kDispatchAuthorityWithdrawnPrefix), " ",
                         withdrawn.ok()
                             ? **withdrawn
                             : absl::StrCat("the executor's authority could not be "
                                            "read again (",
                                            std::string(withdrawn.status().message()), ")")),
            request.actor);
      }
    }
    // Gate 12: admission. `executing` is committed before anything is dispatched.
    const absl::Time now = clock_.Now();
    ActionTransition start =
        SameRevisionTransition(record, record.state, ActionState::kExecuting, now);
    std::string message = absl::StrCat("Execution started by ", ActorLabel(request.actor));
    absl::StrAppend(&message, request.reason.empty() ? "." : ": ", request.reason);
    start.events = {MakeEvent(record, now, ActionState::kExecuting, &request.actor, message)};
    absl::StatusOr<ActionRecord> started = store_.Transition(start);
    if (!started.ok()) {
      std::optional<ActionCasConflict> conflict = GetActionCasConflict(started.status());
      if (!conflict.has_value()) {
        return started.status();
      }
      if (conflict->identity_mismatch) {
        return RefuseAndAudit(record, AgentErrorCode::kActionPlanIdentityMismatch,
                              "the stored plan changed identity during admission", request.actor);
      }
      if (conflict->current_state == ActionState::kExecuting) {
        absl::StatusOr<ActionRecord> current = store_.Get(record.id());
        return RefuseAndAudit(current.ok() ? *current : record,
                              AgentErrorCode::kActionAlreadyExecuting,
                              "another caller started this action first", request.actor);
      }
      continue;  // re-read: a terminal state replays, an expiry or decision re-runs the gates
    }
    Audit("dispatch_started", record.id(), record.plan.resource_id, &request.actor, "",
          absl::StrCat("dispatching ", record.plan.capability_name));
    const ActionExecutionResult result = RunDispatch(*started, now);
    return RecordResult(*started, result, request);
  }
  return absl::AbortedError("the action kept changing while execution was admitted");
}

absl::StatusOr<ActionService::Gate> ActionService::LifecycleGates(const ActionRecord& record,
                                                                  const ExecuteRequest& request) {
  const ActionActor& actor = request.actor;
  // Gate 6: the TTL.
  if (clock_.Now() >= record.plan.expires_at) {
    PULSE_ASSIGN_OR_RETURN(ActionRecord current, MaterializeExpiry(record));
    if (current.state != ActionState::kExpired) {
      return Gate{Gate::Verdict::kRetry, std::nullopt};
    }
    return Gate{
        Gate::Verdict::kRefuse,
        RefuseAndAudit(current, AgentErrorCode::kActionPlanExpired,
                       absl::StrCat("the plan expired at ", FormatRfc3339(current.plan.expires_at),
                                    "; re-plan to act"),
                       actor)};
  }
  // Gate 7: a dry-run-only plan is never executable; trying persists the refusal.
  if (record.plan.approval_requirement.floor == ApprovalLevel::kDryRunOnly) {
    return PersistRefusal(
        record, AgentErrorCode::kActionDryRunOnly,
        absl::StrCat(ToAbsl(kDryRunOnlyPrefix), " capability '", record.plan.capability_name,
                     "' is dry-run only; its plans are never executed"),
        actor);
  }
  // Gate 8: a decision is still needed.
  if (record.state == ActionState::kPendingApproval ||
      (record.state == ActionState::kPlanned && record.plan.requires_approval)) {
    return Gate{
        Gate::Verdict::kRefuse,
        RefuseAndAudit(record, AgentErrorCode::kActionNotApproved,
                       "the action needs an approval decision before it can execute", actor)};
  }
  // Gate 9: automation runs an approval-free plan only when it asked for it.
  if (record.state == ActionState::kPlanned && actor.kind != ActorKind::kHuman &&
      !SameActor(actor, record.request.actor)) {
    return Gate{Gate::Verdict::kRefuse,
                RefuseAndAudit(record, AgentErrorCode::kActionExecutionForbidden,
                               "automation may execute an approval-free plan only when it "
                               "requested it",
                               actor)};
  }
  return Gate{};
}

absl::StatusOr<ActionService::Gate> ActionService::DriftAndLockGates(
    const ActionRecord& record, const ExecuteRequest& request) {
  const ActionActor& actor = request.actor;
  // Gate 10: the plan rebuilt from the live fleet must be the approved plan.
  absl::StatusOr<std::optional<std::string>> drift = CheckDrift(record);
  if (!drift.ok()) {
    return Gate{Gate::Verdict::kRefuse,
                RefuseAndAudit(record, AgentErrorCode::kActionExecutionUnavailable,
                               absl::StrCat("the fleet could not be read to re-validate the plan: ",
                                            std::string(drift.status().message())),
                               actor)};
  }
  if (drift->has_value()) {
    return PersistRefusal(record, AgentErrorCode::kActionPlanDrift, **drift, actor);
  }
  // Gate 11: the operator's remediation lock outranks every approval.
  absl::StatusOr<OperatorState> lock = operator_state_.Get(record.plan.resource_id);
  if (lock.ok() && lock->never_auto_remediate) {
    return PersistRefusal(
        record, AgentErrorCode::kResourceRemediationLocked,
        absl::StrCat(ToAbsl(kRemediationLockedPrefix), " operator state of ",
                     record.plan.resource_id, " (set by ", lock->set_by, " at ",
                     FormatRfc3339(lock->set_at), ") forbids remediation; clear it to act"),
        actor);
  }
  if (!lock.ok() && !absl::IsNotFound(lock.status())) {
    if (!HumanBacked(record, actor)) {
      return PersistRefusal(record, AgentErrorCode::kResourceRemediationLocked,
                            absl::StrCat(ToAbsl(kLockStateUnknownPrefix),
                                         " the remediation lock of ", record.plan.resource_id,
                                         " could not be read and no human approved this action"),
                            actor);
    }
    Audit("lock_state_unknown", record.id(), record.plan.resource_id, &actor, "",
          absl::StrCat("remediation lock unreadable (", std::string(lock.status().message()),
                       "); proceeding on a human decision"));
  }
  return Gate{};
}

ActionExecutionResult ActionService::RunDispatch(const ActionRecord& record,
                                                 absl::Time started_at) {
  DispatchRequest dispatch;
  dispatch.action_id = record.id();
  dispatch.attempt_id = DispatchAttemptId(record.id());
  dispatch.resource_id = record.plan.resource_id;
  dispatch.capability_name = record.plan.capability_name;
  dispatch.params_json = record.plan.params_json;
  dispatch.plan_hash = record.plan.plan_hash;
  absl::StatusOr<DispatchReceipt> receipt = fleet_.Dispatch(dispatch);

  ActionExecutionResult result;
  result.dispatched = true;
  result.started_at = started_at;
  bool observe = true;
  std::string executor_domain;
  if (receipt.ok()) {
    result.execution.status = receipt->status;
    result.execution.reason_code = ReasonCode(receipt->reason_code);
    result.execution.summary = BoundedCleanText(receipt->summary, kMaxSummaryBytes);
    result.executor_id = BoundedCleanText(receipt->executor_id, 128);
    executor_domain = receipt->executor_trust_domain;
    observe = receipt->status != ExecutionStatus::kNotRun;
  } else {
    const bool not_started = DefinitelyNotStarted(receipt.status().code());
    result.execution.status =
        not_started ? ExecutionStatus::kNotRun : ExecutionStatus::kInconclusive;
    result.execution.reason_code = not_started ? "executor_refused" : "executor_outcome_unknown";
    result.execution.summary =
        BoundedCleanText(std::string(receipt.status().message()), kMaxSummaryBytes);
    observe = !not_started;
  }
  if (observe) {
    PostconditionQuery query;
    query.action_id = record.id();
    query.resource_id = record.plan.resource_id;
    query.capability_name = record.plan.capability_name;
    query.params_json = record.plan.params_json;
    query.dispatched_at = started_at;
    result.verification = Verify(fleet_.ObservePostcondition(query), executor_domain);
  }
  if (result.execution.status != ExecutionStatus::kSucceeded) {
    result.error_message =
        absl::StrCat("execution ", ToAbsl(ToString(result.execution.status)),
                     result.execution.summary.empty() ? "" : ": ", result.execution.summary);
  }
  result.finished_at = clock_.Now();
  return result;
}

absl::StatusOr<Refusable<ExecuteOutcome>> ActionService::RecordResult(
    const ActionRecord& record, const ActionExecutionResult& result,
    const ExecuteRequest& request) {
  const bool succeeded = result.execution.status == ExecutionStatus::kSucceeded;
  ActionTransition finish = SameRevisionTransition(
      record, ActionState::kExecuting, succeeded ? ActionState::kCompleted : ActionState::kFailed,
      result.finished_at);
  finish.result = result;
  finish.events = {MakeEvent(record, result.finished_at, finish.new_state, &request.actor,
                             OutcomeSentence(result))};
  absl::StatusOr<ActionRecord> finished = store_.Transition(finish);
  if (finished.ok()) {
    Audit(succeeded ? "completed" : "failed", record.id(), record.plan.resource_id, &request.actor,
          "", OutcomeSentence(result));
    return ExecuteOutcome{std::move(*finished), false, true};
  }
  if (!GetActionCasConflict(finished.status()).has_value()) {
    // The dispatch happened but its result could not be stored; the record stays executing
    // and crash recovery (ReconcileInterruptedExecutions) settles it as inconclusive.
    Audit("result_unrecorded", record.id(), record.plan.resource_id, &request.actor, "",
          OutcomeSentence(result));
    absl::Status unrecorded = finished.status();
    unrecorded.SetPayload(kActionDispatchedPayload, absl::Cord(record.id()));
    return unrecorded;
  }
  absl::StatusOr<ActionRecord> current = store_.Get(record.id());
  ActionRefusal refusal =
      Refuse(AgentErrorCode::kActionNotExecuting,
             absl::StrCat("the action left executing while it ran; its outcome (",
                          OutcomeSentence(result), ") was not recorded"),
             current.ok() ? std::optional<ActionRecord>(*current) : std::nullopt);
  refusal.dispatched = true;
  AuditRefusal(refusal, record.id(), record.plan.resource_id, request.actor);
  return refusal;
}

bool ExecuteDispatchedUnrecorded(const absl::StatusOr<Refusable<ExecuteOutcome>>& executed) {
  if (!executed.ok()) {
    return executed.status().GetPayload(kActionDispatchedPayload).has_value();
  }
  return executed->refused() && executed->refusal().dispatched;
}

}  // namespace pulse::core
