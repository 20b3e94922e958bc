// Which writes are notifications (docs/notifications.md "Events"): pure functions from a
// store write's before and after to the event it announces, if any. The SQLite stores call
// them inside the write's own transaction, so the outbox row and the write commit together.
#pragma once

#include <cstdint>
#include <optional>

#include "pulse/core/model/action_types.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/notification.h"
#include "pulse/core/model/patrol_run.h"

namespace pulse::core {

// What a finding write needs to know of the stored row it replaces.
struct FindingBefore {
  Severity severity = Severity::kWarning;
  bool resolved = false;
  std::int64_t regression_count = 0;
  // Dismissed or suppressed (and not resolved): stored, but not active.
  bool dismissed = false;
};

// The event of writing `after` over `before` (nullopt: a create):
//   * a create of an active finding: finding.created (provider.unusable for Patrol's runtime
//     finding, kRuntimeFindingResourceId);
//   * a resolved finding detected again (regression_count grew): finding.regressed (again
//     provider.unusable for the runtime finding);
//   * an unresolved finding whose severity rose: finding.escalated, once per severity per
//     regression (so a flapping severity does not notify each flap);
//   * else a dismissed or suppressed finding made active again (woken: the operator intent that
//     dismissed it lifted, a reminder fell due): finding.created, whose key it shares, so a
//     finding already announced is not announced again, and one created dismissed (never
//     announced) is announced when it first becomes active;
// nothing otherwise (heartbeats, acknowledgements, snoozes, resolutions, suppressed or dismissed
// findings, among them those operator intent keeps dismissed).
std::optional<NotificationEvent> FindingWriteEvent(const std::optional<FindingBefore>& before,
                                                   const Finding& after);

// The event of an action record entering its state: approval.pending on entering
// pending_approval (once per decision revision), action.completed / action.inconclusive /
// action.failed on entering completed or failed with a result. `before` is the state it left
// (nullopt: a create).
std::optional<NotificationEvent> ActionWriteEvent(std::optional<ActionState> before,
                                                  const ActionRecord& after);

// patrol.run_error for a run recorded with status error, nothing otherwise.
std::optional<NotificationEvent> PatrolRunWriteEvent(const PatrolRunRecord& run);

}  // namespace pulse::core
