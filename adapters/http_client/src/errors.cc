// The ErrorKind payload of the client's statuses, and the human messages of each kind.
#include "src/errors.h"

#include "absl/strings/cord.h"
#include "absl/types/optional.h"
#include "absl/strings/str_cat.h"

namespace pulse::http_client {
namespace {

constexpr char kErrorKindPayload[] = "type.pulse/http_client.error_kind";

constexpr ErrorKind kAllKinds[] = {
    ErrorKind::kRefused,        ErrorKind::kUnknownHost, ErrorKind::kUnreachable,
    ErrorKind::kTlsHandshake,   ErrorKind::kTlsUntrusted, ErrorKind::kTimeout,
    ErrorKind::kCancelled,      ErrorKind::kTooLarge,    ErrorKind::kProtocol,
    ErrorKind::kConnectionLost, ErrorKind::kInvalidRequest,
};

absl::StatusCode CodeOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTlsUntrusted:
      return absl::StatusCode::kFailedPrecondition;
    case ErrorKind::kTimeout:
      return absl::StatusCode::kDeadlineExceeded;
    case ErrorKind::kCancelled:
      return absl::StatusCode::kCancelled;
    case ErrorKind::kTooLarge:
      return absl::StatusCode::kResourceExhausted;
    case ErrorKind::kInvalidRequest:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kUnavailable;
  }
}

}  // namespace

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kRefused:
      return "refused";
    case ErrorKind::kUnknownHost:
      return "unknown_host";
    case ErrorKind::kUnreachable:
      return "unreachable";
    case ErrorKind::kTlsHandshake:
      return "tls_handshake";
    case ErrorKind::kTlsUntrusted:
      return "tls_untrusted";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kCancelled:
      return "cancelled";
    case ErrorKind::kTooLarge:
      return "too_large";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kConnectionLost:
      return "connection_lost";
    case ErrorKind::kInvalidRequest:
      return "invalid_request";
  }
  return "unknown";
}

std::optional<ErrorKind> ErrorKindOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kErrorKindPayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  for (ErrorKind kind : kAllKinds) {
    if (*payload == absl::string_view(ErrorKindName(kind).data(), ErrorKindName(kind).size())) {
      return kind;
    }
  }
  return std::nullopt;
}

absl::Status ClientError(ErrorKind kind, std::string_view message) {
  absl::Status status(CodeOf(kind), absl::string_view(message.data(), message.size()));
  const std::string_view name = ErrorKindName(kind);
  status.SetPayload(kErrorKindPayload, absl::Cord(absl::string_view(name.data(), name.size())));
  return status;
}

absl::Status TimeoutError(TimeoutPhase phase, const Timeouts& timeouts) {
  switch (phase) {
    case TimeoutPhase::kConnect:
      return ClientError(ErrorKind::kTimeout, absl::StrCat("no connection within ",
                                                           absl::FormatDuration(timeouts.connect)));
    case TimeoutPhase::kResponseHeader:
      return ClientError(ErrorKind::kTimeout,
                         absl::StrCat("no response headers within ",
                                      absl::FormatDuration(timeouts.response_header)));
    case TimeoutPhase::kIdle:
      return ClientError(ErrorKind::kTimeout, absl::StrCat("the response stream was idle for ",
                                                           absl::FormatDuration(timeouts.idle)));
    case TimeoutPhase::kTotal:
      return ClientError(ErrorKind::kTimeout, absl::StrCat("the response took longer than ",
                                                           absl::FormatDuration(timeouts.total)));
  }
  return ClientError(ErrorKind::kTimeout, "the request timed out");
}

}  // namespace pulse::http_client
