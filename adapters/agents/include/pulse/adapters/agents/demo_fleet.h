// DemoFleet: the Fleet port over a simulated fleet loaded from a JSON file (the shipped
// adapters/agents/fleet/demo-fleet.json, schema in docs/demo-fleet.md): nodes, VMs, app
// containers, storage pools, backup jobs and services with metric histories, logs, configs and
// faults. It is the embedded default, so a fresh install has something real to investigate and
// act on: a dispatched capability really changes the simulated state (after a configurable
// delay), and an observer that reads a separately published snapshot, in its own trust domain,
// confirms or contradicts the result.
// Thread-safety: every method may be called concurrently (one mutex guards the world, another
// the observer's snapshot). Lifetime: borrows options.clock, which must outlive the fleet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/metrics_history.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::adapters::agents {

namespace internal {
struct DemoWorld;
struct ObservedState;
class ObserverView;
}  // namespace internal

// Faults a test (or a demo operator) can stage. Wire names: exited, crash_loop, high_memory,
// backup_failed, action_fails, dispatch_hangs, dispatch_throws.
enum class DemoFaultKind {
  kExited,        // app-container: shows exited (exit code 1) until started or cleared
  kCrashLoop,     // service: failed and restarting; restart/start end it
  kHighMemory,    // vm, app-container, node: memory ~96 %; a (re)start ends it
  kBackupFailed,  // backup-job: the last run failed; a successful run-now ends it
  kActionFails,   // any resource with capabilities: every dispatch fails without effect
  // Any resource with capabilities: the agent applies a dispatch but its answer never comes
  // back, so Dispatch waits options.dispatch_timeout and returns DeadlineExceeded.
  kDispatchHangs,
  // Any resource with capabilities: the agent applies a dispatch, then Dispatch throws
  // (std::runtime_error), as an adapter with a bug would: tests that a failure after a
  // dispatch began still counts as a dispatched change. A repeated attempt id is answered.
  kDispatchThrows,
};
std::string_view ToString(DemoFaultKind kind);
std::optional<DemoFaultKind> ParseDemoFaultKind(std::string_view text);

struct DemoFault {
  std::string resource_id;
  DemoFaultKind kind = DemoFaultKind::kExited;
  // A persistent fault survives the capability that would normally end it, so its
  // postcondition is contradicted (a restart that does not fix the crash loop).
  bool persistent = false;
  absl::Time since;

  friend bool operator==(const DemoFault&, const DemoFault&) = default;
};

struct DemoFleetOptions {
  // How long after Dispatch the simulated change lands; meanwhile the resource shows a
  // transitional status (starting, stopping, restarting, reloading, running) and offers no
  // capabilities. Zero applies the change inside Dispatch.
  absl::Duration dispatch_delay = absl::Seconds(3);
  // How long Dispatch waits for the agent's answer before it gives up with DeadlineExceeded.
  // Only a dispatch_hangs fault makes the answer not come: the wait is then this long (through
  // `sleep`, without holding the fleet's lock). Default 10 s.
  absl::Duration dispatch_timeout = absl::Seconds(10);
  // How long ObservePostcondition waits for a change still in flight before answering
  // inconclusive, and how often it looks again meanwhile.
  absl::Duration observe_timeout = absl::Seconds(30);
  absl::Duration observe_poll_interval = absl::Milliseconds(200);
  // Borrowed; nullptr means the system clock.
  const core::Clock* clock = nullptr;
  // How the observer waits between looks and a hung dispatch waits for its answer; empty
  // means absl::SleepFor. Tests with a FakeClock pass a function that advances it.
  std::function<void(absl::Duration)> sleep;
  // Where generated metric histories end; default: the clock's time at Open, floored to the
  // hour. Histories step back from here by each series' interval.
  std::optional<absl::Time> history_end;
};

