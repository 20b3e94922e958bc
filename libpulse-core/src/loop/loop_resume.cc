// Resuming a run suspended on an action decision: the decided outcome becomes the stored
// call's result (the model is never asked to re-emit the call).
#include <utility>

#include "absl/strings/str_cat.h"
#include "loop_run.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/json/json.h"
#include "pulse/core/loop/knowledge.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/tools/classify.h"

namespace pulse::core {
namespace {

std::string BlockedJson(ToolErrorCode code, std::string message, std::string_view action_error) {
  ToolError error;
  error.code = code;
  error.message = std::move(message);
  error.blocked = true;
  if (!action_error.empty()) {
    error.details.emplace_back("action_error", std::string(action_error));
  }
  return error.ToJson();
}

// True when a human approval of exactly `plan_hash` is on record.
bool HasRecordedApproval(const ActionRecord& record, std::string_view plan_hash) {
  for (const ApprovalRecord& a : record.approvals) {
    if (a.outcome == DecisionOutcome::kApproved && a.plan_hash == plan_hash &&
        a.actor.kind == ActorKind::kHuman) {
      return true;
    }
  }
  return false;
}

}  // namespace

LoopRun::DecisionResult LoopRun::ApplyDecision(const SuspendedCall& suspended,
                                               const Refusable<ActionRecord>& decided,
                                               const ActionActor& actor, absl::Status& error) {
  std::string content;
  bool is_error = false;
  bool dispatched = false;
  InvocationClass invocation = kFailClosedClass;

  events_.ToolStart(suspended.tool_call_id, suspended.tool_name, suspended.arguments_json);
  absl::StatusOr<rapidjson::Document> args = ParseJson(suspended.arguments_json);
  rapidjson::Document no_args(rapidjson::kObjectType);
  const rapidjson::Value& call_args = args.ok() && args->IsObject() ? *args : no_args;

  if (decided.refused()) {
    content = ActionRefusalToToolError(decided.refusal()).ToJson();
    is_error = true;
  } else if (decided.value().plan.plan_hash != suspended.plan_hash) {
    content = BlockedJson(ToolErrorCode::kPolicyBlocked,
                          "the recorded plan no longer matches the plan this call suspended on; "
                          "nothing was executed",
                          ToString(AgentErrorCode::kActionPlanIdentityMismatch));
    is_error = true;
  } else {
    const ActionRecord& record = decided.value();
    switch (record.state) {
      case ActionState::kRejected:
        // A decision, not a failure: no error, and the FSM does not move.
        content = ActionNotRunJson(record, "An operator rejected the plan; nothing was executed.");
        break;
      case ActionState::kExpired:
        content = ActionNotRunJson(record,
                                   "The plan expired before a decision was applied; "
                                   "nothing was executed.");
        break;
      case ActionState::kCompleted:
      case ActionState::kFailed:
        dispatched = record.result.has_value() && record.result->dispatched;
        content = ActionOutcomeJson(record, dispatched,
                                    "The action already ran through the action lifecycle.");
        is_error = record.state == ActionState::kFailed;
        invocation = ClassifyRegistered(loop_.registry_, suspended.tool_name, call_args);
        break;
      case ActionState::kExecuting:
        // Running elsewhere: whatever it changes must be verified before an answer.
        dispatched = true;
        content = ActionOutcomeJson(record, true,
                                    "The action is executing through the action lifecycle; its "
                                    "outcome is not known yet.");
        invocation = ClassifyRegistered(loop_.registry_, suspended.tool_name, call_args);
        break;
      case ActionState::kPendingApproval:
        error = absl::FailedPreconditionError("the action has no decision yet");
        return DecisionResult::kRetryLater;
      case ActionState::kApproved:
      case ActionState::kPlanned: {
        // Authority and session safety are re-checked now, as for any call.
        const Decision decision = Decide(policy_, loop_.registry_, suspended.tool_name, call_args);
        invocation = decision.invocation_class;
        if (!decision.allowed) {
          content = decision.ToToolError().ToJson();
          is_error = true;
          break;
        }
        if (std::optional<FsmBlockedError> block =
                fsm_.CanExecute(decision.invocation_class, suspended.tool_name)) {
          content = block->ToToolError().ToJson();
          is_error = true;
          break;
        }
        // Consent is an approval record bound to this plan, never the act of resuming.
        if (!HasRecordedApproval(record, suspended.plan_hash)) {
          content = BlockedJson(ToolErrorCode::kPolicyBlocked,
                                "this plan has no recorded approval bound to its plan hash; "
                                "resuming the conversation is not an approval. Nothing was "
                                "executed.",
                                ToString(AgentErrorCode::kActionNotApproved));
          is_error = true;
          break;
        }
        events_.WorkflowState("execute", "Approval granted. Executing the approved action.",
                              fsm_.State(), suspended.tool_name);
        events_.ToolProgress(suspended.tool_call_id, suspended.tool_name, "running",
                             "Executing approved action.");
        ExecuteRequest execute;
        execute.action_id = suspended.action_id;
        execute.plan_hash = suspended.plan_hash;  // bound to the exact plan that was decided
        execute.reason = absl::StrCat("approved plan resumed in session ", session_.id);
        execute.actor = actor;
        absl::StatusOr<Refusable<ExecuteOutcome>> executed = loop_.actions_.Execute(execute);
        if (ExecuteDispatchedUnrecorded(executed)) {
          // The action ran but its outcome was not recorded: an error result, and still a
          // dispatched write (never a retry later: the action would not run again).
          dispatched = true;
          content = UnrecordedDispatchError(suspended.action_id, executed).ToJson();
          is_error = true;
          break;
        }
        if (!executed.ok()) {
          error = executed.status();
          events_.ToolEnd(suspended.tool_call_id, suspended.tool_name,
                          "The action lifecycle could not be reached; the call stays suspended "
                          "and nothing was executed.",
                          false);
          return DecisionResult::kRetryLater;
        }
        if (executed->refused()) {
          const ActionRefusal& refusal = executed->refusal();
          if (refusal.code == AgentErrorCode::kActionPlanExpired) {
            content = ActionNotRunJson(refusal.record.value_or(record),
                                       "The plan expired before it could run; nothing was "
                                       "executed.");
          } else {
            content = ActionRefusalToToolError(refusal).ToJson();
            is_error = true;
          }
          break;
        }
        const ExecuteOutcome& outcome = executed->value();
        dispatched = outcome.dispatched ||
                     (outcome.record.result.has_value() && outcome.record.result->dispatched);
        content = ActionOutcomeJson(outcome.record, dispatched,
                                    "The approved plan was executed through the action "
                                    "lifecycle.");
        is_error = outcome.record.state == ActionState::kFailed;
        break;
      }
    }
  }

  events_.ToolEnd(suspended.tool_call_id, suspended.tool_name, content, !is_error);
  if (dispatched) {
    // A dispatched mutation is a write transition whatever its result: the change must be
    // verified with current evidence before the model may conclude.
    fsm_.OnToolSucceeded(invocation, suspended.tool_name, true);
    if (fsm_.State() == SessionState::kVerifying) {
      events_.WorkflowState("verify", "Verifying the write before the Assistant responds.",
                            fsm_.State(), suspended.tool_name);
    }
  }
  if (is_error) {
    ++counters_.tool_errors;
  }
  for (KnowledgeFact& fact : ExtractFacts(suspended.tool_name, call_args, content, is_error,
                                          suspended.tool_call_id, counters_.turns)) {
    knowledge_.Upsert(std::move(fact), counters_.turns);
  }
  Message& result = session_.transcript[suspended.transcript_index];
  result.content = content;
  result.is_error = is_error;
  return DecisionResult::kApplied;
}

}  // namespace pulse::core
