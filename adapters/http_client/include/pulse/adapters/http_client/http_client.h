// HttpClient: the one HTTP client of the tree (pulse-cli, pulse-mcp, the model providers, and
// the fleet adapters to come), over libcurl; why libcurl is in docs/architecture.md, "The HTTP
// client adapter". One exchange per call, on its own connection unless the client keeps
// connections alive (ClientOptions::keep_alive); no redirects; HTTP/1.1; four deadlines (connect;
// response headers; idle gap between body bytes; the whole exchange), cancellation through a flag
// polled every 10 ms, bodies handed over piece by piece as they arrive (piece boundaries are
// arbitrary) or collected under a size cap, proxies from http_proxy / https_proxy / no_proxy (never
// for a loopback host unless asked), TLS with the system CAs, a CA file or a pinned certificate
// fingerprint, and unix-socket targets. Failures are statuses with a human message that never names
// libcurl internals, the URL or a header value, and a distinct ErrorKind (ErrorKindOf).
// Thread-safe: the client is immutable after Open and every call uses its own libcurl handles.
// A keep-alive client's GETs and HEADs to an IP literal or localhost over plain HTTP with no
// proxy go over its own kept sockets and Boost.Beast's response parser instead, with the same
// deadlines, caps, callbacks and errors (UsesKeptTransport).
#pragma once

#include <atomic>
#include <cstddef>
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
#include "pulse/adapters/http_client/url.h"

namespace pulse::http_client {

class KeptHttp;  // src/kept_http.h

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Timeouts {
  absl::Duration connect = absl::Seconds(10);  // name lookup, TCP and TLS
  // From the start of the exchange until the status line and headers have arrived.
  absl::Duration response_header = absl::Seconds(60);
  // Longest silence between two pieces of the body once the headers arrived.
  absl::Duration idle = absl::Seconds(60);
  // The whole exchange, connect to last byte.
  absl::Duration total = absl::InfiniteDuration();

  friend bool operator==(const Timeouts&, const Timeouts&) = default;
};

struct ClientOptions {
  Url base;  // scheme, host, port and path prefix of every request (ParseUrl)
  // When set, connect to this unix socket instead of base.host:port (base still gives the
  // Host header and the path prefix; use http://localhost).
  std::string unix_socket_path;
  Timeouts timeouts;
  // TLS: the server certificate must chain to `ca_file` (PEM; "" = the system store), unless
  // `pinned_sha256` is set: then the server's leaf certificate must have exactly this SHA-256
  // fingerprint (64 hex digits, ':' separators allowed, as `openssl x509 -fingerprint -sha256`
  // prints it), CA chain and host name are not consulted.
  std::string ca_file;
  std::string pinned_sha256;
  // TLS client authentication (https only): a PEM certificate (or chain, leaf first) and its
  // unencrypted PEM private key, both or neither; presented when the server asks for one.
  std::string client_cert_file;
  std::string client_key_file;
  bool proxy_from_environment = true;  // http_proxy, https_proxy, all_proxy, no_proxy
  bool proxy_loopback = false;         // also route a loopback host through that proxy
  // Send collects at most this many body bytes; Stream delivers at most this many (0: no cap).
  std::size_t max_body_bytes = std::size_t{32} << 20;
  std::size_t max_header_bytes = std::size_t{64} << 10;  // status line and header fields
  std::string user_agent = "pulse-core";
  // Keep a GET's or HEAD's connection open and send the next GET or HEAD on it (one idle
  // connection per idle handle, at most four). A kept connection the server closed meanwhile
  // is noticed before use, and an exchange that meets it dead before any reply byte is sent
  // again once on a new connection — so any other method (a write, which must never go twice)
  // always opens and closes its own connection. Off: every exchange does.
  bool keep_alive = false;
};

struct Request {
  std::string method = "GET";
  std::string target = "/";  // path (appended to the base path prefix) and query
  Headers headers;           // sent as given; no Content-Type is added
  std::optional<std::string> body;
};

struct ResponseHead {
  int status = 0;
  // The status line's reason phrase as sent (some APIs, e.g. Proxmox VE, carry their error
  // message there); at most 512 bytes, unfiltered: print it only after sanitizing.
  std::string reason;
  Headers headers;
  // The first value of header `name` (case-insensitive).
  std::optional<std::string> Header(std::string_view name) const;
};

struct Response {
  ResponseHead head;
  std::string body;
};

// What went wrong (ErrorKindOf). Status codes: Unavailable for kRefused, kUnknownHost,
// kUnreachable, kTlsHandshake, kConnectionLost and kProtocol; FailedPrecondition for
// kTlsUntrusted; DeadlineExceeded for kTimeout; Cancelled; ResourceExhausted for kTooLarge;
// InvalidArgument for kInvalidRequest.
enum class ErrorKind {
  kRefused,         // nothing listens there (or no socket at that path)
  kUnknownHost,     // the name (or the proxy's name) does not resolve
  kUnreachable,     // no route to the network or host
  kTlsHandshake,    // TLS could not be negotiated (e.g. the far side does not speak TLS)
  kTlsUntrusted,    // the server certificate failed verification or the pin
  kTimeout,         // one of the four deadlines passed
  kCancelled,       // the cancellation flag was set (wins over every other outcome)
  kTooLarge,        // the body or the headers exceeded their cap
  kProtocol,        // the reply is not HTTP we can read
  kConnectionLost,  // the connection closed or broke before the response was complete
  kInvalidRequest,  // the request itself is malformed (bad method, target or header)
};

// The stable name of `kind` ("refused", "unknown_host", ...).
std::string_view ErrorKindName(ErrorKind kind);
// The kind of a status this client returned; nullopt for any other status.
std::optional<ErrorKind> ErrorKindOf(const absl::Status& status);

// How a streamed exchange ended when the transport did not fail.
enum class StreamEnd {
  kComplete,  // the whole body arrived
  kStopped,   // a callback returned false
};

using HeadFn = absl::FunctionRef<bool(const ResponseHead& head)>;
using BodyFn = absl::FunctionRef<bool(std::string_view bytes)>;

class HttpClient final {
 public:
  // InvalidArgument for a malformed pin, a CA file that cannot be read, a client certificate
  // without its key (or the reverse) or either file unreadable, a cap of zero for the headers,
  // or a non-positive timeout.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpClient>> Open(ClientOptions options);
  // Parses `base_url` (ParseUrl with `what` naming it in messages) first.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpClient>> Open(
      std::string_view base_url, ClientOptions options, std::string_view what = "URL");

