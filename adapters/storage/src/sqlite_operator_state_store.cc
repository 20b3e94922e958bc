#include "pulse/adapters/storage/sqlite_operator_state_store.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

std::string Str(std::string_view v) { return std::string(v); }

template <class T, class Parse>
absl::StatusOr<T> ParseStored(const SQLite::Column& column, Parse parse, std::string_view what) {
  const std::optional<T> value = parse(column.getString());
  if (!value.has_value()) {
    return absl::DataLossError(absl::StrCat("stored operator state has an unknown ", ToAbsl(what)));
  }
  return *value;
}

absl::StatusOr<std::optional<std::int64_t>> EncodeOptionalTime(const std::optional<absl::Time>& t,
                                                               std::string_view field) {
  if (!t.has_value()) {
    return std::optional<std::int64_t>();
  }
  absl::StatusOr<std::int64_t> nanos = EncodeTime(*t, field);
  if (!nanos.ok()) {
    return nanos.status();
  }
  return std::optional<std::int64_t>(*nanos);
}

// One row of operator_state, by primary key; DecodeState reads the current row of it.
constexpr const char* kSelectState =
    "SELECT resource_id, never_auto_remediate, intentionally_offline, monitoring_mode, "
    "lifecycle, maintenance_start_ns, maintenance_end_ns, maintenance_reason, criticality, "
    "note, set_at_ns, set_by, local_only FROM operator_state WHERE resource_id = ?";

absl::StatusOr<core::OperatorState> DecodeState(const SQLite::Statement& q) {
  absl::StatusOr<core::MonitoringMode> mode = ParseStored<core::MonitoringMode>(
      q.getColumn(3), core::ParseMonitoringMode, "monitoring mode");
  absl::StatusOr<core::ResourceLifecycle> lifecycle = ParseStored<core::ResourceLifecycle>(
      q.getColumn(4), core::ParseResourceLifecycle, "lifecycle");
  absl::StatusOr<core::Criticality> criticality =
      ParseStored<core::Criticality>(q.getColumn(8), core::ParseCriticality, "criticality");
  for (const absl::Status* s : {&mode.status(), &lifecycle.status(), &criticality.status()}) {
    if (!s->ok()) {
      return *s;
    }
  }
  core::OperatorState s;
  s.resource_id = q.getColumn(0).getString();
  s.never_auto_remediate = q.getColumn(1).getInt() != 0;
  s.intentionally_offline = q.getColumn(2).getInt() != 0;
  s.monitoring_mode = *mode;
  s.lifecycle = *lifecycle;
  s.maintenance_start_at = OptionalTime(q.getColumn(5));
  s.maintenance_end_at = OptionalTime(q.getColumn(6));
  s.maintenance_reason = q.getColumn(7).getString();
  s.criticality = *criticality;
  s.note = q.getColumn(9).getString();
  s.set_at = DecodeTime(q.getColumn(10).getInt64());
  s.set_by = q.getColumn(11).getString();
  s.local_only = q.getColumn(12).getInt() != 0;
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteOperatorStateStore>> SqliteOperatorStateStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteOperatorStateStore>(database);
}

absl::StatusOr<core::OperatorState> SqliteOperatorStateStore::Get(std::string_view resource_id) {
  std::optional<core::OperatorState> found;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, kSelectState);
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(resource_id));
    if (!q.executeStep()) {
      return absl::OkStatus();
    }
    absl::StatusOr<core::OperatorState> s = DecodeState(q);
    if (!s.ok()) {
      return s.status();
    }
    found = *std::move(s);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!found.has_value()) {
    return absl::NotFoundError("no operator state is set");
  }
  return *std::move(found);
}

