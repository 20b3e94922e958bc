#include "loop_emitter.h"

#include <utility>

#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/json/json_object.h"
#include "pulse/core/model/usage.h"

namespace pulse::core::loop_internal {

using json_internal::JsonObject;

Emitter::Emitter(EventSink& sink, const ModelRoute& route)
    : sink_(sink),
      route_label_(RouteLabel(route)),
      budget_applicable_(BudgetApplicable(route.route)),
      price_known_(UsablePrice(route).has_value()) {}

void Emitter::Emit(LoopEventType type, std::string data_json) {
  if (done_) {
    return;
  }
  if (type == LoopEventType::kDone) {
    done_ = true;
  }
  sink_.Emit(LoopEvent{type, std::move(data_json)});
}

void Emitter::Session(std::string_view id) {
  Emit(LoopEventType::kSession, JsonObject().Str("id", id).Finish());
}

void Emitter::WorkflowState(std::string_view phase, std::string_view message,
                            std::optional<SessionState> state, std::string_view tool) {
  JsonObject o;
  o.Str("phase", phase).Str("message", message);
  if (state.has_value()) {
    o.Str("state", ToString(*state));
  }
  if (!tool.empty()) {
    o.Str("tool", tool);
  }
  Emit(LoopEventType::kWorkflowState, o.Finish());
}

void Emitter::ProviderRetry(int attempt, int max_attempts, std::int64_t retry_after_ms,
                            std::string_view message, SessionState state) {
  JsonObject o;
  o.Str("phase", "provider_retry")
      .Str("message", message)
      .Str("state", ToString(state))
      .Int("attempt", attempt)
      .Int("max_attempts", max_attempts)
      .Int("retry_after_ms", retry_after_ms);
  Emit(LoopEventType::kWorkflowState, o.Finish());
}

void Emitter::Content(std::string_view text) {
  if (text.empty()) {
    return;
  }
  Emit(LoopEventType::kContent, JsonObject().Str("text", RedactSecrets(text)).Finish());
}

void Emitter::ToolStart(std::string_view id, std::string_view name, std::string_view input) {
  Emit(LoopEventType::kToolStart,
       JsonObject().Str("id", id).Str("name", name).Str("input", RedactSecrets(input)).Finish());
}

void Emitter::ToolProgress(std::string_view id, std::string_view name, std::string_view phase,
                           std::string_view message) {
  Emit(LoopEventType::kToolProgress, JsonObject()
                                         .Str("id", id)
                                         .Str("name", name)
                                         .Str("phase", phase)
                                         .Str("message", message)
                                         .Finish());
}

void Emitter::ToolEnd(std::string_view id, std::string_view name, std::string_view output,
                      bool success) {
  Emit(LoopEventType::kToolEnd, JsonObject()
                                    .Str("id", id)
                                    .Str("name", name)
                                    .Str("output", RedactSecrets(output))
                                    .Bool("success", success)
                                    .Finish());
}

void Emitter::ApprovalNeeded(const ActionRecord& record, std::string_view tool_id,
                             std::string_view tool_name) {
  // Built from the authoritative record, so the stream shows exactly the plan a decision binds.
  const ActionPlan& plan = record.plan;
  JsonObject o;
  o.Str("action_id", plan.action_id)
      .Str("plan_hash", plan.plan_hash)
      .Str("risk", ToString(plan.risk))
      .Str("capability", plan.capability_name)
      .Str("resource_id", plan.resource_id)
      .Raw("preflight", ActionPreflightJson(plan.preflight))
      .Str("state", ToString(record.state))
      .Bool("requires_approval", plan.requires_approval)
      .Str("approval_floor", ToString(plan.approval_requirement.floor))
      .Str("approval_reason", plan.message)
      .Str("tool_id", tool_id)
      .Str("tool_name", tool_name);
  Emit(LoopEventType::kApprovalNeeded, o.Finish());
}

void Emitter::Question(std::string_view session_id, std::string_view question_id,
                       std::string_view question_json) {
  JsonObject o;
  o.Str("session_id", session_id).Str("question_id", question_id).Raw("question", question_json);
  Emit(LoopEventType::kQuestion, o.Finish());
}

void Emitter::Error(std::string_view code, std::string_view reason, std::string_view message,
                    std::string_view tool_name, const RunCounters& counters,
                    int max_provider_calls) {
  if (error_ || done_) {
    return;
  }
  error_ = true;
  JsonObject o;
  o.Str("code", code).Str("reason", reason).Str("message", message);
  if (!tool_name.empty()) {
    o.Str("tool_name", tool_name);
  }
  o.Int("provider_calls", counters.provider_calls).Int("max_provider_calls", max_provider_calls);
  Emit(LoopEventType::kError, o.Finish());
}

void Emitter::Done(std::string_view session_id, std::string_view outcome, SessionState state,
                   const RunCounters& counters) {
  JsonObject o;
  o.Str("session_id", session_id)
      .Str("outcome", outcome)
      .Str("state", ToString(state))
      .Int("turns", counters.turns)
      .Int("provider_calls", counters.provider_calls)
      .Int("tool_calls", counters.tool_calls)
      .Int("input_tokens", counters.input_tokens)
      .Int("output_tokens", counters.output_tokens)
      .Str("route", route_label_);
  if (budget_applicable_ && price_known_ && !counters.cost_unknown) {
    o.Double("cost_usd", counters.cost_usd);
  } else {
    o.Null("cost_usd");
  }
  o.Bool("budget_applicable", budget_applicable_);
  Emit(LoopEventType::kDone, o.Finish());
}

}  // namespace pulse::core::loop_internal
