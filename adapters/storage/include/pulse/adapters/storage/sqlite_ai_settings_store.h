// SqliteAiSettingsStore: the AI settings an operator set at runtime (PUT /api/settings/ai,
// docs/server.md), one row of the shared SQLite database (migration 11), and the metered spend
// per calendar month the monthly spend cap is checked against (migration 12). The API key is not
// part of them: pulse-server seals it in the credential store (sqlite_credential_store.h)
// under kAiSettingsCredential, so this table never holds a secret.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_database.h"

namespace pulse::adapters::storage {

// The credential-store name the runtime API key is sealed under.
inline constexpr char kAiSettingsCredential[] = "ai-settings";

// The largest spend cap accepted, in US dollars (the route's schema says the same).
inline constexpr double kMaxAiBudgetUsd = 1000000;

struct StoredAiSettings {
  std::string provider;           // registry name
  std::string base_url;           // "" = the provider's default
  std::string model;              // the chat model
  std::string patrol_model;       // "" = the chat model
  double monthly_budget_usd = 0;  // 0 = no cap
  double session_budget_usd = 0;  // 0 = no cap
  absl::Time updated_at;
  std::string updated_by;  // the token id that made the change

  friend bool operator==(const StoredAiSettings&, const StoredAiSettings&) = default;
};

class SqliteAiSettingsStore final {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteAiSettingsStore>> Open(
      SqliteDatabase& database);

  explicit SqliteAiSettingsStore(SqliteDatabase& database) : database_(database) {}

  // The saved settings; nullopt when none were ever saved. DataLoss for a row the schema
  // admits but Save never writes (a negative or non-finite cap); Unavailable when the database
  // cannot be read.
  [[nodiscard]] absl::StatusOr<std::optional<StoredAiSettings>> Load() const;

  // Replaces the saved settings. InvalidArgument (nothing written) for an empty provider, a
  // cap that is negative, not finite or over kMaxAiBudgetUsd, or a time out of range.
  [[nodiscard]] absl::Status Save(const StoredAiSettings& settings);

  // The metered spend recorded for a calendar month ("YYYY-MM", UTC), 0 when none was.
  // InvalidArgument for a malformed month; DataLoss for a row Add never writes.
  [[nodiscard]] absl::StatusOr<double> MonthSpend(std::string_view month) const;

  // Adds a priced call's cost to the month's total. InvalidArgument (nothing written) for a
  // malformed month or a cost that is negative, not finite or over kMaxAiBudgetUsd.
  [[nodiscard]] absl::Status AddSpend(std::string_view month, double cost_usd);

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
