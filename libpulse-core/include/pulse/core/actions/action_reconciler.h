// Crash recovery for governed actions. An action found `executing` when the engine starts was
// admitted, and may or may not have been dispatched, by a process that is gone: its outcome is
// unknown. Reconciliation settles it as failed with execution `inconclusive` and the message
// "execution_interrupted: ..." via a CAS (executing -> failed) and never dispatches it again.
// Call it once at startup, before the ActionService serves requests: an execution in flight in
// this process would be settled too. Borrows its ports for the duration of the call.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/core/ports/action_store.h"
#include "pulse/core/ports/audit_log.h"
#include "pulse/core/ports/clock.h"

namespace pulse::core {

struct ReconcileReport {
  std::vector<std::string> settled;  // action ids moved to failed, in store order
  std::size_t skipped = 0;           // left executing by someone else meanwhile (lost CAS)
};

// Settles up to `limit` (1..1000) interrupted executions. Errors: the store's, unchanged (the
// records settled before the error stay settled). Audit failures are ignored (the lifecycle
// event committed with the CAS is the authoritative trail).
[[nodiscard]] absl::StatusOr<ReconcileReport> ReconcileInterruptedExecutions(
    ActionStore& store, AuditLog& audit, const Clock& clock, std::size_t limit = 1000);

}  // namespace pulse::core
