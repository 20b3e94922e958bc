// The ErrorKind payload of the client's statuses, and the human messages of each kind: the
// only place that knows libcurl's result codes, none of whose names reach a message.
#include "src/errors.h"

#include <curl/curl.h>

#include <array>
#include <cerrno>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::http_client {
namespace {

constexpr char kErrorKindPayload[] = "type.pulse/http_client.error_kind";

constexpr std::array<core::WireName<ErrorKind>, 11> kKindNames = {{
    {ErrorKind::kRefused, "refused"},
    {ErrorKind::kUnknownHost, "unknown_host"},
    {ErrorKind::kUnreachable, "unreachable"},
    {ErrorKind::kTlsHandshake, "tls_handshake"},
    {ErrorKind::kTlsUntrusted, "tls_untrusted"},
    {ErrorKind::kTimeout, "timeout"},
    {ErrorKind::kCancelled, "cancelled"},
    {ErrorKind::kTooLarge, "too_large"},
    {ErrorKind::kProtocol, "protocol"},
    {ErrorKind::kConnectionLost, "connection_lost"},
    {ErrorKind::kInvalidRequest, "invalid_request"},
}};

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

std::string_view ErrorKindName(ErrorKind kind) { return core::WireNameOf(kKindNames, kind); }

std::optional<ErrorKind> ErrorKindOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kErrorKindPayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  return core::WireValueOf(kKindNames, std::string(*payload));
}

absl::Status ClientError(ErrorKind kind, std::string_view message) {
  absl::Status status(CodeOf(kind), core::ToAbsl(message));
  const std::string_view name = ErrorKindName(kind);
  status.SetPayload(kErrorKindPayload, absl::Cord(core::ToAbsl(name)));
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

absl::Status ConnectFailure(int os_error) {
  switch (os_error) {
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
      return ClientError(ErrorKind::kUnreachable, "the network or host is unreachable");
    case ENOENT:
      return ClientError(ErrorKind::kRefused, "no socket exists at that path");
    case EACCES:
    case EPERM:
      return ClientError(ErrorKind::kRefused, "the connection was not permitted");
    default:
      return ClientError(ErrorKind::kRefused, "the connection was refused (nothing listens there)");
  }
}

absl::Status CurlFailure(int curl_code, int os_error, bool head_done, bool pinned,
                         const Timeouts& timeouts) {
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_COULDNT_RESOLVE_HOST:
      return ClientError(ErrorKind::kUnknownHost, "the host name could not be resolved");
    case CURLE_COULDNT_RESOLVE_PROXY:
      return ClientError(ErrorKind::kUnknownHost, "the proxy's host name could not be resolved");
    case CURLE_COULDNT_CONNECT:
      return ConnectFailure(os_error);
    case CURLE_OPERATION_TIMEDOUT:
      return TimeoutError(TimeoutPhase::kConnect, timeouts);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CACERT_BADFILE:
      return ClientError(ErrorKind::kTlsUntrusted,
                         pinned ? "the server's TLS certificate does not match the pinned "
                                  "fingerprint"
                                : "the server's TLS certificate is not trusted");
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_CLIENTCERT:
      return ClientError(ErrorKind::kTlsHandshake, "the TLS handshake with the server failed");
    case CURLE_GOT_NOTHING:
      return ClientError(ErrorKind::kConnectionLost,
                         "the server closed the connection without a response");
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return ClientError(ErrorKind::kConnectionLost,
                         head_done ? "the connection broke before the response was complete"
                                   : "the connection broke before a response arrived");
    case CURLE_FILESIZE_EXCEEDED:
      return ClientError(ErrorKind::kTooLarge, "the response is too large");
    case CURLE_URL_MALFORMAT:
      return ClientError(ErrorKind::kInvalidRequest, "the request URL is malformed");
    case CURLE_OUT_OF_MEMORY:
      return ClientError(ErrorKind::kProtocol, "out of memory during the HTTP exchange");
    default:
      return ClientError(ErrorKind::kProtocol, "the server's reply is not valid HTTP");
  }
}

}  // namespace pulse::http_client
