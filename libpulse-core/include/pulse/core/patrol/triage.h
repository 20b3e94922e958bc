// Deterministic Patrol triage: the checks that need no model. Each rule reads one resource's
// live status (FleetStatus facts, as the Fleet port reports them) and, for storage, its
// capacity forecast, and yields at most one finding report per (resource, key):
//   cpu-high      performance  cpu_pct >= cpu (warning), >= 98 (critical)
//   memory-high   performance  memory_pct >= memory (warning), >= 98 (critical)
//   disk-high     capacity     disk_pct >= disk (warning), >= 95 (critical)
//   storage-capacity capacity  usage_pct >= storage, or filling with days_to_full <= 30
//                              (critical at >= 95 % or days_to_full <= 7)
//   backup-failed backup       a backup job whose status or last_result is failed
//   container-exited reliability  an app container exited with a non-zero exit code
//   container-crash-loop reliability  an app container's restart_count rose by >= 2 within
//                              the crash-loop window (RestartObservations), or it is
//                              `restarting` with restart_count >= 2 (critical)
//   container-unhealthy reliability  an app container whose health is `unhealthy`
//   container-oom-killed reliability  an app container whose oom_killed is `true`
//   container-memory-limit performance  an app container with memory_limit_bytes > 0 using
//                              memory_bytes >= memory % of it (critical >= 98 %); it replaces
//                              memory-high for that container
//   service-crash-loop / service-failed reliability  a service failed (auto-restart = loop)
//   pbs-datastore-full capacity  a Proxmox Backup Server datastore with usage_pct >= storage
//                              (critical at >= 95 %)
//   pbs-job-failed backup      a datastore whose last garbage collection, verification job or
//                              prune job ended with an error (gc_status, verify_job_status,
//                              prune_job_status), or with failed_verifications > 0
//   pbs-backup-stale backup    a backup group whose newest snapshot is older than its
//                              backup_max_age_seconds (critical at twice that)
//   node-offline  reliability  a node the cluster lists offline (critical), or that it counts in
//                              but whose API does not answer: status unreachable (warning)
//   guest-ha-stopped reliability  a vm or lxc that is stopped while the HA manager wants it
//                              started (fact ha_state)
//   guest-locked  reliability  a vm or lxc whose lock (backup, migrate, snapshot, ...) has been
//                              held for >= 3 h (fact locked_seconds, from the task log)
//   backup-overdue backup      an enabled backup job whose scheduled run is >= 1 h late (fact
//                              overdue_seconds) and not running
// The same rules answer "is the signal still there" for the deterministic finding verifier
// (TriageFindingVerifier). Pure functions over values, except the verifier (Fleet port).
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/patrol_thresholds.h"
#include "pulse/core/ports/finding_verifier.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/patrol_run_store.h"

namespace pulse::core {

// Finding keys of the deterministic rules.
inline constexpr std::string_view kTriageKeyCpuHigh = "cpu-high";
inline constexpr std::string_view kTriageKeyMemoryHigh = "memory-high";
inline constexpr std::string_view kTriageKeyDiskHigh = "disk-high";
inline constexpr std::string_view kTriageKeyStorageCapacity = "storage-capacity";
inline constexpr std::string_view kTriageKeyBackupFailed = "backup-failed";
inline constexpr std::string_view kTriageKeyContainerExited = "container-exited";
inline constexpr std::string_view kTriageKeyServiceCrashLoop = "service-crash-loop";
inline constexpr std::string_view kTriageKeyServiceFailed = "service-failed";
inline constexpr std::string_view kTriageKeyContainerCrashLoop = "container-crash-loop";
inline constexpr std::string_view kTriageKeyContainerUnhealthy = "container-unhealthy";
inline constexpr std::string_view kTriageKeyContainerOomKilled = "container-oom-killed";
inline constexpr std::string_view kTriageKeyContainerMemoryLimit = "container-memory-limit";
// Proxmox Backup Server rules (the proxmox-backup source's datastore and backup-group facts).
inline constexpr std::string_view kTriageKeyPbsDatastoreFull = "pbs-datastore-full";
inline constexpr std::string_view kTriageKeyPbsJobFailed = "pbs-job-failed";
inline constexpr std::string_view kTriageKeyPbsBackupStale = "pbs-backup-stale";
// The Proxmox VE rules (docs/patrol.md, "Proxmox VE").
inline constexpr std::string_view kTriageKeyNodeOffline = "node-offline";
inline constexpr std::string_view kTriageKeyGuestHaStopped = "guest-ha-stopped";
inline constexpr std::string_view kTriageKeyGuestLocked = "guest-locked";
inline constexpr std::string_view kTriageKeyBackupOverdue = "backup-overdue";
// A guest lock held this long is stuck (a backup of a large disk takes hours, so less is not).
inline constexpr std::int64_t kTriageGuestLockedSeconds = 3 * 3600;
// A scheduled backup this late has been missed, not merely delayed by a busy scheduler.
inline constexpr std::int64_t kTriageBackupOverdueSeconds = 3600;
// The source deterministic findings carry.
inline constexpr char kTriageFindingSource[] = "patrol-triage";
// The metric a storage pool's forecast reads (MetricsHistory, target = the canonical id).
inline constexpr std::string_view kStorageUsageMetric = "usage";

// The warning levels (*_pct) and critical levels (*_critical_pct) of the utilization rules;
// the operator's settings (patrol_thresholds.h) choose them per resource.
struct TriageThresholds {
  double cpu_pct = 90;
  double memory_pct = 90;
  double disk_pct = 85;
  double storage_pct = 85;
  double cpu_critical_pct = 98;
  double memory_critical_pct = 98;
  double disk_critical_pct = 95;
  double storage_critical_pct = 95;
  std::int64_t forecast_warning_days = 30;
  std::int64_t forecast_critical_days = 7;
  // A container crash-loops when its restart_count rose by at least `crash_loop_restarts`
  // within `crash_loop_window` (or it is restarting with at least that many restarts).
  std::int64_t crash_loop_restarts = 2;
  absl::Duration crash_loop_window = absl::Minutes(30);
};

// `base` with the operator's levels for `resource` (docs/patrol.md "Thresholds"): its id's
// override, else its type's, else the settings' defaults, metric by metric. The crash-loop and
// forecast fields of `base` are kept. Default settings give TriageThresholds{}'s levels.
TriageThresholds EffectiveThresholds(const PatrolThresholdSettings& settings,
                                     const FleetResource& resource, TriageThresholds base = {});

// What earlier observations of the same resource saw (RestartObservations): the restart
// count's rise within the crash-loop window. nullopt: no earlier observation in the window.
struct TriageHistory {
  std::optional<std::int64_t> restarts_in_window;
};

// Restart counts of app containers across observations, so a crash loop is seen as a rising
// restart_count (docs/patrol.md). Keyed by resource id; a different `container_id` attribute
// (a container recreated under the same name) or a lower count starts afresh. Bounded: at most
// kMaxRestartSamples per resource and kMaxRestartResources resources (past that, resources not
// seen within the window are dropped, then new ones are not remembered). In memory only: a
// restarted server sees a loop again after two observations. Thread-safe.
class RestartObservations final {
 public:
  static constexpr std::size_t kMaxRestartSamples = 16;
  static constexpr std::size_t kMaxRestartResources = 4096;

