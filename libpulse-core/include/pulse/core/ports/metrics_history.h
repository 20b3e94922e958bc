// MetricsHistory: read access to recorded utilization time series (percent used of memory,
// disk, a storage pool, ...), the input of the capacity forecast. Real implementations read
// the monitoring layer's store; tests use pulse::testing::InMemoryMetricsHistory.
// Thread-safety: implementations must be safe to call from any thread.
// Codes: InvalidArgument for an empty target or metric or end < start; Unavailable when the
// backing store cannot be read. An unknown target or metric is not an error: it has no
// samples (the forecast then reports "no history" instead of inventing one).
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::core {

// One observation: `value` is a percentage of capacity in use (0 = empty, 100 = full).
struct MetricSample {
  absl::Time at;
  double value = 0;

  friend bool operator==(const MetricSample&, const MetricSample&) = default;
};

class MetricsHistory {
 public:
  virtual ~MetricsHistory() = default;

  // Samples of `metric` recorded under `target_id` with start <= at <= end, in no particular
  // order. `target_id` is the monitoring layer's metrics-target id, which may differ from the
  // canonical resource id a finding is keyed by. Values are returned as
  // stored: callers must tolerate NaN, infinities and duplicate timestamps.
  [[nodiscard]] virtual absl::StatusOr<std::vector<MetricSample>> Samples(
      std::string_view target_id, std::string_view metric, absl::Time start,
      absl::Time end) const = 0;
};

}  // namespace pulse::core
