#include "pulse/core/findings/capacity_forecast.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace pulse::core {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

// n hourly samples of start + per_day * t, plus optional deterministic noise in [-amp, amp].
std::vector<MetricSample> Series(int n, double start, double per_day, double noise_amp = 0) {
  std::vector<MetricSample> out;
  std::uint32_t state = 12345;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;  // a fixed LCG: the same noise on every run
    const double unit = static_cast<double>(state >> 8) / static_cast<double>(1u << 24);
    const double noise = noise_amp * (2 * unit - 1);
    out.push_back({kT0 + absl::Hours(i), start + per_day * (i / 24.0) + noise});
  }
  return out;
}

TEST_CASE("a linear fill gives its slope per day and the days until full", "[core][findings]") {
  // 60% rising 2 points a day for 48 hours: 63.9...% now.
  const auto samples = Series(48, 60, 2);
  const CapacityForecast f = ComputeCapacityForecast("disk", samples);
  CHECK(f.reading == ForecastReading::kFilling);
  CHECK(f.sample_count == 48);
  REQUIRE(f.daily_change.has_value());
  CHECK(*f.daily_change == Approx(2.0).epsilon(1e-9));
  REQUIRE(f.current_pct.has_value());
  CHECK(*f.current_pct == Approx(60 + 2 * 47 / 24.0));
  REQUIRE(f.days_to_full.has_value());
  CHECK(*f.days_to_full == static_cast<std::int64_t>(std::ceil((100 - *f.current_pct) / 2.0)));
  CHECK(*f.days_to_full == 19);
}

TEST_CASE("a flat series at or above eighty percent reads no fill trend", "[core][findings]") {
  const CapacityForecast f = ComputeCapacityForecast("disk", Series(48, 85, 0));
  CHECK(f.reading == ForecastReading::kNoFillTrend);
  CHECK(f.daily_change == Approx(0.0).margin(1e-12));
  CHECK_FALSE(f.days_to_full.has_value());
  CHECK(ComputeCapacityForecast("disk", Series(48, 80, 0)).reading ==
        ForecastReading::kNoFillTrend);
  CHECK(ComputeCapacityForecast("disk", Series(48, 79.9, 0)).reading == ForecastReading::kStable);
}

TEST_CASE("a slope within the flat band is flat even when perfectly clean", "[core][findings]") {
  const CapacityForecast slow = ComputeCapacityForecast("disk", Series(48, 85, 0.09));
  CHECK(slow.reading == ForecastReading::kNoFillTrend);
  CHECK(*slow.daily_change == Approx(0.09));
  CHECK_FALSE(slow.days_to_full.has_value());
  const CapacityForecast faster = ComputeCapacityForecast("disk", Series(48, 85, 0.11));
  CHECK(faster.reading == ForecastReading::kFilling);
  CHECK(faster.days_to_full.has_value());
}

TEST_CASE("noise around a flat high series is not mistaken for a trend", "[core][findings]") {
  const CapacityForecast f = ComputeCapacityForecast("disk", Series(48, 86, 0, 3.0));
  CHECK(f.reading == ForecastReading::kNoFillTrend);
  CHECK_FALSE(f.days_to_full.has_value());
  REQUIRE(f.daily_change.has_value());
  CHECK(std::fabs(*f.daily_change) < 3.0);
}

TEST_CASE("a noisy but real fill is still found with its rate", "[core][findings]") {
  const CapacityForecast f = ComputeCapacityForecast("disk", Series(48, 70, 5, 2.0));
  CHECK(f.reading == ForecastReading::kFilling);
  REQUIRE(f.daily_change.has_value());
  CHECK(*f.daily_change == Approx(5.0).margin(0.6));
  REQUIRE(f.days_to_full.has_value());
  CHECK(*f.days_to_full >= 3);
  CHECK(*f.days_to_full <= 7);
}

