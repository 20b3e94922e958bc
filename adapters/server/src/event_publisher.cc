#include "pulse/adapters/server/event_publisher.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "pulse/core/actions/action_json.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::server {
namespace {

namespace wire = core::agent_wire;
using core::ActionState;

// The params the resource's current catalogue declares not sensitive; nullopt when the
// catalogue cannot be read or does not list the capability (then every value is redacted).
std::optional<std::set<std::string>> ShowableParams(const core::ActionRecord& record,
                                                    core::Fleet& fleet) {
  absl::StatusOr<std::vector<core::Capability>> catalogue =
      fleet.ListCapabilities(record.plan.resource_id);
  if (!catalogue.ok()) {
    return std::nullopt;
  }
  for (const core::Capability& capability : *catalogue) {
    if (capability.name == record.plan.capability_name) {
      std::set<std::string> showable;
      for (const core::CapabilityParam& param : capability.params) {
        if (!param.sensitive) {
          showable.insert(param.name);
        }
      }
      return showable;
    }
  }
  return std::nullopt;
}

// Writes `command` or commandRedacted:true.
void WriteCommand(core::JsonWriter& w, const std::string& command, bool redact) {
  if (redact) {
    w.Member(wire::kCommandRedacted, true);
  } else {
    w.Member(wire::kCommand, command);
  }
}

std::string TargetType(const std::string& resource_id) {
  const std::size_t colon = resource_id.find(':');
  return colon == std::string::npos ? "" : resource_id.substr(0, colon);
}

}  // namespace

std::string ActionCommandText(const core::ActionRecord& record, core::Fleet& fleet) {
  const std::string& params_json =
      record.plan.params_json.empty() ? record.request.params_json : record.plan.params_json;
  absl::StatusOr<rapidjson::Document> params = core::ParseJson(params_json);
  if (!params.ok() || !params->IsObject() || params->MemberCount() == 0) {
    return record.plan.capability_name;
  }
  const std::optional<std::set<std::string>> showable = ShowableParams(record, fleet);
  rapidjson::Document shown;
  shown.SetObject();
  auto& alloc = shown.GetAllocator();
  for (const auto& member : std::as_const(*params).GetObject()) {
    const std::string name(core::StringViewOf(member.name));
    rapidjson::Value key(name.c_str(), static_cast<rapidjson::SizeType>(name.size()), alloc);
    if (showable.has_value() && showable->count(name) > 0) {
      shown.AddMember(key, rapidjson::Value(member.value, alloc), alloc);
    } else {
      shown.AddMember(key, rapidjson::Value(core::kRedactedParamValue, alloc), alloc);
    }
  }
  return record.plan.capability_name + " " + core::CanonicalJson(shown);
}

void AgentEventPublisher::OnActionChange(const ActionChange& change) {
  const core::ActionRecord& record = change.record;
  if (record.state == ActionState::kPendingApproval) {
    const bool entered =
        change.created || std::find(change.from_states.begin(), change.from_states.end(),
                                    ActionState::kPendingApproval) == change.from_states.end();
    if (entered) {
      PublishApprovalPending(record);
    }
    return;
  }
  if (!change.created &&
      (record.state == ActionState::kCompleted || record.state == ActionState::kFailed)) {
    PublishActionCompleted(record);
  }
}

void AgentEventPublisher::PublishApprovalPending(const core::ActionRecord& record) {
  const std::string command = ActionCommandText(record, fleet_);
  absl::StatusOr<core::FleetResource> resource = fleet_.GetResource(record.plan.resource_id);
  const auto payload = [&](bool redact) {
    core::JsonWriter w;
    w.StartObject();
    w.Member("approvalId", record.id());
    w.Member("actionId", record.id());
    w.Member(wire::kResourceId, record.plan.resource_id);
    w.Member(wire::kCapabilityName, record.plan.capability_name);
    w.MemberIfNotEmpty("targetType",
                       resource.ok() ? resource->type : TargetType(record.plan.resource_id));
    w.Member("targetId", record.plan.resource_id);
    if (resource.ok()) {
      w.MemberIfNotEmpty("targetName", resource->name);
    }
    WriteCommand(w, command, redact);
    w.Member(wire::kRiskLevel, core::ToString(record.plan.risk));
    w.Member(wire::kRequestedBy, record.request.actor.id);
    w.TimeMember(wire::kRequestedAt, record.created_at);
    w.TimeMember(wire::kExpiresAt, record.plan.expires_at);
    w.Member("planHash", record.plan.plan_hash);
    w.EndObject();
    return w.Take();
  };
  bus_.Publish(kEventApprovalPending, payload(false), payload(true));
}

void AgentEventPublisher::PublishActionCompleted(const core::ActionRecord& record) {
  const std::string command = ActionCommandText(record, fleet_);
  const auto payload = [&](bool redact) {
    core::JsonWriter w;
    w.StartObject();
    w.Member("actionId", record.id());
    w.Member(wire::kResourceId, record.plan.resource_id);
    w.Member(wire::kCapabilityName, record.plan.capability_name);
    WriteCommand(w, command, redact);
    w.Member(wire::kState, core::ToString(record.state));
    const bool success = record.state == ActionState::kCompleted && record.result.has_value() &&
                         record.result->execution.status == core::ExecutionStatus::kSucceeded;
    w.Member(wire::kSuccess, success);
    if (record.result.has_value()) {
      const core::ActionExecutionResult& result = *record.result;
      w.MemberIfNotEmpty(wire::kErrorMessage, result.error_message);
      w.Key(wire::kActionResultV2);
      w.RawValue(core::ActionExecutionResultToJson(result));
      const core::VerificationAxis& v = result.verification;
      if (v.status != core::VerificationStatus::kNotAttempted) {
        w.Key(wire::kVerification);
        w.StartObject();
        w.Member(wire::kRan, true);
        w.Member(wire::kSuccess, v.status == core::VerificationStatus::kConfirmed);
        w.MemberIfNotEmpty(wire::kNote, v.summary);
        w.TimeMemberIfSet(wire::kRanAt, v.observed_at);
        w.EndObject();
      }
    }
    w.Member(wire::kRequestedBy, record.request.actor.id);
    w.TimeMember("completedAt", record.updated_at);
    w.EndObject();
    return w.Take();
  };
  bus_.Publish(kEventActionCompleted, payload(false), payload(true));
}

void AgentEventPublisher::OnFindingCreated(const core::Finding& finding) {
  if (!core::IsActive(finding, clock_.Now())) {
    return;  // born dismissed or suppressed: not news
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("findingId", finding.id);
  w.Member(wire::kResourceId, finding.resource_id);
  w.MemberIfNotEmpty(wire::kResourceName, finding.resource_name);
  w.Member(wire::kSeverity, core::ToString(finding.severity));
  w.Member(wire::kTitle, finding.title);
  w.Member(wire::kCategory, core::ToString(finding.category));
  w.EndObject();
  const std::string payload = w.Take();
  bus_.Publish(kEventFindingCreated, payload, payload);
}

}  // namespace pulse::server