  // One exchange whose body is collected (any HTTP status is a result). `cancelled` may be
  // null. Errors as ErrorKind.
  [[nodiscard]] absl::StatusOr<Response> Send(const Request& request,
                                              const std::atomic<bool>* cancelled = nullptr) const;

  // One exchange handed over as it arrives, on the calling thread: `on_head` once when the
  // final status line and headers are in (also for a reply without a body), then `on_body` for
  // each piece. Either returning false ends the exchange (kStopped). Errors as ErrorKind; a
  // connection lost after `on_head` is kConnectionLost too (the caller knows it saw the head).
  [[nodiscard]] absl::StatusOr<StreamEnd> Stream(
      const Request& request, HeadFn on_head, BodyFn on_body,
      const std::atomic<bool>* cancelled = nullptr) const;

  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  const ClientOptions& options() const { return options_; }

  // Whether `request` goes over the client's own kept connections rather than libcurl: a GET or
  // HEAD without a body, from a keep-alive client for plain HTTP to an IP literal or localhost
  // that no proxy applies to. For tests and diagnostics; both transports answer alike.
  bool UsesKeptTransport(const Request& request) const;

 private:
  class HandlePool;  // idle libcurl handles, reused (reset) across calls, with their connections

  HttpClient(ClientOptions options, std::string pin);

  const ClientOptions options_;
  const std::string pin_;  // 32 raw bytes, or "" when no fingerprint is pinned
  const std::unique_ptr<HandlePool> pool_;
  const std::unique_ptr<KeptHttp> kept_;  // null unless the options allow it
};

}  // namespace pulse::http_client
