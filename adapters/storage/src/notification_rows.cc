#include "notification_rows.h"

#include <SQLiteCpp/Statement.h>

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

absl::StatusOr<std::vector<core::NotificationEventKind>> DecodeEvents(const std::string& json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json);
  if (!doc.ok() || !doc->IsArray()) {
    return absl::DataLossError("events_json is not a JSON array");
  }
  std::vector<core::NotificationEventKind> out;
  for (const rapidjson::Value& v : std::as_const(*doc).GetArray()) {
    std::optional<core::NotificationEventKind> kind =
        v.IsString() ? core::ParseNotificationEventKind(core::StringViewOf(v)) : std::nullopt;
    if (!kind.has_value()) {
      return absl::DataLossError("events_json names an unknown event kind");
    }
    out.push_back(*kind);
  }
  return out;
}

}  // namespace

std::string EncodeQuietHours(const std::optional<core::QuietHours>& quiet) {
  if (!quiet.has_value()) {
    return "";
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("start", quiet->start_minute);
  w.Member("end", quiet->end_minute);
  w.Member("time_zone", quiet->time_zone);
  w.EndObject();
  return w.Take();
}

absl::StatusOr<std::optional<core::QuietHours>> DecodeQuietHours(const std::string& json) {
  if (json.empty()) {
    return std::optional<core::QuietHours>();
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json);
  if (!doc.ok() || !doc->IsObject()) {
    return absl::DataLossError("quiet_json is not a JSON object");
  }
  const rapidjson::Value* start = core::GetMember(*doc, "start");
  const rapidjson::Value* end = core::GetMember(*doc, "end");
  const rapidjson::Value* zone = core::GetMember(*doc, "time_zone");
  if (start == nullptr || !start->IsInt() || end == nullptr || !end->IsInt() || zone == nullptr ||
      !zone->IsString()) {
    return absl::DataLossError("quiet_json lacks start, end or time_zone");
  }
  return std::optional<core::QuietHours>(
      core::QuietHours{start->GetInt(), end->GetInt(), std::string(core::StringViewOf(*zone))});
}

std::string EncodeEmail(const std::optional<core::EmailAddressing>& email) {
  if (!email.has_value()) {
    return "";
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("from", email->from);
  w.Key("to");
  w.StartArray();
  for (const std::string& to : email->to) {
    w.String(to);
  }
  w.EndArray();
  w.Member("username", email->username);
  w.EndObject();
  return w.Take();
}

absl::StatusOr<std::optional<core::EmailAddressing>> DecodeEmail(const std::string& json) {
  if (json.empty()) {
    return std::optional<core::EmailAddressing>();
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json);
  if (!doc.ok() || !doc->IsObject()) {
    return absl::DataLossError("email_json is not a JSON object");
  }
  const rapidjson::Value* from = core::GetMember(*doc, "from");
  const rapidjson::Value* to = core::GetMember(*doc, "to");
  const rapidjson::Value* username = core::GetMember(*doc, "username");
  if (from == nullptr || !from->IsString() || to == nullptr || !to->IsArray() ||
      username == nullptr || !username->IsString()) {
    return absl::DataLossError("email_json lacks from, to or username");
  }
  core::EmailAddressing email;
  email.from = std::string(core::StringViewOf(*from));
  email.username = std::string(core::StringViewOf(*username));
  for (const rapidjson::Value& v : std::as_const(*to).GetArray()) {
    if (!v.IsString()) {
      return absl::DataLossError("email_json's to holds a non-string");
    }
    email.to.emplace_back(core::StringViewOf(v));
  }
  if (absl::Status s = core::ValidateEmailAddressing(email); !s.ok()) {
    return absl::DataLossError(absl::StrCat("email_json: ", s.message()));
  }
  return std::optional<core::EmailAddressing>(std::move(email));
}

absl::StatusOr<std::vector<core::NotificationChannel>> LoadChannels(SQLite::Database& db) {
  Prepared prepared_q(db,
                      "SELECT name, kind, enabled, min_severity, events_json, quiet_json, "
                      "rate_per_minute, email_json FROM notification_channels ORDER BY name");
  SQLite::Statement& q = *prepared_q;
  std::vector<core::NotificationChannel> out;
  while (q.executeStep()) {
    core::NotificationChannel c;
    c.name = q.getColumn(0).getString();
    const std::optional<core::NotificationChannelKind> kind =
        core::ParseNotificationChannelKind(q.getColumn(1).getString());
    const std::optional<core::Severity> floor = core::ParseSeverity(q.getColumn(3).getString());
    absl::StatusOr<std::vector<core::NotificationEventKind>> events =
        DecodeEvents(q.getColumn(4).getString());
    absl::StatusOr<std::optional<core::QuietHours>> quiet =
        DecodeQuietHours(q.getColumn(5).getString());
    absl::StatusOr<std::optional<core::EmailAddressing>> email =
        DecodeEmail(q.getColumn(7).getString());
    if (!kind.has_value() || !floor.has_value() || !events.ok() || !quiet.ok() || !email.ok() ||
        email->has_value() != (*kind == core::NotificationChannelKind::kEmail)) {
      return absl::DataLossError(
          absl::StrCat("stored notification channel ", c.name, " does not decode"));
    }
    c.kind = *kind;
    c.enabled = q.getColumn(2).getInt() != 0;
    c.min_severity = *floor;
    c.events = *std::move(events);
    c.quiet_hours = *std::move(quiet);
    c.rate_per_minute = q.getColumn(6).getInt();
    c.email = *std::move(email);
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<int> QueueNotification(SQLite::Database& db, const core::NotificationEvent& event,
                                      absl::Time now) {
  if (event.key.empty() || event.key.size() > core::kMaxEventKeyBytes) {
    return absl::InvalidArgumentError("a notification's event key is 1 to 512 bytes");
  }
  {
    Prepared prepared_any(db, "SELECT 1 FROM notification_channels WHERE enabled = 1 LIMIT 1");
    SQLite::Statement& any = *prepared_any;
    if (!any.executeStep()) {
      return 0;
    }
  }
  absl::StatusOr<std::vector<core::NotificationChannel>> channels = LoadChannels(db);
  if (!channels.ok()) {
    return channels.status();
  }
  // Saturating: an event time outside int64 nanoseconds is still queued, due at once.
  const std::int64_t now_ns = absl::ToUnixNanos(now);
  Prepared prepared_insert(db,
                           "INSERT INTO notification_outbox (channel, event_kind, event_key, "
                           "payload_json, idempotency_key, attempts, next_attempt_ns, state, "
                           "created_at_ns) VALUES (?, ?, ?, ?, ?, 0, ?, 'pending', ?) "
                           "ON CONFLICT DO NOTHING");
  SQLite::Statement& insert = *prepared_insert;
  int added = 0;
  for (const core::NotificationChannel& channel : *channels) {
    if (!core::ChannelWants(channel, event)) {
      continue;
    }
    const std::string key = core::NotificationIdempotencyKey(channel.name, event.key);
    insert.reset();
    insert.bind(1, channel.name);
    insert.bind(2, std::string(core::ToString(event.kind)));
    insert.bind(3, event.key);
    insert.bind(4, core::NotificationPayloadJson(channel.name, key, event));
    insert.bind(5, key);
    insert.bind(6, static_cast<std::int64_t>(now_ns));
    insert.bind(7, static_cast<std::int64_t>(now_ns));
    added += insert.exec();
  }
  return added;
}

absl::Status QueueIfAny(SQLite::Database& db, const std::optional<core::NotificationEvent>& event) {
  if (!event.has_value()) {
    return absl::OkStatus();
  }
  absl::StatusOr<int> added = QueueNotification(db, *event, event->occurred_at);
  return added.status();
}

}  // namespace pulse::adapters::storage
