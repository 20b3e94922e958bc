// SqliteMetricsHistory: the MetricsHistory port on the shared SQLite database, plus the write
// side the port leaves to the monitoring layer (Append, AppendBatch) and retention
// (DeleteBefore). Samples live in metric_samples with a covering index on
// (target_id, metric, at_ns, value), so a range query reads one contiguous index range.
// Values round-trip exactly, NaN and infinities included (NaN is stored as SQL NULL).
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::adapters::storage {

struct MetricPoint {
  std::string target_id;
  std::string metric;
  core::MetricSample sample;
};

class SqliteMetricsHistory final : public core::MetricsHistory {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteMetricsHistory>> Open(
      SqliteDatabase& database);

  explicit SqliteMetricsHistory(SqliteDatabase& database) : database_(database) {}

  // Samples with start <= at <= end, ordered by time (the port allows any order).
  absl::StatusOr<std::vector<core::MetricSample>> Samples(std::string_view target_id,
                                                          std::string_view metric, absl::Time start,
                                                          absl::Time end) const override;

  // Records one sample. InvalidArgument for an empty target or metric, text that is not
  // valid UTF-8 without NULs, or a time outside int64 nanoseconds. Duplicates are kept.
  [[nodiscard]] absl::Status Append(std::string_view target_id, std::string_view metric,
                                    const core::MetricSample& sample);

  // Records every point in one transaction (all or nothing); the same checks as Append.
  [[nodiscard]] absl::Status AppendBatch(const std::vector<MetricPoint>& points);

  // Deletes every sample older than `cutoff` and returns how many went.
  [[nodiscard]] absl::StatusOr<std::int64_t> DeleteBefore(absl::Time cutoff);

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
