#include "pulse/core/builtins/pulse_control_handler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "pulse/core/actions/action_redaction.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_object.h"
#include "pulse/core/tools/tool_names.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {
namespace {

using json_internal::JsonObject;

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone());
}

std::string StringArray(const std::vector<std::string>& values) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const std::string& v : values) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

std::string ActionPreflightJson(const ActionPreflight& p) {
  JsonObject o;
  o.Str("target", p.target)
      .Str("current_state", p.current_state)
      .Str("intended_change", p.intended_change)
      .Bool("dry_run_available", p.dry_run_available);
  if (!p.dry_run_summary.empty()) {
    o.Str("dry_run_summary", p.dry_run_summary);
  }
  o.Raw("safety_checks", StringArray(p.safety_checks));
  o.Raw("verification_steps", StringArray(p.verification_steps));
  return o.Finish();
}

std::string ActionResultJson(const ActionExecutionResult& r) {
  JsonObject execution;
  execution.Str("status", ToString(r.execution.status));
  if (!r.execution.reason_code.empty()) {
    execution.Str("reason_code", r.execution.reason_code);
  }
  if (!r.execution.summary.empty()) {
    execution.Str("summary", r.execution.summary);
  }
  JsonObject verification;
  verification.Str("status", ToString(r.verification.status))
      .Str("evidence_class", ToString(r.verification.evidence_class));
  if (!r.verification.summary.empty()) {
    verification.Str("summary", r.verification.summary);
  }
  if (!r.verification.observer_id.empty()) {
    verification.Str("observer_id", r.verification.observer_id);
  }
  if (r.verification.observed_at.has_value()) {
    verification.Str("observed_at", Rfc3339(*r.verification.observed_at));
  }
  JsonObject o;
  o.Raw("execution", execution.Finish()).Raw("verification", verification.Finish());
  if (!r.error_message.empty()) {
    o.Str("error_message", r.error_message);
  }
  o.Bool("verified_fix", IsVerifiedFix(r));
  return o.Finish();
}

namespace {

std::string AwaitingJson(const ActionRecord& record, std::string_view status,
                         std::string_view message) {
  JsonObject approval;
  approval.Str("action_id", record.id()).Str("plan_hash", record.plan.plan_hash);
  JsonObject o;
  o.Str("status", status)
      .Bool("execution_requested", false)
      .Bool(kResultDispatchedField, false)
      .Str("message", message)
      .Raw("action", ActionSummaryJson(record))
      .Raw(kResultApprovalNeededField, approval.Finish());
  return o.Finish();
}

// A success over `record`'s `text`, typed: whether the change was dispatched, the action, and
// (for a plan awaiting a decision) the approval the run suspends on.
ToolResult Typed(std::string text, const ActionRecord& record, bool dispatched,
                 bool awaits_decision = false) {
  ToolResult result = ToolResult::Success(std::move(text));
  result.dispatched = dispatched;
  result.action_id = record.id();
  if (awaits_decision && !record.id().empty() && !record.plan.plan_hash.empty()) {
    result.approval = ToolApprovalRequest{record.id(), record.plan.plan_hash};
  }
  return result;
}

ToolResult LifecycleUnavailable(const absl::Status& status) {
  ToolError error;
  error.code = ToolErrorCode::kExecutionFailed;
  error.message = absl::StrCat("the action lifecycle could not be reached: ", status.message());
  error.failed = true;
  error.retryable = true;
  return ToolResult::Failure(std::move(error));
}

}  // namespace

