// A scripted PulseCaller: records every request and answers with `handler` (by default
// 200 {"ok":true}). Not thread-safe.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "pulse/adapters/mcp/pulse_caller.h"

namespace pulse::testing {

class FakePulseCaller final : public adapters::mcp::PulseCaller {
 public:
  using Handler =
      std::function<absl::StatusOr<adapters::mcp::PulseReply>(const adapters::mcp::PulseRequest&)>;

  void Answer(int status, std::string body) {
    handler_ = [status, body = std::move(body)](const adapters::mcp::PulseRequest&) {
      return absl::StatusOr<adapters::mcp::PulseReply>(
          adapters::mcp::PulseReply{status, body, "application/json", std::nullopt});
    };
  }
  void SetHandler(Handler handler) { handler_ = std::move(handler); }

  [[nodiscard]] absl::StatusOr<adapters::mcp::PulseReply> Send(
      const adapters::mcp::PulseRequest& request) override {
    requests.push_back(request);
    return handler_(request);
  }

  std::vector<adapters::mcp::PulseRequest> requests;

 private:
  Handler handler_ = [](const adapters::mcp::PulseRequest&) {
    return absl::StatusOr<adapters::mcp::PulseReply>(
        adapters::mcp::PulseReply{200, R"({"ok":true})", "application/json", std::nullopt});
  };
};

}  // namespace pulse::testing
