// Operator state: what a human has declared about one resource — do not auto-remediate it,
// it is intentionally offline, it is in a maintenance window, how closely to monitor it, keep
// its data local (docs/api.md: set_operator_state, operator state). Plain values, one
// validation rule shared by every OperatorStateStore, and the wire codecs. Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::core {

enum class MonitoringMode { kNormal, kExpectedOffline, kMuted };
// Wire: normal, expected_offline, muted.
std::string_view ToString(MonitoringMode mode);
std::optional<MonitoringMode> ParseMonitoringMode(std::string_view text);

enum class ResourceLifecycle { kActive, kRetired };
// Wire: active, retired.
std::string_view ToString(ResourceLifecycle lifecycle);
std::optional<ResourceLifecycle> ParseResourceLifecycle(std::string_view text);

enum class Criticality { kUnset, kHigh, kMedium, kLow };
// Wire: "" (unset), high, medium, low.
std::string_view ToString(Criticality criticality);
std::optional<Criticality> ParseCriticality(std::string_view text);

inline constexpr std::size_t kMaxOperatorNoteBytes = 2048;

struct OperatorState {
  std::string resource_id;  // canonical
  // The remediation lock: no governed action is dispatched against this resource.
  bool never_auto_remediate = false;
  bool intentionally_offline = false;  // kept equal to monitoring_mode == expected_offline
  MonitoringMode monitoring_mode = MonitoringMode::kNormal;
  ResourceLifecycle lifecycle = ResourceLifecycle::kActive;
  // Both or neither; start < end. The window is [start, end).
  std::optional<absl::Time> maintenance_start_at;
  std::optional<absl::Time> maintenance_end_at;
  std::string maintenance_reason;
  Criticality criticality = Criticality::kUnset;
  std::string note;
  absl::Time set_at;
  std::string set_by;  // the actor id that set it
  // Identifiers and details of this resource never leave the local trust boundary: a model
  // that is not served locally sees it only as an aggregate count (loop/outbound_context.h).
  bool local_only = false;

  friend bool operator==(const OperatorState&, const OperatorState&) = default;
};

// OK, or InvalidArgument naming the first problem: non-canonical resource id, a window with
// only one end or end <= start, intentionally_offline disagreeing with monitoring_mode,
// reason/note longer than kMaxOperatorNoteBytes or not clean UTF-8, empty set_by.
[[nodiscard]] absl::Status ValidateOperatorState(const OperatorState& state);

// True when a maintenance window is set and start <= now < end.
bool MaintenanceWindowActive(const OperatorState& state, absl::Time now);

// The first instant after `now` at which MaintenanceWindowActive(state, t) changes: the
// window's start while it lies ahead, its end while the window is open; nullopt when no window
// is set or it has ended.
std::optional<absl::Time> NextMaintenanceWindowEdge(const OperatorState& state, absl::Time now);

// Decodes a set_operator_state body: required resourceId, intentionallyOffline,
// neverAutoRemediate; optional monitoringMode (wins over intentionallyOffline: when present,
// intentionallyOffline is set to monitoringMode == expected_offline), lifecycleState,
// maintenanceStartAt + maintenanceEndAt (RFC 3339, each requires the other), maintenanceReason,
// criticality ("" clears), note, localOnly (default false). Unknown members are refused.
// `path_resource_id`, when not empty, must equal resourceId. The result is validated. Errors:
// InvalidArgument (the HTTP layer answers operator_state_invalid).
[[nodiscard]] absl::StatusOr<OperatorState> ParseOperatorStateInput(
    std::string_view json, std::string_view path_resource_id, absl::Time now,
    std::string_view set_by);

// The wire projection: canonicalId, intentionallyOffline, neverAutoRemediate, setAt,
// monitoringMode, lifecycleState, maintenanceStartAt?, maintenanceEndAt?, maintenanceReason?,
// criticality?, note?, setBy, maintenanceWindowActive (evaluated at `now`), localOnly.
std::string OperatorStateToJson(const OperatorState& state, absl::Time now);

}  // namespace pulse::core
