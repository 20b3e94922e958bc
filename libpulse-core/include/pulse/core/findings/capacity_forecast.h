// The deterministic capacity forecast (docs/architecture.md "Findings"): an ordinary least-squares
// line through (time, percent used) gives the fill rate in percentage points per day and the days
// until 100 %. Readings are honest: too little history is reported as such and never turned
// into a forecast, and a high but flat series reads "no fill trend". Pure functions and a
// value-type accumulator (thread-compatible); no port is touched here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "pulse/core/model/forecast.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::core {

// Fewer usable samples than this (or samples that all share one timestamp) is "no history".
inline constexpr std::int64_t kMinForecastSamples = 5;
// A fitted slope is a trend only when |daily_change| exceeds this many percentage points per
// day AND is at least kTrendSignificance standard errors of the fitted slope away from zero
// (about 99.7 % confidence); anything else is "flat". The second test keeps noise around a
// steady level from reading as a fill trend.
inline constexpr double kFlatDailyChangePct = 0.1;
inline constexpr double kTrendSignificance = 3.0;
// At or above this, a flat series reads "no fill trend" rather than "stable".
inline constexpr double kHighUtilizationPct = 80.0;
// days_to_full is capped here (100 years) so an almost-flat slope cannot overflow.
inline constexpr std::int64_t kMaxDaysToFull = 36500;

// Single-pass, order-independent least squares over (time, value) samples. The x axis is real
// time in days (not the sample index), so gaps and unsorted input are handled; duplicate
// timestamps are simply more points. Uses Welford-style co-moments, so a million points with
// large absolute times stay numerically stable in O(1) memory.
class TrendAccumulator {
 public:
  // Ignores (and counts as rejected) non-finite values and infinite times.
  void Add(absl::Time at, double value);
  void Add(const MetricSample& sample) { Add(sample.at, sample.value); }

  std::int64_t accepted() const { return n_; }
  std::int64_t rejected() const { return rejected_; }

  // The reading for everything added so far.
  CapacityForecast Finish(std::string_view metric) const;

 private:
  std::int64_t n_ = 0;
  std::int64_t rejected_ = 0;
  absl::Time origin_;  // time of the first accepted sample; x is measured from here
  double mean_x_ = 0;  // days
  double mean_y_ = 0;  // percent
  double m2x_ = 0;     // sum of squared x deviations
  double m2y_ = 0;     // sum of squared y deviations
  double cxy_ = 0;     // sum of x*y co-deviations
  absl::Time latest_;  // newest timestamp seen
  double latest_sum_ = 0;
  std::int64_t latest_count_ = 0;
};

// Convenience: feeds every sample to a TrendAccumulator.
CapacityForecast ComputeCapacityForecast(std::string_view metric,
                                         std::span<const MetricSample> samples);

// Urgency order for keeping one forecast per resource (docs/architecture.md "Findings"): a series
// with a fill date (filling, at_capacity) beats one without; among those, fewer days_to_full wins;
// among the rest, the larger daily_change wins; no_history is least urgent. Ties keep the first.
bool MoreUrgent(const CapacityForecast& a, const CapacityForecast& b);

// One line for model context and operator text, e.g.
// "disk filling: 85.0% used, +1.50 pp/day, full in ~10 days" or
// "disk no fill trend: 86.0% used, flat (+0.02 pp/day)" or
// "disk no history: 3 usable samples (need 5); no forecast".
std::string DescribeForecast(const CapacityForecast& forecast);

}  // namespace pulse::core
