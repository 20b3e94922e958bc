// CompositeMetricsHistory: the MetricsHistory port of a fleet made of several sources
// (composite_fleet.h; docs/fleet.md, "Metric history"). A target that a source owns goes to that
// source's own history when it has one (a demo source's generated series: DemoFleetMetricsHistory),
// asked with the id the resource has in that source; every other target (the resources of
// sources without a history of their own, ids no source owns) goes to the fallback, the server's
// stored history. Borrows the fleet and the fallback; owns the per-source histories.
// Thread-safe as its parts are.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/agents/composite_fleet.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::adapters::agents {

class CompositeMetricsHistory final : public core::MetricsHistory {
 public:
  // `per_source`: by source name.
  CompositeMetricsHistory(CompositeFleet& fleet,
                          std::map<std::string, std::unique_ptr<core::MetricsHistory>> per_source,
                          const core::MetricsHistory& fallback);

  // InvalidArgument for an empty target or metric or end < start (whichever history answers).
  absl::StatusOr<std::vector<core::MetricSample>> Samples(std::string_view target_id,
                                                          std::string_view metric, absl::Time start,
                                                          absl::Time end) const override;

 private:
  CompositeFleet& fleet_;
  const std::map<std::string, std::unique_ptr<core::MetricsHistory>> per_source_;
  const core::MetricsHistory& fallback_;
};

}  // namespace pulse::adapters::agents
