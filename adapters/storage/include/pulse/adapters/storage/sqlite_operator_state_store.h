// SqliteOperatorStateStore: the OperatorStateStore port on the shared SQLite database, one row
// per canonical resource id (operator_state; local_only since migration 3, with a partial index
// for LocalOnlyResourceIds). Set validates with ValidateOperatorState and
// replaces the whole row (upsert); times are stored as int64 nanoseconds and must fit them.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/write_counter.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::adapters::storage {

class SqliteOperatorStateStore final : public core::OperatorStateStore {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteOperatorStateStore>> Open(
      SqliteDatabase& database);

  explicit SqliteOperatorStateStore(SqliteDatabase& database) : database_(database) {}

  absl::StatusOr<core::OperatorState> Get(std::string_view resource_id) override;
  // One read transaction and one prepared statement: a primary-key seek per id.
  absl::StatusOr<std::vector<core::OperatorState>> GetMany(
      const std::vector<std::string>& resource_ids) override;
  absl::Status Set(const core::OperatorState& state) override;
  absl::Status Clear(std::string_view resource_id) override;
  absl::StatusOr<std::vector<std::string>> LocalOnlyResourceIds() override;
  absl::StatusOr<std::vector<core::OperatorState>> WithNotes() override;
  // Counts the Set and Clear calls made through this object (the server opens one per
  // database, and operator state is written only through it).
  std::optional<std::uint64_t> WriteGeneration() const override { return writes_.Read(); }

 private:
  SqliteDatabase& database_;
  WriteCounter writes_;
};

}  // namespace pulse::adapters::storage
