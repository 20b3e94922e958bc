// InMemoryMetricsHistory: a MetricsHistory whose series a test writes directly. Samples are
// returned in insertion order (not sorted), as the port allows. Thread-safe (one mutex).
// FailNext injects one error into the next query.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::testing {

class InMemoryMetricsHistory final : public core::MetricsHistory {
 public:
  absl::StatusOr<std::vector<core::MetricSample>> Samples(std::string_view target_id,
                                                          std::string_view metric, absl::Time start,
                                                          absl::Time end) const override {
    absl::MutexLock lock(&mu_);
    if (injected_.has_value()) {
      absl::Status status = std::move(*injected_);
      injected_.reset();
      return status;
    }
    if (target_id.empty() || metric.empty()) {
      return absl::InvalidArgumentError("target and metric are required");
    }
    if (end < start) {
      return absl::InvalidArgumentError("end is before start");
    }
    ++queries_;
    std::vector<core::MetricSample> out;
    auto it = series_.find({std::string(target_id), std::string(metric)});
    if (it == series_.end()) {
      return out;
    }
    for (const core::MetricSample& s : it->second) {
      if (s.at >= start && s.at <= end) {
        out.push_back(s);
      }
    }
    return out;
  }

  void Add(std::string_view target_id, std::string_view metric, core::MetricSample sample) {
    absl::MutexLock lock(&mu_);
    series_[{std::string(target_id), std::string(metric)}].push_back(sample);
  }

  void Set(std::string_view target_id, std::string_view metric,
           std::vector<core::MetricSample> samples) {
    absl::MutexLock lock(&mu_);
    series_[{std::string(target_id), std::string(metric)}] = std::move(samples);
  }

  void FailNext(absl::Status status) {
    absl::MutexLock lock(&mu_);
    injected_ = std::move(status);
  }

  int queries() const {
    absl::MutexLock lock(&mu_);
    return queries_;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, std::vector<core::MetricSample>> series_
      ABSL_GUARDED_BY(mu_);
  mutable std::optional<absl::Status> injected_ ABSL_GUARDED_BY(mu_);
  mutable int queries_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::testing
