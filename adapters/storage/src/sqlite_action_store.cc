#include "pulse/adapters/storage/sqlite_action_store.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "action_identity_rows.h"
#include "action_rows.h"
#include "notification_rows.h"
#include "pulse/core/notifications/notification_events.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

std::string Str(std::string_view v) { return std::string(v); }

// The conditional UPDATE of one transition; returns the number of rows it changed (0 or 1).
int SwapMutableColumns(SQLite::Database& db, const core::ActionTransition& t,
                       std::int64_t updated_at_ns, std::optional<std::uint32_t> revision_guard) {
  std::string sql =
      "UPDATE actions SET state = ?, decision_revision = ?, updated_at_ns = ? "
      "WHERE id = ? AND plan_hash = ? AND state IN (";
  for (std::size_t i = 0; i < t.expected_states.size(); ++i) {
    sql += i == 0 ? "?" : ", ?";
  }
  sql += ")";
  if (revision_guard.has_value()) {
    sql += " AND decision_revision = ?";
  }
  Prepared prepared_update(db, sql);
  SQLite::Statement& update = *prepared_update;
  int index = 1;
  update.bind(index++, Str(core::ToString(t.new_state)));
  update.bind(index++, static_cast<std::int64_t>(t.new_decision_revision));
  update.bind(index++, static_cast<std::int64_t>(updated_at_ns));
  update.bind(index++, t.action_id);
  update.bind(index++, t.expected_plan_hash);
  for (core::ActionState state : t.expected_states) {
    update.bind(index++, Str(core::ToString(state)));
  }
  if (revision_guard.has_value()) {
    update.bind(index++, static_cast<std::int64_t>(*revision_guard));
  }
  return update.exec();
}

