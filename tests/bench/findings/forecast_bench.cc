// The capacity forecast over a long metric history, against a plain least-squares loop over the
// same vector in the same run:
//   BM_CapacityForecast/<n>      — ComputeCapacityForecast("disk", samples): the single-pass,
//                                  Welford-style TrendAccumulator (finite checks, latest-time
//                                  tracking, the significance test) and the reading;
//   BM_Baseline_LeastSquares/<n> — the textbook fit: sums of x, y, x*y and x*x over the same
//                                  samples (x in days from the first sample, as the forecast
//                                  converts it), then slope = (n*Sxy - Sx*Sy) / (n*Sxx - Sx^2).
// The samples: one reading a minute for n minutes (1M is about 694 days), a disk filling at
// 0.12 pp/day from 5 % with a deterministic +-1 pp ripple. Both fits must agree on the slope
// (the benchmark reports an error otherwise: a wrong fit makes the ratio meaningless). Items are
// samples.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/ports/metrics_history.h"
#include "time_reporter.h"

namespace {

namespace core = pulse::core;

constexpr double kSecondsPerDay = 86400.0;

std::vector<core::MetricSample> Samples(std::int64_t n) {
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  std::vector<core::MetricSample> samples;
  samples.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double days = static_cast<double>(i) / 1440.0;
    const double ripple = static_cast<double>((i * 7919) % 200 - 100) / 100.0;
    samples.push_back(core::MetricSample{t0 + absl::Minutes(i), 5.0 + 0.12 * days + ripple});
  }
  return samples;
}

double LeastSquaresSlope(const std::vector<core::MetricSample>& samples) {
  const absl::Time origin = samples.front().at;
  double sx = 0;
  double sy = 0;
  double sxy = 0;
  double sxx = 0;
  for (const core::MetricSample& s : samples) {
    const double x = absl::ToDoubleSeconds(s.at - origin) / kSecondsPerDay;
    sx += x;
    sy += s.value;
    sxy += x * s.value;
    sxx += x * x;
  }
  const double n = static_cast<double>(samples.size());
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

void BM_CapacityForecast(benchmark::State& state) {
  const std::vector<core::MetricSample> samples = Samples(state.range(0));
  core::CapacityForecast forecast;
  for (auto _ : state) {
    forecast = core::ComputeCapacityForecast("disk", samples);
    benchmark::DoNotOptimize(forecast.daily_change);
  }
  const double expected = LeastSquaresSlope(samples);
  if (forecast.reading != core::ForecastReading::kFilling || !forecast.daily_change.has_value() ||
      std::abs(*forecast.daily_change - expected) > 1e-6 * std::abs(expected)) {
    std::fprintf(stderr, "forecast_bench: reading %s, daily_change %.9f, plain fit %.9f\n",
                 std::string(core::ToString(forecast.reading)).c_str(),
                 forecast.daily_change.value_or(0), expected);
    state.SkipWithError("the forecast disagrees with the plain least-squares fit");
    return;
  }
  state.counters["daily_change"] = *forecast.daily_change;
  state.counters["days_to_full"] = static_cast<double>(forecast.days_to_full.value_or(-1));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CapacityForecast)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_Baseline_LeastSquares(benchmark::State& state) {
  const std::vector<core::MetricSample> samples = Samples(state.range(0));
  double slope = 0;
  for (auto _ : state) {
    slope = LeastSquaresSlope(samples);
    benchmark::DoNotOptimize(slope);
  }
  state.counters["daily_change"] = slope;
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Baseline_LeastSquares)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

using pulse::bench::TimeReporter;

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  TimeReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double forecast = reporter.Ns("BM_CapacityForecast/1000000");
  const double plain = reporter.Ns("BM_Baseline_LeastSquares/1000000");
  if (forecast > 0 && plain > 0) {
    std::printf(
        "\nforecast summary (same run): 1M points in %.2f ms (%.2f ns/point) | x%.2f the plain "
        "least-squares loop (%.2f ms)\n",
        forecast / 1e6, forecast / 1e6, forecast / plain, plain / 1e6);
  }
  benchmark::Shutdown();
  return 0;
}
