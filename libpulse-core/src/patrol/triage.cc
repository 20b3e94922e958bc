#include "pulse/core/patrol/triage.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pulse/core/findings/capacity_forecast.h"

namespace pulse::core {
namespace {

constexpr absl::Duration kForecastWindow = absl::Hours(24 * 7);

std::optional<double> Fact(const FleetStatus& status, const char* key) {
  auto it = status.facts.find(key);
  if (it == status.facts.end()) {
    return std::nullopt;
  }
  double value = 0;
  if (!absl::SimpleAtod(it->second, &value)) {
    return std::nullopt;
  }
  return value;
}

std::string FactText(const FleetStatus& status, const char* key) {
  auto it = status.facts.find(key);
  return it == status.facts.end() ? "" : it->second;
}

FindingReport Base(const FleetResource& resource, std::string_view key, Category category,
                   Severity severity) {
  FindingReport r;
  r.resource_id = resource.id;
  r.resource_name = resource.name;
  r.resource_type = resource.type;
  r.category = category;
  r.severity = severity;
  r.key = std::string(key);
  r.source = kTriageFindingSource;
  return r;
}

std::string Pct(double value) { return absl::StrFormat("%.1f%%", value); }

void Utilization(const FleetResource& resource, const FleetStatus& status, const char* fact,
                 std::string_view key, const char* what, double threshold, double critical,
                 Category category, std::vector<FindingReport>& out) {
  std::optional<double> value = Fact(status, fact);
  if (!value.has_value() || *value < threshold) {
    return;
  }
  FindingReport r =
      Base(resource, key, category, *value >= critical ? Severity::kCritical : Severity::kWarning);
  r.title = absl::StrCat("High ", what, " usage on ", resource.name);
  r.description = absl::StrCat(resource.name, " is using ", Pct(*value), " ", what, " (threshold ",
                               Pct(threshold), ").");
  r.recommendation = absl::StrCat("Find what is consuming ", what, " on ", resource.name,
                                  " and restart or resize it if the usage is not expected.");
  r.evidence = absl::StrCat(fact, "=", FactText(status, fact), "; ", status.summary);
  out.push_back(std::move(r));
}

void Storage(const FleetResource& resource, const FleetStatus& status,
             const std::optional<CapacityForecast>& forecast, const TriageThresholds& t,
             std::vector<FindingReport>& out) {
  std::optional<double> usage = Fact(status, "usage_pct");
  if (!usage.has_value() && forecast.has_value()) {
    usage = forecast->current_pct;
  }
  const bool high = usage.has_value() && *usage >= t.storage_pct;
  const bool filling = forecast.has_value() && forecast->days_to_full.has_value() &&
                       (forecast->reading == ForecastReading::kFilling ||
                        forecast->reading == ForecastReading::kAtCapacity) &&
                       *forecast->days_to_full <= t.forecast_warning_days;
  if (!high && !filling) {
    return;
  }
  const bool critical = (usage.has_value() && *usage >= t.storage_critical_pct) ||
                        (filling && *forecast->days_to_full <= t.forecast_critical_days);
  FindingReport r = Base(resource, kTriageKeyStorageCapacity, Category::kCapacity,
                         critical ? Severity::kCritical : Severity::kWarning);
  r.title = filling ? absl::StrCat("Storage ", resource.name, " is filling up")
                    : absl::StrCat("Storage ", resource.name, " is nearly full");
  r.description = absl::StrCat(
      resource.name, " is ", usage.has_value() ? Pct(*usage) : "an unknown share", " used",
      filling ? absl::StrCat(" and will be full in about ", *forecast->days_to_full, " days") : "",
      ".");
  r.recommendation = absl::StrCat("Free space on ", resource.name,
                                  " or extend it before it fills; check what grows on it.");
  r.evidence = forecast.has_value() ? DescribeForecast(*forecast) : status.summary;
  out.push_back(std::move(r));
}

std::optional<std::int64_t> IntFact(const FleetStatus& status, const char* key) {
  auto it = status.facts.find(key);
  std::int64_t value = 0;
  if (it == status.facts.end() || !absl::SimpleAtoi(it->second, &value)) {
    return std::nullopt;
  }
  return value;
}

// The container rules (docs/patrol.md): crash loop, unhealthy, OOM-killed, memory near its
// limit. True when the memory-limit rule applies (memory-high is then skipped).
bool ContainerRules(const FleetResource& resource, const FleetStatus& status,
                    const std::string& state, const TriageThresholds& t,
                    const TriageHistory& history, std::vector<FindingReport>& out) {
  const std::optional<std::int64_t> restarts = IntFact(status, "restart_count");
  const bool rising = history.restarts_in_window.has_value() &&
                      *history.restarts_in_window >= t.crash_loop_restarts;
  const bool restarting =
      state == "restarting" && restarts.has_value() && *restarts >= t.crash_loop_restarts;
  // An exited container will not restart again: container-exited covers it.
  if (state != "exited" && (rising || restarting)) {
    FindingReport r =
        Base(resource, kTriageKeyContainerCrashLoop, Category::kReliability, Severity::kCritical);
    r.title = absl::StrCat("Container ", resource.name, " is crash-looping");
    r.description = absl::StrCat(
        "Container ", resource.name, " keeps exiting and being restarted",
        rising ? absl::StrCat(" (", *history.restarts_in_window, " restarts in the last ",
                              absl::FormatDuration(t.crash_loop_window), ")")
               : "",
        "; its restart count is ", restarts.has_value() ? absl::StrCat(*restarts) : "unknown", ".");
    r.recommendation =
        "Read the container's logs for the error it exits with, fix the cause (configuration, a "
        "missing dependency, resources), then restart it.";
    r.evidence = absl::StrCat("restart_count=", FactText(status, "restart_count"),
                              "; exit_code=", FactText(status, "exit_code"), "; ", status.summary);
    out.push_back(std::move(r));
  }
  if (FactText(status, "health") == "unhealthy" && state != "exited") {
    FindingReport r =
        Base(resource, kTriageKeyContainerUnhealthy, Category::kReliability, Severity::kWarning);
    r.title = absl::StrCat("Container ", resource.name, " is unhealthy");
    r.description = absl::StrCat("The health check of container ", resource.name, " is failing.");
    r.recommendation =
        "Read the container's logs and its health check's output, fix the cause and restart it.";
    r.evidence = absl::StrCat("health=unhealthy; ", status.summary);
    out.push_back(std::move(r));
  }
  if (FactText(status, "oom_killed") == "true") {
    FindingReport r =
        Base(resource, kTriageKeyContainerOomKilled, Category::kReliability, Severity::kWarning);
    r.title = absl::StrCat("Container ", resource.name, " was killed for lack of memory");
    r.description = absl::StrCat("The kernel's OOM killer ended the main process of container ",
                                 resource.name, ".");
    r.recommendation =
        "Raise the container's memory limit or reduce its memory use, then start it again.";
    r.evidence = absl::StrCat("oom_killed=true; exit_code=", FactText(status, "exit_code"), "; ",
                              status.summary);
    out.push_back(std::move(r));
  }
  const std::optional<double> limit = Fact(status, "memory_limit_bytes");
  if (!limit.has_value() || *limit <= 0) {
    return false;
  }
  const std::optional<double> used = Fact(status, "memory_bytes");
  if (!used.has_value() || *used < 0) {
    return true;
  }
  const double pct = *used / *limit * 100;
  if (pct >= t.memory_pct) {
    FindingReport r = Base(resource, kTriageKeyContainerMemoryLimit, Category::kPerformance,
                           pct >= t.memory_critical_pct ? Severity::kCritical : Severity::kWarning);
    r.title = absl::StrCat("Container ", resource.name, " is near its memory limit");
    r.description = absl::StrCat(resource.name, " uses ", Pct(pct), " of its memory limit (",
                                 FactText(status, "memory_limit_bytes"),
                                 " bytes); at the limit the kernel kills it.");
    r.recommendation = absl::StrCat("Find what grows in ", resource.name,
                                    ", or raise its memory limit if the usage is expected.");
    r.evidence = absl::StrCat("memory_bytes=", FactText(status, "memory_bytes"),
                              "; memory_limit_bytes=", FactText(status, "memory_limit_bytes"), "; ",
                              status.summary);
    out.push_back(std::move(r));
  }
  return true;
}

// Proxmox Backup Server rules (docs/patrol.md): the facts of the proxmox-backup source's
// datastore and backup-group resources (adapters/proxmox/pbs_fleet.h).

constexpr std::array<std::string_view, 3> kPbsKeys = {
    kTriageKeyPbsDatastoreFull, kTriageKeyPbsJobFailed, kTriageKeyPbsBackupStale};

// A PBS task's end state that is a failure: PBS ends a task with "OK", "WARNINGS: N" or the
// error's text ("unknown" when it lost track of it, which is not evidence of a failure).
bool PbsTaskFailed(const std::string& status) {
  return !status.empty() && status != "OK" && status != "unknown" &&
         status.rfind("WARNINGS", 0) != 0;
}

void PbsRules(const FleetResource& resource, const FleetStatus& status, const TriageThresholds& t,
              std::vector<FindingReport>& out) {
  if (resource.type == "datastore") {
    const std::optional<double> usage = Fact(status, "usage_pct");
    if (usage.has_value() && *usage >= t.storage_pct) {
      FindingReport r =
          Base(resource, kTriageKeyPbsDatastoreFull, Category::kCapacity,
               *usage >= t.storage_critical_pct ? Severity::kCritical : Severity::kWarning);
      r.title = absl::StrCat("Backup datastore ", resource.name, " is nearly full");
      r.description = absl::StrCat("Proxmox Backup Server datastore ", resource.name, " is ",
                                   Pct(*usage), " used (threshold ", Pct(t.storage_pct),
                                   "); when it is full, backups to it fail.");
      r.recommendation =
          "Check the prune job's retention and that garbage collection runs (it frees the "
          "chunks pruned snapshots leave), or extend the datastore.";
      r.evidence = absl::StrCat("usage_pct=", FactText(status, "usage_pct"), "; ", status.summary);
      out.push_back(std::move(r));
    }
    std::vector<std::string> failed;
    for (const char* fact : {"gc_status", "verify_job_status", "prune_job_status"}) {
      if (PbsTaskFailed(FactText(status, fact))) {
        failed.push_back(absl::StrCat(fact, "=", FactText(status, fact)));
      }
    }
    const std::optional<std::int64_t> bad = IntFact(status, "failed_verifications");
    if (bad.has_value() && *bad > 0) {
      failed.push_back(absl::StrCat("failed_verifications=", *bad));
    }
    if (!failed.empty()) {
      FindingReport r =
          Base(resource, kTriageKeyPbsJobFailed, Category::kBackup, Severity::kWarning);
      r.title = absl::StrCat("A job on backup datastore ", resource.name, " failed");
      r.description = absl::StrCat(
          "On Proxmox Backup Server datastore ", resource.name,
          ", the last garbage collection, verification or prune job failed, or a backup's "
          "newest snapshot failed verification: ",
          absl::StrJoin(failed, "; "), ".");
      r.recommendation =
          "Read the failed task's log on the Backup Server (Datastore > Tasks), fix the cause "
          "(disk errors, a full datastore, a missing chunk) and run the job again; re-run the "
          "backup of any guest whose snapshot failed verification.";
      r.evidence = status.summary;
      out.push_back(std::move(r));
    }
    return;
  }
  const std::optional<std::int64_t> age = IntFact(status, "last_backup_age_seconds");
  const std::optional<std::int64_t> max_age = IntFact(status, "backup_max_age_seconds");
  if (resource.type == "backup-group" && age.has_value() && max_age.has_value() && *max_age > 0 &&
      *age > *max_age) {
    FindingReport r = Base(resource, kTriageKeyPbsBackupStale, Category::kBackup,
                           *age > 2 * *max_age ? Severity::kCritical : Severity::kWarning);
    const std::string guest = FactText(status, "guest");
    r.title = absl::StrCat("The newest backup of ", guest.empty() ? resource.name : guest, " is ",
                           *age / 3600, " hours old");
    r.description = absl::StrCat("Backup group ", resource.name, " has no snapshot newer than ",
                                 *age / 3600, " hours (expected within ", *max_age / 3600,
                                 " hours): its backup job is failing or no longer runs.");
    r.recommendation =
        "Check the backup job that covers this guest (Proxmox VE Datacenter > Backup) and its "
        "last task's log, then run the backup.";
    r.evidence = absl::StrCat("last_backup_age_seconds=", *age,
                              "; backup_max_age_seconds=", *max_age, "; ", status.summary);
    out.push_back(std::move(r));
  }
}

// ---- Proxmox VE rules (docs/patrol.md, "Proxmox VE") ----------------------------------------

constexpr std::array<std::string_view, 4> kProxmoxKeys = {
    kTriageKeyNodeOffline, kTriageKeyGuestHaStopped, kTriageKeyGuestLocked,
    kTriageKeyBackupOverdue};

std::string Hours(std::int64_t seconds) {
  return absl::StrFormat("%.1f hours", static_cast<double>(seconds) / 3600.0);
}

// A node out of the cluster, or one whose API does not answer, and a guest the HA manager wants
// started that is stopped (its recovery failed or has not happened: either way the service is
// down while the cluster believes it protected).
void ProxmoxRules(const FleetResource& resource, const FleetStatus& status,
                  const std::string& state, std::vector<FindingReport>& out) {
  if (resource.type == "node" && (state == "offline" || state == "unreachable")) {
    const bool offline = state == "offline";
    FindingReport r = Base(resource, kTriageKeyNodeOffline, Category::kReliability,
                           offline ? Severity::kCritical : Severity::kWarning);
    r.title = offline ? absl::StrCat("Node ", resource.name, " is offline")
                      : absl::StrCat("Node ", resource.name, " does not answer");
    r.description =
        offline ? absl::StrCat("The cluster has lost node ", resource.name,
                               ": its guests are not running there and its local storage is "
                               "out of reach.")
                : absl::StrCat("The cluster counts node ", resource.name,
                               " in, but its API does not answer through the cluster (",
                               FactText(status, "api_error"), ").");
    r.recommendation =
        offline ? absl::StrCat("Check ", resource.name,
                               "'s power, network and corosync links; HA-managed guests are "
                               "recovered on other nodes once it is fenced.")
                : absl::StrCat("Check pveproxy and the network between the nodes; ", resource.name,
                               "'s guests cannot be managed until it answers.");
    r.evidence = status.summary;
    out.push_back(std::move(r));
    return;
  }
  if ((resource.type == "vm" || resource.type == "lxc") && state == "stopped" &&
      FactText(status, "ha_state") == "started") {
    FindingReport r =
        Base(resource, kTriageKeyGuestHaStopped, Category::kReliability, Severity::kWarning);
    r.title = absl::StrCat("HA guest ", resource.name, " is stopped");
    r.description = absl::StrCat(resource.name,
                                 " is stopped although the HA manager's requested state is "
                                 "started, so the service it runs is down.");
    r.recommendation =
        "Read the HA manager's log (ha-manager status, the guest's task log) for why it did not "
        "start, fix the cause, then start it or let HA recover it.";
    r.evidence = absl::StrCat("ha_state=started; ", status.summary);
    out.push_back(std::move(r));
  }
  const std::optional<std::int64_t> locked = IntFact(status, "locked_seconds");
  if ((resource.type == "vm" || resource.type == "lxc") && !FactText(status, "lock").empty() &&
      locked.has_value() && *locked >= kTriageGuestLockedSeconds) {
    const std::string lock = FactText(status, "lock");
    FindingReport r =
        Base(resource, kTriageKeyGuestLocked, Category::kReliability, Severity::kWarning);
    r.title =
        absl::StrCat("Guest ", resource.name, " has been locked (", lock, ") for ", Hours(*locked));
    r.description = absl::StrCat(resource.name, " has held its ", lock, " lock since ",
                                 FactText(status, "lock_since"),
                                 "; while it is locked it cannot be started, stopped, migrated or "
                                 "backed up.");
    r.recommendation = absl::StrCat(
        "Read the task that took the lock (", FactText(status, "lock_task"),
        "): if it is still running, find what it waits for; if it ended, remove the stale lock "
        "with `qm unlock` / `pct unlock`.");
    r.evidence = absl::StrCat("lock=", lock, "; locked_seconds=", *locked, "; ", status.summary);
    out.push_back(std::move(r));
  }
  const std::optional<std::int64_t> late = IntFact(status, "overdue_seconds");
  if (resource.type == "backup-job" && state != "running" && state != "disabled" &&
      late.has_value() && *late >= kTriageBackupOverdueSeconds) {
    FindingReport r =
        Base(resource, kTriageKeyBackupOverdue, Category::kBackup, Severity::kWarning);
    r.title = absl::StrCat("Backup job ", resource.name, " is overdue");
    r.description =
        absl::StrCat("Backup job ", resource.name, " (schedule ", FactText(status, "schedule"),
                     ") should have run at ", FactText(status, "next_run_at"), ", ", Hours(*late),
                     " ago, and has not; its guests' newest backup is older than the "
                     "schedule promises.");
    r.recommendation =
        "Check that pvescheduler runs on the cluster's nodes and that the job's storage is "
        "reachable, then run the job now.";
    r.evidence = absl::StrCat("overdue_seconds=", *late, "; ", status.summary);
    out.push_back(std::move(r));
  }
}

// ---- end of the Proxmox VE rules ------------------------------------------------------------

void ApplyLevels(const ThresholdSet& set, TriageThresholds& t) {
  if (set.cpu.has_value()) {
    t.cpu_pct = set.cpu->warning;
    t.cpu_critical_pct = set.cpu->critical;
  }
  if (set.memory.has_value()) {
    t.memory_pct = set.memory->warning;
    t.memory_critical_pct = set.memory->critical;
  }
  if (set.disk.has_value()) {
    t.disk_pct = set.disk->warning;
    t.disk_critical_pct = set.disk->critical;
  }
  if (set.storage.has_value()) {
    t.storage_pct = set.storage->warning;
    t.storage_critical_pct = set.storage->critical;
  }
}

}  // namespace

TriageThresholds EffectiveThresholds(const PatrolThresholdSettings& settings,
                                     const FleetResource& resource, TriageThresholds base) {
  ApplyLevels(settings.defaults, base);
  if (auto it = settings.resource_types.find(resource.type); it != settings.resource_types.end()) {
    ApplyLevels(it->second, base);
  }
  if (auto it = settings.resources.find(resource.id); it != settings.resources.end()) {
    ApplyLevels(it->second, base);
  }
  return base;
}

TriageHistory RestartObservations::Observe(const FleetResource& resource, const FleetStatus& status,
                                           absl::Time now, absl::Duration window) {
  const std::optional<std::int64_t> count = IntFact(status, "restart_count");
  if (resource.type != "app-container" || !count.has_value() || *count < 0) {
    return {};
  }
  const auto identity = resource.attributes.find("container_id");
  const std::string id_text = identity == resource.attributes.end() ? "" : identity->second;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(resource.id);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxRestartResources) {
      for (auto e = entries_.begin(); e != entries_.end();) {
        e = e->second.samples.empty() || e->second.samples.back().at < now - window
                ? entries_.erase(e)
                : std::next(e);
      }
      if (entries_.size() >= kMaxRestartResources) {
        return {};
      }
    }
    it = entries_.emplace(resource.id, Entry{}).first;
  }
  Entry& e = it->second;
  if (e.identity != id_text || (!e.samples.empty() && e.samples.back().count > *count)) {
    e = Entry{id_text, {}};
  }
  std::vector<Sample>& s = e.samples;
  s.erase(s.begin(),
          std::find_if(s.begin(), s.end(), [&](const Sample& x) { return x.at >= now - window; }));
  if (s.size() >= kMaxRestartSamples) {
    s.erase(s.begin());
  }
  s.push_back({now, *count});
  TriageHistory h;
  if (s.size() >= 2) {
    h.restarts_in_window = *count - s.front().count;
  }
  return h;
}

