// How operator state shapes findings (docs/patrol.md "Operator intent and maintenance"): the one
// projection of a resource's operator state that finding suppression, investigation context and
// priority stamping all read (C-FND-7, C-FND-21), the cause that keeps a resource's findings
// quiet (C-FND-9/10), the lifecycle metadata that records it, and the two predicates Patrol
// asks of a finding: may it be investigated (C-FND-12), and was its dismissal operator state's
// (C-FND-11). Pure values and functions; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/operator_state.h"

namespace pulse::core {

// Why operator state keeps a finding quiet. Wire (lifecycle metadata operator_state_cause):
// maintenance_window, intentionally_offline, muted.
enum class OperatorStateCause { kMaintenanceWindow, kIntentionallyOffline, kMuted };
std::string_view ToString(OperatorStateCause cause);
std::optional<OperatorStateCause> ParseOperatorStateCause(std::string_view text);

// Lifecycle metadata of an operator-state dismissal: the cause and, for a maintenance window,
// its end (RFC 3339).
inline constexpr char kMetaOperatorStateCause[] = "operator_state_cause";
inline constexpr char kMetaMaintenanceEndAt[] = "maintenance_end_at";

// A resource's operator state evaluated at one instant.
struct OperatorStateProjection {
  bool intentionally_offline = false;  // or monitoring_mode == expected_offline
  bool muted = false;                  // monitoring_mode == muted
  bool never_auto_remediate = false;
  // The end of the maintenance window in force; nullopt when none is active.
  std::optional<absl::Time> maintenance_end_at;
  Criticality criticality = Criticality::kUnset;

  // The cause that suppresses findings on the resource, nullopt when none: an active
  // maintenance window first (the time-bounded cause is the more honest one to show), then
  // intentionally offline, then muted.
  std::optional<OperatorStateCause> SuppressionCause() const;

  friend bool operator==(const OperatorStateProjection&, const OperatorStateProjection&) = default;
};

// The projection of `state` at `now`.
OperatorStateProjection ProjectOperatorState(const OperatorState& state, absl::Time now);

// Whether Patrol may investigate the finding on its own: active (so never one operator state
// dismissed, whatever the autonomy level) and warning or worse.
bool ShouldInvestigate(const Finding& finding, absl::Time now);

// The operator-state cause of the finding's dismissal: scanning the lifecycle from the newest
// event, the operator_state_cause of the first `dismissed` event; empty when that event
// carries none (an operator's own dismissal supersedes an earlier automatic one) or the log
// holds no dismissal.
std::string OperatorStateDismissCause(const Finding& finding);

}  // namespace pulse::core
