// Plan, decide, read and sweep. Execute lives in action_execute.cc.
#include "pulse/core/actions/action_service.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
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

// The CAS that appends one decision: the revision advances by one; a decision that settles the
// vote also records the transition into approved or rejected.
ActionTransition DecisionTransition(const ActionRecord& record, const DecideRequest& request,
                                    ActionState next, const std::string& message, absl::Time now) {
  ActionTransition t;
  t.action_id = record.id();
  t.expected_states = {ActionState::kPendingApproval};
  t.expected_plan_hash = record.plan.plan_hash;
  t.expected_decision_revision = record.decision_revision;
  t.new_state = next;
  t.new_decision_revision = record.decision_revision + 1;
  t.appended_approval =
      ApprovalRecord{request.actor, request.outcome, request.reason, now, record.plan.plan_hash};
  t.updated_at = now;
  ActionLifecycleEvent decision = MakeEvent(record, now, next, &request.actor, message);
  decision.kind = LifecycleEventKind::kDecision;
  decision.decision_revision = t.new_decision_revision;
  decision.decision = request.outcome;
  t.events = {decision};
  if (next != ActionState::kPendingApproval) {
    t.events.push_back(
        MakeEvent(record, now, next, &request.actor,
                  next == ActionState::kApproved ? "Action approved." : "Action rejected."));
  }
  return t;
}

bool ValidActor(const ActionActor& actor) {
  return IsToken(actor.id, kMaxActionIdBytes, "._:@/+=-");
}

}  // namespace

std::optional<ActionRefusal> CheckCallShape(std::string_view action_id, const ActionActor& actor,
                                            std::string_view reason,
                                            AgentErrorCode invalid_reason_code) {
  if (std::optional<ActionRefusal> bad = ValidateActionIdSyntax(action_id)) {
    return bad;
  }
  if (!ValidActor(actor)) {
    return Refuse(AgentErrorCode::kActionActorUnavailable,
                  "the call has no valid authenticated actor");
  }
  if (reason.size() > kMaxActionTextBytes || !IsCleanText(reason)) {
    ActionRefusal refusal =
        Refuse(invalid_reason_code, "the reason must be clean UTF-8 text of at most 1024 bytes");
    refusal.details["reason"] = "must be clean UTF-8 text of at most 1024 bytes";
    return refusal;
  }
  return std::nullopt;
}

std::optional<ActionRefusal> ValidateActionIdSyntax(std::string_view action_id) {
  if (action_id.empty()) {
    return Refuse(AgentErrorCode::kMissingId, "an action id is required");
  }
  if (!IsToken(action_id, kMaxActionIdBytes, "_-")) {
    return Refuse(AgentErrorCode::kInvalidId,
                  "an action id is at most 128 characters of [A-Za-z0-9_-]");
  }
  return std::nullopt;
}

ActionService::ActionService(ActionStore& store, Fleet& fleet, OperatorStateStore& operator_state,
                             AuditLog& audit, const Clock& clock, ActionPolicyOptions options)
    : store_(store),
      fleet_(fleet),
      operator_state_(operator_state),
      audit_(audit),
      clock_(clock),
      options_(NormalizePolicyOptions(options)) {}

void ActionService::Audit(std::string_view event, std::string_view action_id,
                          std::string_view resource_id, const ActionActor* actor,
                          std::string_view code, std::string_view message) {
  AuditEntry entry;
  entry.at = clock_.Now();
  entry.category = "action";
  entry.event = std::string(event);
  entry.subject_id = std::string(action_id);
  entry.resource_id = std::string(resource_id);
  if (actor != nullptr) {
    entry.actor_kind = std::string(ToString(actor->kind));
    entry.actor_id = actor->id;
    if (!actor->name.empty()) {
      entry.details["actor_name"] = actor->name;
    }
  }
  entry.code = std::string(code);
  entry.message = std::string(message);
  absl::Status s = audit_.Append(entry);
  if (!s.ok()) {
    // The store's lifecycle events are the authoritative history and were already committed
    // (or nothing changed); a failed secondary audit append must not undo or block the
    // lifecycle, so it is counted for /metrics instead.
    audit_failures_.fetch_add(1);
    s.IgnoreError();
  }
}

