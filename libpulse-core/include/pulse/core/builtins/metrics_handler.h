// The pulse_metrics tool handler: the history of one resource's metrics over a look-back
// window (1h, 6h, 24h default, 7d, 30d ending at the clock's now), read from the Fleet port
// and, for a metric the fleet does not record, from the MetricsHistory port when one is
// wired. Requested names map to fleet metrics: cpu, memory, disk and usage as named, network
// to net_in and net_out; no metric means all of them. Result:
//   {"resource_id","range","metrics":[{"metric","unit","source":"fleet"|"history",
//    "points_count","first_at"?,"last_at"?,"min"?,"max"?,"avg"?,"last"?,
//    "points"?:[["<RFC 3339>",value],...]}],"unavailable":[names]}
// Statistics ignore non-finite samples; values are rounded to two decimals. summary=true
// omits "points"; otherwise each series is averaged down to at most
// kMaxMetricPointsPerResult / (number of series) points (at least kMinMetricPointsPerSeries).
// Failures: INVALID_INPUT for a non-canonical resource id; NOT_FOUND for an unknown resource,
// or a requested metric that neither port records; port failures as PortStatusToToolError.
// Thread-safe when the borrowed ports are.
#pragma once

#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::core {

inline constexpr std::size_t kMaxMetricPointsPerResult = 120;
inline constexpr std::size_t kMinMetricPointsPerSeries = 12;

class PulseMetricsHandler final : public ToolHandler {
 public:
  // Borrows the ports, which must outlive the handler. `history` is a nullable borrow: without
  // it only the fleet's series are read.
  PulseMetricsHandler(Fleet& fleet, const Clock& clock, const MetricsHistory* history);

  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  Fleet& fleet_;
  const Clock& clock_;
  const MetricsHistory* history_;
};

}  // namespace pulse::core
