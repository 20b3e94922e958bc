// PveFleet's metric history (pve_fleet.h): PVE's rrddata of the resource, then the samples the
// source took from its listings since.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/proxmox/pve_fleet.h"
#include "pulse/core/agent/fleet_queries.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

// The percentage `used` is of `total`, when the row has both and a total.
std::optional<double> Ratio(const std::optional<double>& used, const std::optional<double>& total) {
  if (!used.has_value() || !total.has_value() || *total <= 0) {
    return std::nullopt;
  }
  return 100.0 * *used / *total;
}

// The value of `metric` in one rrddata row of a resource of `type`; nullopt when PVE left it
// out. A guest's disk reads 0 when PVE cannot see inside it (a VM without an agent): no value.
std::optional<double> RrdValue(const PveRrdRow& row, std::string_view type,
                               std::string_view metric) {
  if (metric == "cpu") {
    return row.cpu.has_value() ? std::optional<double>(100.0 * *row.cpu) : std::nullopt;
  }
  if (type == "storage") {
    return metric == "usage" ? Ratio(row.used, row.total) : std::nullopt;
  }
  if (type == "node") {
    return metric == "memory" ? Ratio(row.memused, row.memtotal)
                              : Ratio(row.rootused, row.roottotal);
  }
  if (metric == "memory") {
    return Ratio(row.mem, row.maxmem);
  }
  return row.disk.has_value() && *row.disk > 0 ? Ratio(row.disk, row.maxdisk) : std::nullopt;
}

}  // namespace

absl::StatusOr<core::FleetMetricSeries> PveFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(id));
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateMetricQuery(query));
  if (resource.type == "backup-job") {
    return absl::NotFoundError(absl::StrCat(resource.id, " records no metrics"));
  }
  const bool storage = resource.type == "storage";
  if (storage ? query.metric != "usage"
              : (query.metric != "cpu" && query.metric != "memory" && query.metric != "disk")) {
    return absl::NotFoundError(
        absl::StrCat(resource.id, " records no metric ", Printable(query.metric, 64),
                     storage ? " (storage records usage)" : " (cpu, memory, disk)"));
  }
  core::FleetMetricSeries series;
  series.resource_id = resource.id;
  series.metric = query.metric;
  series.unit = "percent";
  std::vector<core::FleetMetricPoint> sampled;
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = samples_.find(MetricKey(resource.id, query.metric));
    if (it != samples_.end()) {
      sampled.assign(it->second.begin(), it->second.end());
    }
  }
  // PVE keeps an hour at one-minute steps and a day at 30-minute steps; the finer one when it
  // covers the window.
  const std::string_view timeframe = query.start >= absl::Now() - absl::Hours(1) ? "hour" : "day";
  std::vector<core::FleetMetricPoint> points;
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  if (absl::StatusOr<std::vector<core::FleetMetricPoint>> rrd =
          RrdPoints(*view, resource, query.metric, timeframe);
      rrd.ok()) {
    const absl::Time first_sample = sampled.empty() ? absl::InfiniteFuture() : sampled.front().at;
    for (const core::FleetMetricPoint& p : *rrd) {
      if (p.at < first_sample) {
        points.push_back(p);
      }
    }
  }
  points.insert(points.end(), sampled.begin(), sampled.end());
  series.points = core::fleetq::SelectPoints(points, query);
  return series;
}

absl::StatusOr<std::vector<core::FleetMetricPoint>> PveFleet::RrdPoints(
    const View& view, const core::FleetResource& resource, std::string_view metric,
    std::string_view timeframe) {
  std::string path;
  if (resource.type == "node") {
    path = absl::StrCat("/nodes/", EncodePathSegment(resource.name), "/rrddata");
  } else if (resource.type == "storage") {
    const auto node = resource.attributes.find("node");
    if (node == resource.attributes.end()) {
      return absl::InternalError("a storage without its node");
    }
    path = absl::StrCat("/nodes/", EncodePathSegment(node->second), "/storage/",
                        EncodePathSegment(resource.name), "/rrddata");
  } else {
    const auto guest = view.guests.find(resource.id);
    if (guest == view.guests.end()) {
      return absl::NotFoundError("no such Proxmox VE guest");
    }
    PULSE_ASSIGN_OR_RETURN(path, GuestPath(guest->second, "/rrddata"));
  }
  absl::StrAppend(&path, "?timeframe=", core::ToAbsl(timeframe), "&cf=AVERAGE");
  const absl::Time now = absl::Now();
  std::vector<PveRrdRow> rows;
  bool cached = false;
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = rrd_.find(path);
    if (it != rrd_.end() && now - it->second.at < options_.rrd_max_age) {
      rows = it->second.rows;
      cached = true;
    }
  }
  if (!cached) {
    PULSE_ASSIGN_OR_RETURN(const std::string body, client_->Get(path));
    PULSE_ASSIGN_OR_RETURN(rows, DecodeRrdData(body));
    absl::MutexLock lock(&mu_);
    std::erase_if(rrd_,
                  [&](const auto& entry) { return now - entry.second.at >= options_.rrd_max_age; });
    rrd_[path] = RrdAnswer{now, rows};
  }
  std::vector<core::FleetMetricPoint> out;
  out.reserve(rows.size());
  for (const PveRrdRow& row : rows) {
    if (const std::optional<double> value = RrdValue(row, resource.type, metric)) {
      out.push_back({absl::FromUnixSeconds(row.time), *value});
    }
  }
  std::sort(
      out.begin(), out.end(),
      [](const core::FleetMetricPoint& a, const core::FleetMetricPoint& b) { return a.at < b.at; });
  return out;
}

}  // namespace pulse::proxmox
