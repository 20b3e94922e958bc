#include "pulse/core/model/llm_types.h"

#include <array>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace pulse::core {
namespace {

// Status payload carrying a rate limit's retry-after, in whole milliseconds (decimal text).
constexpr std::string_view kRetryAfterPayload = "type.pulse.dev/llm.retry_after_ms";

absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::string_view ToString(MessageRole role) {
  switch (role) {
    case MessageRole::kSystem:
      return "system";
    case MessageRole::kUser:
      return "user";
    case MessageRole::kAssistant:
      return "assistant";
    case MessageRole::kTool:
      return "tool";
    case MessageRole::kRefusedClaim:
      return "refused_claim";
  }
  return "user";
}

std::optional<MessageRole> ParseMessageRole(std::string_view text) {
  constexpr std::array<MessageRole, 5> kRoles = {MessageRole::kSystem, MessageRole::kUser,
                                                 MessageRole::kAssistant, MessageRole::kTool,
                                                 MessageRole::kRefusedClaim};
  for (MessageRole role : kRoles) {
    if (ToString(role) == text) {
      return role;
    }
  }
  return std::nullopt;
}

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

std::string_view ToString(ToolChoice choice) {
  switch (choice) {
    case ToolChoice::kUnset:
      return "unset";
    case ToolChoice::kNone:
      return "none";
    case ToolChoice::kRequired:
      return "required";
  }
  return "unset";
}

std::string_view ToString(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kToolCalls:
      return "tool_calls";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kError:
      return "error";
  }
  return "error";
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

std::string_view ToString(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::kRateLimited:
      return "rate_limited";
    case LlmErrorKind::kUnavailable:
      return "unavailable";
    case LlmErrorKind::kInvalidRequest:
      return "invalid_request";
    case LlmErrorKind::kIncompleteStream:
      return "incomplete_stream";
    case LlmErrorKind::kOther:
      return "other";
  }
  return "other";
}

absl::Status RateLimitedError(std::string_view message, absl::Duration retry_after) {
  absl::Status status = absl::ResourceExhaustedError(AsAbsl(message));
  if (retry_after > absl::ZeroDuration()) {
    status.SetPayload(AsAbsl(kRetryAfterPayload),
                      absl::Cord(absl::StrCat(absl::ToInt64Milliseconds(retry_after))));
  }
  return status;
}

absl::Status ProviderUnavailableError(std::string_view message) {
  return absl::UnavailableError(AsAbsl(message));
}

absl::Status InvalidProviderRequestError(std::string_view message) {
  return absl::InvalidArgumentError(AsAbsl(message));
}

absl::Status IncompleteStreamError(std::string_view message) {
  return absl::DataLossError(AsAbsl(message));
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
  absl::optional<absl::Cord> payload = status.GetPayload(AsAbsl(kRetryAfterPayload));
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