TriageHistory RestartObservations::Peek(const FleetResource& resource, const FleetStatus& status,
                                        absl::Time now, absl::Duration window) const {
  const std::optional<std::int64_t> count = IntFact(status, "restart_count");
  if (resource.type != "app-container" || !count.has_value()) {
    return {};
  }
  const auto identity = resource.attributes.find("container_id");
  const std::string id_text = identity == resource.attributes.end() ? "" : identity->second;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(resource.id);
  if (it == entries_.end() || it->second.identity != id_text) {
    return {};
  }
  for (const Sample& x : it->second.samples) {
    if (x.at >= now - window && x.count <= *count) {
      TriageHistory h;
      h.restarts_in_window = *count - x.count;
      return h;
    }
  }
  return {};
}

std::size_t RestartObservations::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

std::vector<FindingReport> TriageResource(const FleetResource& resource, const FleetStatus& status,
                                          const std::optional<CapacityForecast>& forecast,
                                          const TriageThresholds& t, const TriageHistory& history) {
  std::vector<FindingReport> out;
  const std::string& type = resource.type;
  const std::string& state = status.status.empty() ? resource.status : status.status;
  if (type == "storage") {
    Storage(resource, status, forecast, t, out);
    return out;
  }
  if (type == "datastore" || type == "backup-group") {
    PbsRules(resource, status, t, out);
    return out;
  }
  ProxmoxRules(resource, status, state, out);
  if (type == "backup-job") {
    if (state == "failed" || FactText(status, "last_result") == "failed") {
      FindingReport r =
          Base(resource, kTriageKeyBackupFailed, Category::kBackup, Severity::kWarning);
      r.title = absl::StrCat("Backup job ", resource.name, " failed");
      r.description = absl::StrCat("The last run of backup job ", resource.name,
                                   " failed, so its targets have no fresh backup.");
      r.recommendation = "Check the job's storage and logs, then run the backup again.";
      r.evidence = status.summary;
      out.push_back(std::move(r));
    }
    return out;
  }
  if (type == "app-container" && state == "exited") {
    const std::string code = FactText(status, "exit_code");
    if (!code.empty() && code != "0") {
      FindingReport r =
          Base(resource, kTriageKeyContainerExited, Category::kReliability, Severity::kWarning);
      r.title = absl::StrCat("Container ", resource.name, " has exited");
      r.description = absl::StrCat("Container ", resource.name, " exited with code ", code,
                                   " and is not running.");
      r.recommendation = "Read the container's logs, fix the cause and start it again.";
      r.evidence = absl::StrCat("exit_code=", code, "; ", status.summary);
      out.push_back(std::move(r));
    }
  }
  const bool memory_limited =
      type == "app-container" && ContainerRules(resource, status, state, t, history, out);
  if (type == "service" && state == "failed") {
    const bool loop = FactText(status, "sub_state") == "auto-restart";
    FindingReport r = Base(resource, loop ? kTriageKeyServiceCrashLoop : kTriageKeyServiceFailed,
                           Category::kReliability, Severity::kWarning);
    r.title = loop ? absl::StrCat("Service ", resource.name, " is crash-looping")
                   : absl::StrCat("Service ", resource.name, " has failed");
    r.description = absl::StrCat("Service ", resource.name, " is failed",
                                 loop ? absl::StrCat(" and keeps restarting (restart count ",
                                                     FactText(status, "restart_count"), ")")
                                      : "",
                                 ".");
    r.recommendation = "Read the unit's journal, fix the cause and restart it.";
    r.evidence = status.summary;
    out.push_back(std::move(r));
  }
  Utilization(resource, status, "cpu_pct", kTriageKeyCpuHigh, "CPU", t.cpu_pct, t.cpu_critical_pct,
              Category::kPerformance, out);
  if (!memory_limited) {
    Utilization(resource, status, "memory_pct", kTriageKeyMemoryHigh, "memory", t.memory_pct,
                t.memory_critical_pct, Category::kPerformance, out);
  }
  Utilization(resource, status, "disk_pct", kTriageKeyDiskHigh, "disk", t.disk_pct,
              t.disk_critical_pct, Category::kCapacity, out);
  return out;
}

