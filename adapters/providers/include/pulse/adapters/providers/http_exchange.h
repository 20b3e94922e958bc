// ExchangeHttp: one provider HTTP request whose response is handed over as it arrives, through
// the tree's one HTTP client (pulse/adapters/http_client/http_client.h) with the four timeouts a
// model stream needs (connect; response headers; idle gap between body bytes; the whole
// exchange) and prompt cancellation (noticed within about 10 ms). Proxies come from the
// standard environment variables (never for a loopback endpoint). Nothing is retried.
// Thread-safe: every call uses its own connection.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/http_client/http_client.h"
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

// Status code and header fields; Header(name) is case-insensitive.
using HttpResponseHead = http_client::ResponseHead;

// How an exchange ended.
enum class HttpEnd {
  kBodyComplete,  // the whole body arrived
  kStopped,       // a callback returned false
  kBrokenBody,    // the connection failed or closed early while the body was read
  kFailed,        // no response to interpret: HttpOutcome::error says why
};

struct HttpOutcome {
  HttpEnd end = HttpEnd::kFailed;
  // For kFailed: Cancelled (wins over every other outcome), DeadlineExceeded (a timeout,
  // naming which), Unavailable (refused, unknown host, unreachable, TLS handshake, connection
  // lost before the head), FailedPrecondition (the TLS certificate was not trusted). OK
  // otherwise.
  absl::Status error;
};

using HeadFn = absl::FunctionRef<bool(const HttpResponseHead& head)>;
using BodyFn = absl::FunctionRef<bool(std::string_view bytes)>;

// The client ExchangeHttp uses for `base` with `timeouts` (no body cap: the framer bounds each
// message). InvalidArgument for a timeout that is not positive.
[[nodiscard]] absl::StatusOr<std::unique_ptr<http_client::HttpClient>> NewProviderClient(
    const BaseUrl& base, const HttpTimeouts& timeouts);

// Sends `spec` through `client` (its path appended to the base path; Content-Type:
// application/json when the body is not empty) and calls, on the calling thread, `on_head` once
// when the headers arrive and `on_body` for each piece of the body. Either returning false stops
// the exchange (kStopped). `cancelled` may be null (never cancelled).
HttpOutcome ExchangeHttp(const http_client::HttpClient& client, const HttpRequestSpec& spec,
                         const std::atomic<bool>* cancelled, HeadFn on_head, BodyFn on_body);

// As above, through a client made for this one exchange.
HttpOutcome ExchangeHttp(const BaseUrl& base, const HttpRequestSpec& spec,
                         const HttpTimeouts& timeouts, const std::atomic<bool>* cancelled,
                         HeadFn on_head, BodyFn on_body);

}  // namespace pulse::adapters::providers
