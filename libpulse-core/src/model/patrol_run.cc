#include "pulse/core/model/patrol_run.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<PatrolTrigger>, 4> kTriggers = {{
    {PatrolTrigger::kScheduled, "scheduled"},
    {PatrolTrigger::kManual, "manual"},
    {PatrolTrigger::kAlert, "alert"},
    {PatrolTrigger::kEvent, "event"},
}};
constexpr std::array<WireName<PatrolRunStatus>, 4> kStatuses = {{
    {PatrolRunStatus::kRunning, "running"},
    {PatrolRunStatus::kHealthy, "healthy"},
    {PatrolRunStatus::kIssuesFound, "issues_found"},
    {PatrolRunStatus::kError, "error"},
}};

constexpr std::array<WireName<ProposalDropReason>, 7> kDropReasons = {{
    {ProposalDropReason::kProviderError, "provider_error"},
    {ProposalDropReason::kBudgetStop, "budget_stop"},
    {ProposalDropReason::kCancelled, "cancelled"},
    {ProposalDropReason::kTimedOut, "timed_out"},
    {ProposalDropReason::kIncomplete, "incomplete"},
    {ProposalDropReason::kEngineError, "engine_error"},
    {ProposalDropReason::kAutonomyLowered, "autonomy_lowered"},
}};
constexpr std::array<WireName<FixHoldReason>, 8> kHoldReasons = {{
    {FixHoldReason::kApprovalRequired, "approval_required"},
    {FixHoldReason::kNotAutoExecutable, "not_auto_executable"},
    {FixHoldReason::kAutonomyLowered, "autonomy_lowered"},
    {FixHoldReason::kAutopilotRevoked, "autopilot_revoked"},
    {FixHoldReason::kRemediationLocked, "remediation_locked"},
    {FixHoldReason::kMaintenanceWindow, "maintenance_window"},
    {FixHoldReason::kLockStateUnknown, "lock_state_unknown"},
    {FixHoldReason::kAutonomyUnreadable, "autonomy_unreadable"},
}};

std::vector<std::string> Dedup(std::vector<std::string> items) {
  std::vector<std::string> out;
  for (std::string& item : items) {
    if (std::find(out.begin(), out.end(), item) == out.end()) {
      out.push_back(std::move(item));
    }
  }
  return out;
}

absl::Status ScopeError(const std::string& message) {
  return absl::InvalidArgumentError("invalid_patrol_scope: " + message);
}

// ---- decoding helpers for the stored form ----

absl::Status Bad(const std::string& member) {
  return absl::InvalidArgumentError("patrol run record: bad member " + member);
}

const rapidjson::Value* Find(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

absl::Status ReadString(const rapidjson::Value& obj, const char* key, std::string& out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) {
    return absl::OkStatus();
  }
  if (!v->IsString()) {
    return Bad(key);
  }
  out.assign(v->GetString(), v->GetStringLength());
  return absl::OkStatus();
}

absl::Status ReadInt(const rapidjson::Value& obj, const char* key, std::int64_t& out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) {
    return absl::OkStatus();
  }
  if (!v->IsInt64()) {
    return Bad(key);
  }
  out = v->GetInt64();
  return absl::OkStatus();
}

absl::Status ReadBool(const rapidjson::Value& obj, const char* key, bool& out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) {
    return absl::OkStatus();
  }
  if (!v->IsBool()) {
    return Bad(key);
  }
  out = v->GetBool();
  return absl::OkStatus();
}

absl::Status ReadStrings(const rapidjson::Value& obj, const char* key,
                         std::vector<std::string>& out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) {
    return absl::OkStatus();
  }
  if (!v->IsArray()) {
    return Bad(key);
  }
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    if (!(*v)[i].IsString()) {
      return Bad(key);
    }
    out.emplace_back((*v)[i].GetString(), (*v)[i].GetStringLength());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<absl::Time>> ReadTime(const rapidjson::Value& obj, const char* key) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) {
    return std::optional<absl::Time>();
  }
  if (!v->IsString()) {
    return Bad(key);
  }
  std::optional<absl::Time> t =
      ParseRfc3339(std::string_view(v->GetString(), v->GetStringLength()));
  if (!t.has_value()) {
    return Bad(key);
  }
  return std::optional<absl::Time>(*t);
}

}  // namespace

