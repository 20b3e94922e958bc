#include "demo_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "fmt/format.h"

namespace pulse::adapters::agents::internal {
namespace {

constexpr double kHighMemoryPct = 96.0;

bool Has(const DemoResource& r, DemoFaultKind kind) { return r.faults.count(kind) != 0; }

bool HasPersistent(const DemoResource& r, DemoFaultKind kind) {
  auto it = r.faults.find(kind);
  return it != r.faults.end() && it->second.persistent;
}

// A crash loop restarts its unit every 30 s while it lasts.
constexpr absl::Duration kCrashLoopPeriod = absl::Seconds(30);

std::int64_t CrashLoopRestarts(const DemoResource& r, absl::Time at) {
  auto it = r.faults.find(DemoFaultKind::kCrashLoop);
  if (it == r.faults.end()) {
    return 0;
  }
  return std::max<std::int64_t>(
      0, absl::ToInt64Seconds(at - it->second.since) / absl::ToInt64Seconds(kCrashLoopPeriod));
}

// Ends a fault; a crash loop's restarts so far stay counted.
void EndFault(DemoResource& r, DemoFaultKind kind, absl::Time at) {
  if (kind == DemoFaultKind::kCrashLoop) {
    r.restart_count += static_cast<int>(CrashLoopRestarts(r, at));
  }
  r.faults.erase(kind);
}

// Ends the faults a (re)start fixes, unless they are persistent.
void ClearTransientFaults(DemoResource& r, absl::Time at) {
  for (DemoFaultKind kind :
       {DemoFaultKind::kExited, DemoFaultKind::kCrashLoop, DemoFaultKind::kHighMemory}) {
    auto it = r.faults.find(kind);
    if (it != r.faults.end() && !it->second.persistent) {
      EndFault(r, kind, at);
    }
  }
}

std::optional<double> Latest(const DemoResource& r, const std::string& metric) {
  auto it = r.metrics.find(metric);
  if (it == r.metrics.end() || it->second.points.empty()) {
    return std::nullopt;
  }
  return it->second.points.back().value;
}

// cpu and memory return to their baselines (memory stays high under a high_memory fault).
void RecordRunningLevels(DemoResource& r, absl::Time at) {
  for (const std::string metric : {"cpu", "memory"}) {
    auto it = r.metrics.find(metric);
    if (it == r.metrics.end()) {
      continue;
    }
    double value = it->second.baseline;
    if (metric == "memory" && Has(r, DemoFaultKind::kHighMemory)) {
      value = kHighMemoryPct;
    }
    RecordMetric(r, metric, at, value);
  }
}

void RecordStoppedLevels(DemoResource& r, absl::Time at) {
  for (const std::string metric : {"cpu", "memory"}) {
    if (r.metrics.count(metric) != 0) {
      RecordMetric(r, metric, at, 0);
    }
  }
}

std::string RunningStatus(Kind kind) { return kind == Kind::kService ? "active" : "running"; }

std::string StoppedStatus(Kind kind) {
  switch (kind) {
    case Kind::kService:
      return "inactive";
    case Kind::kContainer:
      return "exited";
    default:
      return "stopped";
  }
}

std::string Describe(const DemoResource& r) {
  switch (r.kind) {
    case Kind::kVm:
      return fmt::format("VM {} ({})", r.vmid, r.base.name);
    case Kind::kContainer:
      return fmt::format("container {}", r.base.name);
    case Kind::kService:
      return r.unit;
    default:
      return r.base.name;
  }
}

std::string Pct(double value) { return fmt::format("{:.1f}%", value); }

}  // namespace

std::string_view KindType(Kind kind) {
  switch (kind) {
    case Kind::kNode:
      return "node";
    case Kind::kVm:
      return "vm";
    case Kind::kContainer:
      return "app-container";
    case Kind::kStorage:
      return "storage";
    case Kind::kBackupJob:
      return "backup-job";
    case Kind::kService:
      return "service";
  }
  return "node";
}

std::string_view TransitionalStatus(const DemoResource& r, std::string_view capability) {
  if (capability == "start") {
    return r.kind == Kind::kService ? "activating" : "starting";
  }
  if (capability == "stop") {
    return r.kind == Kind::kService ? "deactivating" : "stopping";
  }
  if (capability == "restart") {
    return "restarting";
  }
  if (capability == "reload") {
    return "reloading";
  }
  if (capability == "run-now") {
    return "running";
  }
  return "busy";
}

std::string EffectiveStatus(const DemoResource& r) {
  if (r.pending.has_value()) {
    return std::string(TransitionalStatus(r, r.pending->capability));
  }
  if (r.kind == Kind::kContainer && Has(r, DemoFaultKind::kExited)) {
    return "exited";
  }
  if (r.kind == Kind::kService && Has(r, DemoFaultKind::kCrashLoop)) {
    return "failed";
  }
  if (r.kind == Kind::kBackupJob && Has(r, DemoFaultKind::kBackupFailed)) {
    return "failed";
  }
  return r.base.status;
}

core::FleetResource PublicView(const DemoResource& r) {
  core::FleetResource out = r.base;
  out.status = EffectiveStatus(r);
  out.revision = fmt::format("r{}", r.revision);
  return out;
}

ObservedState ObserverSnapshot(const DemoResource& r) {
  ObservedState s;
  s.status = EffectiveStatus(r);
  s.busy = r.pending.has_value();
  s.started_at = r.started_at;
  s.reloaded_at = r.reloaded_at;
  s.last_run_at = r.last_run_at;
  return s;
}

std::string HostNodeOf(const DemoWorld& world, const std::string& id) {
  std::string current = id;
  for (int hops = 0; hops < 8 && !current.empty(); ++hops) {
    auto it = world.resources.find(current);
    if (it == world.resources.end()) {
      return "";
    }
    const DemoResource& r = it->second;
    if (r.kind == Kind::kNode) {
      return r.base.id;
    }
    current = r.kind == Kind::kBackupJob ? r.storage_id : r.base.parent_id;
  }
  return "";
}

core::FleetStatus StatusOf(const DemoWorld& world, const DemoResource& r, absl::Time now) {
  core::FleetStatus s;
  s.resource_id = r.base.id;
  s.status = EffectiveStatus(r);
  s.observed_at = now;
  std::map<std::string, std::string>& f = s.facts;
  const std::optional<double> cpu = Latest(r, "cpu");
  const std::optional<double> memory = Latest(r, "memory");
  if (cpu.has_value()) {
    f["cpu_pct"] = fmt::format("{:.1f}", *cpu);
  }
  if (memory.has_value()) {
    f["memory_pct"] = fmt::format("{:.1f}", *memory);
  }
  const bool runs = r.kind == Kind::kVm || r.kind == Kind::kContainer || r.kind == Kind::kService;
  if (runs) {
    f["restart_count"] = std::to_string(r.restart_count);
    if (s.status == "running" || s.status == "active") {
      f["started_at"] = Rfc3339(r.started_at);
      f["uptime_seconds"] =
          std::to_string(std::max<std::int64_t>(0, absl::ToInt64Seconds(now - r.started_at)));
    }
  }
  std::string detail;
  const std::string host = HostNodeOf(world, r.base.id);
  const std::string host_name = host.empty() ? "" : world.resources.at(host).base.name;
  switch (r.kind) {
    case Kind::kNode:
      detail = fmt::format("{} is {}", r.base.name, s.status);
      break;
    case Kind::kVm:
      f["vmid"] = std::to_string(r.vmid);
      f["node"] = host_name;
      detail = fmt::format("{} (VM {} on {}) is {}", r.base.name, r.vmid, host_name, s.status);
      break;
    case Kind::kContainer:
      f["image"] = r.image;
      f["host"] = r.base.parent_id;
      if (s.status == "exited") {
        f["exit_code"] = Has(r, DemoFaultKind::kExited) ? "1" : "0";
      }
      detail = fmt::format("{} ({}) is {}", r.base.name, r.image, s.status);
      break;
    case Kind::kService: {
      f["unit"] = r.unit;
      f["node"] = host_name;
      std::string sub = s.status == "active" ? "running" : s.status == "failed" ? "failed" : "dead";
      if (Has(r, DemoFaultKind::kCrashLoop)) {
        sub = "auto-restart";
        f["restart_count"] = std::to_string(r.restart_count + CrashLoopRestarts(r, now));
      }
      f["sub_state"] = sub;
      if (r.reloaded_at.has_value()) {
        f["reloaded_at"] = Rfc3339(*r.reloaded_at);
      }
      detail = fmt::format("{} on {} is {} ({})", r.unit, host_name, s.status, sub);
      break;
    }
    case Kind::kStorage: {
      const std::optional<double> usage = Latest(r, "usage");
      if (usage.has_value()) {
        f["usage_pct"] = fmt::format("{:.1f}", *usage);
      }
      detail = fmt::format("{} on {} is {}{}", r.base.name, host_name, s.status,
                           usage.has_value() ? ", " + Pct(*usage) + " used" : "");
      break;
    }
    case Kind::kBackupJob:
      f["schedule"] = r.schedule;
      f["storage"] = r.storage_id;
      f["last_result"] = s.status == "failed" ? "failed" : "ok";
      if (r.last_run_at.has_value()) {
        f["last_run_at"] = Rfc3339(*r.last_run_at);
      }
      detail = fmt::format("backup job {} ({}) is {}", r.base.name, r.schedule, s.status);
      break;
  }
  if (cpu.has_value() && memory.has_value() && r.kind != Kind::kStorage) {
    detail += fmt::format(": cpu {}, memory {}", Pct(*cpu), Pct(*memory));
  }
  if (Has(r, DemoFaultKind::kHighMemory)) {
    detail += " (memory pressure)";
  }
  if (Has(r, DemoFaultKind::kCrashLoop)) {
    detail += " (crash-looping)";
  }
  if (!r.faults.empty()) {
    std::string names;
    for (const auto& [kind, fault] : r.faults) {
      if (!names.empty()) {
        names += ',';
      }
      names += ToString(kind);
    }
    f["faults"] = names;
  }
  if (r.pending.has_value()) {
    f["operation"] = r.pending->capability + " in progress";
    detail += fmt::format(" ({} in progress)", r.pending->capability);
  }
  s.summary = detail;
  return s;
}

void AppendLog(DemoResource& r, absl::Time at, std::string text) {
  r.logs.push_back({at, std::move(text)});
  while (r.logs.size() > kDemoMaxStoredLogLines) {
    r.logs.pop_front();
  }
}

void RecordMetric(DemoResource& r, const std::string& metric, absl::Time at, double value) {
  Series& series = r.metrics[metric];
  if (series.unit.empty()) {
    series.unit = metric == "up" ? "boolean" : "percent";
  }
  if (!series.points.empty() && series.points.back().at >= at) {
    series.points.back().value = value;  // same instant (or a clock step back): newest wins
    return;
  }
  series.points.push_back({at, value});
  if (series.points.size() > kDemoMaxSeriesPoints) {
    series.points.erase(series.points.begin());
  }
}

void RecordUp(DemoResource& r, absl::Time at) {
  const std::string status = EffectiveStatus(r);
  const bool up = status == "online" || status == "running" || status == "active" ||
                  status == "ok" || status == "available";
  RecordMetric(r, "up", at, up ? 1 : 0);
}

void LandChange(DemoResource& r, absl::Time at) {
  if (!r.pending.has_value()) {
    return;
  }
  const PendingChange change = *r.pending;
  r.pending.reset();
  const std::string& cap = change.capability;
  if (cap == "start" || cap == "restart") {
    r.base.status = RunningStatus(r.kind);
    r.started_at = at;
    if (cap == "restart") {
      ++r.restart_count;
    }
    ClearTransientFaults(r, at);
    RecordRunningLevels(r, at);
    if (r.kind == Kind::kService && Has(r, DemoFaultKind::kCrashLoop)) {
      AppendLog(r, at,
                fmt::format("systemd[1]: {}: Main process exited, code=exited, "
                            "status=1/FAILURE",
                            r.unit));
    } else if (r.kind == Kind::kContainer && Has(r, DemoFaultKind::kExited)) {
      AppendLog(r, at, fmt::format("{} exited with code 1 right after start", Describe(r)));
    } else if (r.kind == Kind::kService) {
      AppendLog(
          r, at,
          fmt::format("systemd[1]: {} {}.", cap == "start" ? "Started" : "Restarted", r.unit));
    } else {
      AppendLog(r, at, fmt::format("{} {}", Describe(r), cap == "start" ? "started" : "restarted"));
    }
  } else if (cap == "stop") {
    r.base.status = StoppedStatus(r.kind);
    if (Has(r, DemoFaultKind::kCrashLoop) && !HasPersistent(r, DemoFaultKind::kCrashLoop)) {
      EndFault(r, DemoFaultKind::kCrashLoop, at);
    }
    RecordStoppedLevels(r, at);
    AppendLog(r, at,
              r.kind == Kind::kService ? fmt::format("systemd[1]: Stopped {}.", r.unit)
                                       : fmt::format("{} stopped", Describe(r)));
  } else if (cap == "reload") {
    r.reloaded_at = at;
    AppendLog(r, at, fmt::format("systemd[1]: Reloaded {}.", r.unit));
  } else if (cap == "run-now") {
    r.last_run_at = at;
    if (HasPersistent(r, DemoFaultKind::kBackupFailed)) {
      r.base.status = "failed";
      AppendLog(r, at,
                fmt::format("ERROR: Backup job {} failed: storage {} is unreachable", r.base.name,
                            r.storage_id));
    } else {
      r.faults.erase(DemoFaultKind::kBackupFailed);
      r.base.status = "ok";
      AppendLog(r, at, fmt::format("INFO: Backup job {} finished successfully", r.base.name));
    }
  }
  RecordUp(r, at);
  ++r.revision;
}

std::string DemoFaultKindNames() {
  std::string names;
  for (DemoFaultKind kind : kAllDemoFaultKinds) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", ToString(kind));
  }
  return names;
}

