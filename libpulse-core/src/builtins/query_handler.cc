#include "pulse/core/builtins/query_handler.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "handler_support.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

using handlers_internal::BoundedArray;
using handlers_internal::CheckResourceId;
using handlers_internal::InvalidInput;
using handlers_internal::RejectInapplicable;
using handlers_internal::ResourceBriefJson;
using handlers_internal::ShortText;
using handlers_internal::StringArg;
using handlers_internal::Trimmed;
using handlers_internal::WriteBoundedArray;

constexpr std::size_t kMaxAttributes = 24;
constexpr std::size_t kMaxActionEvents = 20;
constexpr std::size_t kMaxDecisionReasonBytes = 300;

int LimitArg(const rapidjson::Value& args) {
  // The schema bounds it to 1..200.
  return static_cast<int>(GetInt64(args, kArgLimit).value_or(kDefaultQueryLimit));
}

std::string RelationshipJson(const FleetRelationship& r) {
  JsonWriter out;
  out.StartObject();
  out.Member("from", ShortText(r.from_id));
  out.Member("to", ShortText(r.to_id));
  out.Member("kind", ShortText(r.kind, 64));
  out.EndObject();
  return out.Take();
}

std::string DecisionJson(const ApprovalRecord& approval) {
  JsonWriter out;
  out.StartObject();
  out.Member("actor_kind", ToString(approval.actor.kind));
  out.Member("actor_id", ShortText(approval.actor.id, 128));
  out.Member("outcome", ToString(approval.outcome));
  out.MemberIfNotEmpty("reason", ShortText(approval.reason, kMaxDecisionReasonBytes));
  out.TimeMember("at", approval.at);
  out.Member("plan_hash", approval.plan_hash);
  out.EndObject();
  return out.Take();
}

std::string EventJson(const ActionLifecycleEvent& event) {
  JsonWriter out;
  out.StartObject();
  out.Member("sequence", event.sequence);
  out.TimeMember("at", event.at);
  out.Member("state", ToString(event.state));
  out.Member("kind", ToString(event.kind));
  if (event.decision.has_value()) {
    out.Member("decision", ToString(*event.decision));
  }
  if (event.actor.has_value()) {
    out.Member("actor_id", ShortText(event.actor->id, 128));
  }
  out.MemberIfNotEmpty("message", ShortText(event.message, kMaxDecisionReasonBytes));
  out.EndObject();
  return out.Take();
}

ToolResult NeedsArgument(std::string_view action, std::string_view argument) {
  return InvalidInput(std::string("pulse_query action=") + std::string(action) +
                          " needs a non-blank `" + std::string(argument) + "`",
                      {{"argument", std::string(argument)}, {"action", std::string(action)}});
}

}  // namespace

PulseQueryHandler::PulseQueryHandler(Fleet& fleet, ActionService& actions, ActionActor requester)
    : fleet_(fleet), actions_(actions), requester_(std::move(requester)) {}

ToolResult PulseQueryHandler::Run(const rapidjson::Value& args, const ToolContext& /*context*/) {
  const std::string_view action = StringArg(args, kArgAction);
  if (action == kQueryActionSearch) {
    return Search(args);
  }
  if (action == kQueryActionList) {
    return List(args);
  }
  if (action == kQueryActionGet) {
    return Get(args);
  }
  if (action == kQueryActionTopology) {
    return Topology(args);
  }
  if (action == kQueryActionAction) {
    return ReadAction(args);
  }
  return InvalidInput("pulse_query needs action search, get, list, topology or action",
                      {{"argument", std::string(kArgAction)}});
}

ToolResult PulseQueryHandler::Search(const rapidjson::Value& args) {
  if (auto bad = RejectInapplicable(args, kToolPulseQuery, kQueryActionSearch,
                                    {kArgAction, kArgQuery, kArgResourceType, kArgLimit})) {
    return *bad;
  }
  FleetResourceQuery query;
  query.text = Trimmed(StringArg(args, kArgQuery));
  if (query.text.empty()) {
    return NeedsArgument(kQueryActionSearch, kArgQuery);
  }
  query.type = std::string(StringArg(args, kArgResourceType));
  return Resources(kQueryActionSearch, query, LimitArg(args));
}

