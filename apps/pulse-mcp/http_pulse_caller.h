// PulseCaller over the HTTP client adapter (pulse/adapters/http_client/http_client.h): every
// request goes to the configured pulse-server with the API token in X-API-Token and
// "X-Pulse-Agent-Surface: pulse_mcp", so the server treats the caller as an agent. Reads ride
// one kept connection (a server on an IP literal or localhost: the client's own kept transport,
// without libcurl); writes open their own. Thread-safe (the client is immutable).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/mcp/pulse_caller.h"
#include "pulse/core/manifest/surface.h"

namespace pulse::http_client {
class HttpClient;
}

namespace pulse::apps::mcp {

// The header names of the surface table (core/manifest/surface.h).
inline constexpr std::string_view kAgentSurfaceHeader = core::kAgentSurfaceHeader;
inline constexpr std::string_view kTokenHeader = core::kApiTokenHeader;

class HttpPulseCaller final : public adapters::mcp::PulseCaller {
 public:
  // `base_url` is http(s)://host[:port][/prefix]. InvalidArgument for anything else
  // (http_client::ParseUrl).
  static absl::StatusOr<std::unique_ptr<HttpPulseCaller>> Open(std::string_view base_url,
                                                               std::string token,
                                                               absl::Duration timeout);
  ~HttpPulseCaller() override;

  // Any HTTP status is a reply. Errors: Unavailable (refused, unknown host, TLS, connection
  // lost: each with its own message), FailedPrecondition (an untrusted TLS certificate),
  // DeadlineExceeded, ResourceExhausted (a reply over 32 MiB), InvalidArgument (a method other
  // than GET, POST, PUT, PATCH, DELETE).
  [[nodiscard]] absl::StatusOr<adapters::mcp::PulseReply> Send(
      const adapters::mcp::PulseRequest& request) override;

 private:
  HttpPulseCaller(std::unique_ptr<http_client::HttpClient> client, std::string token);

  std::unique_ptr<http_client::HttpClient> client_;
  std::string token_;
};

}  // namespace pulse::apps::mcp
