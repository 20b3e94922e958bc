#include "client.h"

#include <utility>

#include "pulse/adapters/http_client/http_client.h"
#include "pulse/core/agent/agent_wire.h"

namespace pulse::cli {

PulseClient::PulseClient(ClientOptions options, std::unique_ptr<http_client::HttpClient> client)
    : options_(std::move(options)), client_(std::move(client)) {}

PulseClient::~PulseClient() = default;

absl::StatusOr<std::unique_ptr<PulseClient>> PulseClient::Open(ClientOptions options) {
  http_client::ClientOptions transport;
  transport.timeouts.connect = options.timeout;
  transport.timeouts.response_header = options.timeout;
  transport.timeouts.idle = options.timeout;
  transport.max_body_bytes = 0;  // Stream applies the cap to replies that are not streams
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      http_client::HttpClient::Open(options.base_url, std::move(transport), "--server");
  if (!client.ok()) {
    return absl::InvalidArgumentError(std::string(client.status().message()) + ", got \"" +
                                      options.base_url + "\"");
  }
  return std::unique_ptr<PulseClient>(new PulseClient(std::move(options), *std::move(client)));
}

absl::StatusOr<HttpResult> PulseClient::Send(std::string_view method, std::string_view target,
                                             const std::optional<std::string>& json_body) {
  return Stream(method, target, json_body, {});
}

absl::StatusOr<HttpResult> PulseClient::Stream(
    std::string_view method, std::string_view target, const std::optional<std::string>& json_body,
    const std::function<bool(std::string_view)>& on_bytes) {
  if (stopped_.load()) {
    return absl::CancelledError("request cancelled");
  }
  HttpResult result;
  bool streaming = false;
  bool too_large = false;
  http_client::Request request;
  request.method = std::string(method);
  request.target = std::string(target);
  request.headers.emplace_back(
      "Accept", on_bytes ? "text/event-stream, application/json" : "application/json");
  if (!options_.token.empty()) {
    request.headers.emplace_back(std::string(kTokenHeader), options_.token);
  }
  if (json_body.has_value()) {
    request.body = *json_body;
    request.headers.emplace_back("Content-Type", "application/json");
  }
  absl::StatusOr<http_client::StreamEnd> end = client_->Stream(
      request,
      [&](const http_client::ResponseHead& head) {
        result.status = head.status;
        result.content_type = head.Header("Content-Type").value_or("");
        result.next_cursor = head.Header(core::agent_wire::kNextCursorHeader).value_or("");
        streaming = on_bytes && head.status == 200 &&
                    result.content_type.rfind("text/event-stream", 0) == 0;
        return true;
      },
      [&](std::string_view bytes) {
        if (streaming) {
          return on_bytes(bytes);
        }
        if (result.body.size() + bytes.size() > options_.max_body_bytes) {
          too_large = true;
          return false;
        }
        result.body.append(bytes);
        return true;
      },
      &stopped_);
  if (too_large) {
    return absl::ResourceExhaustedError("the reply is larger than " +
                                        std::to_string(options_.max_body_bytes >> 20) + " MiB");
  }
  if (!end.ok()) {
    if (stopped_.load()) {
      return absl::CancelledError("request cancelled");
    }
    return end.status();
  }
  if (*end == http_client::StreamEnd::kStopped) {
    return absl::CancelledError("request cancelled");
  }
  return result;
}

void PulseClient::Stop() { stopped_.store(true); }

}  // namespace pulse::cli
