// ExchangeHttp: one HTTP request whose response is handed over as it arrives, with the four
// timeouts a model stream needs (connect; response headers; idle gap between body bytes; the
// whole exchange) and prompt cancellation. A watchdog thread enforces the deadlines and the
// cancellation flag by shutting the socket down (cpp-httplib's ClientImpl::stop), which wakes a
// read blocked in recv; the receiving callbacks also stop at the next byte. Cancellation is
// noticed within about 10 ms, except while connecting (TCP and TLS), which only the connect
// timeout bounds. Nothing is retried. Thread-safe: every call uses its own connection.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "pulse/adapters/providers/base_url.h"
#include "pulse/adapters/providers/wire_protocol.h"

namespace pulse::adapters::providers {

struct HttpTimeouts {
  absl::Duration connect = absl::Seconds(10);
  // From the start of the exchange until the status line and headers have arrived. Generous:
  // a local server may load the model before it answers.
  absl::Duration response_header = absl::Seconds(120);
  // Longest silence between two pieces of the body (SSE comments count as activity).
  // Generous: reasoning models can think for a long time without sending a byte.
  absl::Duration idle_chunk = absl::Seconds(120);
  // The whole exchange, connect to last byte.
  absl::Duration request = absl::Minutes(10);

  friend bool operator==(const HttpTimeouts&, const HttpTimeouts&) = default;
};

struct HttpResponseHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;

  // The first value of header `name` (case-insensitive).
  std::optional<std::string> Header(std::string_view name) const;
};

// How an exchange ended.
enum class HttpEnd {
  kBodyComplete,      // the whole body arrived
  kStopped,           // a callback returned false
  kCancelled,         // the cancellation flag was set (wins over every other outcome)
  kConnectFailed,     // refused, unresolvable host, TLS handshake failure
  kConnectTimeout,    // no connection within `connect`
  kTlsRejected,       // the server certificate failed verification
  kBrokenBeforeHead,  // the connection failed before the status line and headers arrived
  kBrokenBody,        // the connection failed or closed early while the body was read
  kHeaderTimeout,     // `response_header` passed without the headers
  kIdleTimeout,       // `idle_chunk` passed without a body byte
  kRequestTimeout,    // `request` passed
};

using HeadFn = absl::FunctionRef<bool(const HttpResponseHead& head)>;
using BodyFn = absl::FunctionRef<bool(std::string_view bytes)>;

// Sends `spec` to `base` (its path appended to the base path; Content-Type: application/json
// when the body is not empty) and calls, on the calling thread, `on_head` once when the headers
// arrive and `on_body` for each piece of the body. Either returning false stops the exchange
// (kStopped). `cancelled` may be null (never cancelled).
HttpEnd ExchangeHttp(const BaseUrl& base, const HttpRequestSpec& spec, const HttpTimeouts& timeouts,
                     const std::atomic<bool>* cancelled, HeadFn on_head, BodyFn on_body);

// The error for an exchange that ended without a response to interpret: Cancelled,
// DeadlineExceeded (timeouts), Unavailable (connection failures), FailedPrecondition (TLS
// verification). OK for kBodyComplete, kStopped and kBrokenBody, which the caller interprets.
absl::Status HttpEndStatus(HttpEnd end, const HttpTimeouts& timeouts);

}  // namespace pulse::adapters::providers
