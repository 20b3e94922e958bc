#include "pulse/core/findings/operator_suppression.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<OperatorStateCause>, 3> kCauses = {{
    {OperatorStateCause::kMaintenanceWindow, "maintenance_window"},
    {OperatorStateCause::kIntentionallyOffline, "intentionally_offline"},
    {OperatorStateCause::kMuted, "muted"},
}};

}  // namespace

std::string_view ToString(OperatorStateCause cause) { return WireNameOf(kCauses, cause); }

std::optional<OperatorStateCause> ParseOperatorStateCause(std::string_view text) {
  return WireValueOf(kCauses, text);
}

std::optional<OperatorStateCause> OperatorStateProjection::SuppressionCause() const {
  if (maintenance_end_at.has_value()) {
    return OperatorStateCause::kMaintenanceWindow;
  }
  if (intentionally_offline) {
    return OperatorStateCause::kIntentionallyOffline;
  }
  if (muted) {
    return OperatorStateCause::kMuted;
  }
  return std::nullopt;
}

OperatorStateProjection ProjectOperatorState(const OperatorState& state, absl::Time now) {
  OperatorStateProjection p;
  p.intentionally_offline =
      state.intentionally_offline || state.monitoring_mode == MonitoringMode::kExpectedOffline;
  p.muted = state.monitoring_mode == MonitoringMode::kMuted;
  p.never_auto_remediate = state.never_auto_remediate;
  if (MaintenanceWindowActive(state, now)) {
    p.maintenance_end_at = state.maintenance_end_at;
  }
  p.criticality = state.criticality;
  return p;
}

bool ShouldInvestigate(const Finding& finding, absl::Time now) {
  return IsActive(finding, now) && finding.severity >= Severity::kWarning;
}

std::string OperatorStateDismissCause(const Finding& finding) {
  for (auto it = finding.lifecycle.rbegin(); it != finding.lifecycle.rend(); ++it) {
    if (it->type != LifecycleEventType::kDismissed) {
      continue;
    }
    auto cause = it->metadata.find(kMetaOperatorStateCause);
    return cause == it->metadata.end() ? std::string() : cause->second;
  }
  return {};
}

}  // namespace pulse::core
