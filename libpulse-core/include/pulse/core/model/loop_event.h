// The stream events of one agentic run (docs/architecture.md "The agentic loop"), as the chat SSE
// stream frames them: {"type": <wire type>, "data": <data_json>}. Within a run they come in this
// order: `session` first; `workflow_state` as phases change; `content` as the model's text streams;
// per tool call `tool_start`, `tool_progress`, then `tool_end` (in provider order);
// `approval_needed` and `question` after the tool_ends of the turn that asked; at most one
// `error`; and `done` last, exactly once, on every path. Plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pulse::core {

// Payloads (data_json), member order as written:
enum class LoopEventType {
  // {id}: the session id ("" when the requested id was invalid).
  kSession,
  // {phase, message, state?, tool?} and, for phase provider_retry, {attempt, max_attempts,
  // retry_after_ms}: `max_attempts` is the cap of the failure's class (LoopOptions
  // max_provider_attempts, or max_rate_limit_attempts for a rate limit), `attempt` the attempt
  // about to be made within that class (2 for its first retry), `retry_after_ms` the wait
  // before it. Phases: prepare, model_processing, provider_retry, plan, execute,
  // verify, approve, clarify. `state` is the session FSM state.
  kWorkflowState,
  // {text}: a delta of the model's visible answer (or the deterministic fallback).
  kContent,
  // {id, name, input}: input is the model's argument text.
  kToolStart,
  // {id, name, phase: running|waiting, message}
  kToolProgress,
  // {id, name, output, success}: output is the result text the model receives, unframed.
  kToolEnd,
  // {action_id, plan_hash, risk, capability, resource_id, preflight{target, current_state,
  // intended_change, dry_run_available, dry_run_summary?, safety_checks, verification_steps},
  // state, requires_approval, approval_floor, tool_id, tool_name}: from the lifecycle record.
  kApprovalNeeded,
  // {session_id, question_id, question: {question, options: [...]}}
  kQuestion,
  // {code, reason, message, tool_name?, provider_calls, max_provider_calls}
  kError,
  // {session_id, outcome, state, turns, provider_calls, tool_calls, input_tokens,
  // output_tokens, route, cost_usd, budget_applicable}: outcome is one of the kOutcome*
  // strings below; the counters cover this run (a resumed run continues its suspended run's).
  // `route` is the "provider:model" identity of the loop's route ("" when unnamed);
  // `budget_applicable` is false for routes without per-token billing (local model server,
  // coding-plan allowance); `cost_usd` is the run's money cost in US dollars, or null when it
  // is unknown: a route without per-token billing, or a metered route whose price is unknown.
  kDone,
};

// Wire type: session, workflow_state, content, tool_start, tool_progress, tool_end,
// approval_needed, question, error, done.
std::string_view ToString(LoopEventType type);
std::optional<LoopEventType> ParseLoopEventType(std::string_view text);

struct LoopEvent {
  LoopEventType type = LoopEventType::kDone;
  std::string data_json;  // one JSON object

  friend bool operator==(const LoopEvent&, const LoopEvent&) = default;
};

// ---- `error` event vocabulary -------------------------------------------------------------

// Codes: a bounded-loop stop, a provider failure, or an engine failure.
inline constexpr std::string_view kErrorCodeBoundedFailure = "TOOL_LOOP_BOUNDED_FAILURE";
inline constexpr std::string_view kErrorCodeProviderError = "PROVIDER_ERROR";
inline constexpr std::string_view kErrorCodeEngineError = "ENGINE_ERROR";
inline constexpr std::string_view kErrorCodeResumeRefused = "RESUME_REFUSED";
inline constexpr std::string_view kErrorCodeCancelled = "RUN_CANCELLED";

// Stable reasons (clients and alerts branch on these, never on the message).
inline constexpr std::string_view kReasonRepeatedDeniedCall = "repeated_denied_tool_call";
inline constexpr std::string_view kReasonMaxProviderCalls = "max_provider_calls";
inline constexpr std::string_view kReasonTokenAllowance = "token_allowance_exhausted";
// The run's or the session's money budget (LoopOptions::max_cost_usd, max_session_cost_usd)
// is spent; checked before every call.
inline constexpr std::string_view kReasonCostBudgetExhausted = "cost_budget_exhausted";
// A cap shared by every run (LoopOptions::spend_guard: the operator's monthly spend cap) is
// reached, or its total cannot be read; checked before every metered call.
inline constexpr std::string_view kReasonSpendCapReached = "spend_cap_reached";
// A money budget is set but the metered route's price is unknown: the cost of a call cannot be
// bounded, so no call is made (fail closed).
inline constexpr std::string_view kReasonCostUnknown = "cost_unknown";
// Whoever started the run gave up on it (RunRequest::cancelled), or the provider reported the
// request cancelled. Never retried.
inline constexpr std::string_view kReasonCancelled = "cancelled";
// The set of local-only resources could not be read, so the outbound context policy could not
// be applied: no provider call is made on a route that is not local.
inline constexpr std::string_view kReasonLocalOnlyUnavailable = "local_only_state_unavailable";
inline constexpr std::string_view kReasonProviderRateLimited = "provider_rate_limited";
inline constexpr std::string_view kReasonProviderUnavailable = "provider_unavailable";
inline constexpr std::string_view kReasonProviderInvalidRequest = "provider_invalid_request";
inline constexpr std::string_view kReasonProviderIncomplete = "provider_stream_incomplete";
inline constexpr std::string_view kReasonProviderFailed = "provider_failed";
inline constexpr std::string_view kReasonSessionStore = "session_store_unavailable";
inline constexpr std::string_view kReasonSessionBusy = "session_busy";
inline constexpr std::string_view kReasonInvalidSession = "invalid_session";
inline constexpr std::string_view kReasonTaskRunner = "task_runner_unavailable";
inline constexpr std::string_view kReasonNothingToResume = "nothing_to_resume";
inline constexpr std::string_view kReasonApprovalPending = "approval_pending";
inline constexpr std::string_view kReasonActionService = "action_service_unavailable";

// ---- `done` outcomes ----------------------------------------------------------------------
inline constexpr std::string_view kOutcomeAnswered = "answered";
inline constexpr std::string_view kOutcomeFallbackSummary = "fallback_summary";
inline constexpr std::string_view kOutcomeUnverified = "unverified";
inline constexpr std::string_view kOutcomeAwaitingApproval = "awaiting_approval";
inline constexpr std::string_view kOutcomeAwaitingInput = "awaiting_input";
inline constexpr std::string_view kOutcomeFailed = "failed";

}  // namespace pulse::core
