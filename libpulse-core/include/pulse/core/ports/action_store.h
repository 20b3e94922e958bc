// ActionStore: durable governed-action records and their append-only lifecycle events. A
// record is created once with its initial events and afterwards changes only through typed
// compare-and-swap transitions (actions/action_transition.h), each committed atomically with
// its events; a record is never rewritten whole and its identity (request, plan, created_at)
// never changes.
// Thread-safety: implementations must be safe to call concurrently; every method is atomic.
// Codes: NotFound (unknown action id), Aborted with an ActionCasConflict payload (a lost
// compare: the current state, revision and whether the identity differed), AlreadyExists
// (InsertIfAbsent: the id exists with a different plan hash), InvalidArgument / FailedPrecondition
// (a malformed or illegal transition, see action_transition.h; nothing is written),
// Unavailable (the store cannot be reached; nothing is written).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/action_transition.h"
#include "pulse/core/model/action_types.h"

namespace pulse::core {

class ActionStore {
 public:
  virtual ~ActionStore() = default;

  // Creates the record with its initial events when the id is new (created=true). When a
  // record with the same id and plan hash exists, returns it unchanged (created=false) and
  // appends nothing. Validates with ValidateNewActionRecord.
  [[nodiscard]] virtual absl::StatusOr<ActionInsertOutcome> InsertIfAbsent(
      const ActionRecord& record, const std::vector<ActionLifecycleEvent>& initial_events) = 0;

  // The current record.
  [[nodiscard]] virtual absl::StatusOr<ActionRecord> Get(std::string_view action_id) = 0;

  // Commits one CAS transition and its events atomically and returns the updated record.
  // Order of checks: ValidateActionTransition, NotFound, CheckCas, CheckTransitionAgainst.
  [[nodiscard]] virtual absl::StatusOr<ActionRecord> Transition(
      const ActionTransition& transition) = 0;

  // The action's events in sequence order (1, 2, ...). NotFound for an unknown action.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ActionLifecycleEvent>> ListEvents(
      std::string_view action_id) = 0;

  // Records in any of `states`, oldest created first (ties by id), at most `limit` (1..1000;
  // InvalidArgument otherwise). Used for expiry sweeps and crash recovery.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ActionRecord>> ListByState(
      const std::vector<ActionState>& states, std::size_t limit) = 0;
};

}  // namespace pulse::core
