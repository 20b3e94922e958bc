#include "pulse/core/model/operator_state.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/model/resource_id.h"

namespace pulse::core {
namespace {

using action_internal::IsToken;

constexpr std::array<WireName<MonitoringMode>, 3> kModes = {{
    {MonitoringMode::kNormal, "normal"},
    {MonitoringMode::kExpectedOffline, "expected_offline"},
    {MonitoringMode::kMuted, "muted"},
}};

constexpr std::array<WireName<ResourceLifecycle>, 2> kLifecycles = {{
    {ResourceLifecycle::kActive, "active"},
    {ResourceLifecycle::kRetired, "retired"},
}};

constexpr std::array<WireName<Criticality>, 4> kCriticalities = {{
    {Criticality::kUnset, ""},
    {Criticality::kHigh, "high"},
    {Criticality::kMedium, "medium"},
    {Criticality::kLow, "low"},
}};

constexpr std::size_t kMaxOperatorBodyBytes = 16 * 1024;

}  // namespace

std::string_view ToString(MonitoringMode mode) { return WireNameOf(kModes, mode); }
std::optional<MonitoringMode> ParseMonitoringMode(std::string_view text) {
  return WireValueOf(kModes, text);
}
std::string_view ToString(ResourceLifecycle lifecycle) {
  return WireNameOf(kLifecycles, lifecycle);
}
std::optional<ResourceLifecycle> ParseResourceLifecycle(std::string_view text) {
  return WireValueOf(kLifecycles, text);
}
std::string_view ToString(Criticality criticality) {
  return WireNameOf(kCriticalities, criticality);
}
std::optional<Criticality> ParseCriticality(std::string_view text) {
  return WireValueOf(kCriticalities, text);
}

absl::Status ValidateOperatorState(const OperatorState& state) {
  if (!IsCanonicalResourceId(state.resource_id)) {
    return absl::InvalidArgumentError("operator state needs a canonical resource id");
  }
  if (state.maintenance_start_at.has_value() != state.maintenance_end_at.has_value()) {
    return absl::InvalidArgumentError(
        "a maintenance window needs both maintenanceStartAt and maintenanceEndAt");
  }
  if (state.maintenance_start_at.has_value() &&
      *state.maintenance_end_at <= *state.maintenance_start_at) {
    return absl::InvalidArgumentError("the maintenance window must end after it starts");
  }
  if (!state.maintenance_start_at.has_value() && !state.maintenance_reason.empty()) {
    return absl::InvalidArgumentError("a maintenance reason needs a maintenance window");
  }
  if (state.intentionally_offline != (state.monitoring_mode == MonitoringMode::kExpectedOffline)) {
    return absl::InvalidArgumentError(
        "intentionallyOffline must agree with monitoringMode expected_offline");
  }
  for (const std::string* text : {&state.maintenance_reason, &state.note}) {
    if (text->size() > kMaxOperatorNoteBytes || !IsCleanText(*text)) {
      return absl::InvalidArgumentError(
          absl::StrCat("maintenance reason and note must be clean UTF-8 of at most ",
                       kMaxOperatorNoteBytes, " bytes"));
    }
  }
  if (!IsToken(state.set_by, 128, "._:@/+=-")) {
    return absl::InvalidArgumentError("operator state needs the id of who set it");
  }
  if (!ParseMonitoringMode(ToString(state.monitoring_mode)).has_value() ||
      !ParseResourceLifecycle(ToString(state.lifecycle)).has_value() ||
      !ParseCriticality(ToString(state.criticality)).has_value()) {
    return absl::InvalidArgumentError("operator state holds a value outside its enums");
  }
  return absl::OkStatus();
}

bool MaintenanceWindowActive(const OperatorState& state, absl::Time now) {
  return state.maintenance_start_at.has_value() && state.maintenance_end_at.has_value() &&
         *state.maintenance_start_at <= now && now < *state.maintenance_end_at;
}

std::optional<absl::Time> NextMaintenanceWindowEdge(const OperatorState& state, absl::Time now) {
  if (!state.maintenance_start_at.has_value() || !state.maintenance_end_at.has_value()) {
    return std::nullopt;
  }
  if (now < *state.maintenance_start_at) {
    return *state.maintenance_start_at;
  }
  if (now < *state.maintenance_end_at) {
    return *state.maintenance_end_at;
  }
  return std::nullopt;
}

absl::StatusOr<OperatorState> ParseOperatorStateInput(std::string_view json,
                                                      std::string_view path_resource_id,
                                                      absl::Time now, std::string_view set_by) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json, JsonLimits{kMaxOperatorBodyBytes, 4});
  if (!doc.ok()) {
    return doc.status();
  }
  JsonObjectReader r(*doc, "operator state", action_internal::kActionReader);
  constexpr JsonPresence kRequired = JsonPresence::kRequired;
  OperatorState state;
  state.resource_id = r.String("resourceId", {256, kRequired}).value_or("");
  state.intentionally_offline = r.Bool("intentionallyOffline", kRequired).value_or(false);
  state.never_auto_remediate = r.Bool("neverAutoRemediate", kRequired).value_or(false);
  std::optional<MonitoringMode> mode = r.Enum("monitoringMode", ParseMonitoringMode);
  state.lifecycle =
      r.Enum("lifecycleState", ParseResourceLifecycle).value_or(ResourceLifecycle::kActive);
  state.maintenance_start_at = r.Time("maintenanceStartAt");
  state.maintenance_end_at = r.Time("maintenanceEndAt");
  state.maintenance_reason = r.String("maintenanceReason", {kMaxOperatorNoteBytes}).value_or("");
  state.criticality = r.Enum("criticality", ParseCriticality).value_or(Criticality::kUnset);
  state.note = r.String("note", {kMaxOperatorNoteBytes}).value_or("");
  state.local_only = r.Bool("localOnly").value_or(false);
  if (absl::Status s = r.Finish(); !s.ok()) {
    return s;
  }
  if (!path_resource_id.empty() && path_resource_id != state.resource_id) {
    return absl::InvalidArgumentError("resourceId does not match the resource in the path");
  }
  if (mode.has_value()) {
    state.monitoring_mode = *mode;
    state.intentionally_offline = *mode == MonitoringMode::kExpectedOffline;
  } else {
    state.monitoring_mode =
        state.intentionally_offline ? MonitoringMode::kExpectedOffline : MonitoringMode::kNormal;
  }
  state.set_at = now;
  state.set_by = std::string(set_by);
  if (absl::Status s = ValidateOperatorState(state); !s.ok()) {
    return s;
  }
  return state;
}

std::string OperatorStateToJson(const OperatorState& state, absl::Time now) {
  JsonWriter w;
  w.StartObject();
  w.Member("canonicalId", state.resource_id);
  w.Member("intentionallyOffline", state.intentionally_offline);
  w.Member("neverAutoRemediate", state.never_auto_remediate);
  w.Member("monitoringMode", ToString(state.monitoring_mode));
  w.Member("lifecycleState", ToString(state.lifecycle));
  if (state.maintenance_start_at.has_value() && state.maintenance_end_at.has_value()) {
    w.TimeMember("maintenanceStartAt", *state.maintenance_start_at);
    w.TimeMember("maintenanceEndAt", *state.maintenance_end_at);
  }
  w.MemberIfNotEmpty("maintenanceReason", state.maintenance_reason);
  if (state.criticality != Criticality::kUnset) {
    w.Member("criticality", ToString(state.criticality));
  }
  w.MemberIfNotEmpty("note", state.note);
  w.TimeMember("setAt", state.set_at);
  w.Member("setBy", state.set_by);
  w.Member("maintenanceWindowActive", MaintenanceWindowActive(state, now));
  w.Member("localOnly", state.local_only);
  w.EndObject();
  return w.Take();
}

}  // namespace pulse::core