std::string ActionSummaryJson(const ActionRecord& record) {
  const ActionPlan& plan = record.plan;
  JsonObject o;
  o.Str("action_id", plan.action_id)
      .Str("plan_hash", plan.plan_hash)
      .Str("state", ToString(record.state))
      .Str("capability", plan.capability_name)
      .Str("resource_id", plan.resource_id)
      .Raw("params",
           plan.params_json.empty() ? std::string("{}") : RedactParamsJson(plan.params_json))
      .Str("risk", ToString(plan.risk))
      .Bool("requires_approval", plan.requires_approval)
      .Str("approval_floor", ToString(plan.approval_requirement.floor))
      .Int("approval_quorum", plan.approval_requirement.quorum)
      .Bool("rollback_available", plan.rollback_available)
      .Str("expires_at", Rfc3339(plan.expires_at));
  if (!plan.message.empty()) {
    o.Str("message", plan.message);
  }
  o.Raw("preflight", ActionPreflightJson(plan.preflight));
  return o.Finish();
}

std::string ActionOutcomeJson(const ActionRecord& record, bool dispatched,
                              std::string_view message) {
  JsonObject o;
  o.Str("status", ToString(record.state))
      .Bool("execution_requested", true)
      .Bool(kResultDispatchedField, dispatched)
      .Str("message", message)
      .Raw("action", ActionSummaryJson(record));
  if (record.result.has_value()) {
    o.Raw("result", ActionResultJson(*record.result));
  }
  return o.Finish();
}

std::string ActionNotRunJson(const ActionRecord& record, std::string_view message) {
  JsonObject o;
  o.Str("status", ToString(record.state))
      .Bool("execution_requested", false)
      .Bool(kResultDispatchedField, false)
      .Str("message", message)
      .Raw("action", ActionSummaryJson(record));
  return o.Finish();
}

ToolError ActionRefusalToToolError(const ActionRefusal& refusal) {
  ToolError error;
  switch (refusal.code) {
    case AgentErrorCode::kResourceNotFound:
    case AgentErrorCode::kCapabilityNotFound:
    case AgentErrorCode::kActionNotFound:
      error.code = ToolErrorCode::kNotFound;
      error.blocked = true;
      break;
    case AgentErrorCode::kInvalidActionRequest:
    case AgentErrorCode::kMissingId:
    case AgentErrorCode::kInvalidId:
      error.code = ToolErrorCode::kInvalidInput;
      error.blocked = true;
      break;
    case AgentErrorCode::kActionExecutionUnavailable:
    case AgentErrorCode::kActionExecutorUnavailable:
    case AgentErrorCode::kActionExecutionAvailabilityFailed:
      error.code = ToolErrorCode::kExecutionFailed;
      error.failed = true;
      break;
    default:
      error.code = ToolErrorCode::kPolicyBlocked;
      error.blocked = true;
      break;
  }
  error.message = refusal.message;
  error.details.emplace_back("action_error", std::string(ToString(refusal.code)));
  if (refusal.record.has_value()) {
    error.details.emplace_back("action_id", refusal.record->id());
  }
  for (const auto& [field, reason] : refusal.details) {
    error.details.emplace_back(absl::StrCat("field.", field), reason);
  }
  return error;
}

ToolError UnrecordedDispatchError(std::string_view action_id,
                                  const absl::StatusOr<Refusable<ExecuteOutcome>>& executed) {
  const std::string reason = !executed.ok()        ? std::string(executed.status().message())
                             : executed->refused() ? executed->refusal().message
                                                   : std::string("no outcome was returned");
  ToolError error;
  error.code = ToolErrorCode::kExecutionFailed;
  error.message = absl::StrCat(
      "the action was dispatched to the fleet, but its outcome could not be recorded (", reason,
      "). Take the change as made: read the target's current state to verify it before "
      "answering or changing anything else. Do not call pulse_control for it again: this "
      "action never runs again, and a new call would dispatch the change a second time.");
  error.failed = true;
  error.retryable = false;
  error.details.emplace_back("action_id", std::string(action_id));
  error.details.emplace_back(std::string(kResultDispatchedField), true);
  if (executed.ok() && executed->refused()) {
    error.details.emplace_back("action_error", std::string(ToString(executed->refusal().code)));
  }
  return error;
}

PulseControlHandler::PulseControlHandler(ActionService& actions, IdSource& ids,
                                         ActionActor requester)
    : actions_(actions), ids_(ids), requester_(std::move(requester)) {}

