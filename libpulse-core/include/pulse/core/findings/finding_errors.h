// How findings failures reach a surface. FindingsService returns ordinary absl::Status values
// with the house mapping (bad input InvalidArgument, unknown id NotFound, illegal transition
// FailedPrecondition, exhausted version clashes Aborted, store failure Unavailable/Internal).
// Statuses it creates also carry a payload under kFindingErrorPayloadUrl naming the stable
// agent error code and its details, as compact JSON {"code":"<wire code>","details":{...}}.
// ToFindingAgentError turns any status into the agent envelope of the finding capabilities
// (set F: invalid_finding_request, finding_not_found, finding_action_not_allowed,
// patrol_unavailable): the payload when present, else the canonical code. Pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pulse/core/errors/agent_error.h"

namespace pulse::core {

inline constexpr char kFindingErrorPayloadUrl[] = "type.pulse.dev/pulse.core.FindingError";

// A status with canonical `code`, `message`, and the payload naming `agent_code` and
// `details` (string to string, e.g. {"duration_hours": "must be between 1 and 168"}).
absl::Status MakeFindingError(absl::StatusCode code, AgentErrorCode agent_code,
                              std::string_view message,
                              const std::map<std::string, std::string>& details = {});

// InvalidArgument + invalid_finding_request.
absl::Status InvalidFindingRequest(std::string_view message,
                                   const std::map<std::string, std::string>& details = {});
// NotFound + finding_not_found, details {"finding_id": id}.
absl::Status FindingNotFoundError(std::string_view finding_id);
// FailedPrecondition + finding_action_not_allowed, details {"finding_id": id}.
absl::Status FindingActionNotAllowed(std::string_view finding_id, std::string_view message);

// The envelope for a failed findings operation; nullopt for an OK status. Without a payload
// (a store or port error passed through): InvalidArgument and OutOfRange ->
// invalid_finding_request; NotFound -> finding_not_found; FailedPrecondition, Aborted,
// AlreadyExists and PermissionDenied -> finding_action_not_allowed; every other code ->
// patrol_unavailable. A payload naming a code outside set F is ignored (canonical mapping).
std::optional<AgentError> ToFindingAgentError(const absl::Status& status);

}  // namespace pulse::core
