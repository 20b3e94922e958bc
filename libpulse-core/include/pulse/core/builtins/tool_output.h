// What every built-in tool handler's result obeys: bounded size (a text block or a list is cut
// with a visible marker, so a model never mistakes a partial answer for a whole one), secrets
// redacted from infrastructure text before a model sees it, and port failures turned into tool
// errors with stable codes. The agentic loop's own outbound context policy is a second layer;
// these bounds keep a single result well inside the provider view's per-result cut
// (ProviderViewOptions::max_tool_result_chars). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pulse/core/errors/tool_error.h"

namespace pulse::core {

// One block of infrastructure text in a result: log lines, a configuration, command output.
inline constexpr std::size_t kMaxToolTextBytes = 8 * 1024;
// The serialized items of one list in a result (resources, findings, capabilities, points).
inline constexpr std::size_t kMaxToolListBytes = 8 * 1024;
// Appended to a text block that was cut.
inline constexpr std::string_view kTruncationMarker = "\n[truncated]";

// A text block as a model may see it.
struct ModelText {
  std::string text;
  bool truncated = false;  // the end was cut (kTruncationMarker appended)
  bool redacted = false;   // RedactSecrets replaced something
};

// `raw` with recognised secrets replaced (auth/secret_redactor.h), every ill-formed UTF-8 byte
// and control character other than tab and newline replaced by '?', then cut to at most
// `max_bytes` (marker included) on a character boundary. Redaction runs before the cut, so a
// cut never leaves half a secret unrecognised.
ModelText ToModelText(std::string_view raw, std::size_t max_bytes = kMaxToolTextBytes);

// The tool error for a failed port call about `subject` (a resource id, "the fleet", ...):
//   NotFound                      -> NOT_FOUND (blocked)
//   InvalidArgument, OutOfRange   -> INVALID_INPUT (blocked)
//   PermissionDenied              -> POLICY_BLOCKED (blocked)
//   Unimplemented                 -> NO_AGENT (blocked): nothing can serve this request
//   Unavailable, DeadlineExceeded,
//   Aborted, ResourceExhausted    -> EXECUTION_FAILED (failed, retryable)
//   anything else                 -> EXECUTION_FAILED (failed)
// The message is "<subject>: <port message>", redacted and bounded; details carry
// "status" (the lower-case canonical code, e.g. "not_found").
ToolError PortStatusToToolError(const absl::Status& status, std::string_view subject);

}  // namespace pulse::core
