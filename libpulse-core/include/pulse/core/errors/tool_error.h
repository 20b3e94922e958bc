// Tool-result error vocabulary: the UPPER_SNAKE codes a model sees inside a tool result,
// rendered as JSON {"error":{"code":...,"message":...}} so a model branches on the code,
// never on prose. Also the shared parsers that read a code or verification evidence back
// out of arbitrary tool-result text. Plain values; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace pulse::core {

// Closed set of tool-result codes. Wire strings are the UPPER_SNAKE names. The reference's
// STRICT_RESOLUTION and ROUTING_MISMATCH are deliberately absent: this engine has no strict
// resolution mode (a write before any resolution is FSM_BLOCKED) and no host routing a call
// could contradict (a call names its canonical target and the Fleet port serves exactly that
// resource), so no path could produce them.
enum class ToolErrorCode {
  kFsmBlocked,         // FSM_BLOCKED: the session safety state machine refused the call
  kPolicyBlocked,      // POLICY_BLOCKED: the invocation policy refused the call
  kApprovalRequired,   // APPROVAL_REQUIRED: the change needs a human or policy decision
  kInvalidInput,       // INVALID_INPUT: arguments failed validation
  kNotFound,           // NOT_FOUND: the named resource/finding/action does not exist
  kExecutionFailed,    // EXECUTION_FAILED: the tool ran and failed
  kNoAgent,            // NO_AGENT: no infrastructure agent can serve the target
  kLoopDetected,       // LOOP_DETECTED: the same denied call was repeated
  kBudgetExhausted,    // BUDGET_EXHAUSTED: a run budget (turns, evidence, tokens) is spent
  kToolNotAdvertised,  // TOOL_NOT_ADVERTISED: the tool was not offered on this turn
  kNonInteractive,     // NON_INTERACTIVE: a question in a run no user can answer
  // EXECUTION_CONTEXT_UNAVAILABLE: the target exists but has nowhere to run a command (the
  // Fleet port's FailedPrecondition from RunReadOnlyCommand, e.g. a backup job); nothing ran.
  kExecutionContextUnavailable,
};

// All codes, in declaration order (for exhaustive tests and manifests).
const std::vector<ToolErrorCode>& AllToolErrorCodes();

// Wire string, e.g. "FSM_BLOCKED".
std::string_view ToString(ToolErrorCode code);
// Exact-match parse of a wire string; anything else is nullopt.
std::optional<ToolErrorCode> ParseToolErrorCode(std::string_view text);

// One detail value; details keep insertion order so rendered JSON is deterministic.
using ToolErrorDetail = std::variant<std::string, bool, std::int64_t>;

struct ToolError {
  ToolErrorCode code = ToolErrorCode::kExecutionFailed;
  std::string message;
  bool blocked = false;    // refused before anything ran
  bool failed = false;     // ran and failed
  bool retryable = false;  // a later identical call may succeed
  std::vector<std::pair<std::string, ToolErrorDetail>> details;

  // {"error":{"code":"...","message":"...","blocked"?:true,"failed"?:true,
  //  "retryable"?:true,"details"?:{...}}}. False flags and empty details are omitted.
  std::string ToJson() const;
};

// Reads the error code out of a tool result's text: the first '{' starts one JSON object
// (text after it makes the parse fail); `error.code` (non-blank string) wins, then a
// legacy top-level `error_code`. Returns nullopt when there is no such code. The returned
// string may be a code outside ToolErrorCode (results from other systems).
std::optional<std::string> ExtractToolErrorCode(std::string_view result_text);

// True only when the result text holds a JSON object (located as above) whose
// `verification` member is an object with `ok` equal to the JSON boolean true.
bool HasVerificationOk(std::string_view result_text);

}  // namespace pulse::core
