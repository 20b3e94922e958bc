#include "pulse/adapters/mcp/pulse_caller.h"

#include <string>
#include <utility>

#include "pulse/core/manifest/capability_projection.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::mcp {

absl::StatusOr<PulseReply> CallCapability(PulseCaller& caller,
                                          const core::AgentCapability& capability,
                                          const rapidjson::Value& args) {
  PULSE_ASSIGN_OR_RETURN(core::CapabilityCall call, core::ProjectCapabilityCall(capability, args));
  PulseRequest request{call.method, call.Target(), std::move(call.body_json)};
  absl::StatusOr<PulseReply> reply = caller.Send(request);
  if (!reply.ok()) {
    return absl::Status(reply.status().code(), "call Pulse: " + request.method + " " +
                                                   call.path + ": " +
                                                   std::string(reply.status().message()));
  }
  return reply;
}

}  // namespace pulse::adapters::mcp
