// The Patrol investigation's remediation tools. Neither plans, persists nor executes anything:
//   patrol_action_capabilities {"resource_id","capabilities":[{"name","description","risk",
//       "requires_approval","approval_floor","auto_authorization","supports_rollback",
//       "params":[...]}],"unusable_capabilities"?:[names],"truncated"} from
//       Fleet::ListCapabilities; the approval floor is the effective one for the requester
//       under the ActionService's policy options
//   patrol_propose_action {"status":"proposed","resource_id","capability","params","rationale",
//       "risk","requires_approval","approval_floor","rollback_available",
//       "predicted_blast_radius","preflight":{...},"planned":false,"executed":false,"message"}
//       after the proposal was checked exactly as the action lifecycle would plan it
//       (ValidateActionRequest, then BuildActionPlan against the live resource, catalogue and
//       relationships) without storing a plan. The result in the run's transcript is the
//       record of the proposal.
// Failures: INVALID_INPUT for a non-canonical resource id, a blank rationale or params the
// capability refuses (details field.<param>); NOT_FOUND for an unknown resource or a capability
// it does not offer now; other refusals as ActionRefusalToToolError; port failures as
// PortStatusToToolError. Thread-safe when the borrowed ports are.
#pragma once

#include "pulse/core/actions/action_service.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

class PatrolActionCapabilitiesHandler final : public ToolHandler {
 public:
  // Borrows `fleet` and `actions` (for its policy options); `requester` is the identity whose
  // approval requirement is shown.
  PatrolActionCapabilitiesHandler(Fleet& fleet, ActionService& actions, ActionActor requester);
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  Fleet& fleet_;
  ActionService& actions_;
  ActionActor requester_;
};

class PatrolProposeActionHandler final : public ToolHandler {
 public:
  // Borrows the ports, which must outlive the handler. Proposals are checked as requested by
  // `requester`.
  PatrolProposeActionHandler(Fleet& fleet, ActionService& actions, const Clock& clock,
                             ActionActor requester);
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  Fleet& fleet_;
  ActionService& actions_;
  const Clock& clock_;
  ActionActor requester_;
};

}  // namespace pulse::core
