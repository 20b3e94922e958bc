// What became of a Patrol fix, projected onto its finding (docs/patrol.md "Finding states").
// Patrol plans a fix as a governed action and links it to the finding (Finding::fix_action_id);
// a human decides and executes it later through /api/actions, or the lifecycle refuses it. The
// action store is the authority: a change of the action is only a wakeup, after which the
// FixProjector re-reads the stored action and writes the outcome it implies onto the finding
// (idempotent: a second wakeup, or a finding linked to another plan, writes nothing). The same
// projection runs once at start-up over every finding still waiting for its fix, so a decision
// whose projection was lost to a restart is projected then.
// Thread-safety: thread-safe when its ports are; borrows them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/ports/action_store.h"

namespace pulse::core {

// The finding outcome an action's stored state implies:
//   planned | pending_approval | approved -> fix_queued; executing -> fix_executed;
//   rejected by a human -> fix_rejected (any other rejection -> needs_attention);
//   expired undecided -> needs_attention;
//   failed before dispatch (drift, lock, refused) -> fix_not_admitted;
//   executed: succeeded and confirmed by an independent observer -> fix_verified,
//   succeeded but contradicted -> fix_verification_failed, execution failed -> fix_failed,
//   anything else (inconclusive, not attempted, agent-attested) -> fix_verification_unknown.
InvestigationOutcome FixOutcomeOf(const ActionRecord& record);

// The finding a Patrol action was planned for: Patrol's request id is "<run id>.<finding id>".
// "" when the request id has no such suffix. The finding's own fix link decides whether the
// action is its current fix.
std::string PatrolFixFindingId(const ActionRecord& record);

class FixProjector {
 public:
  FixProjector(ActionStore& actions, FindingsService& findings)
      : actions_(actions), findings_(findings) {}

  // A wakeup for `action_id`: re-reads the stored action and projects it onto the finding it
  // was planned for. Returns whether a finding changed. NotFound for an unknown action; the
  // stores' errors unchanged.
  [[nodiscard]] absl::StatusOr<bool> Wake(std::string_view action_id);

  // Projects `record` (as stored) onto its finding; false when it is no finding's current fix
  // or the finding already says so.
  [[nodiscard]] absl::StatusOr<bool> Project(const ActionRecord& record);

  // Start-up reconciliation: for every active finding still waiting on its fix (outcome
  // fix_queued or fix_executed, with a fix link), re-reads the action and projects it.
  // Returns how many findings changed. A finding whose action cannot be read is skipped.
  [[nodiscard]] absl::StatusOr<std::size_t> ReconcileAll();

 private:
  ActionStore& actions_;
  FindingsService& findings_;
};

}  // namespace pulse::core