std::string_view ToString(PatrolTrigger trigger) {
  return WireNameOf(kTriggers, trigger, kTriggers[0].name);
}
std::optional<PatrolTrigger> ParsePatrolTrigger(std::string_view text) {
  return WireValueOf(kTriggers, text);
}
std::string_view ToString(PatrolRunStatus status) {
  return WireNameOf(kStatuses, status, kStatuses[0].name);
}
std::optional<PatrolRunStatus> ParsePatrolRunStatus(std::string_view text) {
  return WireValueOf(kStatuses, text);
}
std::string_view ToString(ProposalDropReason reason) {
  return WireNameOf(kDropReasons, reason, kDropReasons[0].name);
}
std::optional<ProposalDropReason> ParseProposalDropReason(std::string_view text) {
  return WireValueOf(kDropReasons, text);
}
std::string_view ToString(FixHoldReason reason) {
  return WireNameOf(kHoldReasons, reason, kHoldReasons[0].name);
}
std::optional<FixHoldReason> ParseFixHoldReason(std::string_view text) {
  return WireValueOf(kHoldReasons, text);
}

std::string PatrolScope::Key() const {
  if (Full()) {
    return "full";
  }
  std::vector<std::string> ids = resource_ids;
  std::vector<std::string> types = resource_types;
  std::sort(ids.begin(), ids.end());
  std::sort(types.begin(), types.end());
  return absl::StrCat("ids=", absl::StrJoin(ids, ","), ";types=", absl::StrJoin(types, ","));
}

absl::StatusOr<PatrolScope> ParsePatrolScopeRequest(std::string_view body) {
  PatrolScope scope;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return scope;
  }
  JsonLimits limits;
  limits.max_bytes = kMaxPatrolRunBodyBytes;
  limits.max_depth = 4;
  absl::StatusOr<rapidjson::Document> doc = ParseJson(body, limits);
  if (!doc.ok()) {
    return ScopeError(std::string(doc.status().message()));
  }
  JsonReaderOptions options;
  options.text = JsonTextRule::kCleanText;
  JsonObjectReader r(*doc, "scope", options);
  if (absl::Status members = r.ExpectMembers({"resource_ids", "resource_types"}); !members.ok()) {
    return ScopeError(std::string(members.message()));
  }
  scope.resource_ids = r.StringArray("resource_ids", kMaxScopeItems, kMaxScopeItemBytes);
  scope.resource_types = r.StringArray("resource_types", kMaxScopeItems, kMaxScopeItemBytes);
  if (absl::Status done = r.Finish(); !done.ok()) {
    return ScopeError(std::string(done.message()));
  }
  for (const std::vector<std::string>* list : {&scope.resource_ids, &scope.resource_types}) {
    for (const std::string& item : *list) {
      if (item.find_first_not_of(" \t\r\n") == std::string::npos) {
        return ScopeError("scope items must not be blank");
      }
    }
  }
  scope.resource_ids = Dedup(std::move(scope.resource_ids));
  scope.resource_types = Dedup(std::move(scope.resource_types));
  return scope;
}

