// SqliteActionStore: the ActionStore port on the shared SQLite database. The immutable
// identity (request, plan, created_at) is written once as columns of `actions` and its 1:1
// `action_identities` row (docs/storage.md; never the API's wire JSON); the mutable
// columns (state, decision revision, updated_at) change only through the typed CAS of
// actions/action_transition.h, committed in one transaction as
//   UPDATE actions SET state=?, decision_revision=?, updated_at_ns=?
//    WHERE id=? AND state IN (<expected>) AND plan_hash=? [AND decision_revision=?]
// plus the appended approval, the write-once result, the dispatch record (on entering
// `executing`) and the lifecycle events. A lost compare answers Aborted with the
// ActionCasConflict payload read from the current row. Approvals, results, events and dispatch
// records live in append-only tables (triggers refuse UPDATE and DELETE), so the schema itself
// keeps "never rewritten, never dispatched twice".
// Text must be valid UTF-8 without NULs, times must fit int64 nanoseconds and an identity must
// stay within its bounds (InvalidArgument otherwise, nothing written), so every value reads
// back exactly.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/write_counter.h"
#include "pulse/core/ports/action_store.h"

namespace pulse::adapters::storage {

// The dispatch record of an action: written once, in the commit that admits it to executing.
struct ActionDispatchRecord {
  std::string action_id;
  std::string attempt_id;  // "<action_id>.dispatch.1"
  absl::Time admitted_at;

  friend bool operator==(const ActionDispatchRecord&, const ActionDispatchRecord&) = default;
};

class SqliteActionStore final : public core::ActionStore {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteActionStore>> Open(
      SqliteDatabase& database);

  explicit SqliteActionStore(SqliteDatabase& database) : database_(database) {}

  absl::StatusOr<core::ActionInsertOutcome> InsertIfAbsent(
      const core::ActionRecord& record,
      const std::vector<core::ActionLifecycleEvent>& initial_events) override;
  absl::StatusOr<core::ActionRecord> Get(std::string_view action_id) override;
  absl::StatusOr<core::ActionRecord> Transition(const core::ActionTransition& transition) override;
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> ListEvents(
      std::string_view action_id) override;
  absl::StatusOr<std::vector<core::ActionRecord>> ListByState(
      const std::vector<core::ActionState>& states, std::size_t limit) override;
  // An index range of migration 16's partial index of the view, then each listed record.
  absl::StatusOr<std::vector<core::ActionRecord>> ListPage(
      const core::ActionPageQuery& query) override;
  // Counts the InsertIfAbsent and Transition calls made through this object (the server opens
  // one per database, and actions are written only through it).
  std::optional<std::uint64_t> WriteGeneration() const override { return writes_.Read(); }

  // The action's dispatch records (none, or exactly one). NotFound for an unknown action.
  [[nodiscard]] absl::StatusOr<std::vector<ActionDispatchRecord>> ListDispatches(
      std::string_view action_id);

 private:
  SqliteDatabase& database_;
  WriteCounter writes_;
};

}  // namespace pulse::adapters::storage
