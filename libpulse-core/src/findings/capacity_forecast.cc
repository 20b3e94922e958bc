#include "pulse/core/findings/capacity_forecast.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "fmt/format.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr double kSecondsPerDay = 86400.0;

std::string MetricPrefix(const CapacityForecast& f) {
  return f.metric.empty() ? std::string("capacity") : f.metric;
}

}  // namespace

void TrendAccumulator::Add(absl::Time at, double value) {
  if (!std::isfinite(value) || at == absl::InfiniteFuture() || at == absl::InfinitePast()) {
    ++rejected_;
    return;
  }
  if (n_ == 0) {
    origin_ = at;
    latest_ = at;
  }
  const double x = absl::ToDoubleSeconds(at - origin_) / kSecondsPerDay;
  ++n_;
  const double count = static_cast<double>(n_);
  const double dx = x - mean_x_;
  const double dy = value - mean_y_;
  mean_x_ += dx / count;
  mean_y_ += dy / count;
  // Welford co-moment updates: each uses one pre-update and one post-update deviation.
  m2x_ += dx * (x - mean_x_);
  m2y_ += dy * (value - mean_y_);
  cxy_ += dx * (value - mean_y_);

  if (at > latest_) {
    latest_ = at;
    latest_sum_ = 0;
    latest_count_ = 0;
  }
  if (at == latest_) {
    latest_sum_ += value;
    ++latest_count_;
  }
}

CapacityForecast TrendAccumulator::Finish(std::string_view metric) const {
  CapacityForecast f;
  f.metric = std::string(metric);
  f.sample_count = n_;
  if (latest_count_ > 0) {
    f.current_pct = latest_sum_ / static_cast<double>(latest_count_);
  }
  if (n_ < kMinForecastSamples || !(m2x_ > 0)) {
    f.reading = ForecastReading::kNoHistory;
    return f;
  }
  const double slope = cxy_ / m2x_;  // percentage points per day
  if (!std::isfinite(slope)) {
    f.reading = ForecastReading::kNoHistory;
    return f;
  }
  f.daily_change = slope;
  const double residual = std::max(0.0, m2y_ - cxy_ * cxy_ / m2x_);
  const double std_error = std::sqrt(residual / static_cast<double>(n_ - 2) / m2x_);
  const bool clear_trend =
      std::fabs(slope) > kFlatDailyChangePct && std::fabs(slope) >= kTrendSignificance * std_error;
  const double current = *f.current_pct;

  if (current >= 100.0) {
    f.reading = ForecastReading::kAtCapacity;
    f.days_to_full = 0;
  } else if (clear_trend && slope > 0) {
    f.reading = ForecastReading::kFilling;
    const double days = std::ceil((100.0 - current) / slope);
    f.days_to_full = days >= static_cast<double>(kMaxDaysToFull)
                         ? kMaxDaysToFull
                         : std::max<std::int64_t>(1, static_cast<std::int64_t>(days));
  } else if (clear_trend) {
    f.reading = ForecastReading::kDeclining;
  } else if (current >= kHighUtilizationPct) {
    f.reading = ForecastReading::kNoFillTrend;
  } else {
    f.reading = ForecastReading::kStable;
  }
  return f;
}

CapacityForecast ComputeCapacityForecast(std::string_view metric,
                                         std::span<const MetricSample> samples) {
  TrendAccumulator acc;
  for (const MetricSample& s : samples) {
    acc.Add(s);
  }
  return acc.Finish(metric);
}

bool MoreUrgent(const CapacityForecast& a, const CapacityForecast& b) {
  const bool a_fills = a.days_to_full.has_value();
  const bool b_fills = b.days_to_full.has_value();
  if (a_fills != b_fills) {
    return a_fills;
  }
  if (a_fills) {
    return *a.days_to_full < *b.days_to_full;
  }
  const bool a_known = a.daily_change.has_value();
  const bool b_known = b.daily_change.has_value();
  if (a_known != b_known) {
    return a_known;
  }
  return a_known && *a.daily_change > *b.daily_change;
}

std::string DescribeForecast(const CapacityForecast& f) {
  const std::string name = MetricPrefix(f);
  const double current = f.current_pct.value_or(0);
  const double daily = f.daily_change.value_or(0);
  switch (f.reading) {
    case ForecastReading::kNoHistory:
      return fmt::format("{} no history: {} usable samples (need {}); no forecast", name,
                         f.sample_count, kMinForecastSamples);
    case ForecastReading::kFilling:
      return fmt::format("{} filling: {:.1f}% used, {:+.2f} pp/day, full in ~{} days", name,
                         current, daily, f.days_to_full.value_or(kMaxDaysToFull));
    case ForecastReading::kAtCapacity:
      return fmt::format("{} at capacity: {:.1f}% used", name, current);
    case ForecastReading::kNoFillTrend:
      return fmt::format("{} no fill trend: {:.1f}% used, flat ({:+.2f} pp/day)", name, current,
                         daily);
    case ForecastReading::kStable:
      return fmt::format("{} stable: {:.1f}% used, flat ({:+.2f} pp/day)", name, current, daily);
    case ForecastReading::kDeclining:
      return fmt::format("{} declining: {:.1f}% used, {:+.2f} pp/day", name, current, daily);
  }
  return fmt::format("{}: unknown reading", name);
}

}  // namespace pulse::core
