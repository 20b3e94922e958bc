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
//   service-crash-loop / service-failed reliability  a service failed (auto-restart = loop)
// The same rules answer "is the signal still there" for the deterministic finding verifier
// (TriageFindingVerifier). Pure functions over values, except the verifier (Fleet port).
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/ports/finding_verifier.h"
#include "pulse/core/ports/fleet.h"

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
// The source deterministic findings carry.
inline constexpr char kTriageFindingSource[] = "patrol-triage";
// The metric a storage pool's forecast reads (MetricsHistory, target = the canonical id).
inline constexpr std::string_view kStorageUsageMetric = "usage";

struct TriageThresholds {
  double cpu_pct = 90;
  double memory_pct = 90;
  double disk_pct = 85;
  double storage_pct = 85;
  std::int64_t forecast_warning_days = 30;
  std::int64_t forecast_critical_days = 7;
};

// The reports the rules produce for one resource, in rule order. `forecast` is the storage
// pool's forecast (ignored for other types).
std::vector<FindingReport> TriageResource(const FleetResource& resource, const FleetStatus& status,
                                          const std::optional<CapacityForecast>& forecast,
                                          const TriageThresholds& thresholds = {});

// True when `key` is one of the deterministic rule keys above.
bool IsTriageKey(std::string_view key);

// The FindingVerifier over the triage rules: it can verify any finding whose key is a triage
// key, by reading the resource's live status (and forecast) again and running the rules: the
// key no longer produced → signal gone; produced → present; the resource unreadable →
// inconclusive (a resource that no longer exists is gone). Borrows the fleet and the
// findings' metrics history, which must outlive it.
class TriageFindingVerifier final : public FindingVerifier {
 public:
  TriageFindingVerifier(Fleet& fleet, const MetricsHistory& metrics, const Clock& clock,
                        TriageThresholds thresholds = {})
      : fleet_(fleet), metrics_(metrics), clock_(clock), thresholds_(thresholds) {}

  bool CanVerify(const Finding& finding) const override;
  absl::StatusOr<VerifierVerdict> Verify(const Finding& finding) override;

 private:
  Fleet& fleet_;
  const MetricsHistory& metrics_;
  const Clock& clock_;
  TriageThresholds thresholds_;
};

// The storage forecast of a resource over [now - window, now] (metric kStorageUsageMetric);
// nullopt for non-storage resources.
std::optional<CapacityForecast> StorageForecast(const FleetResource& resource,
                                                const MetricsHistory& metrics, absl::Time now);

}  // namespace pulse::core
