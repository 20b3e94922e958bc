// The stream events of one agentic run (ARCHITECTURE §4.4), as the chat SSE stream frames
// them: {"type": <wire type>, "data": <data_json>}. Within a run they come in this order:
// `session` first; `workflow_state` as phases change; `content` as the model's text streams;
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
  // retry_after_ms}. Phases: prepare, model_processing, provider_retry, plan, execute, verify,
  // approve, clarify. `state` is the session FSM state.
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
  // output_tokens}: outcome is one of the kOutcome* strings below.
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

// Stable reasons (clients and alerts branch on these, never on the message).
inline constexpr std::string_view kReasonRepeatedDeniedCall = "repeated_denied_tool_call";
inline constexpr std::string_view kReasonMaxProviderCalls = "max_provider_calls";
inline constexpr std::string_view kReasonTokenAllowance = "token_allowance_exhausted";
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
