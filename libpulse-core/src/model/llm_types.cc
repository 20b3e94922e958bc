#include "pulse/core/model/llm_types.h"

#include <array>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

// Status payload carrying a rate limit's retry-after, in whole milliseconds (decimal text).
constexpr std::string_view kRetryAfterPayload = "type.pulse.dev/llm.retry_after_ms";

constexpr std::array<WireName<MessageRole>, 5> kRoles = {{
    {MessageRole::kSystem, "system"},
    {MessageRole::kUser, "user"},
    {MessageRole::kAssistant, "assistant"},
    {MessageRole::kTool, "tool"},
    {MessageRole::kRefusedClaim, "refused_claim"},
}};

constexpr std::array<WireName<ToolChoice>, 3> kToolChoices = {{
    {ToolChoice::kUnset, "unset"},
    {ToolChoice::kNone, "none"},
    {ToolChoice::kRequired, "required"},
}};

constexpr std::array<WireName<FinishReason>, 4> kFinishReasons = {{
    {FinishReason::kStop, "stop"},
    {FinishReason::kToolCalls, "tool_calls"},
    {FinishReason::kLength, "length"},
    {FinishReason::kError, "error"},
}};

constexpr std::array<WireName<LlmErrorKind>, 5> kErrorKinds = {{
    {LlmErrorKind::kRateLimited, "rate_limited"},
    {LlmErrorKind::kUnavailable, "unavailable"},
    {LlmErrorKind::kInvalidRequest, "invalid_request"},
    {LlmErrorKind::kIncompleteStream, "incomplete_stream"},
    {LlmErrorKind::kOther, "other"},
}};

}  // namespace

std::string_view ToString(MessageRole role) { return WireNameOf(kRoles, role, "user"); }
std::optional<MessageRole> ParseMessageRole(std::string_view text) {
  return WireValueOf(kRoles, text);
}
std::string_view ToString(ToolChoice choice) { return WireNameOf(kToolChoices, choice, "unset"); }
std::string_view ToString(FinishReason reason) {
  return WireNameOf(kFinishReasons, reason, "error");
}
std::string_view ToString(LlmErrorKind kind) { return WireNameOf(kErrorKinds, kind, "other"); }

Message Message::System(std::string text) {
  Message m;
  m.role = MessageRole::kSystem;
  m.content = std::move(text);
  return m;
}

Message Message::RefusedClaim(std::string text) {
  Message m;
  m.role = MessageRole::kRefusedClaim;
  m.content = std::move(text);
  return m;
}

Message Message::User(std::string text) {
  Message m;
  m.role = MessageRole::kUser;
  m.content = std::move(text);
  return m;
}

Message Message::Assistant(std::string text, std::vector<ToolCall> calls) {
  Message m;
  m.role = MessageRole::kAssistant;
  m.content = std::move(text);
  m.tool_calls = std::move(calls);
  return m;
}

Message Message::ToolResult(std::string call_id, std::string tool_name, std::string content,
                            bool is_error) {
  Message m;
  m.role = MessageRole::kTool;
  m.tool_call_id = std::move(call_id);
  m.tool_name = std::move(tool_name);
  m.content = std::move(content);
  m.is_error = is_error;
  return m;
}

LlmStreamEvent LlmStreamEvent::ContentDelta(std::string text) {
  LlmStreamEvent e;
  e.kind = Kind::kContentDelta;
  e.text = std::move(text);
  return e;
}

LlmStreamEvent LlmStreamEvent::ToolCallDone(ToolCall call) {
  LlmStreamEvent e;
  e.kind = Kind::kToolCall;
  e.tool_call = std::move(call);
  return e;
}

LlmStreamEvent LlmStreamEvent::Usage(std::int64_t input_tokens, std::int64_t output_tokens) {
  LlmStreamEvent e;
  e.kind = Kind::kUsage;
  e.usage = TokenUsage{input_tokens, output_tokens};
  return e;
}

LlmStreamEvent LlmStreamEvent::Finish(FinishReason reason) {
  LlmStreamEvent e;
  e.kind = Kind::kFinish;
  e.finish_reason = reason;
  return e;
}

absl::Status RateLimitedError(std::string_view message, absl::Duration retry_after) {
  absl::Status status = absl::ResourceExhaustedError(ToAbsl(message));
  if (retry_after > absl::ZeroDuration()) {
    status.SetPayload(ToAbsl(kRetryAfterPayload),
                      absl::Cord(absl::StrCat(absl::ToInt64Milliseconds(retry_after))));
  }
  return status;
}

absl::Status ProviderUnavailableError(std::string_view message) {
  return absl::UnavailableError(ToAbsl(message));
}

absl::Status InvalidProviderRequestError(std::string_view message) {
  return absl::InvalidArgumentError(ToAbsl(message));
}

absl::Status IncompleteStreamError(std::string_view message) {
  return absl::DataLossError(ToAbsl(message));
}

LlmErrorKind ClassifyLlmError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kResourceExhausted:
      return LlmErrorKind::kRateLimited;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return LlmErrorKind::kUnavailable;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kFailedPrecondition:
      return LlmErrorKind::kInvalidRequest;
    case absl::StatusCode::kDataLoss:
      return LlmErrorKind::kIncompleteStream;
    default:
      return LlmErrorKind::kOther;
  }
}

std::optional<absl::Duration> RetryAfter(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(ToAbsl(kRetryAfterPayload));
  if (!payload.has_value()) {
    return std::nullopt;
  }
  std::int64_t millis = 0;
  if (!absl::SimpleAtoi(std::string(*payload), &millis) || millis <= 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(millis);
}

}  // namespace pulse::core
