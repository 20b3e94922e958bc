#include "pulse/core/builtins/capability_handlers.h"

#include <string>
#include <utility>
#include <vector>

#include "handler_support.h"
#include "pulse/core/actions/action_planner.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

using handlers_internal::CheckResourceId;
using handlers_internal::ShortText;
using handlers_internal::StringArg;
using handlers_internal::Trimmed;

// A proposal is never stored, so its request id only has to satisfy the request rules.
constexpr std::string_view kProposalRequestId = "patrol-proposal";
constexpr std::size_t kMaxBlastRadiusListed = 16;

// What BuildActionPlan binds, read live: the resource, its catalogue and the edges touching it
// (as ActionService reads them to plan).
absl::StatusOr<PlanInputs> ReadPlanInputs(Fleet& fleet, std::string_view id) {
  PlanInputs inputs;
  absl::StatusOr<FleetResource> resource = fleet.GetResource(id);
  if (!resource.ok()) {
    return resource.status();
  }
  inputs.resource = *std::move(resource);
  absl::StatusOr<std::vector<Capability>> catalogue = fleet.ListCapabilities(id);
  if (!catalogue.ok()) {
    return catalogue.status();
  }
  inputs.catalogue = *std::move(catalogue);
  FleetTopologyQuery query;
  query.root_id = std::string(id);
  query.depth = 1;
  absl::StatusOr<FleetTopology> topology = fleet.GetTopology(query);
  if (!topology.ok()) {
    return topology.status();
  }
  for (FleetRelationship& r : topology->relationships) {
    if (r.from_id == id || r.to_id == id) {
      inputs.relationships.push_back(std::move(r));
    }
  }
  return inputs;
}

}  // namespace

// ---- patrol_action_capabilities -----------------------------------------------------------

PatrolActionCapabilitiesHandler::PatrolActionCapabilitiesHandler(Fleet& fleet,
                                                                 ActionService& actions,
                                                                 ActionActor requester)
    : fleet_(fleet), actions_(actions), requester_(std::move(requester)) {}

ToolResult PatrolActionCapabilitiesHandler::Run(const rapidjson::Value& args,
                                                const ToolContext& /*context*/) {
  const std::string_view id = StringArg(args, kArgResourceId);
  if (auto bad = CheckResourceId(id)) {
    return *bad;
  }
  absl::StatusOr<std::vector<Capability>> catalogue = fleet_.ListCapabilities(id);
  if (!catalogue.ok()) {
    return ToolResult::Failure(PortStatusToToolError(catalogue.status(), id));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("resource_id", id);
  const bool truncated =
      handlers_internal::WriteCapabilities(out, *catalogue, requester_, actions_.options());
  out.Member("truncated", truncated);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

// ---- patrol_propose_action ----------------------------------------------------------------

PatrolProposeActionHandler::PatrolProposeActionHandler(Fleet& fleet, ActionService& actions,
                                                       const Clock& clock, ActionActor requester)
    : fleet_(fleet), actions_(actions), clock_(clock), requester_(std::move(requester)) {}

ToolResult PatrolProposeActionHandler::Run(const rapidjson::Value& args,
                                           const ToolContext& /*context*/) {
  ActionRequest request;
  request.request_id = std::string(kProposalRequestId);
  request.resource_id = std::string(StringArg(args, kArgResourceId));
  request.capability_name = std::string(StringArg(args, kArgCapability));
  const rapidjson::Value* params = GetMember(args, kArgParams);
  request.params_json = params != nullptr && params->IsObject() ? ToJsonString(*params) : "{}";
  request.reason = Trimmed(StringArg(args, kArgRationale));
  request.actor = requester_;
  if (auto bad = CheckResourceId(request.resource_id)) {
    return *bad;
  }
  if (std::optional<ActionRefusal> refusal = ValidateActionRequest(request)) {
    return ToolResult::Failure(ActionRefusalToToolError(*refusal));
  }
  absl::StatusOr<PlanInputs> inputs = ReadPlanInputs(fleet_, request.resource_id);
  if (!inputs.ok()) {
    return ToolResult::Failure(PortStatusToToolError(inputs.status(), request.resource_id));
  }
  Refusable<PlannedAction> built =
      BuildActionPlan(request, *inputs, clock_.Now(), actions_.options());
  if (built.refused()) {
    return ToolResult::Failure(ActionRefusalToToolError(built.refusal()));
  }
  const ActionPlan& plan = built.value().plan;
  JsonWriter out;
  out.StartObject();
  out.Member("status", "proposed");
  out.Member("resource_id", plan.resource_id);
  out.Member("capability", plan.capability_name);
  out.Key("params");
  out.RawValue(plan.params_json.empty() ? std::string("{}") : plan.params_json);
  out.Member("rationale", ShortText(request.reason, kMaxReasonLength));
  out.Member("risk", ToString(plan.risk));
  out.Member("requires_approval", plan.requires_approval);
  out.Member("approval_floor", ToString(plan.approval_requirement.floor));
  out.Member("rollback_available", plan.rollback_available);
  out.Key("predicted_blast_radius");
  out.StartArray();
  for (std::size_t i = 0; i < plan.predicted_blast_radius.size() && i < kMaxBlastRadiusListed;
       ++i) {
    out.String(ShortText(plan.predicted_blast_radius[i]));
  }
  out.EndArray();
  out.Key("preflight");
  out.RawValue(ActionPreflightJson(plan.preflight));
  out.Member("planned", false);
  out.Member("executed", false);
  out.Member("message",
             "The proposal passed the same checks the action lifecycle applies when planning and "
             "is recorded in this run for review. Nothing was planned, approved or executed.");
  out.EndObject();
  return ToolResult::Success(out.Take());
}

}  // namespace pulse::core
