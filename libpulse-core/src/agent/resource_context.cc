// AgentViews::ResourceContext: one resource in depth (docs/api.md AgentResourceContext).

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent_views_internal.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

namespace w = agent_wire;

// Neighbours read for the topology section.
constexpr std::size_t kMaxTopologyNeighbours = 64;

// The catalogue used to mask sensitive params, when it could be read.
using Catalogue = std::optional<std::vector<Capability>>;

// True when the value of `param` must not be shown: the capability is unknown (withdrawn, or
// the catalogue unreadable), the param is no longer declared, or it is declared sensitive.
bool HideParam(const Capability* capability, std::string_view param) {
  if (capability == nullptr) {
    return true;
  }
  for (const CapabilityParam& p : capability->params) {
    if (p.name == param) {
      return p.sensitive;
    }
  }
  return true;
}

// "<capability>" or "<capability> <params as canonical JSON>", sensitive values masked.
std::string CommandText(const ActionRecord& record, const Catalogue& catalogue) {
  const std::string& name = record.plan.capability_name;
  absl::StatusOr<rapidjson::Document> params =
      ParseJson(record.plan.params_json, JsonLimits{kMaxParamsJsonBytes, kMaxParamsDepth + 1});
  if (!params.ok() || !params->IsObject() || params->ObjectEmpty()) {
    return name;
  }
  const Capability* capability = catalogue.has_value() ? FindCapability(*catalogue, name) : nullptr;
  // Index-based: iterating a non-const object trips clang's -Wambiguous-reversed-operator.
  rapidjson::Value::MemberIterator it = params->MemberBegin();
  for (rapidjson::SizeType i = 0; i < params->MemberCount(); ++i) {
    rapidjson::Value::Member& member = it[i];
    if (HideParam(capability, StringViewOf(member.name))) {
      member.value.SetString(rapidjson::StringRef(kRedactedParamValue));
    }
  }
  return absl::StrCat(name, " ", CanonicalJson(*params));
}

// command, or commandRedacted:true for a caller that may not see commands.
void WriteCommand(JsonWriter& out, const ActionRecord& record, const Catalogue& catalogue,
                  bool redact) {
  if (redact) {
    out.Member(w::kCommandRedacted, true);
  } else {
    out.Member(w::kCommand, CommandText(record, catalogue));
  }
}

void WriteActiveFinding(JsonWriter& out, const Finding& f) {
  out.StartObject();
  out.Member(w::kId, f.id);
  out.Member(w::kTitle, f.title);
  out.Member(w::kSeverity, ToString(f.severity));
  out.Member(w::kCategory, ToString(f.category));
  out.MemberIfNotEmpty(w::kDescription, f.description);
  out.MemberIfNotEmpty(w::kImpact, f.impact);
  out.MemberIfNotEmpty(w::kRecommendation, f.recommendation);
  out.Member(w::kRegressionCount, f.regression_count);
  out.MemberIfNotEmpty(w::kPreviousResolvedFixSummary, f.previous_resolved_fix_summary);
  out.TimeMember(w::kDetectedAt, f.detected_at);
  out.TimeMember(w::kLastSeenAt, f.last_seen_at);
  out.EndObject();
}

void WritePendingApproval(JsonWriter& out, const ActionRecord& r, const Catalogue& catalogue,
                          bool redact) {
  out.StartObject();
  out.Member(w::kId, r.id());
  WriteCommand(out, r, catalogue, redact);
  out.Member(w::kRiskLevel, ToString(r.plan.risk));
  out.MemberIfNotEmpty(w::kRequestedBy, r.request.actor.id);
  out.TimeMember(w::kRequestedAt, r.created_at);
  out.TimeMember(w::kExpiresAt, r.plan.expires_at);
  out.EndObject();
}

