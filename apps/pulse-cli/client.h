// PulseClient: pulse-cli's HTTP client of pulse-server (over the HTTP client adapter,
// pulse/adapters/http_client/http_client.h). Every request carries the
// API token in X-API-Token (when one is set) and no agent-surface marker: the CLI speaks for a
// human operator. Bodies are read through a receiver with a size cap, so a hostile server
// cannot exhaust memory; event streams are handed over piece by piece as they arrive. One
// request at a time; Stop() may be called from any thread to abort the one in progress.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/surface.h"

namespace pulse::http_client {
class HttpClient;
}

namespace pulse::cli {

inline constexpr std::string_view kTokenHeader = core::kApiTokenHeader;
inline constexpr std::string_view kDefaultServer = core::kMcpDefaultBaseUrl;

struct HttpResult {
  int status = 0;
  std::string content_type;
  std::string body;         // empty for a stream that was delivered through the receiver
  std::string next_cursor;  // a list page's X-Next-Cursor header: "" on the last page
};

struct ClientOptions {
  std::string base_url{kDefaultServer};
  std::string token;  // "" sends none
  // Connect timeout, and the longest silence while reading or writing (event streams get a
  // heartbeat every few seconds, so this bounds a stalled stream too).
  absl::Duration timeout = absl::Seconds(30);
  std::size_t max_body_bytes = 32u << 20;
};

class PulseClient {
 public:
  // InvalidArgument unless base_url is http(s)://host[:port][/prefix] (http_client::ParseUrl).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PulseClient>> Open(ClientOptions options);
  ~PulseClient();
  PulseClient(const PulseClient&) = delete;
  PulseClient& operator=(const PulseClient&) = delete;

  // One request; `target` is a path with its query, already percent-encoded. Any HTTP status
  // is a result. Errors: Unavailable (refused, unknown host, TLS, connection lost: each with its
  // own message), FailedPrecondition (an untrusted TLS certificate), DeadlineExceeded (connect or
  // read timeout), ResourceExhausted (body over the cap), Cancelled (Stop()).
  [[nodiscard]] absl::StatusOr<HttpResult> Send(std::string_view method, std::string_view target,
                                                const std::optional<std::string>& json_body);

  // Like Send, but a 200 text/event-stream reply is passed to `on_bytes` as it arrives (its
  // result has an empty body); returning false from `on_bytes` ends the request (Cancelled).
  // Any other reply is collected into the result's body as Send does.
  [[nodiscard]] absl::StatusOr<HttpResult> Stream(
      std::string_view method, std::string_view target, const std::optional<std::string>& json_body,
      const std::function<bool(std::string_view)>& on_bytes);

  // Aborts the request in progress (thread-safe). The client is not usable afterwards.
  void Stop();

  const std::string& base_url() const { return options_.base_url; }
  bool has_token() const { return !options_.token.empty(); }

 private:
  PulseClient(ClientOptions options, std::unique_ptr<http_client::HttpClient> client);

  ClientOptions options_;
  std::unique_ptr<http_client::HttpClient> client_;  // holds the base URL's path prefix
  std::atomic<bool> stopped_{false};
};

}  // namespace pulse::cli