std::string PatrolRunToJson(const PatrolRunRecord& r) {
  JsonWriter w;
  w.StartObject();
  w.Member("id", r.id);
  w.Member("type", "patrol");
  w.Member("trigger_reason", ToString(r.trigger));
  w.TimeMember("started_at", r.started_at);
  if (r.completed_at.has_value()) {
    w.TimeMember("completed_at", *r.completed_at);
    w.Member("duration_ms", absl::ToInt64Milliseconds(*r.completed_at - r.started_at));
  }
  w.Member("status", ToString(r.status));
  w.Key("scope_resource_ids");
  w.StringArray(r.scope.resource_ids);
  w.Key("scope_resource_types");
  w.StringArray(r.scope.resource_types);
  w.Key("effective_scope_resource_ids");
  w.StringArray(r.effective_scope_resource_ids);
  w.Member("autonomy_level", r.autonomy_level);
  w.Member("resources_checked", r.resources_checked);
  w.Member("new_findings", r.new_findings);
  w.Member("existing_findings", r.existing_findings);
  w.Member("resolved_findings", r.resolved_findings);
  w.Member("rejected_findings", r.rejected_findings);
  w.Key("new_finding_ids");
  w.StringArray(r.new_finding_ids);
  w.Key("existing_finding_ids");
  w.StringArray(r.existing_finding_ids);
  w.Key("resolved_finding_ids");
  w.StringArray(r.resolved_finding_ids);
  w.Key("finding_ids");
  w.StringArray(r.finding_ids);
  w.Member("findings_summary", r.findings_summary);
  w.Member("model_pass_ran", r.model_pass_ran);
  w.Member("triage_skipped_llm", !r.model_pass_ran);
  w.MemberIfNotEmpty("model_pass_skipped_reason", r.model_pass_skipped_reason);
  w.Key("finding_assessments");
  w.StartArray();
  for (const PatrolAssessment& a : r.assessments) {
    w.StartObject();
    w.Member("finding_id", a.finding_id);
    w.Member("verdict", a.verdict);
    w.EndObject();
  }
  w.EndArray();
  w.Member("input_tokens", r.input_tokens);
  w.Member("output_tokens", r.output_tokens);
  w.Key("tool_calls");
  w.StartArray();
  for (const PatrolToolCall& c : r.tool_calls) {
    w.StartObject();
    w.Member("tool_name", c.tool_name);
    w.Member("input", c.input);
    w.Member("output", c.output);
    w.Member("success", c.success);
    w.EndObject();
  }
  w.EndArray();
  w.Member("tool_call_count", r.tool_call_count);
  w.MemberIfNotEmpty("ai_analysis", r.ai_analysis);
  w.Key("remediations");
  w.StartArray();
  for (const PatrolRemediation& m : r.remediations) {
    w.StartObject();
    w.Member("finding_id", m.finding_id);
    w.Member("outcome", m.outcome);
    w.MemberIfNotEmpty("action_id", m.action_id);
    w.MemberIfNotEmpty("action_state", m.action_state);
    w.MemberIfNotEmpty("execution", m.execution);
    w.MemberIfNotEmpty("verification", m.verification);
    w.MemberIfNotEmpty("note", m.note);
    if (m.proposal_dropped_reason.has_value()) {
      w.Member("proposal_dropped_reason", ToString(*m.proposal_dropped_reason));
    }
    if (m.hold_reason.has_value()) {
      w.Member("hold_reason", ToString(*m.hold_reason));
    }
    w.EndObject();
  }
  w.EndArray();
  if (!r.fleet_sources.empty()) {
    w.Key("fleet_sources");
    w.StartArray();
    for (const FleetSourceStatus& source : r.fleet_sources) {
      w.StartObject();
      w.Member("name", source.name);
      w.Member("kind", source.kind);
      w.Member("state", source.up ? "up" : "down");
      w.MemberIfNotEmpty("error", source.error);
      w.Member("resources", static_cast<std::int64_t>(source.resources));
      w.TimeMemberIfSet("last_ok_at", source.last_ok_at);
      w.EndObject();
    }
    w.EndArray();
  }
  w.Member("error_count", r.error_count);
  w.MemberIfNotEmpty("error_summary", r.error_summary);
  w.MemberIfNotEmpty("error_detail", r.error_detail);
  w.EndObject();
  return w.Take();
}

