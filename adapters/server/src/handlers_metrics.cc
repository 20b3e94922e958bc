// GET /api/resources/{resourceId}/metrics: a resource's recorded utilization series, thinned to
// a chart's worth of points, with the capacity forecast of the same window and its line (the
// console's capacity chart; docs/api.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;
using core::MetricSample;

constexpr std::int64_t kDefaultHours = 24 * 7;
constexpr std::size_t kMaxPoints = 500;
constexpr std::string_view kStorageMetric = "usage";
constexpr std::string_view kDefaultMetric = "memory";

// The finite samples in time order, averaged into kMaxPoints equal time buckets when there are
// more (each bucket's point at the mean time of its samples, so a gap stays a gap).
std::vector<MetricSample> ChartPoints(std::vector<MetricSample> samples, absl::Time start,
                                      absl::Time end) {
  samples.erase(std::remove_if(samples.begin(), samples.end(),
                               [](const MetricSample& s) { return !std::isfinite(s.value); }),
                samples.end());
  std::sort(samples.begin(), samples.end(),
            [](const MetricSample& a, const MetricSample& b) { return a.at < b.at; });
  if (samples.size() <= kMaxPoints) {
    return samples;
  }
  const double span = absl::ToDoubleSeconds(end - start);
  std::vector<double> value_sum(kMaxPoints, 0);
  std::vector<double> time_sum(kMaxPoints, 0);
  std::vector<std::int64_t> count(kMaxPoints, 0);
  for (const MetricSample& s : samples) {
    const double offset = absl::ToDoubleSeconds(s.at - start);
    const auto bucket = static_cast<std::size_t>(std::clamp(
        offset / span * static_cast<double>(kMaxPoints), 0.0, static_cast<double>(kMaxPoints - 1)));
    value_sum[bucket] += s.value;
    time_sum[bucket] += offset;
    ++count[bucket];
  }
  std::vector<MetricSample> points;
  points.reserve(kMaxPoints);
  for (std::size_t i = 0; i < kMaxPoints; ++i) {
    if (count[i] > 0) {
      const double n = static_cast<double>(count[i]);
      points.push_back({start + absl::Seconds(time_sum[i] / n), value_sum[i] / n});
    }
  }
  return points;
}

// The forecast's line: from the newest reading at its current level, along the fitted daily
// change, to the day the resource is full when that is within a year, else as far ahead as the
// window reaches back; clamped to 0..100. Empty without a trend to draw.
std::vector<MetricSample> ForecastLine(const core::CapacityForecast& forecast, absl::Time latest,
                                       absl::Duration window) {
  if (!forecast.current_pct.has_value() || !forecast.daily_change.has_value()) {
    return {};
  }
  double days = absl::ToDoubleHours(window) / 24.0;
  if (forecast.days_to_full.has_value() && *forecast.days_to_full > 0 &&
      *forecast.days_to_full <= 365) {
    days = static_cast<double>(*forecast.days_to_full);
  }
  const double end_value =
      std::clamp(*forecast.current_pct + *forecast.daily_change * days, 0.0, 100.0);
  return {{latest, *forecast.current_pct}, {latest + absl::Hours(days * 24.0), end_value}};
}

void WritePoints(core::JsonWriter& w, std::string_view key,
                 const std::vector<MetricSample>& points) {
  w.Key(key);
  w.StartArray();
  for (const MetricSample& p : points) {
    w.StartObject();
    w.TimeMember("at", p.at);
    w.Key("value");
    w.Double(p.value);
    w.EndObject();
  }
  w.EndArray();
}

HttpReply ResourceMetrics(ServerContext& ctx, const HttpRequest& request) {
  const std::string& resource_id = PathParam(request, "resourceId");
  std::int64_t hours = kDefaultHours;
  if (auto it = request.query.find("hours"); it != request.query.end()) {
    if (!absl::SimpleAtoi(it->second, &hours)) {
      return HttpReply::Error(AgentErrorCode::kInvalidRequest, "hours must be an integer");
    }
  }
  absl::StatusOr<core::FleetResource> resource = ctx.fleet.GetResource(resource_id);
  if (absl::IsNotFound(resource.status())) {
    return HttpReply::Error(AgentErrorCode::kResourceNotFound, "Resource not found");
  }
  if (!resource.ok()) {
    return Unavailable("the fleet", resource.status());
  }
  // The series a capacity chart wants: a storage's usage, anything else's memory.
  auto given = request.query.find("metric");
  const std::string metric = given != request.query.end()  ? given->second
                             : resource->type == "storage" ? std::string(kStorageMetric)
                                                           : std::string(kDefaultMetric);
  const absl::Time end = ctx.clock.Now();
  const absl::Duration window = absl::Hours(hours);
  const absl::Time start = end - window;
  absl::StatusOr<std::vector<MetricSample>> samples =
      ctx.history.Samples(resource_id, metric, start, end);
  if (!samples.ok()) {
    return Unavailable("the metrics history", samples.status());
  }
  const std::size_t recorded = samples->size();
  std::optional<absl::Time> latest;
  for (const MetricSample& s : *samples) {
    if (std::isfinite(s.value) && (!latest.has_value() || s.at > *latest)) {
      latest = s.at;
    }
  }
  const core::CapacityForecast forecast = core::ComputeCapacityForecast(metric, *samples);
  const std::vector<MetricSample> points = ChartPoints(*std::move(samples), start, end);

  core::JsonWriter w;
  w.StartObject();
  w.Member("resource_id", resource_id);
  w.Member("metric", metric);
  w.TimeMember("start", start);
  w.TimeMember("end", end);
  w.Member("recorded", static_cast<std::int64_t>(recorded));
  WritePoints(w, "samples", points);
  w.Key("forecast");
  w.StartObject();
  w.Member("reading", core::ToString(forecast.reading));
  w.Member("sample_count", forecast.sample_count);
  if (forecast.current_pct.has_value()) {
    w.Key("current_pct");
    w.Double(*forecast.current_pct);
  }
  if (forecast.daily_change.has_value()) {
    w.Key("daily_change");
    w.Double(*forecast.daily_change);
  }
  if (forecast.days_to_full.has_value()) {
    w.Member("days_to_full", *forecast.days_to_full);
  }
  w.EndObject();
  WritePoints(
      w, "line",
      latest.has_value() ? ForecastLine(forecast, *latest, window) : std::vector<MetricSample>{});
  w.EndObject();
  return HttpReply::Json(w.Take());
}

}  // namespace

absl::Status BindMetricsRoutes(adapters::http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle("get_resource_metrics", [&ctx](const HttpRequest& request) {
    return ResourceMetrics(ctx, request);
  }));
  return absl::OkStatus();
}

}  // namespace pulse::server
