// The pulse_query tool handler: resolution over the Fleet port and the action lifecycle. It
// never changes anything and never runs commands. Results (compact JSON, every list bounded):
//   search   {"action","query","resource_type"?,"count","resources":[brief]}
//   list     {"action","resource_type"?,"count","resources":[brief]}
//            a brief is {"id","type","name","status","technology"?,"parent_id"?}; when more
//            resources match than `limit` (default 50) or fit the byte bound, "truncated": true
//            and "resources_omitted" (at least 1) follow the list
//   get      {"action","resource":{brief + "revision"?,"attributes":{...}},"capabilities":[...]}
//            (capabilities as patrol_action_capabilities lists them; "capabilities_error"
//            holds the stable code when the catalogue could not be read)
//   topology {"action","root_id"?,"resources":[brief],"relationships":[{"from","to","kind"}]}
//            the root's direct neighbours, or the whole fleet without resource_id
//   action   {"action","action_id","record":{...},"decisions":[...],"result"?:{...},
//            "events":[...]} of a recorded action (ActionSummaryJson, ActionResultJson)
// Failures: INVALID_INPUT for an argument that does not apply to the action, a missing or blank
// query/resource_id/action_id, or a non-canonical resource id; NOT_FOUND for an unknown
// resource or action; port failures as PortStatusToToolError.
// Thread-safe when the borrowed ports are.
#pragma once

#include "pulse/core/actions/action_service.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

// Results per search/list/topology when the model gives no limit.
inline constexpr int kDefaultQueryLimit = 50;

class PulseQueryHandler final : public ToolHandler {
 public:
  // Borrows `fleet` and `actions`, which must outlive the handler. `requester` is the identity
  // whose approval requirement a capability listing shows.
  PulseQueryHandler(Fleet& fleet, ActionService& actions, ActionActor requester);

  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  ToolResult Search(const rapidjson::Value& args);
  ToolResult List(const rapidjson::Value& args);
  ToolResult Get(const rapidjson::Value& args);
  ToolResult Topology(const rapidjson::Value& args);
  ToolResult ReadAction(const rapidjson::Value& args);
  ToolResult Resources(std::string_view action, const FleetResourceQuery& query, int limit);

  Fleet& fleet_;
  ActionService& actions_;
  ActionActor requester_;
};

}  // namespace pulse::core
