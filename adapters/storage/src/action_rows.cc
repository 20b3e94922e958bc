#include "action_rows.h"

#include <SQLiteCpp/Statement.h>

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "action_identity_rows.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

absl::Status CheckActor(const core::ActionActor& actor, std::string_view field) {
  return CheckText(actor.id, field);
}

std::string Str(std::string_view v) { return std::string(v); }

}  // namespace

absl::Status CorruptAction(std::string_view action_id, std::string_view what) {
  return absl::DataLossError(
      absl::StrCat("stored action ", ToAbsl(action_id), " has ", ToAbsl(what)));
}

absl::StatusOr<std::vector<EventRow>> EncodeEvents(
    const std::vector<core::ActionLifecycleEvent>& events) {
  std::vector<EventRow> rows;
  rows.reserve(events.size());
  for (const core::ActionLifecycleEvent& e : events) {
    absl::StatusOr<std::int64_t> at = EncodeTime(e.at, "event time");
    if (!at.ok()) {
      return at.status();
    }
    if (absl::Status s = CheckText(e.message, "event message"); !s.ok()) {
      return s;
    }
    if (e.actor.has_value()) {
      if (absl::Status s = CheckActor(*e.actor, "event actor id"); !s.ok()) {
        return s;
      }
    }
    rows.push_back({*at, &e});
  }
  return rows;
}

absl::StatusOr<ApprovalRow> EncodeApproval(const core::ApprovalRecord& approval) {
  absl::StatusOr<std::int64_t> at = EncodeTime(approval.at, "approval time");
  if (!at.ok()) {
    return at.status();
  }
  for (const auto& [text, field] :
       {std::pair<std::string_view, std::string_view>{approval.actor.id, "approver id"},
        {approval.reason, "approval reason"},
        {approval.plan_hash, "approval plan hash"}}) {
    if (absl::Status s = CheckText(text, field); !s.ok()) {
      return s;
    }
  }
  return ApprovalRow{*at, &approval};
}

absl::StatusOr<ResultRow> EncodeResult(const core::ActionExecutionResult& result) {
  ResultRow row;
  row.result = &result;
  absl::StatusOr<std::int64_t> finished = EncodeTime(result.finished_at, "result finished_at");
  if (!finished.ok()) {
    return finished.status();
  }
  row.finished_at_ns = *finished;
  if (result.started_at.has_value()) {
    absl::StatusOr<std::int64_t> started = EncodeTime(*result.started_at, "result started_at");
    if (!started.ok()) {
      return started.status();
    }
    row.started_at_ns = *started;
  }
  if (result.verification.observed_at.has_value()) {
    absl::StatusOr<std::int64_t> observed =
        EncodeTime(*result.verification.observed_at, "verification observed_at");
    if (!observed.ok()) {
      return observed.status();
    }
    row.observed_at_ns = *observed;
  }
  for (const auto& [text, field] : {
           std::pair<std::string_view, std::string_view>{result.execution.reason_code,
                                                         "execution reason code"},
           {result.execution.summary, "execution summary"},
           {result.verification.reason_code, "verification reason code"},
           {result.verification.summary, "verification summary"},
           {result.verification.observer_id, "observer id"},
           {result.error_message, "error message"},
           {result.executor_id, "executor id"},
       }) {
    if (absl::Status s = CheckText(text, field); !s.ok()) {
      return s;
    }
  }
  return row;
}

