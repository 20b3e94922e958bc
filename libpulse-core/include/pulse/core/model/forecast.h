// The value of a capacity forecast (docs/architecture.md "Findings") as a finding carries it; how
// it is computed is findings/capacity_forecast.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pulse::core {

// What the history says. Wire strings: no_history, filling, at_capacity, no_fill_trend,
// stable, declining.
enum class ForecastReading { kNoHistory, kFilling, kAtCapacity, kNoFillTrend, kStable, kDeclining };

std::string_view ToString(ForecastReading reading);
std::optional<ForecastReading> ParseForecastReading(std::string_view text);

struct CapacityForecast {
  std::string metric;  // e.g. "disk", "memory", "usage"; may be empty
  ForecastReading reading = ForecastReading::kNoHistory;
  std::int64_t sample_count = 0;       // usable samples the reading is based on
  std::optional<double> current_pct;   // mean of the samples at the newest timestamp
  std::optional<double> daily_change;  // fitted slope, pp/day; absent for no_history
  // Present only for filling (>= 1) and at_capacity (0). Never present for flat or
  // declining series: they have no date at which they fill.
  std::optional<std::int64_t> days_to_full;

  friend bool operator==(const CapacityForecast&, const CapacityForecast&) = default;
};

}  // namespace pulse::core