TEST_CASE("four samples are no history and five are enough", "[core][findings]") {
  const CapacityForecast four = ComputeCapacityForecast("disk", Series(4, 60, 24));
  CHECK(four.reading == ForecastReading::kNoHistory);
  CHECK(four.sample_count == 4);
  CHECK_FALSE(four.daily_change.has_value());
  CHECK_FALSE(four.days_to_full.has_value());
  REQUIRE(four.current_pct.has_value());  // the newest observation is still a fact
  CHECK(*four.current_pct == Approx(63));
  const CapacityForecast five = ComputeCapacityForecast("disk", Series(5, 60, 24));
  CHECK(five.reading == ForecastReading::kFilling);
  CHECK(*five.daily_change == Approx(24));
  CHECK(*five.days_to_full == 2);  // (100 - 64) / 24 = 1.5 -> 2
  const CapacityForecast none = ComputeCapacityForecast("disk", {});
  CHECK(none.reading == ForecastReading::kNoHistory);
  CHECK_FALSE(none.current_pct.has_value());
}

TEST_CASE("a falling series has no fill date", "[core][findings]") {
  const CapacityForecast f = ComputeCapacityForecast("memory", Series(48, 90, -3));
  CHECK(f.reading == ForecastReading::kDeclining);
  CHECK(*f.daily_change == Approx(-3));
  CHECK_FALSE(f.days_to_full.has_value());
}

TEST_CASE("a full resource reads at capacity with zero days left", "[core][findings]") {
  const CapacityForecast flat_full = ComputeCapacityForecast("disk", Series(10, 100, 0));
  CHECK(flat_full.reading == ForecastReading::kAtCapacity);
  CHECK(flat_full.days_to_full == 0);
  const CapacityForecast over = ComputeCapacityForecast("disk", Series(10, 99, 12));
  CHECK(over.reading == ForecastReading::kAtCapacity);
  CHECK(over.days_to_full == 0);
}

TEST_CASE("non-finite samples are ignored and counted", "[core][findings]") {
  auto samples = Series(6, 60, 2);
  samples.push_back({kT0 + absl::Hours(100), std::numeric_limits<double>::quiet_NaN()});
  samples.push_back({kT0 + absl::Hours(101), std::numeric_limits<double>::infinity()});
  samples.push_back({absl::InfiniteFuture(), 50});
  TrendAccumulator acc;
  for (const auto& s : samples) {
    acc.Add(s);
  }
  CHECK(acc.accepted() == 6);
  CHECK(acc.rejected() == 3);
  const CapacityForecast f = acc.Finish("disk");
  CHECK(f.reading == ForecastReading::kFilling);
  CHECK(*f.daily_change == Approx(2));
  CHECK(*f.current_pct == Approx(60 + 2 * 5 / 24.0));
  // Only NaNs: no history, no current value.
  std::vector<MetricSample> junk(10, {kT0, std::numeric_limits<double>::quiet_NaN()});
  const CapacityForecast nothing = ComputeCapacityForecast("disk", junk);
  CHECK(nothing.reading == ForecastReading::kNoHistory);
  CHECK(nothing.sample_count == 0);
  CHECK_FALSE(nothing.current_pct.has_value());
}

TEST_CASE("sample order does not change the forecast", "[core][findings]") {
  auto samples = Series(48, 50, 4, 1.0);
  const CapacityForecast sorted = ComputeCapacityForecast("disk", samples);
  std::reverse(samples.begin(), samples.end());
  const CapacityForecast reversed = ComputeCapacityForecast("disk", samples);
  std::rotate(samples.begin(), samples.begin() + 17, samples.end());
  const CapacityForecast rotated = ComputeCapacityForecast("disk", samples);
  for (const CapacityForecast* f : {&reversed, &rotated}) {
    CHECK(f->reading == sorted.reading);
    CHECK(*f->daily_change == Approx(*sorted.daily_change).epsilon(1e-9));
    CHECK(*f->current_pct == Approx(*sorted.current_pct));
    CHECK(f->days_to_full == sorted.days_to_full);
  }
}