void ActionService::AuditRefusal(const ActionRefusal& refusal, std::string_view action_id,
                                 std::string_view resource_id, const ActionActor& actor) {
  Audit("refused", action_id, resource_id, &actor, ToString(refusal.code), refusal.message);
}

absl::StatusOr<Refusable<ActionRecord>> ActionService::Load(std::string_view action_id) {
  if (std::optional<ActionRefusal> bad = ValidateActionIdSyntax(action_id)) {
    return *bad;
  }
  absl::StatusOr<ActionRecord> record = store_.Get(action_id);
  if (absl::IsNotFound(record.status())) {
    return Refuse(AgentErrorCode::kActionNotFound,
                  absl::StrCat("no action with id ", ToAbsl(action_id)));
  }
  if (!record.ok()) {
    return record.status();
  }
  return std::move(*record);
}

absl::StatusOr<Refusable<ActionRecord>> ActionService::LoadPresented(
    std::string_view action_id, const std::optional<std::string>& plan_hash,
    const ActionActor& actor) {
  PULSE_ASSIGN_OR_RETURN(Refusable<ActionRecord> loaded, Load(action_id));
  if (loaded.refused() || !plan_hash.has_value() || *plan_hash == loaded.value().plan.plan_hash) {
    return loaded;
  }
  return RefuseAndAudit(loaded.value(), AgentErrorCode::kActionPlanIdentityMismatch,
                        "the presented plan hash does not match the action's plan", actor);
}

absl::StatusOr<ActionRecord> ActionService::MaterializeExpiry(const ActionRecord& record) {
  ActionRecord current = record;
  for (int attempt = 0; attempt < kMaxCasAttempts; ++attempt) {
    const absl::Time now = clock_.Now();
    if (!CanExpire(current.state) || now < current.plan.expires_at) {
      return current;
    }
    ActionTransition t;
    t.action_id = current.id();
    t.expected_states = {ActionState::kPlanned, ActionState::kPendingApproval,
                         ActionState::kApproved};
    t.expected_plan_hash = current.plan.plan_hash;
    // Compared, so that a decision committed since `current` was read (a sub-quorum approval
    // keeps the state and advances the revision) is a CAS conflict that re-reads below, not
    // the FailedPrecondition "only a decision may change the revision".
    t.expected_decision_revision = current.decision_revision;
    t.new_state = ActionState::kExpired;
    t.new_decision_revision = current.decision_revision;
    t.updated_at = now;
    t.events = {MakeEvent(
        current, now, ActionState::kExpired, nullptr,
        absl::StrCat("Action plan expired at ", FormatRfc3339(current.plan.expires_at), "."))};
    absl::StatusOr<ActionRecord> expired = store_.Transition(t);
    if (expired.ok()) {
      Audit("expired", current.id(), current.plan.resource_id, nullptr, "",
            "the plan's TTL passed before it was executed");
      return std::move(*expired);
    }
    if (!GetActionCasConflict(expired.status()).has_value()) {
      return expired.status();
    }
    PULSE_ASSIGN_OR_RETURN(current, store_.Get(record.id()));
  }
  return absl::AbortedError("the action kept changing while its expiry was recorded");
}

ActionRefusal ActionService::RefuseAndAudit(const ActionRecord& record, AgentErrorCode code,
                                            std::string message, const ActionActor& actor) {
  ActionRefusal refusal = Refuse(code, std::move(message), record);
  AuditRefusal(refusal, record.id(), record.plan.resource_id, actor);
  return refusal;
}

absl::StatusOr<ActionService::Gate> ActionService::PersistRefusal(const ActionRecord& record,
                                                                  AgentErrorCode code,
                                                                  const std::string& message,
                                                                  const ActionActor& actor) {
  const absl::Time now = clock_.Now();
  ActionExecutionResult result;
  result.execution.status = ExecutionStatus::kNotRun;
  result.execution.reason_code = std::string(ToString(code));
  result.execution.summary = message;
  result.verification.status = VerificationStatus::kNotAttempted;
  result.verification.evidence_class = EvidenceClass::kNone;
  result.error_message = message;
  result.dispatched = false;
  result.finished_at = now;

  ActionTransition t = SameRevisionTransition(record, record.state, ActionState::kFailed, now);
  t.result = result;
  t.events = {MakeEvent(record, now, ActionState::kFailed, &actor, message)};
  absl::StatusOr<ActionRecord> failed = store_.Transition(t);
  if (!failed.ok()) {
    if (GetActionCasConflict(failed.status()).has_value()) {
      return Gate{Gate::Verdict::kRetry, std::nullopt};
    }
    return failed.status();
  }
  return Gate{Gate::Verdict::kRefuse, RefuseAndAudit(*failed, code, message, actor)};
}