ToolResult PulseControlHandler::Run(const rapidjson::Value& args, const ToolContext& context) {
  ActionRequest request;
  request.request_id = absl::StrCat("pc-", ids_.NewId());
  request.resource_id = std::string(GetString(args, kArgResourceId).value_or(""));
  request.capability_name = std::string(GetString(args, kArgCapability).value_or(""));
  const rapidjson::Value* params = GetMember(args, kArgParams);
  request.params_json = params != nullptr && params->IsObject() ? ToJsonString(*params) : "{}";
  // The reason is the model's free text and is stored, audited and served with the action: it
  // is redacted before anything keeps it. Params keep their values (the executor needs them);
  // every served copy masks them (action_redaction.h).
  request.reason = RedactSecrets(GetString(args, kArgReason).value_or(""));
  request.actor = requester_;
  // Below autonomous a human consents to every change, and consent is an approval record: the
  // plan waits in pending_approval with the session's posture as its reason.
  const ControlLevel level = context.policy.EffectiveLevel();
  if (level != ControlLevel::kAutonomous) {
    request.approval_posture = absl::StrCat("control_level:", std::string(ToString(level)));
  }

  absl::StatusOr<Refusable<PlanOutcome>> planned = actions_.Plan(request);
  if (!planned.ok()) {
    return LifecycleUnavailable(planned.status());
  }
  if (planned->refused()) {
    return ToolResult::Failure(ActionRefusalToToolError(planned->refusal()));
  }
  const ActionRecord& record = planned->value().record;
  switch (record.state) {
    case ActionState::kPendingApproval:
      return Typed(AwaitingJson(record, kControlAwaitingApproval,
                                "The action was planned; execution was not requested. It runs "
                                "only after an operator approves this exact plan."),
                   record, false, /*awaits_decision=*/true);
    case ActionState::kPlanned:
      break;
    case ActionState::kCompleted:
    case ActionState::kFailed:
      return Typed(ActionOutcomeJson(record, false,
                                     "An identical plan already ran; nothing was executed now."),
                   record, false);
    default:
      return Typed(
          ActionNotRunJson(record, "The plan is not executable now; nothing was executed."), record,
          false);
  }
  // An approval-free plan: only an autonomous run executes it without a human. (Below
  // autonomous the posture made it pending_approval; a plan still here is dry-run only.)
  if (level != ControlLevel::kAutonomous) {
    return Typed(AwaitingJson(record, kControlAwaitingDecision,
                              "The action was planned; execution was not requested. It runs "
                              "only after an operator confirms it."),
                 record, false, /*awaits_decision=*/true);
  }
  ExecuteRequest execute;
  execute.action_id = record.id();
  execute.plan_hash = record.plan.plan_hash;
  execute.reason = request.reason;
  execute.actor = requester_;
  absl::StatusOr<Refusable<ExecuteOutcome>> executed = actions_.Execute(execute);
  if (ExecuteDispatchedUnrecorded(executed)) {
    // Not an unreachable lifecycle: the change happened. The loop must verify it.
    ToolResult result = ToolResult::Failure(UnrecordedDispatchError(execute.action_id, executed));
    result.dispatched = true;
    result.action_id = execute.action_id;
    return result;
  }
  if (!executed.ok()) {
    return LifecycleUnavailable(executed.status());
  }
  if (executed->refused()) {
    return ToolResult::Failure(ActionRefusalToToolError(executed->refusal()));
  }
  const ExecuteOutcome& outcome = executed->value();
  const bool dispatched = outcome.dispatched ||
                          (outcome.record.result.has_value() && outcome.record.result->dispatched);
  return Typed(ActionOutcomeJson(outcome.record, dispatched,
                                 "The approval-free plan was executed through the action "
                                 "lifecycle under autonomous control."),
               outcome.record, dispatched);
}

}  // namespace pulse::core
