#include "pulse/adapters/providers/http_exchange.h"

#include <memory>
#include <utility>

namespace pulse::adapters::providers {

absl::StatusOr<std::unique_ptr<http_client::HttpClient>> NewProviderClient(
    const BaseUrl& base, const HttpTimeouts& timeouts) {
  http_client::ClientOptions options;
  options.base = base;
  options.timeouts.connect = timeouts.connect;
  options.timeouts.response_header = timeouts.response_header;
  options.timeouts.idle = timeouts.idle_chunk;
  options.timeouts.total = timeouts.request;
  options.max_body_bytes = 0;
  return http_client::HttpClient::Open(std::move(options));
}

HttpOutcome ExchangeHttp(const BaseUrl& base, const HttpRequestSpec& spec,
                         const HttpTimeouts& timeouts, const std::atomic<bool>* cancelled,
                         HeadFn on_head, BodyFn on_body) {
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      NewProviderClient(base, timeouts);
  if (!client.ok()) {
    return {HttpEnd::kFailed, client.status()};
  }
  return ExchangeHttp(**client, spec, cancelled, on_head, on_body);
}

HttpOutcome ExchangeHttp(const http_client::HttpClient& client, const HttpRequestSpec& spec,
                         const std::atomic<bool>* cancelled, HeadFn on_head, BodyFn on_body) {
  http_client::Request request;
  request.method = spec.method;
  request.target = spec.path;
  request.headers = spec.headers;
  // Ask for an uncompressed body: compression would hold stream messages back.
  request.headers.emplace_back("Accept-Encoding", "identity");
  if (!spec.body.empty()) {
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = spec.body;
  }
  bool head_arrived = false;
  absl::StatusOr<http_client::StreamEnd> end = client.Stream(
      request,
      [&](const HttpResponseHead& head) {
        head_arrived = true;
        return on_head(head);
      },
      on_body, cancelled);
  if (end.ok()) {
    return {*end == http_client::StreamEnd::kComplete ? HttpEnd::kBodyComplete : HttpEnd::kStopped,
            absl::OkStatus()};
  }
  const std::optional<http_client::ErrorKind> kind = http_client::ErrorKindOf(end.status());
  if (head_arrived && (kind == http_client::ErrorKind::kConnectionLost ||
                       kind == http_client::ErrorKind::kProtocol)) {
    return {HttpEnd::kBrokenBody, absl::OkStatus()};  // the caller interprets what arrived
  }
  return {HttpEnd::kFailed, end.status()};
}

}  // namespace pulse::adapters::providers
