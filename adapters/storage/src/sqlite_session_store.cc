#include "pulse/adapters/storage/sqlite_session_store.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/loop/session_record_json.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

// What a write binds: the record's JSON and its column values, checked before any SQL runs.
struct EncodedSession {
  std::string json;
  std::int64_t created_at_ns = 0;
  std::int64_t updated_at_ns = 0;
};

// The stored form of `record`, checked to decode back to exactly it.
absl::StatusOr<EncodedSession> EncodeSession(const core::SessionRecord& record) {
  EncodedSession out;
  absl::StatusOr<std::int64_t> created = EncodeTime(record.created_at, "created_at");
  if (!created.ok()) {
    return created.status();
  }
  absl::StatusOr<std::int64_t> updated = EncodeTime(record.updated_at, "updated_at");
  if (!updated.ok()) {
    return updated.status();
  }
  out.created_at_ns = *created;
  out.updated_at_ns = *updated;
  out.json = core::SessionRecordToJson(record);
  absl::StatusOr<core::SessionRecord> back = core::SessionRecordFromJson(out.json);
  if (!back.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("session cannot be stored: ", back.status().message()));
  }
  if (*back != record) {
    return absl::InvalidArgumentError(
        "session cannot be stored exactly: a text field is not valid UTF-8, or a value is "
        "outside the codec's limits");
  }
  return out;
}

absl::StatusOr<core::SessionRecord> DecodeRow(std::string_view id, std::int64_t revision,
                                              const std::string& json) {
  absl::StatusOr<core::SessionRecord> record = core::SessionRecordFromJson(json);
  if (!record.ok()) {
    return absl::DataLossError(absl::StrCat("stored session ", ToAbsl(id),
                                            " does not decode: ", record.status().message()));
  }
  if (record->id != id || record->revision != revision) {
    return absl::DataLossError(
        absl::StrCat("stored session ", ToAbsl(id), " disagrees with its row"));
  }
  return *std::move(record);
}

std::string Str(std::string_view v) { return std::string(v); }

constexpr std::int64_t kMaxRevision = std::numeric_limits<std::int64_t>::max();

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteSessionStore>> SqliteSessionStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteSessionStore>(database);
}

absl::StatusOr<core::SessionRecord> SqliteSessionStore::Create(const core::SessionRecord& record) {
  if (absl::Status s = core::ValidateSessionRecord(record); !s.ok()) {
    return s;
  }
  core::SessionRecord stored = record;
  stored.revision = 1;
  absl::StatusOr<EncodedSession> encoded = EncodeSession(stored);
  if (!encoded.ok()) {
    return encoded.status();
  }
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_insert(
        db,
        "INSERT INTO sessions (id, revision, status, message_count, created_at_ns, "
        "updated_at_ns, record_json, kind, owner_token_id, owner_token_name) "
        "VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING");
    SQLite::Statement& insert = *prepared_insert;
    insert.bind(1, stored.id);
    insert.bind(2, Str(core::ToString(stored.status)));
    insert.bind(3, static_cast<std::int64_t>(stored.transcript.size()));
    insert.bind(4, static_cast<std::int64_t>(encoded->created_at_ns));
    insert.bind(5, static_cast<std::int64_t>(encoded->updated_at_ns));
    insert.bind(6, encoded->json);
    insert.bind(7, Str(core::ToString(stored.kind)));
    insert.bind(8, stored.owner.token_id);
    insert.bind(9, stored.owner.token_name);
    if (insert.exec() != 1) {
      return absl::AlreadyExistsError(absl::StrCat("session ", stored.id, " exists"));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return stored;
}

absl::StatusOr<core::SessionRecord> SqliteSessionStore::Get(std::string_view id) {
  if (absl::Status s = core::ValidateSessionId(id); !s.ok()) {
    return s;
  }
  std::optional<core::SessionRecord> found;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT revision, record_json FROM sessions WHERE id = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(id));
    if (!q.executeStep()) {
      return absl::OkStatus();
    }
    absl::StatusOr<core::SessionRecord> record =
        DecodeRow(id, q.getColumn(0).getInt64(), q.getColumn(1).getString());
    if (!record.ok()) {
      return record.status();
    }
    found = *std::move(record);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!found.has_value()) {
    return absl::NotFoundError("no such session");
  }
  return *std::move(found);
}