void WriteRecentAction(JsonWriter& out, const ActionRecord& r, const Catalogue& catalogue,
                       bool redact) {
  out.StartObject();
  out.Member(w::kId, r.id());
  out.Member(w::kCapabilityName, r.plan.capability_name);
  WriteCommand(out, r, catalogue, redact);
  out.Member(w::kState, ToString(r.state));
  out.Member(w::kSuccess,
             r.result.has_value() && r.result->execution.status == ExecutionStatus::kSucceeded);
  if (r.result.has_value()) {
    const ActionExecutionResult& result = *r.result;
    out.MemberIfNotEmpty(w::kErrorMessage, result.error_message);
    out.Key(w::kActionResultV2);
    out.RawValue(ActionExecutionResultToJson(result));
    // The verification is an independent observation, not a command: there is no command
    // member to show or redact here.
    out.Key(w::kVerification);
    out.StartObject();
    out.Member(w::kRan, result.verification.status != VerificationStatus::kNotAttempted);
    out.Member(w::kSuccess, result.verification.status == VerificationStatus::kConfirmed);
    out.MemberIfNotEmpty(w::kNote, result.verification.summary);
    out.TimeMemberIfSet(w::kRanAt, result.verification.observed_at);
    out.EndObject();
  }
  out.MemberIfNotEmpty(w::kRequestedBy, r.request.actor.id);
  out.TimeMember(w::kCreatedAt, r.created_at);
  out.TimeMember(w::kUpdatedAt, r.updated_at);
  out.EndObject();
}

// {key: value} with at most kMaxContextFacts entries, each value cut to kMaxContextFactBytes.
void WriteFacts(JsonWriter& out, const std::map<std::string, std::string>& facts) {
  out.Key(w::kFacts);
  out.StartObject();
  std::size_t written = 0;
  for (const auto& [key, value] : facts) {
    if (written++ == kMaxContextFacts) {
      break;
    }
    out.Member(key, TruncateUtf8(value, kMaxContextFactBytes));
  }
  out.EndObject();
}

struct Section {
  std::string_view id;
  std::string_view title;
  std::string_view source;
  std::string summary;
  std::optional<absl::Time> observed_at;
  std::map<std::string, std::string> facts;
};

void WriteSection(JsonWriter& out, const Section& s) {
  out.StartObject();
  out.Member(w::kId, s.id);
  out.Member(w::kTitle, s.title);
  out.Member(w::kSource, s.source);
  out.MemberIfNotEmpty(w::kSummary, TruncateUtf8(s.summary, kMaxContextFactBytes));
  out.TimeMemberIfSet(w::kObservedAt, s.observed_at);
  WriteFacts(out, s.facts);
  out.EndObject();
}

// "outbound.runs_on" -> "node:pve1", "inbound.runs_on" -> "vm:101,vm:102" for the edges that
// touch `id`.
std::map<std::string, std::string> NeighbourFacts(std::string_view id,
                                                  const std::vector<FleetRelationship>& edges,
                                                  std::size_t& neighbours) {
  std::map<std::string, std::set<std::string>> grouped;
  std::set<std::string> distinct;
  for (const FleetRelationship& e : edges) {
    if (e.from_id == id && e.to_id != id) {
      grouped[absl::StrCat("outbound.", e.kind)].insert(e.to_id);
      distinct.insert(e.to_id);
    } else if (e.to_id == id && e.from_id != id) {
      grouped[absl::StrCat("inbound.", e.kind)].insert(e.from_id);
      distinct.insert(e.from_id);
    }
  }
  neighbours = distinct.size();
  std::map<std::string, std::string> facts;
  for (const auto& [key, ids] : grouped) {
    facts.emplace(key, absl::StrJoin(ids, ","));
  }
  return facts;
}

}  // namespace

void AgentViews::WriteContextSections(JsonWriter& out, const FleetResource& resource) {
  out.Key(w::kContextSections);
  out.StartArray();
  // Context, not identity: a section the fleet cannot read now is left out, not an error.
  if (absl::StatusOr<FleetStatus> status = fleet_.GetStatus(resource.id); status.ok()) {
    Section s{"status",        "Live status", "fleet.status",
              status->summary, std::nullopt,  status->facts};
    s.facts.insert_or_assign("status", status->status);
    if (status->observed_at != absl::UnixEpoch()) {
      s.observed_at = status->observed_at;
    }
    WriteSection(out, s);
  }
  FleetTopologyQuery topology_query;
  topology_query.root_id = resource.id;
  topology_query.depth = 1;
  topology_query.max_resources = kMaxTopologyNeighbours;
  if (absl::StatusOr<FleetTopology> topology = fleet_.GetTopology(topology_query); topology.ok()) {
    std::size_t neighbours = 0;
    Section s{"topology",       "Neighbourhood",
              "fleet.topology", "",
              std::nullopt,     NeighbourFacts(resource.id, topology->relationships, neighbours)};
    if (!resource.parent_id.empty()) {
      s.facts.insert_or_assign("parent", resource.parent_id);
    }
    if (topology->truncated) {
      s.facts.insert_or_assign("truncated", "true");
    }
    s.summary =
        absl::StrCat(neighbours, neighbours == 1 ? " related resource" : " related resources");
    WriteSection(out, s);
  }
  if (!resource.attributes.empty()) {
    WriteSection(out, Section{"attributes", "Descriptive facts", "fleet.resource", "", std::nullopt,
                              resource.attributes});
  }
  out.EndArray();
}

