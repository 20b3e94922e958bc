// The pulse_control tool handler: turns the model's typed capability request into a governed
// action plan through ActionService (docs/architecture.md "Governed actions"). It never touches
// infrastructure itself. The plan needs a decision (the run then suspends on it) unless the run is
// autonomous and the plan is approval-free, in which case the lifecycle executes it at once. Every
// success is typed (ToolResult::dispatched, action_id, and approval for a plan awaiting a
// decision); its text says the same for the model and carries the plan's risk, approval requirement
// and preflight; the lifecycle's own verification is reported under "result" and is never taken as
// the session's verification evidence. A dispatch whose outcome could not be recorded is a
// failure with ToolResult::dispatched = true.
// Thread-safe when ActionService and IdSource are (the loop may run it beside other calls).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/id_source.h"

namespace pulse::core {

// "status" values of a pulse_control (or resumed) result.
inline constexpr std::string_view kControlAwaitingApproval = "awaiting_approval";
inline constexpr std::string_view kControlAwaitingDecision = "awaiting_decision";

class PulseControlHandler final : public ToolHandler {
 public:
  // Borrows `actions` and `ids`, which must outlive the handler. Plans are requested as
  // `requester` (the Assistant's agent identity).
  PulseControlHandler(ActionService& actions, IdSource& ids, ActionActor requester);

  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  ActionService& actions_;
  IdSource& ids_;
  ActionActor requester_;
};

// {"target","current_state","intended_change","dry_run_available","dry_run_summary"?,
//  "safety_checks":[...],"verification_steps":[...]}
std::string ActionPreflightJson(const ActionPreflight& preflight);

// {"action_id","plan_hash","state","capability","resource_id","params","risk",
//  "requires_approval","approval_floor","expires_at","message","preflight":{...}} of one record.
// params go through RedactParamsJson: a secret-named parameter is never echoed to the model or
// a client, although the plan keeps its value for the executor.
std::string ActionSummaryJson(const ActionRecord& record);

// The two-axis result of one action: {"execution":{"status","reason_code"?,"summary"?},
//  "verification":{"status","evidence_class","summary"?,"observer_id"?,"observed_at"?},
//  "error_message"?,"verified_fix"}.
std::string ActionResultJson(const ActionExecutionResult& result);

// The result of an action whose lifecycle ran (or was found terminal): status = the record's
// state, "execution_requested": true, "dispatched", the summary, and "result" with the
// execution and verification axes when the record has one. `message` is a short sentence.
std::string ActionOutcomeJson(const ActionRecord& record, bool dispatched,
                              std::string_view message);

// A non-error result for a plan that ended without running (rejected, expired): status = the
// record's state, "execution_requested": false, "dispatched": false.
std::string ActionNotRunJson(const ActionRecord& record, std::string_view message);

// The tool error for a lifecycle refusal: NOT_FOUND, INVALID_INPUT, POLICY_BLOCKED or
// EXECUTION_FAILED by code, with details action_error (the agent error code) and action_id.
ToolError ActionRefusalToToolError(const ActionRefusal& refusal);

// The tool error for an Execute of `action_id` that dispatched the action but could not record
// its outcome (ExecuteDispatchedUnrecorded(executed) is true): EXECUTION_FAILED, failed, and
// never retryable, because the recorded action never runs again while a new pulse_control call
// plans a new action and would dispatch the change a second time. Details: action_id,
// dispatched: true, and action_error when the lifecycle refused (action_not_executing).
ToolError UnrecordedDispatchError(std::string_view action_id,
                                  const absl::StatusOr<Refusable<ExecuteOutcome>>& executed);

}  // namespace pulse::core
