#include "pulse/adapters/storage/sqlite_audit_log.h"

#include <SQLiteCpp/Statement.h>

#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

std::string Redacted(std::string_view text) { return SanitizeText(core::RedactSecrets(text)); }

std::string DetailsToJson(const std::map<std::string, std::string>& details) {
  // Two keys may redact to the same text; the later value wins, keeping the object valid.
  std::map<std::string, std::string> clean;
  for (const auto& [key, value] : details) {
    clean[Redacted(key)] =
        core::NamesSecret(key) ? std::string(core::kRedactedSecret) : Redacted(value);
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  for (const auto& [k, v] : clean) {
    writer.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
    writer.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

absl::StatusOr<std::map<std::string, std::string>> DetailsFromJson(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, {64 << 20, 2});
  if (!doc.ok() || !doc->IsObject()) {
    return absl::DataLossError("stored audit details do not decode");
  }
  std::map<std::string, std::string> details;
  const rapidjson::Document& object = *doc;  // const: clang finds non-const iterators ambiguous
  for (const auto& member : object.GetObject()) {
    if (!member.value.IsString()) {
      return absl::DataLossError("stored audit details are not all strings");
    }
    details[std::string(member.name.GetString(), member.name.GetStringLength())] =
        std::string(member.value.GetString(), member.value.GetStringLength());
  }
  return details;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteAuditLog>> SqliteAuditLog::Open(SqliteDatabase& database) {
  return std::make_unique<SqliteAuditLog>(database);
}

absl::Status SqliteAuditLog::Append(const core::AuditEntry& entry) {
  if (entry.category.empty() || entry.event.empty()) {
    return absl::InvalidArgumentError("an audit entry needs a category and an event");
  }
  absl::StatusOr<std::int64_t> at = EncodeTime(entry.at, "audit time");
  if (!at.ok()) {
    return at.status();
  }
  const std::string details = DetailsToJson(entry.details);
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_insert(
        db,
        "INSERT INTO audit_log (at_ns, category, event, subject_id, resource_id, actor_kind, "
        "actor_id, code, message, details_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    SQLite::Statement& insert = *prepared_insert;
    insert.bind(1, static_cast<std::int64_t>(*at));
    insert.bind(2, SanitizeText(entry.category));
    insert.bind(3, SanitizeText(entry.event));
    insert.bind(4, SanitizeText(entry.subject_id));
    insert.bind(5, SanitizeText(entry.resource_id));
    insert.bind(6, SanitizeText(entry.actor_kind));
    insert.bind(7, SanitizeText(entry.actor_id));
    insert.bind(8, SanitizeText(entry.code));
    insert.bind(9, Redacted(entry.message));
    insert.bind(10, details);
    insert.exec();
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<StoredAuditEntry>> SqliteAuditLog::List(const AuditQuery& query) const {
  if (query.limit == 0 || query.limit > 1000) {
    return absl::InvalidArgumentError("limit must be 1..1000");
  }
  std::string sql =
      "SELECT seq, at_ns, category, event, subject_id, resource_id, actor_kind, actor_id, code, "
      "message, details_json FROM audit_log WHERE seq > :after";
  if (query.subject_id.has_value()) {
    sql += " AND subject_id = :subject";
  }
  sql += " ORDER BY seq LIMIT :limit";
  std::vector<StoredAuditEntry> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, sql);
    SQLite::Statement& q = *prepared_q;
    q.bind(":after", static_cast<std::int64_t>(query.after_sequence));
    if (query.subject_id.has_value()) {
      q.bind(":subject", *query.subject_id);
    }
    q.bind(":limit", static_cast<std::int64_t>(query.limit));
    while (q.executeStep()) {
      StoredAuditEntry stored;
      stored.sequence = q.getColumn(0).getInt64();
      core::AuditEntry& e = stored.entry;
      e.at = DecodeTime(q.getColumn(1).getInt64());
      e.category = q.getColumn(2).getString();
      e.event = q.getColumn(3).getString();
      e.subject_id = q.getColumn(4).getString();
      e.resource_id = q.getColumn(5).getString();
      e.actor_kind = q.getColumn(6).getString();
      e.actor_id = q.getColumn(7).getString();
      e.code = q.getColumn(8).getString();
      e.message = q.getColumn(9).getString();
      absl::StatusOr<std::map<std::string, std::string>> details =
          DetailsFromJson(q.getColumn(10).getString());
      if (!details.ok()) {
        return details.status();
      }
      e.details = *std::move(details);
      out.push_back(std::move(stored));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

}  // namespace pulse::adapters::storage