class DemoFleet final : public core::Fleet {
 public:
  // Loads and validates the fleet file. NotFound / PermissionDenied when it cannot be read;
  // InvalidArgument naming the JSON path ($.vms[3].node) for malformed or inconsistent
  // content: unknown fields, bad or duplicate canonical ids, dangling references, bad statuses,
  // bad series, faults that do not apply to their resource.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DemoFleet>> Open(
      const std::string& path, DemoFleetOptions options = {});
  // The same from JSON text (tests, embedding).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DemoFleet>> OpenFromJson(
      std::string_view json, DemoFleetOptions options = {});
  // Opens the shipped file from the first of DefaultPaths() that exists; NotFound naming them
  // when none does.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DemoFleet>> OpenDefault(
      DemoFleetOptions options = {});
  // Where the shipped file is looked for: the source tree it was built from, then the
  // installed data directory (<prefix>/share/pulse/demo-fleet.json).
  static std::vector<std::string> DefaultPaths();

  ~DemoFleet() override;
  DemoFleet(const DemoFleet&) = delete;
  DemoFleet& operator=(const DemoFleet&) = delete;

  // ---- core::Fleet ------------------------------------------------------------------------
  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  // True: the fleet is the file as loaded plus its simulation, all in memory (a dispatch that
  // hangs waits without the lock listings take).
  bool ListsFromMemory() const override { return true; }
  // Advanced with every change a listing shows (a dispatched change accepted or landed, a fault
  // injected or cleared: each republishes the observer snapshot); changes that are due land
  // first.
  std::optional<std::uint64_t> ListingGeneration() override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  // Sources: "" (the resource's own log) or its name / unit name; NotFound for any other.
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  // JSON, secrets (password, secret, token, *_key, ...) replaced by "***" and flagged.
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  // Codes: InvalidArgument (no attempt id, params that fail the capability's schema or range),
  // NotFound (unknown resource), FailedPrecondition (the capability is not in the resource's
  // current catalogue, e.g. start on a running VM or anything while an operation is in
  // flight). A repeated attempt id returns the first receipt and changes nothing. With an
  // action_fails fault the receipt is failed (reason simulated_failure) and nothing changes.
  // With a dispatch_hangs fault the dispatch takes effect as it would without the fault (or
  // fails, with action_fails too) and is recorded under its attempt id, but its answer is lost:
  // after options.dispatch_timeout it returns DeadlineExceeded ("<capability> of <id>: no
  // answer from <executor> within <timeout>"). A repeated attempt id never takes effect again:
  // while the fault lasts it times out the same way; once cleared it returns the first receipt.
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  // Waits (up to options.observe_timeout) while the resource is still transitioning, then
  // confirms or contradicts the capability's end state from the observer's snapshot.
  // NotFound for an unknown resource.
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;

  // ---- identity translation ---------------------------------------------------------------
  // Maps a provider coordinate to its canonical id: a canonical id, a display name (web-01),
  // a numeric vmid (101), a container name, a unit name (nginx or nginx.service), a node-local
  // path (pve1/nginx). NotFound when nothing matches, FailedPrecondition listing the
  // candidates when several do (nginx runs on two nodes), InvalidArgument for junk.
  [[nodiscard]] absl::StatusOr<std::string> ResolveReference(std::string_view reference) const;

  // ---- pulse_read action=exec (core::Fleet) -----------------------------------------------
  // Answers a read-only command on a node, VM or container (a service or storage pool answers
  // from its node) from the simulated state. The command must pass core::ClassifyExecCommand
  // (checked here again, whatever the caller checked): otherwise PermissionDenied
  // "<refusal>: <reason>" and nothing runs. NotFound for an unknown resource,
  // FailedPrecondition for a backup job (it has no shell). Simulated: systemctl
  // status/is-active/list-units, journalctl, df, free, uptime, uname, hostname, ps, cat/head/
  // tail of /var/log/syslog /etc/hostname /etc/os-release /proc/loadavg /proc/meminfo and a
  // node's /etc/pve/qemu-server/<vmid>.conf, ip addr, qm list/status/config, docker ps/logs,
  // date, whoami, id; other accepted commands answer a one-line note (exit 0).
  [[nodiscard]] absl::StatusOr<core::ExecOutput> RunReadOnlyCommand(
      std::string_view resource_id, std::string_view command) override;

  // ---- staging ----------------------------------------------------------------------------
  // Activates a fault; re-injecting an active fault only updates `persistent`. NotFound for an
  // unknown resource, InvalidArgument when the kind does not apply to its type. The change
  // shows in status, logs and metrics at once.
  [[nodiscard]] absl::Status InjectFault(std::string_view resource_id, DemoFaultKind kind,
                                         bool persistent = false);
  // Ends a fault. NotFound when the resource is unknown or the fault is not active.
  [[nodiscard]] absl::Status ClearFault(std::string_view resource_id, DemoFaultKind kind);
  std::vector<DemoFault> ActiveFaults();

  // ---- metrics history --------------------------------------------------------------------
  // Samples of `metric` for a canonical id (or a reference ResolveReference maps uniquely)
  // with start <= at <= end. Unknown targets and metrics have no samples.
  [[nodiscard]] absl::StatusOr<std::vector<core::MetricSample>> MetricSamples(
      std::string_view target, std::string_view metric, absl::Time start, absl::Time end);

 private:
  DemoFleet(std::unique_ptr<internal::DemoWorld> world, DemoFleetOptions options,
            std::unique_ptr<core::Clock> owned_clock);

  absl::Time Now() const;
  // Dispatch under the lock: the receipt, or why there is none. Sets *hangs when the
  // answer is lost (the caller then waits options.dispatch_timeout without the lock).
  absl::StatusOr<core::DispatchReceipt> DispatchLocked(const core::DispatchRequest& request,
                                                       bool* hangs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits options.dispatch_timeout (options.sleep when set) and says the answer never came.
  absl::Status HangUp(const core::DispatchRequest& request, const std::string& executor_id);
  // Lands every dispatched change that is due, then republishes the observer snapshot.
  void AdvanceLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<internal::ObservedState> Observe(const std::string& id);

  DemoFleetOptions options_;
  std::unique_ptr<core::Clock> owned_clock_;  // the system clock when options.clock is null
  const core::Clock& clock_;
  mutable absl::Mutex mu_;
  // The state, pending changes and dispatch receipts.
  std::unique_ptr<internal::DemoWorld> world_ ABSL_PT_GUARDED_BY(mu_);
  // ListingGeneration: advanced by PublishLocked, which every change of a resource calls.
  std::uint64_t listing_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // The observer's path: a snapshot published after every change, behind its own lock.
  std::unique_ptr<internal::ObserverView> view_;
};

// The MetricsHistory port over a DemoFleet, so capacity forecasts run on the demo's storage
// pools (metric "usage") and on VM/node memory, cpu and disk. Borrows the fleet.
// Thread-safe as the fleet is.
class DemoFleetMetricsHistory final : public core::MetricsHistory {
 public:
  explicit DemoFleetMetricsHistory(DemoFleet& fleet) : fleet_(fleet) {}

  // InvalidArgument for an empty target or metric or end < start; an unknown target or metric
  // has no samples.
  absl::StatusOr<std::vector<core::MetricSample>> Samples(std::string_view target_id,
                                                          std::string_view metric, absl::Time start,
                                                          absl::Time end) const override;

 private:
  DemoFleet& fleet_;
};

}  // namespace pulse::adapters::agents
