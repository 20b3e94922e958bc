// Private helpers shared by the agent view translation units: reading action records by state,
// the orderings the views promise, and the small JSON pieces several views write. Not part of
// the public API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/ports/action_store.h"

namespace pulse::core::agent_internal {

// Every record in `states`, one ListByState call per state so each state gets the store's full
// per-call bound (kActionScanLimit, oldest created first). Unordered across states.
// AllActionStates() reads every record.
[[nodiscard]] absl::StatusOr<std::vector<ActionRecord>> ScanActions(
    ActionStore& store, const std::vector<ActionState>& states);

// Awaiting a decision that can still be made: pending_approval and now < expires_at.
bool AwaitsDecision(const ActionRecord& record, absl::Time now);

// True when a human approved the action at least once.
bool HasApprovedDecision(const ActionRecord& record);

// Findings, most urgent first: higher severity, then newer detected_at, then id.
bool MoreUrgentFinding(const Finding& a, const Finding& b);

// The decision queue of a resource context: soonest expiry, then higher risk, then older
// request, then id.
bool BeforeInApprovalQueue(const ActionRecord& a, const ActionRecord& b);

// Newest update first, then id.
bool MoreRecentlyUpdated(const ActionRecord& a, const ActionRecord& b);

// Oldest created first, then id (the store's own order).
bool CreatedEarlier(const ActionRecord& a, const ActionRecord& b);

}  // namespace pulse::core::agent_internal
