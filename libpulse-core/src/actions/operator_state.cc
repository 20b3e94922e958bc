#include "pulse/core/actions/operator_state.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "json_reader.h"
#include "pulse/core/actions/resource_id.h"
#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

using action_internal::EnumName;
using action_internal::IsCleanText;
using action_internal::IsToken;
using action_internal::JsonWriter;
using action_internal::NameOf;
using action_internal::ObjectReader;
using action_internal::ValueOf;
using action_internal::WriteKey;
using action_internal::WriteString;
using action_internal::WriteTime;

constexpr std::array<EnumName<MonitoringMode>, 3> kModes = {{
    {MonitoringMode::kNormal, "normal"},
    {MonitoringMode::kExpectedOffline, "expected_offline"},
    {MonitoringMode::kMuted, "muted"},
}};

constexpr std::array<EnumName<ResourceLifecycle>, 2> kLifecycles = {{
    {ResourceLifecycle::kActive, "active"},
    {ResourceLifecycle::kRetired, "retired"},
}};

constexpr std::array<EnumName<Criticality>, 4> kCriticalities = {{
    {Criticality::kUnset, ""},
    {Criticality::kHigh, "high"},
    {Criticality::kMedium, "medium"},
    {Criticality::kLow, "low"},
}};

constexpr std::size_t kMaxOperatorBodyBytes = 16 * 1024;

}  // namespace

std::string_view ToString(MonitoringMode mode) { return NameOf(kModes, mode); }
std::optional<MonitoringMode> ParseMonitoringMode(std::string_view text) {
  return ValueOf(kModes, text);
}
std::string_view ToString(ResourceLifecycle lifecycle) { return NameOf(kLifecycles, lifecycle); }
std::optional<ResourceLifecycle> ParseResourceLifecycle(std::string_view text) {
  return ValueOf(kLifecycles, text);
}
std::string_view ToString(Criticality criticality) { return NameOf(kCriticalities, criticality); }
std::optional<Criticality> ParseCriticality(std::string_view text) {
  return ValueOf(kCriticalities, text);
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

absl::StatusOr<OperatorState> ParseOperatorStateInput(std::string_view json,
                                                      std::string_view path_resource_id,
                                                      absl::Time now, std::string_view set_by) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json, JsonLimits{kMaxOperatorBodyBytes, 4});
  if (!doc.ok()) {
    return doc.status();
  }
  ObjectReader r(*doc, "operator state");
  OperatorState state;
  state.resource_id = r.String("resourceId", 256);
  state.intentionally_offline = r.Bool("intentionallyOffline");
  state.never_auto_remediate = r.Bool("neverAutoRemediate");
  std::optional<MonitoringMode> mode = r.OptionalEnum<MonitoringMode>(
      "monitoringMode", [](std::string_view t) { return ParseMonitoringMode(t); });
  state.lifecycle = r.OptionalEnum<ResourceLifecycle>("lifecycleState", [](std::string_view t) {
                       return ParseResourceLifecycle(t);
                     }).value_or(ResourceLifecycle::kActive);
  state.maintenance_start_at = r.OptionalTime("maintenanceStartAt");
  state.maintenance_end_at = r.OptionalTime("maintenanceEndAt");
  state.maintenance_reason =
      r.OptionalString("maintenanceReason", kMaxOperatorNoteBytes).value_or("");
  state.criticality = r.OptionalEnum<Criticality>("criticality", [](std::string_view t) {
                         return ParseCriticality(t);
                       }).value_or(Criticality::kUnset);
  state.note = r.OptionalString("note", kMaxOperatorNoteBytes).value_or("");
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
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  WriteKey(w, "canonicalId");
  WriteString(w, state.resource_id);
  WriteKey(w, "intentionallyOffline");
  w.Bool(state.intentionally_offline);
  WriteKey(w, "neverAutoRemediate");
  w.Bool(state.never_auto_remediate);
  WriteKey(w, "monitoringMode");
  WriteString(w, ToString(state.monitoring_mode));
  WriteKey(w, "lifecycleState");
  WriteString(w, ToString(state.lifecycle));
  if (state.maintenance_start_at.has_value() && state.maintenance_end_at.has_value()) {
    WriteKey(w, "maintenanceStartAt");
    WriteTime(w, *state.maintenance_start_at);
    WriteKey(w, "maintenanceEndAt");
    WriteTime(w, *state.maintenance_end_at);
  }
  if (!state.maintenance_reason.empty()) {
    WriteKey(w, "maintenanceReason");
    WriteString(w, state.maintenance_reason);
  }
  if (state.criticality != Criticality::kUnset) {
    WriteKey(w, "criticality");
    WriteString(w, ToString(state.criticality));
  }
  if (!state.note.empty()) {
    WriteKey(w, "note");
    WriteString(w, state.note);
  }
  WriteKey(w, "setAt");
  WriteTime(w, state.set_at);
  WriteKey(w, "setBy");
  WriteString(w, state.set_by);
  WriteKey(w, "maintenanceWindowActive");
  w.Bool(MaintenanceWindowActive(state, now));
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace pulse::core
