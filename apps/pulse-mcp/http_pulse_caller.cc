#include "http_pulse_caller.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "pulse/adapters/http_client/http_client.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::apps::mcp {
namespace {

// pulse-server's cursors are a few dozen printable ASCII bytes. Anything else in the header
// (over-long, empty, control or non-ASCII bytes) is not one of them and is not passed on.
constexpr std::size_t kMaxCursorBytes = 1024;

bool LooksLikeCursor(std::string_view value) {
  return !value.empty() && value.size() <= kMaxCursorBytes &&
         std::all_of(value.begin(), value.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace

using adapters::mcp::PulseReply;
using adapters::mcp::PulseRequest;

HttpPulseCaller::HttpPulseCaller(std::unique_ptr<http_client::HttpClient> client, std::string token)
    : client_(std::move(client)), token_(std::move(token)) {}

HttpPulseCaller::~HttpPulseCaller() = default;

absl::StatusOr<std::unique_ptr<HttpPulseCaller>> HttpPulseCaller::Open(std::string_view base_url,
                                                                       std::string token,
                                                                       absl::Duration timeout) {
  http_client::ClientOptions options;
  options.timeouts.connect = timeout;
  options.timeouts.response_header = timeout;
  options.timeouts.idle = timeout;
  // An MCP session is a run of calls to one server: reuse the connection between them.
  options.keep_alive = true;
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      http_client::HttpClient::Open(base_url, std::move(options), "--server");
  if (!client.ok()) {
    return client.status();
  }
  return std::unique_ptr<HttpPulseCaller>(
      new HttpPulseCaller(*std::move(client), std::move(token)));
}

absl::StatusOr<PulseReply> HttpPulseCaller::Send(const PulseRequest& request) {
  const std::string& method = request.method;
  if (method != "GET" && method != "POST" && method != "PUT" && method != "PATCH" &&
      method != "DELETE") {
    return absl::InvalidArgumentError("unsupported HTTP method " + method);
  }
  http_client::Request out;
  out.method = method;
  out.target = request.target;
  out.headers = {
      {std::string(kTokenHeader), token_},
      {std::string(kAgentSurfaceHeader), std::string(core::kMcpSurfaceId)},
  };
  // POST, PUT and PATCH always carry a JSON body (empty when the request has none); GET never;
  // DELETE only when the request has one.
  if (request.body_json.has_value() || (method != "GET" && method != "DELETE")) {
    out.body = request.body_json.value_or("");
    out.headers.emplace_back("Content-Type", "application/json");
  }
  absl::StatusOr<http_client::Response> response = client_->Send(out);
  if (!response.ok()) {
    return response.status();
  }
  PulseReply reply;
  reply.status = response->head.status;
  reply.body = std::move(response->body);
  reply.content_type = response->head.Header("Content-Type").value_or("");
  std::optional<std::string> cursor = response->head.Header(core::agent_wire::kNextCursorHeader);
  if (cursor.has_value() && LooksLikeCursor(*cursor)) {
    reply.next_cursor = std::move(cursor);
  }
  return reply;
}

}  // namespace pulse::apps::mcp