absl::StatusOr<PatrolRunRecord> PatrolRunFromJson(std::string_view json) {
  JsonLimits limits;
  limits.max_bytes = 8u << 20;
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json, limits));
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("patrol run record must be an object");
  }
  PatrolRunRecord r;
  std::string text;
  PULSE_RETURN_IF_ERROR(ReadString(doc, "id", r.id));
  if (r.id.empty()) {
    return Bad("id");
  }
  PULSE_RETURN_IF_ERROR(ReadString(doc, "trigger_reason", text));
  r.trigger = ParsePatrolTrigger(text).value_or(PatrolTrigger::kScheduled);
  text.clear();
  PULSE_RETURN_IF_ERROR(ReadString(doc, "status", text));
  std::optional<PatrolRunStatus> status = ParsePatrolRunStatus(text);
  if (!status.has_value()) {
    return Bad("status");
  }
  r.status = *status;
  PULSE_ASSIGN_OR_RETURN(std::optional<absl::Time> started, ReadTime(doc, "started_at"));
  if (!started.has_value()) {
    return Bad("started_at");
  }
  r.started_at = *started;
  PULSE_ASSIGN_OR_RETURN(r.completed_at, ReadTime(doc, "completed_at"));
  PULSE_RETURN_IF_ERROR(ReadStrings(doc, "scope_resource_ids", r.scope.resource_ids));
  PULSE_RETURN_IF_ERROR(ReadStrings(doc, "scope_resource_types", r.scope.resource_types));
  PULSE_RETURN_IF_ERROR(
      ReadStrings(doc, "effective_scope_resource_ids", r.effective_scope_resource_ids));
  PULSE_RETURN_IF_ERROR(ReadString(doc, "autonomy_level", r.autonomy_level));
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "resources_checked", r.resources_checked));
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "new_findings", r.new_findings));
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "existing_findings", r.existing_findings));
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "resolved_findings", r.resolved_findings));
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "rejected_findings", r.rejected_findings));
  PULSE_RETURN_IF_ERROR(ReadStrings(doc, "new_finding_ids", r.new_finding_ids));
  PULSE_RETURN_IF_ERROR(ReadStrings(doc, "existing_finding_ids", r.existing_finding_ids));
  PULSE_RETURN_IF_ERROR(ReadStrings(doc, "resolved_finding_ids", r.resolved_finding_ids));
  PULSE_RETURN_IF_ERROR(ReadStrings(doc, "finding_ids", r.finding_ids));
  PULSE_RETURN_IF_ERROR(ReadString(doc, "findings_summary", r.findings_summary));
  PULSE_RETURN_IF_ERROR(ReadBool(doc, "model_pass_ran", r.model_pass_ran));
  PULSE_RETURN_IF_ERROR(ReadString(doc, "model_pass_skipped_reason", r.model_pass_skipped_reason));
  if (const rapidjson::Value* list = Find(doc, "finding_assessments"); list != nullptr) {
    if (!list->IsArray()) {
      return Bad("finding_assessments");
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const rapidjson::Value& item = (*list)[i];
      if (!item.IsObject()) {
        return Bad("finding_assessments");
      }
      PatrolAssessment a;
      PULSE_RETURN_IF_ERROR(ReadString(item, "finding_id", a.finding_id));
      PULSE_RETURN_IF_ERROR(ReadString(item, "verdict", a.verdict));
      r.assessments.push_back(std::move(a));
    }
  }
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "input_tokens", r.input_tokens));
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "output_tokens", r.output_tokens));
  if (const rapidjson::Value* list = Find(doc, "tool_calls"); list != nullptr) {
    if (!list->IsArray()) {
      return Bad("tool_calls");
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const rapidjson::Value& item = (*list)[i];
      if (!item.IsObject()) {
        return Bad("tool_calls");
      }
      PatrolToolCall c;
      PULSE_RETURN_IF_ERROR(ReadString(item, "tool_name", c.tool_name));
      PULSE_RETURN_IF_ERROR(ReadString(item, "input", c.input));
      PULSE_RETURN_IF_ERROR(ReadString(item, "output", c.output));
      PULSE_RETURN_IF_ERROR(ReadBool(item, "success", c.success));
      r.tool_calls.push_back(std::move(c));
    }
  }
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "tool_call_count", r.tool_call_count));
  PULSE_RETURN_IF_ERROR(ReadString(doc, "ai_analysis", r.ai_analysis));
  if (const rapidjson::Value* list = Find(doc, "remediations"); list != nullptr) {
    if (!list->IsArray()) {
      return Bad("remediations");
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const rapidjson::Value& item = (*list)[i];
      if (!item.IsObject()) {
        return Bad("remediations");
      }
      PatrolRemediation m;
      PULSE_RETURN_IF_ERROR(ReadString(item, "finding_id", m.finding_id));
      PULSE_RETURN_IF_ERROR(ReadString(item, "outcome", m.outcome));
      PULSE_RETURN_IF_ERROR(ReadString(item, "action_id", m.action_id));
      PULSE_RETURN_IF_ERROR(ReadString(item, "action_state", m.action_state));
      PULSE_RETURN_IF_ERROR(ReadString(item, "execution", m.execution));
      PULSE_RETURN_IF_ERROR(ReadString(item, "verification", m.verification));
      PULSE_RETURN_IF_ERROR(ReadString(item, "note", m.note));
      std::string reason;
      PULSE_RETURN_IF_ERROR(ReadString(item, "proposal_dropped_reason", reason));
      if (!reason.empty()) {
        m.proposal_dropped_reason = ParseProposalDropReason(reason);
        if (!m.proposal_dropped_reason.has_value()) {
          return Bad("remediations.proposal_dropped_reason");
        }
      }
      reason.clear();
      PULSE_RETURN_IF_ERROR(ReadString(item, "hold_reason", reason));
      if (!reason.empty()) {
        m.hold_reason = ParseFixHoldReason(reason);
        if (!m.hold_reason.has_value()) {
          return Bad("remediations.hold_reason");
        }
      }
      r.remediations.push_back(std::move(m));
    }
  }
  if (const rapidjson::Value* list = Find(doc, "fleet_sources"); list != nullptr) {
    if (!list->IsArray()) {
      return Bad("fleet_sources");
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const rapidjson::Value& item = (*list)[i];
      if (!item.IsObject()) {
        return Bad("fleet_sources");
      }
      FleetSourceStatus source;
      std::string state;
      std::int64_t resources = 0;
      PULSE_RETURN_IF_ERROR(ReadString(item, "name", source.name));
      PULSE_RETURN_IF_ERROR(ReadString(item, "kind", source.kind));
      PULSE_RETURN_IF_ERROR(ReadString(item, "state", state));
      PULSE_RETURN_IF_ERROR(ReadString(item, "error", source.error));
      PULSE_RETURN_IF_ERROR(ReadInt(item, "resources", resources));
      PULSE_ASSIGN_OR_RETURN(source.last_ok_at, ReadTime(item, "last_ok_at"));
      if (state != "up" && state != "down") {
        return Bad("fleet_sources.state");
      }
      if (resources < 0) {
        return Bad("fleet_sources.resources");
      }
      source.up = state == "up";
      source.resources = static_cast<std::size_t>(resources);
      r.fleet_sources.push_back(std::move(source));
    }
  }
  PULSE_RETURN_IF_ERROR(ReadInt(doc, "error_count", r.error_count));
  PULSE_RETURN_IF_ERROR(ReadString(doc, "error_summary", r.error_summary));
  PULSE_RETURN_IF_ERROR(ReadString(doc, "error_detail", r.error_detail));
  return r;
}

}  // namespace pulse::core
