#include "pulse/adapters/storage/sqlite_ai_settings_store.h"

#include <SQLiteCpp/Statement.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

bool ValidBudget(double usd) { return std::isfinite(usd) && usd >= 0 && usd <= kMaxAiBudgetUsd; }

// "YYYY-MM" with a month of 01..12.
bool ValidMonth(std::string_view month) {
  if (month.size() != 7 || month[4] != '-') {
    return false;
  }
  for (std::size_t i : {0, 1, 2, 3, 5, 6}) {
    if (month[i] < '0' || month[i] > '9') {
      return false;
    }
  }
  const int m = (month[5] - '0') * 10 + (month[6] - '0');
  return m >= 1 && m <= 12;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteAiSettingsStore>> SqliteAiSettingsStore::Open(
    SqliteDatabase& database) {
  return std::make_unique<SqliteAiSettingsStore>(database);
}

absl::StatusOr<std::optional<StoredAiSettings>> SqliteAiSettingsStore::Load() const {
  std::optional<StoredAiSettings> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT provider, base_url, model, patrol_model, monthly_budget_usd, "
                        "session_budget_usd, updated_at_ns, updated_by FROM ai_settings "
                        "WHERE id = 1");
    SQLite::Statement& q = *prepared_q;
    if (q.executeStep()) {
      StoredAiSettings s;
      s.provider = q.getColumn(0).getString();
      s.base_url = q.getColumn(1).getString();
      s.model = q.getColumn(2).getString();
      s.patrol_model = q.getColumn(3).getString();
      s.monthly_budget_usd = q.getColumn(4).getDouble();
      s.session_budget_usd = q.getColumn(5).getDouble();
      s.updated_at = DecodeTime(q.getColumn(6).getInt64());
      s.updated_by = q.getColumn(7).getString();
      out = std::move(s);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (out.has_value() && (!ValidBudget(out->monthly_budget_usd) ||
                          !ValidBudget(out->session_budget_usd) || out->provider.empty())) {
    return absl::DataLossError("the stored AI settings are not ones pulse-server writes");
  }
  return out;
}

absl::Status SqliteAiSettingsStore::Save(const StoredAiSettings& settings) {
  if (settings.provider.empty()) {
    return absl::InvalidArgumentError("AI settings need a provider");
  }
  if (!ValidBudget(settings.monthly_budget_usd) || !ValidBudget(settings.session_budget_usd)) {
    return absl::InvalidArgumentError("a spend cap must be a number from 0 to 1000000");
  }
  absl::StatusOr<std::int64_t> at = EncodeTime(settings.updated_at, "updated_at");
  if (!at.ok()) {
    return at.status();
  }
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(
        db,
        "INSERT INTO ai_settings (id, provider, base_url, model, patrol_model, "
        "monthly_budget_usd, session_budget_usd, updated_at_ns, updated_by) "
        "VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
        "provider = excluded.provider, base_url = excluded.base_url, model = excluded.model, "
        "patrol_model = excluded.patrol_model, monthly_budget_usd = excluded.monthly_budget_usd, "
        "session_budget_usd = excluded.session_budget_usd, "
        "updated_at_ns = excluded.updated_at_ns, updated_by = excluded.updated_by");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, settings.provider);
    upsert.bind(2, settings.base_url);
    upsert.bind(3, settings.model);
    upsert.bind(4, settings.patrol_model);
    upsert.bind(5, settings.monthly_budget_usd);
    upsert.bind(6, settings.session_budget_usd);
    upsert.bind(7, static_cast<std::int64_t>(*at));
    upsert.bind(8, settings.updated_by);
    upsert.exec();
    return absl::OkStatus();
  });
}

absl::StatusOr<double> SqliteAiSettingsStore::MonthSpend(std::string_view month) const {
  if (!ValidMonth(month)) {
    return absl::InvalidArgumentError("a spend month is YYYY-MM");
  }
  double total = 0;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT cost_usd FROM ai_spend WHERE month = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(month));
    if (q.executeStep()) {
      total = q.getColumn(0).getDouble();
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!std::isfinite(total) || total < 0) {
    return absl::DataLossError("the stored monthly spend is not one pulse-server writes");
  }
  return total;
}

absl::Status SqliteAiSettingsStore::AddSpend(std::string_view month, double cost_usd) {
  if (!ValidMonth(month)) {
    return absl::InvalidArgumentError("a spend month is YYYY-MM");
  }
  if (!ValidBudget(cost_usd)) {
    return absl::InvalidArgumentError("a call's cost must be a number from 0 to 1000000");
  }
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(db,
                             "INSERT INTO ai_spend (month, cost_usd, calls) VALUES (?, ?, 1) "
                             "ON CONFLICT (month) DO UPDATE SET cost_usd = cost_usd + "
                             "excluded.cost_usd, calls = calls + 1");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, std::string(month));
    upsert.bind(2, cost_usd);
    upsert.exec();
    return absl::OkStatus();
  });
}

}  // namespace pulse::adapters::storage
