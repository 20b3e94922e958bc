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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/action_transition.h"
#include "pulse/core/model/action_types.h"

namespace pulse::core {

// The two pages of the action queue (GET /api/actions?view=). kInFlight holds planned,
// pending_approval, approved and executing actions, oldest created first (ties by id); kSettled
// holds rejected, expired, completed and failed ones, most recently updated first (ties by id).
// Both orders are total, and the key never changes while an action stays in its view (created_at
// is immutable; a settled action is final), so a keyset page repeats and skips nothing.
enum class ActionPageView { kInFlight, kSettled };

// The states of `view`.
inline const std::vector<ActionState>& ActionPageStates(ActionPageView view) {
  static const std::vector<ActionState> in_flight = {
      ActionState::kPlanned, ActionState::kPendingApproval, ActionState::kApproved,
      ActionState::kExecuting};
  static const std::vector<ActionState> settled = {ActionState::kRejected, ActionState::kExpired,
                                                   ActionState::kCompleted, ActionState::kFailed};
  return view == ActionPageView::kInFlight ? in_flight : settled;
}

// Where a page ended: the last listed action's order key (created_at for kInFlight,
// updated_at for kSettled) and id.
struct ActionPagePosition {
  absl::Time key;
  std::string id;

  friend bool operator==(const ActionPagePosition&, const ActionPagePosition&) = default;
};

// The position of `record` in `view`'s order.
inline ActionPagePosition ActionPagePositionOf(const ActionRecord& record, ActionPageView view) {
  return {view == ActionPageView::kInFlight ? record.created_at : record.updated_at, record.id()};
}

// True when `record` comes strictly after `position` in `view`'s order.
inline bool IsAfterInActionPage(const ActionRecord& record, const ActionPagePosition& position,
                                ActionPageView view) {
  const ActionPagePosition mine = ActionPagePositionOf(record, view);
  if (mine.key != position.key) {
    return view == ActionPageView::kInFlight ? mine.key > position.key : mine.key < position.key;
  }
  return mine.id > position.id;
}

struct ActionPageQuery {
  ActionPageView view = ActionPageView::kInFlight;
  std::optional<ActionPagePosition> after;  // unset: from the start of the order
  std::size_t limit = 100;                  // 1..1000
};

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

  // The actions of query.view strictly after query.after in the view's order, at most
  // query.limit (1..1000; InvalidArgument otherwise). The cost is the page (an index range in
  // the SQLite store), never the whole store.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ActionRecord>> ListPage(
      const ActionPageQuery& query) = 0;

  // For caches of views over action state (AgentViews' fleet context): a number that changes
  // after every InsertIfAbsent or Transition made through this store object has returned
  // (successful or not), so two equal readings bracket no write made through it. nullopt (the
  // default) when the store does not track writes; a caller must not cache then. Writes made by
  // another store object or another process are not seen: only use it where this object is the
  // one writer.
  [[nodiscard]] virtual std::optional<std::uint64_t> WriteGeneration() const {
    return std::nullopt;
  }
};

}  // namespace pulse::core
