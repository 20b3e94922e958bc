#include "pulse/adapters/agents/composite_metrics_history.h"

#include <utility>

#include "pulse/core/model/resource_id.h"

namespace pulse::adapters::agents {

CompositeMetricsHistory::CompositeMetricsHistory(
    CompositeFleet& fleet, std::map<std::string, std::unique_ptr<core::MetricsHistory>> per_source,
    const core::MetricsHistory& fallback)
    : fleet_(fleet), per_source_(std::move(per_source)), fallback_(fallback) {}

absl::StatusOr<std::vector<core::MetricSample>> CompositeMetricsHistory::Samples(
    std::string_view target_id, std::string_view metric, absl::Time start, absl::Time end) const {
  if (!per_source_.empty() && core::IsCanonicalResourceId(target_id)) {
    absl::StatusOr<std::pair<std::string, std::string>> owner = fleet_.Locate(target_id);
    if (owner.ok()) {
      const auto history = per_source_.find(owner->first);
      if (history != per_source_.end() && history->second != nullptr) {
        return history->second->Samples(owner->second, metric, start, end);
      }
    }
  }
  return fallback_.Samples(target_id, metric, start, end);
}

}  // namespace pulse::adapters::agents