TEST_CASE("duplicate timestamps are extra points and the newest ones are averaged",
          "[core][findings]") {
  std::vector<MetricSample> samples;
  for (int i = 0; i < 10; ++i) {
    samples.push_back({kT0 + absl::Hours(24 * i), 50.0 + i});
    samples.push_back({kT0 + absl::Hours(24 * i), 50.0 + i});
  }
  samples.push_back({kT0 + absl::Hours(24 * 9), 60.0});  // newest instant: 59, 59, 60
  const CapacityForecast f = ComputeCapacityForecast("disk", samples);
  CHECK(f.sample_count == 21);
  CHECK(*f.current_pct == Approx((59.0 + 59.0 + 60.0) / 3));
  CHECK(*f.daily_change == Approx(1.0).margin(0.05));
  // Every sample at one instant has no time axis to fit: no history.
  std::vector<MetricSample> same(8, {kT0, 70});
  CHECK(ComputeCapacityForecast("disk", same).reading == ForecastReading::kNoHistory);
}

TEST_CASE("a million points fit in one pass without losing precision", "[core][findings]") {
  // A year 9000 origin makes absolute seconds large; the fit works on deviations.
  const absl::Time origin = absl::FromUnixSeconds(221'000'000'000);
  TrendAccumulator acc;
  constexpr int kPoints = 1'000'000;
  for (int i = 0; i < kPoints; ++i) {
    acc.Add(origin + absl::Seconds(i), 10.0 + 0.5 * (i / 86400.0));
  }
  const CapacityForecast f = acc.Finish("usage");
  CHECK(f.sample_count == kPoints);
  CHECK(f.reading == ForecastReading::kFilling);
  CHECK(*f.daily_change == Approx(0.5).epsilon(1e-9));
  CHECK(*f.current_pct == Approx(10.0 + 0.5 * ((kPoints - 1) / 86400.0)));
}

TEST_CASE("days to full is capped for an almost flat fill", "[core][findings]") {
  std::vector<MetricSample> samples;
  for (int i = 0; i < 10; ++i) {
    samples.push_back({kT0 + absl::Hours(24 * 365 * i), -10000.0 + 0.2 * 365 * i});
  }
  const CapacityForecast f = ComputeCapacityForecast("disk", samples);
  CHECK(f.reading == ForecastReading::kFilling);
  CHECK(f.days_to_full == kMaxDaysToFull);
}

TEST_CASE("forecast urgency prefers a fill date then the sooner one", "[core][findings]") {
  CapacityForecast soon;
  soon.reading = ForecastReading::kFilling;
  soon.days_to_full = 3;
  soon.daily_change = 5;
  CapacityForecast later = soon;
  later.days_to_full = 20;
  CapacityForecast flat;
  flat.reading = ForecastReading::kNoFillTrend;
  flat.daily_change = 0.05;
  CapacityForecast falling = flat;
  falling.reading = ForecastReading::kDeclining;
  falling.daily_change = -2;
  CapacityForecast none;
  CHECK(MoreUrgent(soon, later));
  CHECK_FALSE(MoreUrgent(later, soon));
  CHECK(MoreUrgent(later, flat));
  CHECK(MoreUrgent(flat, falling));
  CHECK(MoreUrgent(falling, none));
  CHECK_FALSE(MoreUrgent(none, none));
}

TEST_CASE("forecast descriptions state the reading honestly", "[core][findings]") {
  CHECK(DescribeForecast(ComputeCapacityForecast("disk", Series(3, 50, 1))) ==
        "disk no history: 3 usable samples (need 5); no forecast");
  CHECK(DescribeForecast(ComputeCapacityForecast("disk", Series(48, 85, 0))) ==
        "disk no fill trend: 85.0% used, flat (+0.00 pp/day)");
  CHECK(DescribeForecast(ComputeCapacityForecast("disk", Series(5, 60, 24))) ==
        "disk filling: 64.0% used, +24.00 pp/day, full in ~2 days");
  CHECK(ToString(ForecastReading::kNoFillTrend) == "no_fill_trend");
  CHECK(ParseForecastReading("at_capacity") == ForecastReading::kAtCapacity);
  CHECK_FALSE(ParseForecastReading("full").has_value());
}

}  // namespace
}  // namespace pulse::core
