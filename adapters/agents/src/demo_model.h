// The demo fleet's world: resources with their base state, overlays (faults, a change in
// flight), logs, metric series and configs; the rules that derive what the outside sees
// (effective status, capability catalogue, the observer's snapshot); and the state changes
// (landing a capability, injecting and clearing faults). Plain values; the caller (DemoFleet)
// serializes access.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fleet_queries.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::adapters::agents::internal {

inline constexpr std::size_t kDemoMaxStoredLogLines = 500;
inline constexpr std::size_t kDemoMaxSeriesPoints = 5000;

enum class Kind { kNode, kVm, kContainer, kStorage, kBackupJob, kService };

struct Series {
  std::string unit;
  std::vector<core::FleetMetricPoint> points;  // ascending time
  double baseline = 0;                         // the level a (re)started resource returns to
};

// A dispatched capability whose effect has not landed yet.
struct PendingChange {
  std::string capability;
  std::string params_json;
  std::string action_id;
  absl::Time dispatched_at;
  absl::Time due;
};

struct DemoResource {
  Kind kind = Kind::kNode;
  // Identity and descriptive facts; `status` here is the base status, before overlays.
  core::FleetResource base;
  std::int64_t vmid = 0;             // vm
  std::string unit;                  // service: nginx.service
  std::string image;                 // app-container
  std::string storage_id;            // backup-job
  std::vector<std::string> targets;  // backup-job
  std::string schedule;              // backup-job
  std::string config_json;           // pretty JSON, secrets already redacted
  bool config_redacted = false;
  std::deque<TimedLine> logs;  // oldest first, at most kDemoMaxStoredLogLines
  std::map<std::string, Series> metrics;
  absl::Time started_at;                  // running since (vm, container, service)
  std::optional<absl::Time> reloaded_at;  // service
  std::optional<absl::Time> last_run_at;  // backup-job
  int restart_count = 0;
  std::uint64_t revision = 1;
  std::map<DemoFaultKind, DemoFault> faults;
  std::optional<PendingChange> pending;
};

struct DemoWorld {
  std::map<std::string, DemoResource> resources;  // by canonical id
  std::vector<core::FleetRelationship> relationships;
  std::map<std::string, core::DispatchReceipt> receipts;  // by attempt id
  // Attempts made under a dispatch_hangs fault (attempt id -> resource id): their answer was
  // lost, and a repeat is not answered either while that resource keeps the fault.
  std::map<std::string, std::string> unanswered;
};

// What the observer can see of one resource.
struct ObservedState {
  std::string status;
  bool busy = false;  // a change is in flight
  absl::Time started_at;
  std::optional<absl::Time> reloaded_at;
  std::optional<absl::Time> last_run_at;
};

// The observer's snapshot, replaced wholesale after every change of the world.
class ObserverView {
 public:
  void Publish(std::map<std::string, ObservedState> snapshot) {
    absl::MutexLock lock(&mu_);
    snapshot_ = std::move(snapshot);
  }
  std::optional<ObservedState> Get(const std::string& id) const {
    absl::MutexLock lock(&mu_);
    auto it = snapshot_.find(id);
    if (it == snapshot_.end()) {
      return std::nullopt;
    }
    return it->second;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, ObservedState> snapshot_ ABSL_GUARDED_BY(mu_);
};

// Every fault kind, in declaration order: ParseDemoFaultKind and the loader's error read it.
inline constexpr DemoFaultKind kAllDemoFaultKinds[] = {
    DemoFaultKind::kExited,         DemoFaultKind::kCrashLoop,   DemoFaultKind::kHighMemory,
    DemoFaultKind::kBackupFailed,   DemoFaultKind::kActionFails, DemoFaultKind::kDispatchHangs,
    DemoFaultKind::kDispatchThrows,
};
// Their wire names, comma-separated ("exited, crash_loop, ...").
std::string DemoFaultKindNames();

std::string_view KindType(Kind kind);  // node, vm, app-container, storage, backup-job, service

// ---- derived views ----------------------------------------------------------------------

// The status the outside sees: a change in flight shows its transitional status, then fault
// overlays, then the base status.
std::string EffectiveStatus(const DemoResource& r);
// The resource as the Fleet port returns it (effective status, revision "r<n>").
core::FleetResource PublicView(const DemoResource& r);
ObservedState ObserverSnapshot(const DemoResource& r);
// The capabilities the resource offers in its current state (none while a change is in
// flight). Every entry passes core::ValidateCapability.
std::vector<core::Capability> CatalogueFor(const DemoResource& r);
// The node a resource runs on, walking up parents ("" when it has none).
std::string HostNodeOf(const DemoWorld& world, const std::string& id);
core::FleetStatus StatusOf(const DemoWorld& world, const DemoResource& r, absl::Time now);

// ---- changes ----------------------------------------------------------------------------

void AppendLog(DemoResource& r, absl::Time at, std::string text);
// Appends (or, at the same timestamp, replaces) the newest point of a metric series.
void RecordMetric(DemoResource& r, const std::string& metric, absl::Time at, double value);
// Records the up (1/0) metric from the effective status.
void RecordUp(DemoResource& r, absl::Time at);
// Lands a pending change whose time has come.
void LandChange(DemoResource& r, absl::Time at);
// Applies or removes a fault's visible effects (status, logs, metrics, revision).
void ApplyFault(DemoResource& r, DemoFault fault, absl::Time at);
void RemoveFault(DemoResource& r, DemoFaultKind kind, absl::Time at);
// InvalidArgument when `kind` does not apply to the resource's type.
absl::Status CheckFaultApplies(const DemoResource& r, DemoFaultKind kind);

// The transitional status shown while `capability` is in flight.
std::string_view TransitionalStatus(const DemoResource& r, std::string_view capability);

// ---- loading and simulation -------------------------------------------------------------

// Parses and validates the fleet file (see docs/demo-fleet.md). Histories end at
// `history_end`; initial logs and faults are stamped there too.
absl::StatusOr<DemoWorld> LoadDemoWorld(std::string_view json, absl::Time history_end);

// Answers an accepted read-only command (argv from core::ClassifyExecCommand) on `host`.
core::ExecOutput SimulateCommand(const DemoWorld& world, const DemoResource& host,
                                 const std::vector<std::string>& argv, absl::Time now);

}  // namespace pulse::adapters::agents::internal
