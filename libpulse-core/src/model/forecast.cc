#include "pulse/core/model/forecast.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<ForecastReading>, 6> kReadings = {{
    {ForecastReading::kNoHistory, "no_history"},
    {ForecastReading::kFilling, "filling"},
    {ForecastReading::kAtCapacity, "at_capacity"},
    {ForecastReading::kNoFillTrend, "no_fill_trend"},
    {ForecastReading::kStable, "stable"},
    {ForecastReading::kDeclining, "declining"},
}};

}  // namespace

std::string_view ToString(ForecastReading reading) { return WireNameOf(kReadings, reading); }

std::optional<ForecastReading> ParseForecastReading(std::string_view text) {
  return WireValueOf(kReadings, text);
}

}  // namespace pulse::core
