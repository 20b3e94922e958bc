#include "pulse/testing/fake_pve_scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "pulse/core/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::testing {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, const char* key, std::string_view value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}
void Int(Writer& w, const char* key, std::int64_t value) {
  w.Key(key);
  w.Int64(value);
}
void Num(Writer& w, const char* key, double value) {
  w.Key(key);
  w.Double(value);
}

std::int64_t Attribute(const core::FleetResource& r, const char* key, std::int64_t fallback) {
  const auto it = r.attributes.find(key);
  std::int64_t value = 0;
  if (it == r.attributes.end() || !absl::SimpleAtoi(core::ToAbsl(it->second), &value) ||
      value <= 0) {
    return fallback;
  }
  return value;
}

// The newest sample of `metric` (percent) in the day before `now`; nullopt without one.
std::optional<double> Latest(core::Fleet& fleet, const std::string& id, const char* metric,
                             absl::Time now) {
  core::FleetMetricQuery query;
  query.metric = metric;
  query.start = now - absl::Hours(24);
  query.end = now + absl::Minutes(1);
  query.max_points = core::kFleetMaxMetricPoints;  // the samples as taken, not bucket means
  absl::StatusOr<core::FleetMetricSeries> series = fleet.ReadMetricHistory(id, query);
  if (!series.ok() || series->points.empty() || !std::isfinite(series->points.back().value)) {
    return std::nullopt;
  }
  return std::clamp(series->points.back().value, 0.0, 100.0);
}

std::int64_t Share(double percent, std::int64_t total) {
  return static_cast<std::int64_t>(static_cast<double>(total) * percent / 100.0);
}

}  // namespace

absl::StatusOr<std::string> PveScenarioFromFleet(core::Fleet& fleet,
                                                 const std::map<std::string, std::string>& tokens,
                                                 absl::Time now) {
  absl::StatusOr<std::vector<core::FleetResource>> listed =
      fleet.ListResources(core::FleetResourceQuery{});
  if (!listed.ok()) {
    return listed.status();
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Str(w, "version", "8.3.0");
  w.Key("tokens");
  w.StartObject();
  for (const auto& [id, secret] : tokens) {
    Str(w, id.c_str(), secret);
  }
  w.EndObject();
  w.Key("nodes");
  w.StartArray();
  for (const core::FleetResource& r : *listed) {
    absl::string_view name = r.id;
    if (r.type != "node" || !absl::ConsumePrefix(&name, "node:")) {
      continue;
    }
    const std::int64_t maxmem = Attribute(r, "memory_mb", 16384) * kMiB;
    w.StartObject();
    Str(w, "node", core::ToStd(name));
    Str(w, "status", r.status == "online" ? "online" : "offline");
    Num(w, "cpu", Latest(fleet, r.id, "cpu", now).value_or(5.0) / 100.0);
    Int(w, "maxcpu", Attribute(r, "cpus", 8));
    Int(w, "maxmem", maxmem);
    Int(w, "mem", Share(Latest(fleet, r.id, "memory", now).value_or(40.0), maxmem));
    Int(w, "maxdisk", 100 * kGiB);
    Int(w, "disk", 20 * kGiB);
    Int(w, "uptime", 12 * 86400);
    w.EndObject();
  }
  w.EndArray();
  w.Key("guests");
  w.StartArray();
  for (const core::FleetResource& r : *listed) {
    absl::string_view vmid_text = r.id;
    absl::string_view node = r.parent_id;
    std::int64_t vmid = 0;
    if (r.type != "vm" || !absl::ConsumePrefix(&vmid_text, "vm:") ||
        !absl::SimpleAtoi(vmid_text, &vmid) || !absl::ConsumePrefix(&node, "node:")) {
      continue;
    }
    const bool running = r.status == "running";
    const std::int64_t maxmem = Attribute(r, "memory_mb", 2048) * kMiB;
    w.StartObject();
    Str(w, "type", "qemu");
    Int(w, "vmid", vmid);
    Str(w, "node", core::ToStd(node));
    Str(w, "name", r.name);
    Str(w, "status", running ? "running" : "stopped");
    Int(w, "cpus", Attribute(r, "cores", 2));
    Num(w, "cpu", running ? Latest(fleet, r.id, "cpu", now).value_or(5.0) / 100.0 : 0.0);
    Int(w, "maxmem", maxmem);
    Int(w, "mem", running ? Share(Latest(fleet, r.id, "memory", now).value_or(40.0), maxmem) : 0);
    Int(w, "maxdisk", 64 * kGiB);
    Int(w, "uptime", running ? 3 * 86400 : 0);
    w.EndObject();
  }
  w.EndArray();
  w.Key("storage");
  w.StartArray();
  for (const core::FleetResource& r : *listed) {
    absl::string_view rest = r.id;
    if (r.type != "storage" || !absl::ConsumePrefix(&rest, "storage:")) {
      continue;
    }
    const std::size_t slash = rest.find('/');
    if (slash == absl::string_view::npos) {
      continue;
    }
    const std::int64_t total = Attribute(r, "size_gb", 100) * kGiB;
    const auto type = r.attributes.find("type");
    const std::string plugin = type == r.attributes.end() ? "dir" : type->second;
    w.StartObject();
    Str(w, "node", core::ToStd(rest.substr(0, slash)));
    Str(w, "storage", core::ToStd(rest.substr(slash + 1)));
    Str(w, "type", plugin);
    Str(w, "content", plugin == "nfs" || plugin == "pbs" ? "backup" : "images,rootdir");
    Int(w, "shared", plugin == "nfs" ? 1 : 0);
    Int(w, "total", total);
    Int(w, "used", Share(Latest(fleet, r.id, "usage", now).value_or(10.0), total));
    w.EndObject();
  }
  w.EndArray();
  Int(w, "task_polls", 2);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace pulse::testing