ToolResult PulseQueryHandler::List(const rapidjson::Value& args) {
  if (auto bad = RejectInapplicable(args, kToolPulseQuery, kQueryActionList,
                                    {kArgAction, kArgResourceType, kArgLimit})) {
    return *bad;
  }
  FleetResourceQuery query;
  query.type = std::string(StringArg(args, kArgResourceType));
  return Resources(kQueryActionList, query, LimitArg(args));
}

ToolResult PulseQueryHandler::Resources(std::string_view action, const FleetResourceQuery& query,
                                        int limit) {
  FleetResourceQuery ask = query;
  ask.limit = static_cast<std::size_t>(limit) + 1;  // one more tells whether more match
  absl::StatusOr<std::vector<FleetResource>> listed = fleet_.ListResources(ask);
  if (!listed.ok()) {
    return ToolResult::Failure(PortStatusToToolError(listed.status(), "the fleet"));
  }
  BoundedArray resources(kMaxToolListBytes, static_cast<std::size_t>(limit));
  for (const FleetResource& r : *listed) {
    resources.Add(ResourceBriefJson(r));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("action", action);
  if (!query.text.empty()) {
    out.Member("query", ShortText(query.text, 512));
  }
  out.MemberIfNotEmpty("resource_type", query.type);
  out.Member("count", resources.size());
  WriteBoundedArray(out, "resources", resources);
  out.Member("truncated", resources.truncated());
  out.EndObject();
  return ToolResult::Success(out.Take());
}

ToolResult PulseQueryHandler::Get(const rapidjson::Value& args) {
  if (auto bad = RejectInapplicable(args, kToolPulseQuery, kQueryActionGet,
                                    {kArgAction, kArgResourceId})) {
    return *bad;
  }
  const std::string_view id = StringArg(args, kArgResourceId);
  if (id.empty()) {
    return NeedsArgument(kQueryActionGet, kArgResourceId);
  }
  if (auto bad = CheckResourceId(id)) {
    return *bad;
  }
  absl::StatusOr<FleetResource> resource = fleet_.GetResource(id);
  if (!resource.ok()) {
    return ToolResult::Failure(PortStatusToToolError(resource.status(), id));
  }
  const FleetResource& r = *resource;
  JsonWriter out;
  out.StartObject();
  out.Member("action", kQueryActionGet);
  out.Key("resource");
  out.StartObject();
  out.Member("id", ShortText(r.id));
  out.Member("type", ShortText(r.type, 64));
  out.Member("name", ShortText(r.name));
  out.Member("status", ShortText(r.status, 64));
  out.MemberIfNotEmpty("technology", ShortText(r.technology, 64));
  out.MemberIfNotEmpty("parent_id", ShortText(r.parent_id));
  out.MemberIfNotEmpty("revision", ShortText(r.revision, 128));
  handlers_internal::WriteFacts(out, "attributes", r.attributes, kMaxAttributes);
  out.EndObject();
  absl::StatusOr<std::vector<Capability>> catalogue = fleet_.ListCapabilities(id);
  bool truncated = false;
  if (catalogue.ok()) {
    truncated = handlers_internal::WriteCapabilities(out, *catalogue, requester_,
                                                     actions_.options(), kMaxToolListBytes / 2);
  } else {
    out.Key("capabilities");
    out.StartArray();
    out.EndArray();
    out.Member("capabilities_error", ToString(PortStatusToToolError(catalogue.status(), id).code));
  }
  out.Member("truncated", truncated);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

ToolResult PulseQueryHandler::Topology(const rapidjson::Value& args) {
  if (auto bad = RejectInapplicable(args, kToolPulseQuery, kQueryActionTopology,
                                    {kArgAction, kArgResourceId, kArgLimit})) {
    return *bad;
  }
  FleetTopologyQuery query;
  query.root_id = std::string(StringArg(args, kArgResourceId));
  if (!query.root_id.empty()) {
    if (auto bad = CheckResourceId(query.root_id)) {
      return *bad;
    }
  }
  query.depth = 1;
  query.max_resources = static_cast<std::size_t>(LimitArg(args));
  absl::StatusOr<FleetTopology> topology = fleet_.GetTopology(query);
  if (!topology.ok()) {
    return ToolResult::Failure(PortStatusToToolError(
        topology.status(), query.root_id.empty() ? std::string("the fleet") : query.root_id));
  }
  BoundedArray resources(kMaxToolListBytes * 3 / 4);
  for (const FleetResource& r : topology->resources) {
    resources.Add(ResourceBriefJson(r));
  }
  BoundedArray relationships(kMaxToolListBytes / 2);
  for (const FleetRelationship& rel : topology->relationships) {
    relationships.Add(RelationshipJson(rel));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("action", kQueryActionTopology);
  out.MemberIfNotEmpty("root_id", query.root_id);
  WriteBoundedArray(out, "resources", resources);
  WriteBoundedArray(out, "relationships", relationships);
  out.Member("truncated",
             topology->truncated || resources.truncated() || relationships.truncated());
  out.EndObject();
  return ToolResult::Success(out.Take());
}

ToolResult PulseQueryHandler::ReadAction(const rapidjson::Value& args) {
  if (auto bad = RejectInapplicable(args, kToolPulseQuery, kQueryActionAction,
                                    {kArgAction, kArgActionId})) {
    return *bad;
  }
  const std::string action_id = Trimmed(StringArg(args, kArgActionId));
  if (action_id.empty()) {
    return NeedsArgument(kQueryActionAction, kArgActionId);
  }
  absl::StatusOr<Refusable<ActionRecord>> got = actions_.Get(action_id);
  if (!got.ok()) {
    return ToolResult::Failure(PortStatusToToolError(got.status(), "the action lifecycle"));
  }
  if (got->refused()) {
    return ToolResult::Failure(ActionRefusalToToolError(got->refusal()));
  }
  const ActionRecord& record = got->value();
  JsonWriter out;
  out.StartObject();
  out.Member("action", kQueryActionAction);
  out.Member("action_id", record.id());
  out.Key("record");
  out.RawValue(ActionSummaryJson(record));
  BoundedArray decisions(kMaxToolListBytes / 4);
  for (const ApprovalRecord& approval : record.approvals) {
    decisions.Add(DecisionJson(approval));
  }
  WriteBoundedArray(out, "decisions", decisions);
  if (record.result.has_value()) {
    out.Key("result");
    out.RawValue(ActionResultJson(*record.result));
  }
  bool truncated = decisions.truncated();
  absl::StatusOr<Refusable<std::vector<ActionLifecycleEvent>>> events = actions_.Events(action_id);
  if (events.ok() && !events->refused()) {
    // The newest events say most about where the action stands: keep as many of them as fit.
    const std::vector<ActionLifecycleEvent>& all = events->value();
    std::vector<std::string> newest;
    std::size_t bytes = 0;
    for (std::size_t i = all.size(); i > 0 && newest.size() < kMaxActionEvents; --i) {
      std::string json = EventJson(all[i - 1]);
      if (bytes + json.size() + 1 > kMaxToolListBytes / 4) {
        break;
      }
      bytes += json.size() + 1;
      newest.push_back(std::move(json));
    }
    BoundedArray kept;
    for (auto it = newest.rbegin(); it != newest.rend(); ++it) {
      kept.Add(std::move(*it));
    }
    WriteBoundedArray(out, "events", kept);
    const std::size_t omitted = all.size() - kept.size();
    if (omitted > 0) {
      out.Member("earlier_events_omitted", omitted);
    }
    truncated = truncated || omitted > 0;
  }
  out.Member("truncated", truncated);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

}  // namespace pulse::core