absl::StatusOr<PlanInputs> ActionService::ReadPlanInputs(std::string_view resource_id) {
  PlanInputs inputs;
  PULSE_ASSIGN_OR_RETURN(inputs.resource, fleet_.GetResource(resource_id));
  PULSE_ASSIGN_OR_RETURN(inputs.catalogue, fleet_.ListCapabilities(resource_id));
  FleetTopologyQuery query;
  query.root_id = std::string(resource_id);
  query.depth = 1;
  PULSE_ASSIGN_OR_RETURN(FleetTopology topology, fleet_.GetTopology(query));
  for (FleetRelationship& r : topology.relationships) {
    if (r.from_id == resource_id || r.to_id == resource_id) {
      inputs.relationships.push_back(std::move(r));
    }
  }
  return inputs;
}

absl::StatusOr<std::optional<std::string>> ActionService::CheckDrift(const ActionRecord& record) {
  absl::StatusOr<PlanInputs> inputs = ReadPlanInputs(record.plan.resource_id);
  if (absl::IsNotFound(inputs.status())) {
    return std::optional<std::string>(absl::StrCat(ToAbsl(kPlanDriftPrefix), " resource ",
                                                   record.plan.resource_id, " no longer exists"));
  }
  if (!inputs.ok()) {
    return inputs.status();
  }
  return DescribePlanDrift(record, *inputs, options_);
}

absl::StatusOr<Refusable<PlanOutcome>> ActionService::Plan(const ActionRequest& request) {
  if (std::optional<ActionRefusal> bad = ValidateActionRequest(request)) {
    AuditRefusal(*bad, "", request.resource_id, request.actor);
    return *bad;
  }
  absl::StatusOr<PlanInputs> inputs = ReadPlanInputs(request.resource_id);
  if (!inputs.ok()) {
    ActionRefusal refusal =
        absl::IsNotFound(inputs.status())
            ? Refuse(AgentErrorCode::kResourceNotFound,
                     absl::StrCat("no resource with id ", request.resource_id))
            : Refuse(AgentErrorCode::kActionExecutionUnavailable,
                     absl::StrCat("the fleet could not be read to plan the action: ",
                                  std::string(inputs.status().message())));
    AuditRefusal(refusal, "", request.resource_id, request.actor);
    return refusal;
  }
  const absl::Time now = clock_.Now();
  Refusable<PlannedAction> built = BuildActionPlan(request, *inputs, now, options_);
  if (built.refused()) {
    AuditRefusal(built.refusal(), "", request.resource_id, request.actor);
    return built.refusal();
  }
  ActionRecord record;
  record.request = built.value().request;
  record.plan = built.value().plan;
  record.created_at = now;
  record.updated_at = now;
  record.state =
      record.plan.requires_approval ? ActionState::kPendingApproval : ActionState::kPlanned;
  std::vector<ActionLifecycleEvent> events = {
      MakeEvent(record, now, ActionState::kPlanned, &request.actor, "Action plan created.")};
  if (record.plan.requires_approval) {
    events.push_back(
        MakeEvent(record, now, ActionState::kPendingApproval, &request.actor, record.plan.message));
  }
  PULSE_ASSIGN_OR_RETURN(ActionInsertOutcome inserted, store_.InsertIfAbsent(record, events));
  if (!inserted.created) {
    PULSE_ASSIGN_OR_RETURN(ActionRecord current, MaterializeExpiry(inserted.record));
    return PlanOutcome{std::move(current), false};
  }
  Audit("planned", record.id(), record.plan.resource_id, &request.actor, "",
        absl::StrCat(record.plan.capability_name, ": ", record.plan.message));
  return PlanOutcome{std::move(inserted.record), true};
}