void InsertEvents(SQLite::Database& db, const std::string& action_id, std::int64_t first_sequence,
                  const std::vector<EventRow>& events) {
  Prepared prepared_insert(
      db,
      "INSERT INTO action_events (action_id, sequence, at_ns, state, kind, decision_revision, "
      "decision, actor_kind, actor_id, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::Statement& insert = *prepared_insert;
  std::int64_t sequence = first_sequence;
  for (const EventRow& row : events) {
    const core::ActionLifecycleEvent& e = *row.event;
    insert.bind(1, action_id);
    insert.bind(2, static_cast<std::int64_t>(sequence++));
    insert.bind(3, static_cast<std::int64_t>(row.at_ns));
    insert.bind(4, Str(core::ToString(e.state)));
    insert.bind(5, Str(core::ToString(e.kind)));
    if (e.decision_revision.has_value()) {
      insert.bind(6, static_cast<std::int64_t>(*e.decision_revision));
    } else {
      insert.bind(6);
    }
    if (e.decision.has_value()) {
      insert.bind(7, Str(core::ToString(*e.decision)));
    } else {
      insert.bind(7);
    }
    if (e.actor.has_value()) {
      insert.bind(8, Str(core::ToString(e.actor->kind)));
      insert.bind(9, e.actor->id);
    } else {
      insert.bind(8);
      insert.bind(9);
    }
    insert.bind(10, e.message);
    insert.exec();
    insert.reset();
    insert.clearBindings();
  }
}

void InsertApproval(SQLite::Database& db, const std::string& action_id, std::uint32_t revision,
                    const ApprovalRow& row) {
  const core::ApprovalRecord& a = *row.approval;
  Prepared prepared_insert(
      db,
      "INSERT INTO action_approvals (action_id, revision, actor_kind, actor_id, outcome, reason, "
      "at_ns, plan_hash, actor_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::Statement& insert = *prepared_insert;
  insert.bind(1, action_id);
  insert.bind(2, static_cast<std::int64_t>(revision));
  insert.bind(3, Str(core::ToString(a.actor.kind)));
  insert.bind(4, a.actor.id);
  insert.bind(5, Str(core::ToString(a.outcome)));
  insert.bind(6, a.reason);
  insert.bind(7, static_cast<std::int64_t>(row.at_ns));
  insert.bind(8, a.plan_hash);
  insert.bind(9, a.actor.name);
  insert.exec();
}

void InsertResult(SQLite::Database& db, const std::string& action_id, const ResultRow& row) {
  const core::ActionExecutionResult& r = *row.result;
  Prepared prepared_insert(
      db,
      "INSERT INTO action_results (action_id, execution_status, execution_reason_code, "
      "execution_summary, verification_status, evidence_class, verification_reason_code, "
      "verification_summary, observer_id, observed_at_ns, error_message, dispatched, executor_id, "
      "started_at_ns, finished_at_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::Statement& insert = *prepared_insert;
  insert.bind(1, action_id);
  insert.bind(2, Str(core::ToString(r.execution.status)));
  insert.bind(3, r.execution.reason_code);
  insert.bind(4, r.execution.summary);
  insert.bind(5, Str(core::ToString(r.verification.status)));
  insert.bind(6, Str(core::ToString(r.verification.evidence_class)));
  insert.bind(7, r.verification.reason_code);
  insert.bind(8, r.verification.summary);
  insert.bind(9, r.verification.observer_id);
  BindOptionalTime(insert, 10, row.observed_at_ns);
  insert.bind(11, r.error_message);
  insert.bind(12, r.dispatched ? 1 : 0);
  insert.bind(13, r.executor_id);
  BindOptionalTime(insert, 14, row.started_at_ns);
  insert.bind(15, static_cast<std::int64_t>(row.finished_at_ns));
  insert.exec();
}

namespace {

absl::Status LoadApprovals(SQLite::Database& db, core::ActionRecord& record) {
  const std::string& id = record.id();
  Prepared prepared_q(db,
                      "SELECT actor_kind, actor_id, outcome, reason, at_ns, plan_hash, "
                      "actor_name "
                      "FROM action_approvals WHERE action_id = ? ORDER BY revision");
  SQLite::Statement& q = *prepared_q;
  q.bind(1, id);
  while (q.executeStep()) {
    core::ApprovalRecord a;
    absl::StatusOr<core::ActorKind> kind =
        ParseColumn<core::ActorKind>(q.getColumn(0), core::ParseActorKind, id, "actor kind");
    absl::StatusOr<core::DecisionOutcome> outcome = ParseColumn<core::DecisionOutcome>(
        q.getColumn(2), core::ParseDecisionOutcome, id, "decision outcome");
    if (!kind.ok() || !outcome.ok()) {
      return kind.ok() ? outcome.status() : kind.status();
    }
    a.actor = {*kind, q.getColumn(1).getString(), q.getColumn(6).getString()};
    a.outcome = *outcome;
    a.reason = q.getColumn(3).getString();
    a.at = DecodeTime(q.getColumn(4).getInt64());
    a.plan_hash = q.getColumn(5).getString();
    record.approvals.push_back(std::move(a));
  }
  if (record.approvals.size() != record.decision_revision) {
    return CorruptAction(id, "a decision revision that disagrees with its approvals");
  }
  return absl::OkStatus();
}

absl::Status LoadResult(SQLite::Database& db, core::ActionRecord& record) {
  const std::string& id = record.id();
  Prepared prepared_q(
      db,
      "SELECT execution_status, execution_reason_code, execution_summary, verification_status, "
      "evidence_class, verification_reason_code, verification_summary, observer_id, "
      "observed_at_ns, error_message, dispatched, executor_id, started_at_ns, finished_at_ns "
      "FROM action_results WHERE action_id = ?");
  SQLite::Statement& q = *prepared_q;
  q.bind(1, id);
  if (!q.executeStep()) {
    return absl::OkStatus();
  }
  absl::StatusOr<core::ExecutionStatus> execution = ParseColumn<core::ExecutionStatus>(
      q.getColumn(0), core::ParseExecutionStatus, id, "execution status");
  absl::StatusOr<core::VerificationStatus> verification = ParseColumn<core::VerificationStatus>(
      q.getColumn(3), core::ParseVerificationStatus, id, "verification status");
  absl::StatusOr<core::EvidenceClass> evidence = ParseColumn<core::EvidenceClass>(
      q.getColumn(4), core::ParseEvidenceClass, id, "evidence class");
  for (const absl::Status* s : {&execution.status(), &verification.status(), &evidence.status()}) {
    if (!s->ok()) {
      return *s;
    }
  }
  core::ActionExecutionResult r;
  r.execution = {*execution, q.getColumn(1).getString(), q.getColumn(2).getString()};
  r.verification.status = *verification;
  r.verification.evidence_class = *evidence;
  r.verification.reason_code = q.getColumn(5).getString();
  r.verification.summary = q.getColumn(6).getString();
  r.verification.observer_id = q.getColumn(7).getString();
  r.verification.observed_at = OptionalTime(q.getColumn(8));
  r.error_message = q.getColumn(9).getString();
  r.dispatched = q.getColumn(10).getInt() != 0;
  r.executor_id = q.getColumn(11).getString();
  r.started_at = OptionalTime(q.getColumn(12));
  r.finished_at = DecodeTime(q.getColumn(13).getInt64());
  record.result = std::move(r);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<core::ActionRecord> LoadActionRecord(SQLite::Database& db,
                                                    const std::string& action_id) {
  Prepared prepared_q(
      db, absl::StrCat("SELECT a.state, a.decision_revision, a.updated_at_ns, ", kIdentityColumns,
                       " FROM actions a LEFT JOIN action_identities i "
                       "ON i.action_id = a.id WHERE a.id = ?"));
  SQLite::Statement& q = *prepared_q;
  q.bind(1, action_id);
  if (!q.executeStep()) {
    return absl::NotFoundError("no such action");
  }
  core::ActionRecord record;
  if (absl::Status s = ReadIdentity(q, 3, record); !s.ok()) {
    return s;
  }
  absl::StatusOr<core::ActionState> state =
      ParseColumn<core::ActionState>(q.getColumn(0), core::ParseActionState, action_id, "state");
  if (!state.ok()) {
    return state.status();
  }
  record.state = *state;
  const std::int64_t revision = q.getColumn(1).getInt64();
  if (revision < 0 || revision > UINT32_MAX) {
    return CorruptAction(action_id, "an out-of-range decision revision");
  }
  record.decision_revision = static_cast<std::uint32_t>(revision);
  record.updated_at = DecodeTime(q.getColumn(2).getInt64());
  if (absl::Status s = LoadApprovals(db, record); !s.ok()) {
    return s;
  }
  if (absl::Status s = LoadResult(db, record); !s.ok()) {
    return s;
  }
  return record;
}

absl::StatusOr<std::vector<core::ActionLifecycleEvent>> LoadActionEvents(
    SQLite::Database& db, const std::string& action_id) {
  Prepared prepared_q(db,
                      "SELECT sequence, at_ns, state, kind, decision_revision, decision, "
                      "actor_kind, actor_id, message FROM action_events WHERE action_id = ? "
                      "ORDER BY sequence");
  SQLite::Statement& q = *prepared_q;
  q.bind(1, action_id);
  std::vector<core::ActionLifecycleEvent> events;
  while (q.executeStep()) {
    core::ActionLifecycleEvent e;
    e.action_id = action_id;
    e.sequence = q.getColumn(0).getInt64();
    e.at = DecodeTime(q.getColumn(1).getInt64());
    absl::StatusOr<core::ActionState> state = ParseColumn<core::ActionState>(
        q.getColumn(2), core::ParseActionState, action_id, "event state");
    absl::StatusOr<core::LifecycleEventKind> kind = ParseColumn<core::LifecycleEventKind>(
        q.getColumn(3), core::ParseLifecycleEventKind, action_id, "event kind");
    if (!state.ok() || !kind.ok()) {
      return state.ok() ? kind.status() : state.status();
    }
    e.state = *state;
    e.kind = *kind;
    if (!q.getColumn(4).isNull()) {
      e.decision_revision = static_cast<std::uint32_t>(q.getColumn(4).getInt64());
    }
    if (!q.getColumn(5).isNull()) {
      absl::StatusOr<core::DecisionOutcome> decision = ParseColumn<core::DecisionOutcome>(
          q.getColumn(5), core::ParseDecisionOutcome, action_id, "event decision");
      if (!decision.ok()) {
        return decision.status();
      }
      e.decision = *decision;
    }
    if (!q.getColumn(6).isNull()) {
      absl::StatusOr<core::ActorKind> actor_kind = ParseColumn<core::ActorKind>(
          q.getColumn(6), core::ParseActorKind, action_id, "event actor kind");
      if (!actor_kind.ok()) {
        return actor_kind.status();
      }
      e.actor = core::ActionActor{*actor_kind, q.getColumn(7).getString()};
    }
    e.message = q.getColumn(8).getString();
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace pulse::adapters::storage