absl::StatusOr<std::string> AgentViews::ResourceContext(std::string_view resource_id,
                                                        bool redact_commands) {
  if (!IsCanonicalResourceId(resource_id)) {
    return absl::NotFoundError(absl::StrCat("no resource with id ", ToAbsl(resource_id)));
  }
  PULSE_ASSIGN_OR_RETURN(FleetResource resource, fleet_.GetResource(resource_id));
  PULSE_RETURN_IF_ERROR(action_service_.SweepExpired(kActionSweepLimit));
  const absl::Time now = clock_.Now();

  absl::StatusOr<OperatorState> state = operator_state_.Get(resource.id);
  if (!state.ok() && !absl::IsNotFound(state.status())) {
    return state.status();
  }

  FindingFilter filter;
  filter.resource_id = resource.id;
  filter.active_at = now;
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, findings_.List(filter));
  std::vector<Finding> findings;
  findings.reserve(stored.size());
  for (StoredFinding& s : stored) {
    findings.push_back(std::move(s.finding));
  }
  std::sort(findings.begin(), findings.end(), agent_internal::MoreUrgentFinding);
  findings.resize(std::min(findings.size(), kMaxContextFindings));

  PULSE_ASSIGN_OR_RETURN(std::vector<ActionRecord> actions,
                         agent_internal::ScanActions(actions_, AllActionStates()));
  std::vector<ActionRecord> pending;
  std::vector<ActionRecord> recent;
  for (ActionRecord& r : actions) {
    if (r.plan.resource_id != resource.id) {
      continue;
    }
    (agent_internal::AwaitsDecision(r, now) ? pending : recent).push_back(std::move(r));
  }
  std::sort(pending.begin(), pending.end(), agent_internal::BeforeInApprovalQueue);
  pending.resize(std::min(pending.size(), kMaxContextPendingApprovals));
  std::sort(recent.begin(), recent.end(), agent_internal::MoreRecentlyUpdated);
  recent.resize(std::min(recent.size(), kMaxContextRecentActions));

  Catalogue catalogue;
  if (!redact_commands && (!pending.empty() || !recent.empty())) {
    // Unreadable: every param value is masked (HideParam with no capability).
    if (absl::StatusOr<std::vector<Capability>> read = fleet_.ListCapabilities(resource.id);
        read.ok()) {
      catalogue = *std::move(read);
    }
  }

  JsonWriter out;
  out.StartObject();
  out.Member(w::kCanonicalId, resource.id);
  out.Member(w::kResourceType, resource.type);
  out.Member(w::kResourceName, resource.name);
  out.MemberIfNotEmpty(w::kTechnology, resource.technology);
  if (state.ok()) {
    out.Key(w::kOperatorState);
    out.RawValue(OperatorStateToJson(*state, now));
  }
  out.Key(w::kActiveFindings);
  out.StartArray();
  for (const Finding& f : findings) {
    WriteActiveFinding(out, f);
  }
  out.EndArray();
  out.Key(w::kPendingApprovals);
  out.StartArray();
  for (const ActionRecord& r : pending) {
    WritePendingApproval(out, r, catalogue, redact_commands);
  }
  out.EndArray();
  out.Key(w::kRecentActions);
  out.StartArray();
  for (const ActionRecord& r : recent) {
    WriteRecentAction(out, r, catalogue, redact_commands);
  }
  out.EndArray();
  WriteContextSections(out, resource);
  out.TimeMember(w::kGeneratedAt, now);
  out.EndObject();
  return out.Take();
}

}  // namespace pulse::core