absl::StatusOr<std::optional<ActionRefusal>> ActionService::ApprovalReadiness(
    const ActionRecord& record, const DecideRequest& request) {
  const ApprovalRequirement& rule = record.plan.approval_requirement;
  if (rule.floor == ApprovalLevel::kMfa) {
    return RefuseAndAudit(record, AgentErrorCode::kActionStepUpUnavailable,
                          "this plan needs an MFA step-up approval, which no verifier can "
                          "accept yet",
                          request.actor);
  }
  if (rule.disallow_requester && request.actor.id == record.request.actor.id) {
    return RefuseAndAudit(record, AgentErrorCode::kActionSeparationRequired,
                          "the requester may not approve their own action", request.actor);
  }
  absl::StatusOr<std::optional<std::string>> drift = CheckDrift(record);
  if (!drift.ok()) {
    return RefuseAndAudit(record, AgentErrorCode::kActionExecutionUnavailable,
                          absl::StrCat("the fleet could not be read to re-validate the plan: ",
                                       std::string(drift.status().message())),
                          request.actor);
  }
  if (drift->has_value()) {
    return RefuseAndAudit(record, AgentErrorCode::kActionPlanDrift, **drift, request.actor);
  }
  // An unreadable lock does not block a human decision; execute checks it again.
  absl::StatusOr<OperatorState> lock = operator_state_.Get(record.plan.resource_id);
  if (lock.ok() && lock->never_auto_remediate) {
    return RefuseAndAudit(record, AgentErrorCode::kResourceRemediationLocked,
                          absl::StrCat(ToAbsl(kRemediationLockedPrefix), " operator state of ",
                                       record.plan.resource_id, " forbids remediation"),
                          request.actor);
  }
  return std::optional<ActionRefusal>();
}

absl::StatusOr<Refusable<DecideOutcome>> ActionService::Decide(const DecideRequest& request) {
  if (std::optional<ActionRefusal> bad =
          CheckCallShape(request.action_id, request.actor, request.reason,
                         AgentErrorCode::kInvalidActionDecision)) {
    return *bad;
  }
  for (int attempt = 0; attempt < kMaxCasAttempts; ++attempt) {
    PULSE_ASSIGN_OR_RETURN(Refusable<ActionRecord> loaded,
                           LoadPresented(request.action_id, request.plan_hash, request.actor));
    if (loaded.refused()) {
      return loaded.refusal();
    }
    const ActionRecord record = loaded.value();
    for (const ApprovalRecord& prior : record.approvals) {
      if (SameActor(prior.actor, request.actor)) {
        if (prior.outcome == request.outcome && prior.reason == request.reason) {
          return DecideOutcome{record, true};
        }
        return RefuseAndAudit(
            record, AgentErrorCode::kActionDecisionConflict,
            absl::StrCat(ActorLabel(request.actor), " already decided this action (",
                         ToAbsl(ToString(prior.outcome)), ")"),
            request.actor);
      }
    }
    const absl::Time now = clock_.Now();
    if (CanExpire(record.state) && now >= record.plan.expires_at) {
      PULSE_ASSIGN_OR_RETURN(ActionRecord current, MaterializeExpiry(record));
      if (current.state != ActionState::kExpired) {
        continue;
      }
      return RefuseAndAudit(
          current, AgentErrorCode::kActionPlanExpired,
          absl::StrCat("the plan expired at ", FormatRfc3339(current.plan.expires_at),
                       "; re-plan to act"),
          request.actor);
    }
    if (record.state != ActionState::kPendingApproval) {
      return RefuseAndAudit(
          record, AgentErrorCode::kActionNotPending,
          absl::StrCat("the action is ", ToAbsl(ToString(record.state)), ", not pending_approval"),
          request.actor);
    }
    if (request.actor.kind != ActorKind::kHuman) {
      return RefuseAndAudit(record, AgentErrorCode::kActionApprovalForbidden,
                            "only a human may decide a governed action", request.actor);
    }
    // One credential cannot be both: the token that planned this action as an agent (or a
    // service) does not become a human by leaving a header off, whatever separation says.
    if (record.request.actor.kind != ActorKind::kHuman &&
        record.request.actor.id == request.actor.id) {
      return RefuseAndAudit(record, AgentErrorCode::kActionApprovalForbidden,
                            "this credential planned the action as an agent; an agent's "
                            "credential may not decide it",
                            request.actor);
    }
    ActionState next = ActionState::kRejected;
    std::string message = absl::StrCat("Rejected by ", ActorLabel(request.actor), ".");
    if (request.outcome == DecisionOutcome::kApproved) {
      PULSE_ASSIGN_OR_RETURN(std::optional<ActionRefusal> not_ready,
                             ApprovalReadiness(record, request));
      if (not_ready.has_value()) {
        return *not_ready;
      }
      int approvals = 1;
      for (const ApprovalRecord& prior : record.approvals) {
        approvals += prior.outcome == DecisionOutcome::kApproved ? 1 : 0;
      }
      const int quorum = record.plan.approval_requirement.quorum;
      next = approvals >= quorum ? ActionState::kApproved : ActionState::kPendingApproval;
      message = absl::StrCat("Approved by ", ActorLabel(request.actor), " (", approvals, " of ",
                             quorum, ").");
    }
    absl::StatusOr<ActionRecord> decided =
        store_.Transition(DecisionTransition(record, request, next, message, now));
    if (decided.ok()) {
      Audit("decided", record.id(), record.plan.resource_id, &request.actor, "", message);
      return DecideOutcome{std::move(*decided), false};
    }
    if (!GetActionCasConflict(decided.status()).has_value()) {
      return decided.status();
    }
    // A concurrent decision or expiry changed the record: re-read and decide again.
  }
  return absl::AbortedError("the action kept changing while the decision was recorded");
}

