// Provider-neutral language-model vocabulary: conversation messages (system, user, assistant
// with tool calls, tool results), tool definitions, one completion request, the events a
// streamed response is made of, and the typed errors a provider reports. Adapters translate
// these to and from each vendor's wire format; the agentic loop sees nothing else.
// Plain values: copyable, comparable, no shared state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pulse::core {

// kRefusedClaim is a transcript entry, never a provider role: an answer the loop refused because
// a change was still unverified (or text the model sent beside calls that were all refused
// then). It is never streamed or served as an assistant message; clients show it as a refused
// claim. The provider view (BuildProviderMessages) turns it back into the model's own
// assistant text, so the model sees what it said before the verification instruction.
enum class MessageRole { kSystem, kUser, kAssistant, kTool, kRefusedClaim };
// Wire: system, user, assistant, tool, refused_claim.
std::string_view ToString(MessageRole role);
std::optional<MessageRole> ParseMessageRole(std::string_view text);

// The most bytes of ToolCall::provider_state; a protocol drops a longer value rather than
// keep or cut it.
inline constexpr std::size_t kMaxProviderStateBytes = std::size_t{64} << 10;

// One tool call as the model emitted it. `arguments_json` is the model's text, unparsed: it
// may be malformed, and the loop refuses it then.
struct ToolCall {
  std::string id;  // provider call id (call_..., toolu_..., ...); never shown to users
  std::string name;
  std::string arguments_json;
  // Opaque bytes the provider attached to the call and requires back verbatim with it (Gemini's
  // thoughtSignature: without it the next request is refused). Stored with the transcript and
  // replayed only by the protocol that produced it; other protocols ignore it. It is not text:
  // never shown to users, never sanitized, at most kMaxProviderStateBytes. "" when none.
  std::string provider_state = {};

  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

struct Message {
  MessageRole role = MessageRole::kUser;
  // Text for system/user/assistant messages; the result text for a tool message.
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant only, in provider order
  std::string tool_call_id;          // tool only: the call this result answers
  std::string tool_name;             // tool only: the tool that produced it
  bool is_error = false;             // tool only

  static Message System(std::string text);
  static Message User(std::string text);
  static Message Assistant(std::string text, std::vector<ToolCall> calls = {});
  static Message ToolResult(std::string call_id, std::string tool_name, std::string content,
                            bool is_error);
  static Message RefusedClaim(std::string text);

  friend bool operator==(const Message&, const Message&) = default;
};

struct ToolDefinition {
  std::string name;
  std::string description;
  std::string input_schema_json;  // closed JSON Schema of the arguments object

  friend bool operator==(const ToolDefinition&, const ToolDefinition&) = default;
};

// kUnset sends no tool_choice at all. The loop always sends kUnset: a turn that must not call
// tools omits them from the request instead (the model owns the choice when tools are offered).
enum class ToolChoice { kUnset, kNone, kRequired };
// Wire: unset, none, required.
std::string_view ToString(ToolChoice choice);

struct LlmRequest {
  std::vector<Message> messages;      // the system prompt first, when there is one
  std::vector<ToolDefinition> tools;  // empty: a tool-free request
  ToolChoice tool_choice = ToolChoice::kUnset;
  std::optional<int> max_tokens;  // completion cap; nullopt: the provider's default
  // Set to true by whoever gave up on the response (the run was stopped, the client left).
  // A provider checks it while it waits and streams, and then returns CancelledError
  // promptly, delivering nothing more. Null: never cancelled. Shared, not owned.
  std::shared_ptr<const std::atomic<bool>> cancelled;

  friend bool operator==(const LlmRequest&, const LlmRequest&) = default;
};

struct TokenUsage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;

  friend bool operator==(const TokenUsage&, const TokenUsage&) = default;
};

// Why a response ended. kError: the provider reported a failure inside the stream.
enum class FinishReason { kStop, kToolCalls, kLength, kError };
// Wire: stop, tool_calls, length, error.
std::string_view ToString(FinishReason reason);

// One event of a streamed response. A complete response carries exactly one kFinish, last;
// a tool call is delivered once, complete (adapters assemble argument fragments themselves).
struct LlmStreamEvent {
  enum class Kind { kContentDelta, kToolCall, kUsage, kFinish };

  Kind kind = Kind::kContentDelta;
  std::string text;                                  // kContentDelta
  ToolCall tool_call;                                // kToolCall
  TokenUsage usage;                                  // kUsage (added to the run's totals)
  FinishReason finish_reason = FinishReason::kStop;  // kFinish

  static LlmStreamEvent ContentDelta(std::string text);
  static LlmStreamEvent ToolCallDone(ToolCall call);
  static LlmStreamEvent Usage(std::int64_t input_tokens, std::int64_t output_tokens);
  static LlmStreamEvent Finish(FinishReason reason);

  friend bool operator==(const LlmStreamEvent&, const LlmStreamEvent&) = default;
};

// ---- typed provider errors ---------------------------------------------------------------
// A provider reports failures as absl::Status values built by the functions below, so the
// loop can branch on the kind and never on message text.

enum class LlmErrorKind {
  kRateLimited,       // ResourceExhausted; may carry a retry-after
  kUnavailable,       // Unavailable or DeadlineExceeded: transient, retry may succeed
  kInvalidRequest,    // InvalidArgument, PermissionDenied, Unauthenticated, FailedPrecondition
  kIncompleteStream,  // DataLoss: the stream ended without a terminal finish reason
  kOther,             // anything else (Internal, Unknown, ...)
};
// Wire: rate_limited, unavailable, invalid_request, incomplete_stream, other.
std::string_view ToString(LlmErrorKind kind);

// ResourceExhausted with `retry_after` attached (a non-positive duration attaches nothing).
absl::Status RateLimitedError(std::string_view message, absl::Duration retry_after);
absl::Status ProviderUnavailableError(std::string_view message);
absl::Status InvalidProviderRequestError(std::string_view message);
absl::Status IncompleteStreamError(std::string_view message);

// The kind of a provider failure (OK maps to kOther; callers check ok() first).
LlmErrorKind ClassifyLlmError(const absl::Status& status);
// The retry-after a RateLimitedError carries, or nullopt.
std::optional<absl::Duration> RetryAfter(const absl::Status& status);

}  // namespace pulse::core