absl::Status CheckFaultApplies(const DemoResource& r, DemoFaultKind kind) {
  bool applies = false;
  switch (kind) {
    case DemoFaultKind::kExited:
      applies = r.kind == Kind::kContainer;
      break;
    case DemoFaultKind::kCrashLoop:
      applies = r.kind == Kind::kService;
      break;
    case DemoFaultKind::kHighMemory:
      applies = r.kind == Kind::kVm || r.kind == Kind::kContainer || r.kind == Kind::kNode;
      break;
    case DemoFaultKind::kBackupFailed:
      applies = r.kind == Kind::kBackupJob;
      break;
    case DemoFaultKind::kActionFails:
    case DemoFaultKind::kDispatchHangs:
    case DemoFaultKind::kDispatchThrows:
      applies = r.kind != Kind::kNode && r.kind != Kind::kStorage;
      break;
  }
  if (!applies) {
    return absl::InvalidArgumentError(
        fmt::format("fault {} does not apply to a {}", ToString(kind), KindType(r.kind)));
  }
  return absl::OkStatus();
}

void ApplyFault(DemoResource& r, DemoFault fault, absl::Time at) {
  const DemoFaultKind kind = fault.kind;
  r.faults[kind] = std::move(fault);
  switch (kind) {
    case DemoFaultKind::kExited:
      AppendLog(r, at, fmt::format("{} exited with code 1", Describe(r)));
      RecordStoppedLevels(r, at);
      break;
    case DemoFaultKind::kCrashLoop:
      r.restart_count += 3;
      AppendLog(r, at,
                fmt::format("systemd[1]: {}: Main process exited, code=exited, "
                            "status=1/FAILURE",
                            r.unit));
      AppendLog(r, at,
                fmt::format("systemd[1]: {}: Scheduled restart job, restart counter is "
                            "at {}.",
                            r.unit, r.restart_count));
      break;
    case DemoFaultKind::kHighMemory:
      if (r.metrics.count("memory") != 0) {
        RecordMetric(r, "memory", at, kHighMemoryPct);
      }
      AppendLog(r, at,
                fmt::format("warning: memory usage at {} of the limit", Pct(kHighMemoryPct)));
      break;
    case DemoFaultKind::kBackupFailed:
      AppendLog(r, at,
                fmt::format("ERROR: Backup job {} failed: storage {} is unreachable", r.base.name,
                            r.storage_id));
      break;
    case DemoFaultKind::kActionFails:
      AppendLog(r, at, "fault injected: the executor fails every operation on this resource");
      break;
    case DemoFaultKind::kDispatchHangs:
      AppendLog(r, at,
                "fault injected: the executor carries out operations on this resource but its "
                "answers are lost");
      break;
    case DemoFaultKind::kDispatchThrows:
      AppendLog(r, at,
                "fault injected: the executor carries out operations on this resource, then "
                "its adapter fails with an exception");
      break;
  }
  RecordUp(r, at);
  ++r.revision;
}

