// SqliteFindingStore: the FindingStore port on the shared SQLite database. A finding is kept
// as the core's JSON (findings/finding_json.h) beside the columns List filters on; Put is a
// conditional write (`INSERT ... ON CONFLICT DO NOTHING` for a create, `UPDATE ... WHERE id=?
// AND version=?` for an update), so the version check is the database's, not a read-then-write.
// PutBatch runs the same statements, prepared once, for every write in one transaction;
// GetBatch reads many findings by id in one read transaction.
// A finding is refused (InvalidArgument) unless its JSON decodes back to exactly the same
// value, so nothing is stored that would read back different (ill-formed UTF-8, NULs, fields
// beyond the codec's limits).
// WriteGeneration counts the Put and PutBatch calls made through this object (the server opens
// one per database, and findings are written only through it), so a cache keyed by it misses
// after any write; NextSnoozeEnd reads the same index range as an active page, and
// CountActiveUntilChange reads its snooze end with the counts.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::adapters::storage {

class SqliteFindingStore final : public core::FindingStore {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteFindingStore>> Open(
      SqliteDatabase& database);

  explicit SqliteFindingStore(SqliteDatabase& database) : database_(database) {}

  absl::StatusOr<core::StoredFinding> Get(std::string_view id) const override;
  absl::StatusOr<std::vector<core::StoredFinding>> GetBatch(
      const std::vector<std::string>& ids) const override;
  absl::StatusOr<std::vector<core::StoredFinding>> List(
      const core::FindingFilter& filter) const override;
  absl::StatusOr<std::vector<core::StoredFinding>> ListPage(
      const core::FindingPageQuery& query) const override;
  absl::StatusOr<std::vector<core::ActiveFindingCounts>> CountActiveByResource(
      absl::Time now, const std::vector<std::string>& resource_ids) const override;
  absl::StatusOr<std::vector<core::ActiveFindingKey>> ListActiveKeys(absl::Time now) const override;
  absl::StatusOr<std::vector<core::StoredFinding>> ListAwaitingFixOutcome() const override;
  absl::StatusOr<core::PatrolFindingCounts> CountPatrolFindings(absl::Time since,
                                                                absl::Time now) const override;
  std::optional<std::uint64_t> WriteGeneration() const override {
    return generation_.load(std::memory_order_acquire);
  }
  absl::StatusOr<std::optional<absl::Time>> NextSnoozeEnd(
      const core::FindingPageQuery& query,
      const std::optional<core::FindingPagePosition>& through) const override;
  // CountActiveByResource is this without the snooze end: one pass over the same ranges.
  absl::StatusOr<core::ActiveFindingCountsUntil> CountActiveUntilChange(
      absl::Time now, const std::vector<std::string>& resource_ids) const override;
  absl::StatusOr<std::int64_t> Put(const core::Finding& finding,
                                   std::int64_t expected_version) override;
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> PutBatch(
      const std::vector<core::FindingWrite>& writes) override;
  absl::StatusOr<std::vector<core::SuppressionRule>> ListSuppressionRules() const override;
  absl::Status PutSuppressionRule(const core::SuppressionRule& rule) override;
  absl::Status DeleteSuppressionRule(std::string_view id) override;

 private:
  SqliteDatabase& database_;
  std::atomic<std::uint64_t> generation_{0};  // Put and PutBatch calls returned so far
};

}  // namespace pulse::adapters::storage