bool IsTriageKey(std::string_view key) {
  static constexpr std::array<std::string_view, 12> kKeys = {kTriageKeyCpuHigh,
                                                             kTriageKeyMemoryHigh,
                                                             kTriageKeyDiskHigh,
                                                             kTriageKeyStorageCapacity,
                                                             kTriageKeyBackupFailed,
                                                             kTriageKeyContainerExited,
                                                             kTriageKeyServiceCrashLoop,
                                                             kTriageKeyServiceFailed,
                                                             kTriageKeyContainerCrashLoop,
                                                             kTriageKeyContainerUnhealthy,
                                                             kTriageKeyContainerOomKilled,
                                                             kTriageKeyContainerMemoryLimit};
  for (std::string_view k : kKeys) {
    if (k == key) {
      return true;
    }
  }
  return std::find(kPbsKeys.begin(), kPbsKeys.end(), key) != kPbsKeys.end() ||
         std::find(kProxmoxKeys.begin(), kProxmoxKeys.end(), key) != kProxmoxKeys.end();
}

std::optional<CapacityForecast> StorageForecast(const FleetResource& resource,
                                                const MetricsHistory& metrics, absl::Time now) {
  if (resource.type != "storage") {
    return std::nullopt;
  }
  absl::StatusOr<std::vector<MetricSample>> samples =
      metrics.Samples(resource.id, kStorageUsageMetric, now - kForecastWindow, now);
  if (!samples.ok()) {
    return std::nullopt;
  }
  return ComputeCapacityForecast(kStorageUsageMetric, *samples);
}

