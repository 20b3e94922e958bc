// What pulse-mcp needs from pulse-server: one HTTP request at a time against its base URL, with
// the token and the agent-surface marker already attached by the implementation. The MCP logic
// depends only on this interface, so tests drive it with a scripted fake. Implementations need
// not be thread-safe: the stdio loop calls them from one thread.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/capability_projection.h"
#include "rapidjson/document.h"

namespace pulse::adapters::mcp {

struct PulseRequest {
  std::string method;                    // GET, POST, PUT, DELETE
  std::string target;                    // path and query, already percent-encoded
  std::optional<std::string> body_json;  // sent as application/json when set
};

struct PulseReply {
  int status = 0;
  std::string body;
  std::string content_type;
  // The X-Next-Cursor header of a paged list (list_findings): where the next page starts.
  std::optional<std::string> next_cursor;
};

class PulseCaller {
 public:
  virtual ~PulseCaller() = default;

  // Sends one request. Any HTTP status is a reply; Unavailable or DeadlineExceeded when no reply
  // arrived (connection refused, timeout, broken connection).
  [[nodiscard]] virtual absl::StatusOr<PulseReply> Send(const PulseRequest& request) = 0;
};

// Sends one projected call. The caller's error, prefixed "call Pulse: METHOD PATH: ", when no
// reply arrived.
[[nodiscard]] absl::StatusOr<PulseReply> SendCall(PulseCaller& caller,
                                                  const core::CapabilityCall& call);

// Projects `args` onto `capability`'s route (core::ProjectCapabilityCall) and sends it.
// InvalidArgument from the projection; SendCall's error when no reply arrived.
[[nodiscard]] absl::StatusOr<PulseReply> CallCapability(PulseCaller& caller,
                                                        const core::AgentCapability& capability,
                                                        const rapidjson::Value& args);

}  // namespace pulse::adapters::mcp