  // Records this observation (`now` from the caller's clock) and answers the rise since the
  // oldest sample within `window`, this one included.
  TriageHistory Observe(const FleetResource& resource, const FleetStatus& status, absl::Time now,
                        absl::Duration window);
  // The same answer without recording (the verifier's re-check).
  TriageHistory Peek(const FleetResource& resource, const FleetStatus& status, absl::Time now,
                     absl::Duration window) const;
  std::size_t size() const;

 private:
  struct Sample {
    absl::Time at;
    std::int64_t count = 0;
  };
  struct Entry {
    std::string identity;
    std::vector<Sample> samples;  // oldest first
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// The reports the rules produce for one resource, in rule order. `forecast` is the storage
// pool's forecast (ignored for other types).
std::vector<FindingReport> TriageResource(const FleetResource& resource, const FleetStatus& status,
                                          const std::optional<CapacityForecast>& forecast,
                                          const TriageThresholds& thresholds = {},
                                          const TriageHistory& history = {});

// True when `key` is one of the deterministic rule keys above.
bool IsTriageKey(std::string_view key);

// The FindingVerifier over the triage rules: it can verify any finding whose key is a triage
// key, by reading the resource's live status (and forecast) again and running the rules: the
// key no longer produced → signal gone; produced → present; the resource unreadable →
// inconclusive (a resource that no longer exists is gone). Borrows the fleet and the
// findings' metrics history, which must outlive it. It owns the RestartObservations Patrol's
// triage records into (PatrolServiceOptions::restart_observations) and only peeks at them.
class TriageFindingVerifier final : public FindingVerifier {
 public:
  // `levels` (nullable borrow): where the operator's thresholds are saved; each Verify reads
  // them as Patrol's triage does, so a re-check judges by the levels that raised the finding.
  TriageFindingVerifier(Fleet& fleet, const MetricsHistory& metrics, const Clock& clock,
                        TriageThresholds thresholds = {}, const PatrolRunStore* levels = nullptr)
      : fleet_(fleet), metrics_(metrics), clock_(clock), thresholds_(thresholds), levels_(levels) {}

  bool CanVerify(const Finding& finding) const override;
  absl::StatusOr<VerifierVerdict> Verify(const Finding& finding) override;

  RestartObservations& restart_observations() { return restarts_; }

 private:
  Fleet& fleet_;
  const MetricsHistory& metrics_;
  const Clock& clock_;
  TriageThresholds thresholds_;
  const PatrolRunStore* levels_;
  RestartObservations restarts_;
};

// The storage forecast of a resource over [now - window, now] (metric kStorageUsageMetric);
// nullopt for non-storage resources.
std::optional<CapacityForecast> StorageForecast(const FleetResource& resource,
                                                const MetricsHistory& metrics, absl::Time now);

}  // namespace pulse::core