absl::StatusOr<core::SessionRecord> SqliteSessionStore::Update(const core::SessionRecord& record) {
  if (absl::Status s = core::ValidateSessionRecord(record); !s.ok()) {
    return s;
  }
  // Encoded (and checked) before the transaction, so a record that cannot be stored is
  // InvalidArgument, not Aborted, whatever its revision (a revision no store holds is merely
  // stale), and the writer does not encode while it holds the write lock: `next` as it will be
  // stored when the compare-and-swap holds and the stored created_at, kind and owner are the
  // record's own (a run's record always carries them).
  core::SessionRecord candidate = record;
  // (At int64's maximum the codec refuses it anyway; the transaction then decides.)
  candidate.revision = record.revision + (record.revision < kMaxRevision ? 1 : 0);
  absl::StatusOr<EncodedSession> pre_encoded = EncodeSession(candidate);
  if (!pre_encoded.ok()) {
    core::SessionRecord unversioned = record;
    unversioned.revision = 1;
    if (absl::StatusOr<EncodedSession> check = EncodeSession(unversioned); !check.ok()) {
      return check.status();
    }
    // Only the revision is out of the codec's range: the transaction decides (stale, or that).
  }
  std::optional<core::SessionRecord> stored;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT revision, created_at_ns, kind, owner_token_id, owner_token_name "
                        "FROM sessions WHERE id = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, record.id);
    if (!q.executeStep()) {
      return absl::NotFoundError("no such session");
    }
    if (q.getColumn(0).getInt64() != record.revision) {
      return absl::AbortedError("stale session revision");
    }
    core::SessionRecord next = record;
    next.revision = record.revision + 1;
    next.created_at = DecodeTime(q.getColumn(1).getInt64());
    // Kind and owner are fixed at Create: no update moves a session to another token.
    next.kind =
        core::ParseSessionKind(q.getColumn(2).getString()).value_or(core::SessionKind::kChat);
    next.owner = core::SessionOwner{q.getColumn(3).getString(), q.getColumn(4).getString()};
    q.reset();
    const bool as_encoded = pre_encoded.ok() && next.created_at == candidate.created_at &&
                            next.kind == candidate.kind && next.owner == candidate.owner;
    absl::StatusOr<EncodedSession> fresh;
    if (!as_encoded) {
      fresh = EncodeSession(next);
      if (!fresh.ok()) {
        return fresh.status();  // only at the codec's revision limit
      }
    }
    const EncodedSession* encoded = as_encoded ? &*pre_encoded : &*fresh;
    // The compare-and-swap itself: the database decides, not the read above.
    Prepared prepared_update(
        db,
        "UPDATE sessions SET revision = ?, status = ?, message_count = ?, updated_at_ns = ?, "
        "record_json = ? WHERE id = ? AND revision = ?");
    SQLite::Statement& update = *prepared_update;
    update.bind(1, static_cast<std::int64_t>(next.revision));
    update.bind(2, Str(core::ToString(next.status)));
    update.bind(3, static_cast<std::int64_t>(next.transcript.size()));
    update.bind(4, static_cast<std::int64_t>(encoded->updated_at_ns));
    update.bind(5, encoded->json);
    update.bind(6, next.id);
    update.bind(7, static_cast<std::int64_t>(record.revision));
    if (update.exec() != 1) {
      return absl::AbortedError("stale session revision");
    }
    stored = std::move(next);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return *std::move(stored);
}

absl::StatusOr<std::vector<core::SessionSummary>> SqliteSessionStore::List(
    const core::SessionListQuery& query) {
  const std::size_t limit = query.limit;
  if (limit == 0 || limit > core::kMaxSessionListLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be 1..", core::kMaxSessionListLimit));
  }
  std::vector<core::SessionSummary> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    // Only the filters that are set are terms, so the planner sees plain equalities and walks
    // sessions_by_owner (kind, owner_token_id, updated_at_ns DESC, id) from the cursor on: the
    // cost is the page. (An `?1 IS NULL OR kind = ?1` term would hide the index.)
    std::string sql =
        "SELECT id, status, message_count, updated_at_ns, kind, owner_token_id "
        "FROM sessions WHERE 1";
    if (query.kind.has_value()) {
      sql += " AND kind = ?1";
    }
    if (query.owner_token_id.has_value()) {
      sql += " AND owner_token_id = ?2";
    }
    if (query.after.has_value()) {
      sql += " AND updated_at_ns <= ?4 AND (updated_at_ns < ?4 OR id > ?5)";
    }
    sql += " ORDER BY updated_at_ns DESC, id ASC LIMIT ?3";
    Prepared prepared_q(db, sql);
    SQLite::Statement& q = *prepared_q;
    if (query.kind.has_value()) {
      q.bind(1, Str(core::ToString(*query.kind)));
    }
    if (query.owner_token_id.has_value()) {
      q.bind(2, *query.owner_token_id);
    }
    q.bind(3, static_cast<std::int64_t>(limit));
    if (query.after.has_value()) {
      q.bind(4, static_cast<std::int64_t>(absl::ToUnixNanos(query.after->updated_at)));
      q.bind(5, query.after->id);
    }
    while (q.executeStep()) {
      const std::optional<core::SessionStatus> s =
          core::ParseSessionStatus(q.getColumn(1).getString());
      if (!s.has_value()) {
        return absl::DataLossError(
            absl::StrCat("stored session ", q.getColumn(0).getString(), " has an unknown status"));
      }
      const std::int64_t count = q.getColumn(2).getInt64();
      out.push_back(core::SessionSummary{
          q.getColumn(0).getString(), *s, static_cast<std::size_t>(count < 0 ? 0 : count),
          DecodeTime(q.getColumn(3).getInt64()),
          core::ParseSessionKind(q.getColumn(4).getString()).value_or(core::SessionKind::kChat),
          q.getColumn(5).getString()});
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::Status SqliteSessionStore::Delete(std::string_view id) {
  if (absl::Status s = core::ValidateSessionId(id); !s.ok()) {
    return s;
  }
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_del(db, "DELETE FROM sessions WHERE id = ?");
    SQLite::Statement& del = *prepared_del;
    del.bind(1, std::string(id));
    if (del.exec() == 0) {
      return absl::NotFoundError("no such session");
    }
    return absl::OkStatus();
  });
}

}  // namespace pulse::adapters::storage
