#include "pulse/adapters/storage/sqlite_notification_outbox.h"

#include <SQLiteCpp/Statement.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "notification_rows.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

constexpr char kColumns[] =
    "SELECT id, channel, payload_json, idempotency_key, attempts, next_attempt_ns, state, "
    "last_error, created_at_ns, delivered_at_ns FROM notification_outbox";

// The event fields of a stored payload (core::NotificationPayloadJson wrote them).
absl::StatusOr<core::NotificationEvent> EventOfPayload(const std::string& payload) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(payload);
  if (!doc.ok() || !doc->IsObject()) {
    return absl::DataLossError("payload is not a JSON object");
  }
  const auto text = [&](const char* name) -> std::string {
    const rapidjson::Value* v = core::GetMember(*doc, name);
    return v != nullptr && v->IsString() ? std::string(core::StringViewOf(*v)) : std::string();
  };
  core::NotificationEvent e;
  const std::optional<core::NotificationEventKind> kind =
      core::ParseNotificationEventKind(text("event"));
  const std::optional<core::Severity> severity = core::ParseSeverity(text("severity"));
  const std::optional<absl::Time> at = core::ParseRfc3339(text("occurred_at"));
  if (!kind.has_value() || !severity.has_value() || !at.has_value()) {
    return absl::DataLossError("payload lacks its event, severity or time");
  }
  e.kind = *kind;
  e.severity = *severity;
  e.key = text("event_key");
  e.title = text("title");
  e.message = text("message");
  e.resource_id = text("resource_id");
  e.subject_id = text("subject_id");
  e.occurred_at = *at;
  return e;
}

absl::StatusOr<core::OutboxEntry> DecodeEntry(SQLite::Statement& q) {
  core::OutboxEntry out;
  out.id = q.getColumn(0).getInt64();
  out.channel = q.getColumn(1).getString();
  out.payload_json = q.getColumn(2).getString();
  absl::StatusOr<core::NotificationEvent> event = EventOfPayload(out.payload_json);
  const std::optional<core::OutboxState> state = core::ParseOutboxState(q.getColumn(6).getString());
  if (!event.ok() || !state.has_value()) {
    return absl::DataLossError(absl::StrCat("outbox row ", out.id, " does not decode"));
  }
  out.event = *std::move(event);
  out.idempotency_key = q.getColumn(3).getString();
  out.attempts = q.getColumn(4).getInt64();
  out.next_attempt_at = DecodeTime(q.getColumn(5).getInt64());
  out.state = *state;
  out.last_error = q.getColumn(7).getString();
  out.created_at = DecodeTime(q.getColumn(8).getInt64());
  out.delivered_at = OptionalTime(q.getColumn(9));
  return out;
}

absl::StatusOr<std::vector<core::OutboxEntry>> ReadEntries(
    const SqliteDatabase& database, const std::string& sql,
    absl::FunctionRef<void(SQLite::Statement&)> bind) {
  std::vector<core::OutboxEntry> out;
  absl::Status status = ReadTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    out.clear();
    Prepared prepared_q(db, sql);
    SQLite::Statement& q = *prepared_q;
    bind(q);
    while (q.executeStep()) {
      absl::StatusOr<core::OutboxEntry> entry = DecodeEntry(q);
      if (!entry.ok()) {
        return entry.status();
      }
      out.push_back(*std::move(entry));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

// Runs `update` (bound by `bind`) on a pending row: NotFound / FailedPrecondition otherwise.
absl::Status UpdatePending(const SqliteDatabase& database, std::int64_t id, const char* sql,
                           absl::FunctionRef<void(SQLite::Statement&)> bind) {
  return WriteTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_update(db, sql);
    SQLite::Statement& update = *prepared_update;
    bind(update);
    if (update.exec() == 1) {
      return absl::OkStatus();
    }
    Prepared prepared_state(db, "SELECT state FROM notification_outbox WHERE id = ?");
    SQLite::Statement& state = *prepared_state;
    state.bind(1, static_cast<std::int64_t>(id));
    if (!state.executeStep()) {
      return absl::NotFoundError(absl::StrCat("no outbox row ", id));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("outbox row ", id, " is ", state.getColumn(0).getString(), ", not pending"));
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteNotificationOutbox>> SqliteNotificationOutbox::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteNotificationOutbox>(database);
}

absl::StatusOr<int> SqliteNotificationOutbox::Enqueue(const core::NotificationEvent& event,
                                                      absl::Time now) {
  int added = 0;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    absl::StatusOr<int> n = QueueNotification(db, event, now);
    if (!n.ok()) {
      return n.status();
    }
    added = *n;
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return added;
}

absl::StatusOr<std::vector<core::OutboxEntry>> SqliteNotificationOutbox::Due(
    absl::Time now, std::size_t limit) const {
  return ReadEntries(database_,
                     absl::StrCat(kColumns,
                                  " WHERE state = 'pending' AND next_attempt_ns <= ? "
                                  "ORDER BY next_attempt_ns, id LIMIT ?"),
                     [&](SQLite::Statement& q) {
                       q.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(now)));
                       q.bind(2, static_cast<std::int64_t>(limit));
                     });
}