absl::StatusOr<std::vector<core::OperatorState>> SqliteOperatorStateStore::GetMany(
    const std::vector<std::string>& resource_ids) {
  std::vector<std::string> ids = resource_ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<core::OperatorState> out;
  if (ids.empty()) {
    return out;
  }
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, kSelectState);
    SQLite::Statement& q = *prepared_q;
    for (const std::string& id : ids) {
      q.bind(1, id);
      if (q.executeStep()) {
        absl::StatusOr<core::OperatorState> s = DecodeState(q);
        if (!s.ok()) {
          return s.status();
        }
        out.push_back(*std::move(s));
      }
      q.reset();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::Status SqliteOperatorStateStore::Set(const core::OperatorState& state) {
  const WriteCounter::Scope counted(writes_);
  if (absl::Status s = core::ValidateOperatorState(state); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::optional<std::int64_t>> start =
      EncodeOptionalTime(state.maintenance_start_at, "maintenance_start_at");
  absl::StatusOr<std::optional<std::int64_t>> end =
      EncodeOptionalTime(state.maintenance_end_at, "maintenance_end_at");
  absl::StatusOr<std::int64_t> set_at = EncodeTime(state.set_at, "set_at");
  for (const absl::Status* s : {&start.status(), &end.status(), &set_at.status()}) {
    if (!s->ok()) {
      return *s;
    }
  }
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(
        db,
        "INSERT INTO operator_state (resource_id, never_auto_remediate, intentionally_offline, "
        "monitoring_mode, lifecycle, maintenance_start_ns, maintenance_end_ns, "
        "maintenance_reason, criticality, note, set_at_ns, set_by, local_only) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (resource_id) DO UPDATE SET "
        "never_auto_remediate = excluded.never_auto_remediate, "
        "intentionally_offline = excluded.intentionally_offline, "
        "monitoring_mode = excluded.monitoring_mode, lifecycle = excluded.lifecycle, "
        "maintenance_start_ns = excluded.maintenance_start_ns, "
        "maintenance_end_ns = excluded.maintenance_end_ns, "
        "maintenance_reason = excluded.maintenance_reason, criticality = excluded.criticality, "
        "note = excluded.note, set_at_ns = excluded.set_at_ns, set_by = excluded.set_by, "
        "local_only = excluded.local_only");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, state.resource_id);
    upsert.bind(2, state.never_auto_remediate ? 1 : 0);
    upsert.bind(3, state.intentionally_offline ? 1 : 0);
    upsert.bind(4, Str(core::ToString(state.monitoring_mode)));
    upsert.bind(5, Str(core::ToString(state.lifecycle)));
    BindOptionalTime(upsert, 6, *start);
    BindOptionalTime(upsert, 7, *end);
    upsert.bind(8, state.maintenance_reason);
    upsert.bind(9, Str(core::ToString(state.criticality)));
    upsert.bind(10, state.note);
    upsert.bind(11, static_cast<std::int64_t>(*set_at));
    upsert.bind(12, state.set_by);
    upsert.bind(13, state.local_only ? 1 : 0);
    upsert.exec();
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<std::string>> SqliteOperatorStateStore::LocalOnlyResourceIds() {
  std::vector<std::string> ids;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(
        db, "SELECT resource_id FROM operator_state WHERE local_only = 1 ORDER BY resource_id");
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      ids.push_back(q.getColumn(0).getString());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return ids;
}

absl::StatusOr<std::vector<core::OperatorState>> SqliteOperatorStateStore::WithNotes() {
  std::vector<std::string> ids;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT resource_id FROM operator_state WHERE note != '' "
                        "ORDER BY resource_id LIMIT ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, static_cast<std::int64_t>(core::kMaxListedResourceNotes));
    while (q.executeStep()) {
      ids.push_back(q.getColumn(0).getString());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  // A state cleared since the list was read is left out by GetMany; one whose note was
  // emptied meanwhile is dropped here.
  absl::StatusOr<std::vector<core::OperatorState>> states = GetMany(ids);
  if (!states.ok()) {
    return states.status();
  }
  std::erase_if(*states, [](const core::OperatorState& s) { return s.note.empty(); });
  return states;
}

absl::Status SqliteOperatorStateStore::Clear(std::string_view resource_id) {
  const WriteCounter::Scope counted(writes_);
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_del(db, "DELETE FROM operator_state WHERE resource_id = ?");
    SQLite::Statement& del = *prepared_del;
    del.bind(1, std::string(resource_id));
    del.exec();
    return absl::OkStatus();
  });
}

}  // namespace pulse::adapters::storage