std::int64_t NextEventSequence(SQLite::Database& db, const std::string& action_id) {
  Prepared prepared_q(db,
                      "SELECT COALESCE(MAX(sequence), 0) + 1 FROM action_events "
                      "WHERE action_id = ?");
  SQLite::Statement& q = *prepared_q;
  q.bind(1, action_id);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

absl::Status CheckKnown(SQLite::Database& db, const std::string& action_id) {
  Prepared prepared_q(db, "SELECT 1 FROM actions WHERE id = ?");
  SQLite::Statement& q = *prepared_q;
  q.bind(1, action_id);
  if (!q.executeStep()) {
    return absl::NotFoundError("no such action");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteActionStore>> SqliteActionStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteActionStore>(database);
}

absl::StatusOr<core::ActionInsertOutcome> SqliteActionStore::InsertIfAbsent(
    const core::ActionRecord& record,
    const std::vector<core::ActionLifecycleEvent>& initial_events) {
  const WriteCounter::Scope counted(writes_);
  if (absl::Status s = core::ValidateNewActionRecord(record, initial_events); !s.ok()) {
    return s;
  }
  // Checked whole before the transaction: what cannot be stored exactly is refused, and
  // nothing is written.
  absl::StatusOr<IdentityRow> identity = EncodeIdentity(record);
  if (!identity.ok()) {
    return identity.status();
  }
  absl::StatusOr<std::int64_t> updated_ns = EncodeTime(record.updated_at, "updated_at");
  if (!updated_ns.ok()) {
    return updated_ns.status();
  }
  absl::StatusOr<std::vector<EventRow>> events = EncodeEvents(initial_events);
  if (!events.ok()) {
    return events.status();
  }
  core::ActionInsertOutcome outcome;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_insert(
        db,
        "INSERT INTO actions (id, request_id, resource_id, capability_name, plan_hash, "
        "created_at_ns, state, decision_revision, updated_at_ns) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT (id) DO NOTHING");
    SQLite::Statement& insert = *prepared_insert;
    insert.bind(1, record.id());
    insert.bind(2, record.request.request_id);
    insert.bind(3, record.request.resource_id);
    insert.bind(4, record.request.capability_name);
    insert.bind(5, record.plan.plan_hash);
    insert.bind(6, static_cast<std::int64_t>(identity->created_at_ns));
    insert.bind(7, Str(core::ToString(record.state)));
    insert.bind(8, static_cast<std::int64_t>(*updated_ns));
    if (insert.exec() == 1) {
      InsertIdentity(db, *identity);
      InsertEvents(db, record.id(), 1, *events);
      outcome = {record, true};
      return QueueIfAny(db, core::ActionWriteEvent(std::nullopt, record));
    }
    absl::StatusOr<core::ActionRecord> existing = LoadActionRecord(db, record.id());
    if (!existing.ok()) {
      return existing.status();
    }
    if (existing->plan.plan_hash != record.plan.plan_hash) {
      return absl::AlreadyExistsError("the action id exists with a different plan hash");
    }
    outcome = {*std::move(existing), false};
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return outcome;
}

absl::StatusOr<core::ActionRecord> SqliteActionStore::Get(std::string_view action_id) {
  std::optional<core::ActionRecord> record;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    absl::StatusOr<core::ActionRecord> loaded = LoadActionRecord(db, std::string(action_id));
    if (!loaded.ok()) {
      return loaded.status();
    }
    record = *std::move(loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return *std::move(record);
}

absl::StatusOr<core::ActionRecord> SqliteActionStore::Transition(const core::ActionTransition& t) {
  const WriteCounter::Scope counted(writes_);
  if (absl::Status s = core::ValidateActionTransition(t); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::int64_t> updated_ns = EncodeTime(t.updated_at, "updated_at");
  if (!updated_ns.ok()) {
    return updated_ns.status();
  }
  absl::StatusOr<std::vector<EventRow>> events = EncodeEvents(t.events);
  if (!events.ok()) {
    return events.status();
  }
  std::optional<ApprovalRow> approval;
  if (t.appended_approval.has_value()) {
    absl::StatusOr<ApprovalRow> row = EncodeApproval(*t.appended_approval);
    if (!row.ok()) {
      return row.status();
    }
    approval = *row;
  }
  std::optional<ResultRow> result;
  if (t.result.has_value()) {
    absl::StatusOr<ResultRow> row = EncodeResult(*t.result);
    if (!row.ok()) {
      return row.status();
    }
    result = *row;
  }
  core::ActionRecord updated;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    absl::StatusOr<core::ActionRecord> current = LoadActionRecord(db, t.action_id);
    if (!current.ok()) {
      return current.status();
    }
    if (absl::Status s = core::CheckCas(*current, t); !s.ok()) {
      return s;
    }
    if (absl::Status s = core::CheckTransitionAgainst(*current, t); !s.ok()) {
      return s;
    }
    // The compare is the UPDATE's WHERE clause, not the read above: under an isolation level
    // where the read can be stale (a future PostgreSQL adapter) the database still decides.
    // Appending an approval also pins the revision it was computed from.
    std::optional<std::uint32_t> revision_guard = t.expected_decision_revision;
    if (!revision_guard.has_value() && approval.has_value()) {
      revision_guard = current->decision_revision;
    }
    if (SwapMutableColumns(db, t, *updated_ns, revision_guard) != 1) {
      absl::StatusOr<core::ActionRecord> now = LoadActionRecord(db, t.action_id);
      if (!now.ok()) {
        return now.status();
      }
      core::ActionCasConflict conflict;
      conflict.current_state = now->state;
      conflict.current_decision_revision = now->decision_revision;
      conflict.identity_mismatch = now->plan.plan_hash != t.expected_plan_hash;
      return core::MakeActionCasConflict(conflict, "the action changed concurrently");
    }
    if (approval.has_value()) {
      InsertApproval(db, t.action_id, t.new_decision_revision, *approval);
    }
    if (result.has_value()) {
      InsertResult(db, t.action_id, *result);
    }
    if (t.new_state == core::ActionState::kExecuting) {
      Prepared prepared_dispatch(db,
                                 "INSERT INTO action_dispatches (action_id, attempt_id, "
                                 "admitted_at_ns) VALUES (?, ?, ?)");
      SQLite::Statement& dispatch = *prepared_dispatch;
      dispatch.bind(1, t.action_id);
      dispatch.bind(2, core::DispatchAttemptId(t.action_id));
      dispatch.bind(3, static_cast<std::int64_t>(*updated_ns));
      dispatch.exec();
    }
    InsertEvents(db, t.action_id, NextEventSequence(db, t.action_id), *events);
    const core::ActionState left = current->state;
    updated = *std::move(current);
    core::ApplyActionTransition(t, updated);
    return QueueIfAny(db, core::ActionWriteEvent(left, updated));
  });
  if (!status.ok()) {
    return status;
  }
  return updated;
}

absl::StatusOr<std::vector<core::ActionLifecycleEvent>> SqliteActionStore::ListEvents(
    std::string_view action_id) {
  std::vector<core::ActionLifecycleEvent> events;
  const std::string id(action_id);
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    if (absl::Status s = CheckKnown(db, id); !s.ok()) {
      return s;
    }
    absl::StatusOr<std::vector<core::ActionLifecycleEvent>> loaded = LoadActionEvents(db, id);
    if (!loaded.ok()) {
      return loaded.status();
    }
    events = *std::move(loaded);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return events;
}

absl::StatusOr<std::vector<core::ActionRecord>> SqliteActionStore::ListByState(
    const std::vector<core::ActionState>& states, std::size_t limit) {
  if (limit == 0 || limit > 1000) {
    return absl::InvalidArgumentError("limit must be 1..1000");
  }
  std::vector<core::ActionRecord> out;
  std::vector<core::ActionState> distinct = states;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    // One index seek per state (actions_by_state is ordered by creation within a state), merged
    // here: a single "state IN (...) ORDER BY" query made SQLite build a temporary B-tree to
    // sort, even for no rows, and the expiry sweep runs this on every fleet-context read.
    Prepared prepared_q(db,
                        "SELECT created_at_ns, id FROM actions WHERE state = ? "
                        "ORDER BY created_at_ns, id LIMIT ?");
    SQLite::Statement& q = *prepared_q;
    std::vector<std::pair<std::int64_t, std::string>> rows;
    for (core::ActionState state : distinct) {
      q.reset();
      q.bind(1, Str(core::ToString(state)));
      q.bind(2, static_cast<std::int64_t>(limit));
      while (q.executeStep()) {
        rows.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getString());
      }
    }
    std::sort(rows.begin(), rows.end());
    if (rows.size() > limit) {
      rows.resize(limit);
    }
    for (const auto& [created, id] : rows) {
      absl::StatusOr<core::ActionRecord> record = LoadActionRecord(db, id);
      if (!record.ok()) {
        return record.status();
      }
      out.push_back(*std::move(record));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::StatusOr<std::vector<core::ActionRecord>> SqliteActionStore::ListPage(
    const core::ActionPageQuery& query) {
  if (query.limit == 0 || query.limit > 1000) {
    return absl::InvalidArgumentError("limit must be 1..1000");
  }
  // The WHERE state terms repeat the partial indexes of migration 16 word for word (SQLite uses
  // a partial index only then), and INDEXED BY names the index: without statistics the planner
  // would rather seek actions_by_state once per state and sort the whole view. The keyset term
  // starts the index range after the cursor.
  const bool in_flight = query.view == core::ActionPageView::kInFlight;
  std::string sql = in_flight ? "SELECT id FROM actions INDEXED BY actions_in_flight_page "
                                "WHERE state IN ('planned', 'pending_approval', 'approved', "
                                "'executing')"
                              : "SELECT id FROM actions INDEXED BY actions_settled_page "
                                "WHERE state IN ('rejected', 'expired', 'completed', 'failed')";
  if (query.after.has_value()) {
    sql += in_flight ? " AND (created_at_ns, id) > (?1, ?2)"
                     : " AND updated_at_ns <= ?1 AND (updated_at_ns < ?1 OR id > ?2)";
  }
  sql += in_flight ? " ORDER BY created_at_ns, id LIMIT ?3"
                   : " ORDER BY updated_at_ns DESC, id LIMIT ?3";
  std::vector<core::ActionRecord> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, sql);
    SQLite::Statement& q = *prepared_q;
    if (query.after.has_value()) {
      q.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(query.after->key)));
      q.bind(2, query.after->id);
    }
    q.bind(3, static_cast<std::int64_t>(query.limit));
    std::vector<std::string> ids;
    while (q.executeStep()) {
      ids.push_back(q.getColumn(0).getString());
    }
    out.reserve(ids.size());
    for (const std::string& id : ids) {
      absl::StatusOr<core::ActionRecord> record = LoadActionRecord(db, id);
      if (!record.ok()) {
        return record.status();
      }
      out.push_back(*std::move(record));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::StatusOr<std::vector<ActionDispatchRecord>> SqliteActionStore::ListDispatches(
    std::string_view action_id) {
  std::vector<ActionDispatchRecord> out;
  const std::string id(action_id);
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    if (absl::Status s = CheckKnown(db, id); !s.ok()) {
      return s;
    }
    Prepared prepared_q(db,
                        "SELECT attempt_id, admitted_at_ns FROM action_dispatches "
                        "WHERE action_id = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, id);
    while (q.executeStep()) {
      out.push_back({id, q.getColumn(0).getString(), DecodeTime(q.getColumn(1).getInt64())});
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

}  // namespace pulse::adapters::storage
