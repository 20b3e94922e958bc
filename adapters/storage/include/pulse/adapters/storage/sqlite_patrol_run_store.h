// SqlitePatrolRunStore: the PatrolRunStore port on the shared SQLite database (migration 4):
// patrol_runs holds the core's PatrolRunRecord JSON (patrol/patrol_run.h) next to the columns
// List orders by; every Put prunes to the newest kPatrolRunHistoryLimit in the same
// transaction. patrol_settings holds the autonomy settings and the thresholds, one JSON row
// each.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/patrol_run_store.h"

namespace pulse::adapters::storage {

class SqlitePatrolRunStore final : public core::PatrolRunStore {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqlitePatrolRunStore>> Open(
      SqliteDatabase& database);

  explicit SqlitePatrolRunStore(SqliteDatabase& database) : database_(database) {}

  absl::Status Put(const core::PatrolRunRecord& record) override;
  absl::StatusOr<core::PatrolRunRecord> Get(std::string_view id) const override;
  absl::StatusOr<std::vector<core::PatrolRunRecord>> List(std::size_t limit) const override;
  absl::StatusOr<core::AutonomySettings> LoadAutonomy() const override;
  absl::Status SaveAutonomy(const core::AutonomySettings& settings) override;
  absl::StatusOr<core::PatrolThresholdSettings> LoadThresholds() const override;
  absl::Status SaveThresholds(const core::PatrolThresholdSettings& settings) override;

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
