#include "pulse/core/builtins/metrics_handler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "handler_support.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

using handlers_internal::BoundedArray;
using handlers_internal::CheckResourceId;
using handlers_internal::InvalidInput;
using handlers_internal::ShortText;
using handlers_internal::StringArg;
using handlers_internal::WriteBoundedArray;

struct Window {
  std::string_view name;
  absl::Duration span;
};
// The schema's range enum (kMetricRanges), in the same order.
const std::array<Window, 5> kWindows = {{{"1h", absl::Hours(1)},
                                         {"6h", absl::Hours(6)},
                                         {"24h", absl::Hours(24)},
                                         {"7d", absl::Hours(24 * 7)},
                                         {"30d", absl::Hours(24 * 30)}}};
constexpr std::string_view kDefaultRange = "24h";
// Asked of the fleet; the handler downsamples further for the model.
constexpr std::size_t kFleetQueryPoints = 500;

// The fleet metric names behind one requested name ("" = every one the tool knows).
std::vector<std::string_view> FleetMetricsFor(std::string_view requested) {
  if (requested.empty()) {
    return {"cpu", "memory", "disk", "net_in", "net_out", "usage"};
  }
  if (requested == "network") {
    return {"net_in", "net_out"};
  }
  return {requested};
}

struct Series {
  std::string metric;
  std::string unit;
  std::string_view source;
  std::vector<FleetMetricPoint> points;  // finite values only, ascending time
};

double Round2(double value) { return std::round(value * 100.0) / 100.0; }

std::vector<FleetMetricPoint> Finite(std::vector<FleetMetricPoint> points) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const FleetMetricPoint& p) { return !std::isfinite(p.value); }),
               points.end());
  std::stable_sort(
      points.begin(), points.end(),
      [](const FleetMetricPoint& a, const FleetMetricPoint& b) { return a.at < b.at; });
  return points;
}

// Averages consecutive runs of points into at most `max_points` buckets; each bucket keeps the
// time of its newest point.
std::vector<FleetMetricPoint> Downsample(const std::vector<FleetMetricPoint>& points,
                                         std::size_t max_points) {
  if (points.size() <= max_points) {
    return points;
  }
  std::vector<FleetMetricPoint> out;
  out.reserve(max_points);
  for (std::size_t b = 0; b < max_points; ++b) {
    const std::size_t begin = b * points.size() / max_points;
    const std::size_t end = (b + 1) * points.size() / max_points;
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) {
      sum += points[i].value;
    }
    out.push_back({points[end - 1].at, sum / static_cast<double>(end - begin)});
  }
  return out;
}

std::string SeriesJson(const Series& s, bool with_points, std::size_t max_points) {
  JsonWriter out;
  out.StartObject();
  out.Member("metric", ShortText(s.metric, 64));
  out.Member("unit", ShortText(s.unit, 32));
  out.Member("source", s.source);
  out.Member("points_count", s.points.size());
  if (!s.points.empty()) {
    double min = s.points.front().value;
    double max = min;
    double sum = 0;
    for (const FleetMetricPoint& p : s.points) {
      min = std::min(min, p.value);
      max = std::max(max, p.value);
      sum += p.value;
    }
    out.TimeMember("first_at", s.points.front().at);
    out.TimeMember("last_at", s.points.back().at);
    out.Key("min");
    out.Double(Round2(min));
    out.Key("max");
    out.Double(Round2(max));
    out.Key("avg");
    out.Double(Round2(sum / static_cast<double>(s.points.size())));
    out.Key("last");
    out.Double(Round2(s.points.back().value));
  }
  if (with_points) {
    out.Key("points");
    out.StartArray();
    for (const FleetMetricPoint& p : Downsample(s.points, max_points)) {
      out.StartArray();
      out.Time(p.at);
      out.Double(Round2(p.value));
      out.EndArray();
    }
    out.EndArray();
  }
  out.EndObject();
  return out.Take();
}

}  // namespace

PulseMetricsHandler::PulseMetricsHandler(Fleet& fleet, const Clock& clock,
                                         const MetricsHistory* history)
    : fleet_(fleet), clock_(clock), history_(history) {}

ToolResult PulseMetricsHandler::Run(const rapidjson::Value& args, const ToolContext& /*context*/) {
  const std::string_view id = StringArg(args, kArgResourceId);
  if (auto bad = CheckResourceId(id)) {
    return *bad;
  }
  const std::string_view requested = StringArg(args, kArgMetric);
  const std::string_view range = GetString(args, kArgRange).value_or(kDefaultRange);
  const bool summary_only = GetBool(args, kArgSummary).value_or(false);
  const auto window = std::find_if(kWindows.begin(), kWindows.end(),
                                   [&](const Window& w) { return w.name == range; });
  if (window == kWindows.end()) {
    return InvalidInput("range must be one of 1h, 6h, 24h, 7d, 30d",
                        {{"argument", std::string(kArgRange)}});
  }
  if (absl::Status known = fleet_.GetResource(id).status(); !known.ok()) {
    return ToolResult::Failure(PortStatusToToolError(known, id));
  }
  const absl::Time end = clock_.Now();
  const absl::Time start = end - window->span;
  std::vector<Series> found;
  std::vector<std::string> unavailable;
  for (std::string_view name : FleetMetricsFor(requested)) {
    FleetMetricQuery query;
    query.metric = std::string(name);
    query.start = start;
    query.end = end;
    query.max_points = kFleetQueryPoints;
    absl::StatusOr<FleetMetricSeries> series = fleet_.ReadMetricHistory(id, query);
    if (series.ok()) {
      found.push_back({query.metric, series->unit, "fleet", Finite(std::move(series->points))});
      continue;
    }
    if (!absl::IsNotFound(series.status())) {
      return ToolResult::Failure(PortStatusToToolError(series.status(), id));
    }
    if (history_ != nullptr) {
      absl::StatusOr<std::vector<MetricSample>> samples = history_->Samples(id, name, start, end);
      if (!samples.ok()) {
        return ToolResult::Failure(PortStatusToToolError(samples.status(), "the metrics history"));
      }
      if (!samples->empty()) {
        std::vector<FleetMetricPoint> points;
        points.reserve(samples->size());
        for (const MetricSample& s : *samples) {
          points.push_back({s.at, s.value});
        }
        found.push_back({query.metric, "percent", "history", Finite(std::move(points))});
        continue;
      }
    }
    unavailable.push_back(query.metric);
  }
  if (found.empty() && !requested.empty()) {
    ToolError error = PortStatusToToolError(
        absl::NotFoundError(absl::StrCat("records no ", ToAbsl(requested), " metric")), id);
    error.details.emplace_back("metric", std::string(requested));
    return ToolResult::Failure(std::move(error));
  }
  const std::size_t per_series =
      std::max(kMinMetricPointsPerSeries,
               kMaxMetricPointsPerResult / std::max<std::size_t>(1, found.size()));
  BoundedArray metrics;
  for (const Series& s : found) {
    metrics.Add(SeriesJson(s, !summary_only, per_series));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("resource_id", id);
  out.Member("range", window->name);
  out.Member("summary", summary_only);
  WriteBoundedArray(out, "metrics", metrics);
  out.Key("unavailable");
  out.StringArray(unavailable);
  out.Member("truncated", metrics.truncated());
  out.EndObject();
  return ToolResult::Success(out.Take());
}

}  // namespace pulse::core
