#include "pulse/core/builtins/tool_output.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

// A port message is a diagnostic, not data: a short one is enough for the model.
constexpr std::size_t kMaxPortMessageBytes = 512;

std::string LowerCodeName(absl::StatusCode code) {
  return absl::AsciiStrToLower(absl::StatusCodeToString(code));
}

}  // namespace

ModelText ToModelText(std::string_view raw, std::size_t max_bytes) {
  ModelText out;
  std::string redacted = RedactSecrets(raw);
  out.redacted = redacted != raw;
  std::string clean = BoundedCleanText(redacted, redacted.size());
  if (clean.size() <= max_bytes) {
    out.text = std::move(clean);
    return out;
  }
  out.truncated = true;
  const std::size_t room =
      max_bytes > kTruncationMarker.size() ? max_bytes - kTruncationMarker.size() : 0;
  out.text = TruncateUtf8(clean, room);
  out.text.append(kTruncationMarker);
  return out;
}

ToolError PortStatusToToolError(const absl::Status& status, std::string_view subject) {
  ToolError error;
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      error.code = ToolErrorCode::kNotFound;
      error.blocked = true;
      break;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      error.code = ToolErrorCode::kInvalidInput;
      error.blocked = true;
      break;
    case absl::StatusCode::kPermissionDenied:
      error.code = ToolErrorCode::kPolicyBlocked;
      error.blocked = true;
      break;
    case absl::StatusCode::kUnimplemented:
      error.code = ToolErrorCode::kNoAgent;
      error.blocked = true;
      break;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kResourceExhausted:
      error.code = ToolErrorCode::kExecutionFailed;
      error.failed = true;
      error.retryable = true;
      break;
    default:
      error.code = ToolErrorCode::kExecutionFailed;
      error.failed = true;
      break;
  }
  const std::string port_message(status.message());
  error.message =
      ToModelText(absl::StrCat(ToAbsl(subject), ": ",
                               port_message.empty() ? LowerCodeName(status.code()) : port_message),
                  kMaxPortMessageBytes)
          .text;
  error.details.emplace_back("status", LowerCodeName(status.code()));
  return error;
}

}  // namespace pulse::core