absl::StatusOr<Refusable<ActionRecord>> ActionService::Get(std::string_view action_id) {
  PULSE_ASSIGN_OR_RETURN(Refusable<ActionRecord> loaded, Load(action_id));
  if (loaded.refused()) {
    return loaded;
  }
  PULSE_ASSIGN_OR_RETURN(ActionRecord current, MaterializeExpiry(loaded.value()));
  return current;
}

absl::StatusOr<Refusable<std::vector<ActionLifecycleEvent>>> ActionService::Events(
    std::string_view action_id) {
  PULSE_ASSIGN_OR_RETURN(Refusable<ActionRecord> loaded, Load(action_id));
  if (loaded.refused()) {
    return loaded.refusal();
  }
  PULSE_ASSIGN_OR_RETURN(std::vector<ActionLifecycleEvent> events, store_.ListEvents(action_id));
  return events;
}

absl::StatusOr<std::size_t> ActionService::SweepExpired(std::size_t limit) {
  limit = std::clamp<std::size_t>(limit, 1, 1000);
  // Read before the listing: a write between them makes the remembered sweep miss.
  const std::optional<std::uint64_t> generation = store_.WriteGeneration();
  const absl::Time started = clock_.Now();
  if (generation.has_value()) {
    absl::MutexLock lock(&sweep_mu_);
    if (quiet_sweep_.has_value() && quiet_sweep_->generation == *generation &&
        started >= quiet_sweep_->at &&
        (!quiet_sweep_->until.has_value() || started < *quiet_sweep_->until) &&
        (quiet_sweep_->complete || limit <= quiet_sweep_->limit)) {
      return std::size_t{0};  // no plan has been written and none has reached its TTL since
    }
  }
  PULSE_ASSIGN_OR_RETURN(
      std::vector<ActionRecord> live,
      store_.ListByState(
          {ActionState::kPlanned, ActionState::kPendingApproval, ActionState::kApproved}, limit));
  std::size_t moved = 0;
  std::optional<absl::Time> until;
  for (const ActionRecord& record : live) {
    PULSE_ASSIGN_OR_RETURN(ActionRecord after, MaterializeExpiry(record));
    moved += after.state == ActionState::kExpired && record.state != ActionState::kExpired;
    if (after.state != ActionState::kExpired &&
        (!until.has_value() || after.plan.expires_at < *until)) {
      until = after.plan.expires_at;
    }
  }
  if (generation.has_value() && moved == 0) {
    absl::MutexLock lock(&sweep_mu_);
    quiet_sweep_ = QuietSweep{*generation, started, until, limit, live.size() < limit};
  }
  return moved;
}

}  // namespace pulse::core