absl::StatusOr<std::optional<absl::Time>> SqliteNotificationOutbox::NextDue() const {
  std::optional<absl::Time> next;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT min(next_attempt_ns) FROM notification_outbox "
                        "WHERE state = 'pending'");
    SQLite::Statement& q = *prepared_q;
    next = q.executeStep() ? OptionalTime(q.getColumn(0)) : std::nullopt;
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return next;
}

absl::Status SqliteNotificationOutbox::MarkDelivered(std::int64_t id, absl::Time at) {
  return UpdatePending(database_, id,
                       "UPDATE notification_outbox SET state = 'delivered', attempts = attempts + "
                       "1, last_error = '', delivered_at_ns = ? WHERE id = ? AND state = 'pending'",
                       [&](SQLite::Statement& q) {
                         q.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(at)));
                         q.bind(2, static_cast<std::int64_t>(id));
                       });
}

absl::Status SqliteNotificationOutbox::MarkFailed(std::int64_t id, const std::string& error,
                                                  std::optional<absl::Time> retry_at) {
  const std::string bounded = SanitizeText(error.substr(0, 1024));
  if (!retry_at.has_value()) {
    return UpdatePending(database_, id,
                         "UPDATE notification_outbox SET state = 'dead', attempts = attempts + 1, "
                         "last_error = ? WHERE id = ? AND state = 'pending'",
                         [&](SQLite::Statement& q) {
                           q.bind(1, bounded);
                           q.bind(2, static_cast<std::int64_t>(id));
                         });
  }
  return UpdatePending(database_, id,
                       "UPDATE notification_outbox SET attempts = attempts + 1, last_error = ?, "
                       "next_attempt_ns = ? WHERE id = ? AND state = 'pending'",
                       [&](SQLite::Statement& q) {
                         q.bind(1, bounded);
                         q.bind(2, static_cast<std::int64_t>(absl::ToUnixNanos(*retry_at)));
                         q.bind(3, static_cast<std::int64_t>(id));
                       });
}

absl::Status SqliteNotificationOutbox::Defer(std::int64_t id, absl::Time until) {
  return UpdatePending(
      database_, id,
      "UPDATE notification_outbox SET next_attempt_ns = ? WHERE id = ? AND state = 'pending'",
      [&](SQLite::Statement& q) {
        q.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(until)));
        q.bind(2, static_cast<std::int64_t>(id));
      });
}

absl::StatusOr<std::vector<core::OutboxEntry>> SqliteNotificationOutbox::List(
    std::optional<core::OutboxState> state, std::size_t limit) const {
  const std::string sql = absl::StrCat(kColumns, state.has_value() ? " WHERE state = ?" : "",
                                       " ORDER BY id DESC LIMIT ?");
  return ReadEntries(database_, sql, [&](SQLite::Statement& q) {
    int i = 1;
    if (state.has_value()) {
      q.bind(i++, std::string(core::ToString(*state)));
    }
    q.bind(i, static_cast<std::int64_t>(limit));
  });
}

absl::StatusOr<core::OutboxCounts> SqliteNotificationOutbox::Counts() const {
  core::OutboxCounts counts;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    counts = {};
    Prepared prepared_q(db, "SELECT state, count(*) FROM notification_outbox GROUP BY state");
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      const std::string state = q.getColumn(0).getString();
      const std::int64_t n = q.getColumn(1).getInt64();
      if (state == "pending") {
        counts.pending = n;
      } else if (state == "delivered") {
        counts.delivered = n;
      } else {
        counts.dead = n;
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return counts;
}

absl::StatusOr<std::int64_t> SqliteNotificationOutbox::Prune(absl::Time delivered_before,
                                                             absl::Time dead_before) {
  std::int64_t deleted = 0;
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "DELETE FROM notification_outbox WHERE (state = 'delivered' AND "
                        "delivered_at_ns < ?) OR (state = 'dead' AND created_at_ns < ?)");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, static_cast<std::int64_t>(absl::ToUnixNanos(delivered_before)));
    q.bind(2, static_cast<std::int64_t>(absl::ToUnixNanos(dead_before)));
    deleted = q.exec();
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return deleted;
}

}  // namespace pulse::adapters::storage