bool TriageFindingVerifier::CanVerify(const Finding& finding) const {
  return IsTriageKey(finding.key);
}

absl::StatusOr<VerifierVerdict> TriageFindingVerifier::Verify(const Finding& finding) {
  if (!CanVerify(finding)) {
    return VerifierVerdict::kInconclusive;
  }
  absl::StatusOr<FleetResource> resource = fleet_.GetResource(finding.resource_id);
  if (absl::IsNotFound(resource.status())) {
    return VerifierVerdict::kSignalGone;
  }
  if (!resource.ok()) {
    return VerifierVerdict::kInconclusive;
  }
  absl::StatusOr<FleetStatus> status = fleet_.GetStatus(resource->id);
  if (!status.ok()) {
    return VerifierVerdict::kInconclusive;
  }
  // An operation in flight (a restart landing) is not yet an answer.
  if (status->facts.count("operation") > 0) {
    return VerifierVerdict::kInconclusive;
  }
  const absl::Time now = clock_.Now();
  const std::optional<CapacityForecast> forecast = StorageForecast(*resource, metrics_, now);
  TriageThresholds thresholds = thresholds_;
  if (levels_ != nullptr) {
    if (absl::StatusOr<PatrolThresholdSettings> saved = levels_->LoadThresholds(); saved.ok()) {
      thresholds = EffectiveThresholds(*saved, *resource, thresholds_);
    }
  }
  const TriageHistory history =
      restarts_.Peek(*resource, *status, now, thresholds.crash_loop_window);
  for (const FindingReport& r : TriageResource(*resource, *status, forecast, thresholds, history)) {
    if (r.key == finding.key) {
      return VerifierVerdict::kSignalPresent;
    }
  }
  return VerifierVerdict::kSignalGone;
}

}  // namespace pulse::core