void RemoveFault(DemoResource& r, DemoFaultKind kind, absl::Time at) {
  EndFault(r, kind, at);
  switch (kind) {
    case DemoFaultKind::kExited:
      r.started_at = at;
      if (r.base.status == "running") {
        RecordRunningLevels(r, at);
      }
      AppendLog(r, at, fmt::format("{} is running again (fault cleared)", Describe(r)));
      break;
    case DemoFaultKind::kCrashLoop:
      r.started_at = at;
      AppendLog(r, at, fmt::format("systemd[1]: Started {}. (fault cleared)", r.unit));
      break;
    case DemoFaultKind::kHighMemory:
      if (r.base.status == "running" || r.base.status == "online") {
        RecordRunningLevels(r, at);
      }
      AppendLog(r, at, "memory usage back to normal (fault cleared)");
      break;
    case DemoFaultKind::kBackupFailed:
      AppendLog(r, at, "backup storage reachable again (fault cleared)");
      break;
    case DemoFaultKind::kActionFails:
      AppendLog(r, at, "executor healthy again (fault cleared)");
      break;
    case DemoFaultKind::kDispatchHangs:
      AppendLog(r, at, "executor answers again (fault cleared)");
      break;
    case DemoFaultKind::kDispatchThrows:
      AppendLog(r, at, "executor adapter healthy again (fault cleared)");
      break;
  }
  RecordUp(r, at);
  ++r.revision;
}

}  // namespace pulse::adapters::agents::internal
