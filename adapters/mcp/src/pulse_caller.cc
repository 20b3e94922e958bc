#include "pulse/adapters/mcp/pulse_caller.h"

#include <string>
#include <utility>

#include "pulse/core/status_macros.h"

namespace pulse::adapters::mcp {

absl::StatusOr<PulseReply> SendCall(PulseCaller& caller, const core::CapabilityCall& call) {
  absl::StatusOr<PulseReply> reply = caller.Send({call.method, call.Target(), call.body_json});
  if (!reply.ok()) {
    return absl::Status(reply.status().code(), "call Pulse: " + call.method + " " + call.path +
                                                   ": " + std::string(reply.status().message()));
  }
  return reply;
}

absl::StatusOr<PulseReply> CallCapability(PulseCaller& caller,
                                          const core::AgentCapability& capability,
                                          const rapidjson::Value& args) {
  PULSE_ASSIGN_OR_RETURN(core::CapabilityCall call, core::ProjectCapabilityCall(capability, args));
  return SendCall(caller, call);
}

}  // namespace pulse::adapters::mcp
