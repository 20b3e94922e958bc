#include "pulse/adapters/storage/sqlite_patrol_run_store.h"

#include <SQLiteCpp/Statement.h>

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "notification_rows.h"
#include "pulse/core/notifications/notification_events.h"
#include "pulse/core/status_macros.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

constexpr char kAutonomySetting[] = "autonomy";
constexpr char kThresholdsSetting[] = "thresholds";

absl::StatusOr<core::PatrolRunRecord> Decode(const std::string& json) {
  absl::StatusOr<core::PatrolRunRecord> record = core::PatrolRunFromJson(json);
  if (!record.ok()) {
    return absl::DataLossError(
        absl::StrCat("stored patrol run is unreadable: ", record.status().message()));
  }
  return record;
}

// The JSON value of one patrol_settings row; nullopt when none is saved.
absl::StatusOr<std::optional<std::string>> ReadSetting(SqliteDatabase& database, const char* name) {
  std::optional<std::string> json;
  absl::Status status = ReadTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT value_json FROM patrol_settings WHERE name = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, name);
    if (q.executeStep()) {
      json = q.getColumn(0).getString();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return json;
}

// Replaces one patrol_settings row.
absl::Status WriteSetting(SqliteDatabase& database, const char* name, const std::string& json) {
  return WriteTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(db,
                             "INSERT INTO patrol_settings (name, value_json) VALUES (?, ?) "
                             "ON CONFLICT (name) DO UPDATE SET value_json = excluded.value_json");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, name);
    upsert.bind(2, json);
    upsert.exec();
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqlitePatrolRunStore>> SqlitePatrolRunStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqlitePatrolRunStore>(database);
}

absl::Status SqlitePatrolRunStore::Put(const core::PatrolRunRecord& record) {
  if (record.id.empty()) {
    return absl::InvalidArgumentError("a patrol run needs an id");
  }
  absl::StatusOr<std::int64_t> started = EncodeTime(record.started_at, "started_at");
  if (!started.ok()) {
    return started.status();
  }
  const std::string json = core::PatrolRunToJson(record);
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(db,
                             "INSERT INTO patrol_runs (id, started_at_ns, status, record_json) "
                             "VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                             "started_at_ns = excluded.started_at_ns, status = excluded.status, "
                             "record_json = excluded.record_json");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, record.id);
    upsert.bind(2, static_cast<std::int64_t>(*started));
    upsert.bind(3, std::string(core::ToString(record.status)));
    upsert.bind(4, json);
    upsert.exec();
    Prepared prepared_prune(db,
                            "DELETE FROM patrol_runs WHERE id NOT IN (SELECT id FROM patrol_runs "
                            "ORDER BY started_at_ns DESC, id DESC LIMIT ?)");
    SQLite::Statement& prune = *prepared_prune;
    prune.bind(1, static_cast<std::int64_t>(core::kPatrolRunHistoryLimit));
    prune.exec();
    return QueueIfAny(db, core::PatrolRunWriteEvent(record));
  });
}

absl::StatusOr<core::PatrolRunRecord> SqlitePatrolRunStore::Get(std::string_view id) const {
  std::optional<std::string> json;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT record_json FROM patrol_runs WHERE id = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(id));
    if (q.executeStep()) {
      json = q.getColumn(0).getString();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!json.has_value()) {
    return absl::NotFoundError("no patrol run has this id");
  }
  return Decode(*json);
}

absl::StatusOr<std::vector<core::PatrolRunRecord>> SqlitePatrolRunStore::List(
    std::size_t limit) const {
  if (limit == 0 || limit > core::kPatrolRunHistoryLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be 1..", core::kPatrolRunHistoryLimit));
  }
  std::vector<std::string> rows;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT record_json FROM patrol_runs ORDER BY started_at_ns DESC, "
                        "id DESC LIMIT ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, static_cast<std::int64_t>(limit));
    while (q.executeStep()) {
      rows.push_back(q.getColumn(0).getString());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  std::vector<core::PatrolRunRecord> out;
  out.reserve(rows.size());
  for (const std::string& json : rows) {
    absl::StatusOr<core::PatrolRunRecord> record = Decode(json);
    if (!record.ok()) {
      return record.status();
    }
    out.push_back(*std::move(record));
  }
  return out;
}

absl::StatusOr<core::AutonomySettings> SqlitePatrolRunStore::LoadAutonomy() const {
  PULSE_ASSIGN_OR_RETURN(std::optional<std::string> json, ReadSetting(database_, kAutonomySetting));
  if (!json.has_value()) {
    return absl::NotFoundError("no autonomy settings saved");
  }
  absl::StatusOr<core::AutonomySettings> settings = core::AutonomySettingsFromStorageJson(*json);
  if (!settings.ok()) {
    return absl::DataLossError(
        absl::StrCat("stored autonomy settings are unreadable: ", settings.status().message()));
  }
  return settings;
}

absl::Status SqlitePatrolRunStore::SaveAutonomy(const core::AutonomySettings& settings) {
  const std::string json = core::AutonomySettingsToStorageJson(settings);
  return WriteSetting(database_, kAutonomySetting, json);
}

absl::StatusOr<core::PatrolThresholdSettings> SqlitePatrolRunStore::LoadThresholds() const {
  PULSE_ASSIGN_OR_RETURN(std::optional<std::string> json,
                         ReadSetting(database_, kThresholdsSetting));
  if (!json.has_value()) {
    return absl::NotFoundError("no thresholds saved");
  }
  absl::StatusOr<core::PatrolThresholdSettings> settings =
      core::PatrolThresholdsFromJson(*json, /*with_meta=*/true);
  if (!settings.ok()) {
    return absl::DataLossError(
        absl::StrCat("stored Patrol thresholds are unreadable: ", settings.status().message()));
  }
  return settings;
}

absl::Status SqlitePatrolRunStore::SaveThresholds(const core::PatrolThresholdSettings& settings) {
  const std::string json = core::PatrolThresholdsToJson(settings);
  return WriteSetting(database_, kThresholdsSetting, json);
}

}  // namespace pulse::adapters::storage
