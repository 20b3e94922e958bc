// PulseCaller over cpp-httplib: every request goes to the configured pulse-server with the API
// token in X-API-Token and "X-Pulse-Agent-Surface: pulse_mcp", so the server treats the caller
// as an agent. One connection per request (httplib's Client); not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/mcp/pulse_caller.h"

namespace httplib {
class Client;
}

namespace pulse::apps::mcp {

inline constexpr std::string_view kAgentSurfaceHeader = "X-Pulse-Agent-Surface";
inline constexpr std::string_view kTokenHeader = "X-API-Token";

class HttplibPulseCaller final : public adapters::mcp::PulseCaller {
 public:
  // `base_url` is http(s)://host[:port][/prefix]. InvalidArgument for anything else.
  static absl::StatusOr<std::unique_ptr<HttplibPulseCaller>> Open(std::string_view base_url,
                                                                  std::string token,
                                                                  absl::Duration timeout);
  ~HttplibPulseCaller() override;

  [[nodiscard]] absl::StatusOr<adapters::mcp::PulseReply> Send(
      const adapters::mcp::PulseRequest& request) override;

 private:
  HttplibPulseCaller(std::unique_ptr<httplib::Client> client, std::string prefix,
                     std::string token);

  std::unique_ptr<httplib::Client> client_;
  std::string prefix_;  // a path prefix of the base URL ("" or "/pulse")
  std::string token_;
};

}  // namespace pulse::apps::mcp
