// LocalHostFleet: the Fleet port over the machine Pulse runs on, as one node with its real
// filesystems (storage:<host>/<mount>) and, when systemd is running, its service units
// (service:<host>/<unit>). Readings come from /proc (CPU deltas of /proc/stat, /proc/meminfo,
// /proc/loadavg, /proc/<pid>/stat), statvfs and systemctl; a missing source (no systemd, an
// unreadable file) drops that part, never the whole fleet. It is read-only unless
// options.allow_local_actions, and even then it only runs `systemctl start|stop|restart <unit>`
// for units on options.action_allowlist, through fork/execve with an argument vector (never a
// shell). Metric history is what this process sampled since it started.
// Thread-safety: every method may be called concurrently (one mutex guards the samples and the
// dispatch receipts; probes run outside it). Lifetime: borrows options.clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
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
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::adapters::agents {

namespace internal {
struct ProcessResult;
}  // namespace internal

struct LocalHostFleetOptions {
  // The pulse-server flag --allow-local-actions. Off: every catalogue is empty.
  bool allow_local_actions = false;
  // Units (nginx.service or nginx) that may be started, stopped and restarted when actions
  // are allowed. Empty: none.
  std::vector<std::string> action_allowlist;
  // Whether RunReadOnlyCommand runs classifier-approved commands on this host.
  bool allow_exec = true;
  absl::Duration command_timeout = absl::Seconds(10);
  absl::Duration action_timeout = absl::Seconds(60);
  // How long ObservePostcondition waits for a unit still activating/deactivating.
  absl::Duration observe_timeout = absl::Seconds(30);
  // Minimum spacing of the metric samples taken on reads.
  absl::Duration sample_interval = absl::Seconds(10);
  // Borrowed; nullptr means the system clock.
  const core::Clock* clock = nullptr;
  // The host name the fleet reports (its node is node:<sanitized name>); "" = gethostname().
  // An agent in a container or a test sets it. Must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}.
  std::string host_name;
  // The systemctl program to run: "" = `systemctl` from the fixed PATH (/usr/sbin, /usr/bin,
  // /sbin, /bin). When set (an absolute path to an executable file), units are probed through
  // it even where /run/systemd/system is absent: pulse-agent's test hook for hosts without
  // systemd (docs/agent.md, "Testing"), never a product path.
  std::string systemctl_path;
};

// One running process, for the node's status and for callers that want the list.
struct LocalProcess {
  int pid = 0;
  std::string command;
  double cpu_seconds = 0;  // user + system since it started
  std::uint64_t rss_bytes = 0;
};

class LocalHostFleet final : public core::Fleet {
 public:
  // Probes the host once. Unavailable when /proc/meminfo or /proc/stat cannot be read (not a
  // Linux host); InvalidArgument for an allowlisted unit name that is not a plain unit name, a
  // host_name outside its pattern, or a systemctl_path that is not an absolute path to an
  // executable file.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LocalHostFleet>> Open(
      LocalHostFleetOptions options = {});

  ~LocalHostFleet() override;
  LocalHostFleet(const LocalHostFleet&) = delete;
  LocalHostFleet& operator=(const LocalHostFleet&) = delete;

  // ---- core::Fleet ------------------------------------------------------------------------
  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  // The node's facts include cpu_pct, memory_pct, load1/5/15, uptime_seconds, process_count
  // and the top processes by CPU time and by memory.
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  // Node: /var/log/syslog or /var/log/messages, else the journal; service: its journal.
  // FailedPrecondition when no log is readable; NotFound for a storage resource.
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  // Node and storage: a JSON summary; service: `systemctl cat` with Environment= values
  // redacted.
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  // Node: cpu, memory, load; storage: usage. Samples taken by this process.
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  // FailedPrecondition unless the capability is in the current catalogue (so always, when
  // local actions are off). A repeated attempt id returns the first receipt.
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  // Asks systemd for the unit's ActiveState and activation time (observer domain
  // systemd-manager; the executor's is local-exec).
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;

  // ---- identity, exec, processes ----------------------------------------------------------
  // The host name, a mountpoint (/, /var) or a unit name (nginx, nginx.service) to its
  // canonical id. NotFound, FailedPrecondition (ambiguous) or InvalidArgument as DemoFleet.
  [[nodiscard]] absl::StatusOr<std::string> ResolveReference(std::string_view reference);

  // core::Fleet's pulse_read exec path. Runs a command core::ClassifyExecCommand accepts
  // (checked here again, whatever the caller checked) on this host, with
  // options.command_timeout and at most core::kMaxExecOutputBytes of output; any local
  // resource id is accepted, since its commands always run on the node. File operands of
  // cat/head/tail/wc are re-checked after resolving symbolic links. PermissionDenied for a
  // refused command or when options.allow_exec is off; NotFound for an id that is not a
  // resource of this host.
  [[nodiscard]] absl::StatusOr<core::ExecOutput> RunReadOnlyCommand(
      std::string_view resource_id, std::string_view command) override;

  // The `n` processes with the most CPU time (ties by memory).
  std::vector<LocalProcess> TopProcesses(std::size_t n);

  // The canonical id of the node (node:<sanitized host name>).
  const std::string& node_id() const { return node_id_; }

 private:
  struct Snapshot;
  LocalHostFleet(LocalHostFleetOptions options, std::unique_ptr<core::Clock> owned_clock,
                 std::string host_name);

  absl::Time Now() const;
  // Probes the host and records metric samples (at most one per sample_interval).
  absl::StatusOr<Snapshot> Probe();
  // `systemctl list-units --output=json`, cached briefly; "" when it cannot be listed.
  std::string UnitListing();
  // Runs systemctl (options.systemctl_path, else the installed one) with `args`.
  absl::StatusOr<internal::ProcessResult> RunSystemctl(std::vector<std::string> args,
                                                       absl::Duration timeout,
                                                       std::size_t max_output = 64 * 1024) const;
  // Whether units are probed: systemd runs here, or a stand-in systemctl was configured.
  bool UnitsAvailable() const;
  std::vector<core::Capability> CatalogueFor(const Snapshot& snapshot, std::string_view id) const;

  LocalHostFleetOptions options_;
  std::unique_ptr<core::Clock> owned_clock_;
  const core::Clock& clock_;
  std::string host_name_;
  std::string node_id_;
  absl::Mutex mu_;
  // total, idle
  std::optional<std::pair<std::uint64_t, std::uint64_t>> last_cpu_ ABSL_GUARDED_BY(mu_);
  double last_cpu_pct_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_sample_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // "<id>#<metric>"
  std::map<std::string, std::deque<core::FleetMetricPoint>> samples_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::DispatchReceipt> receipts_ ABSL_GUARDED_BY(mu_);  // by attempt id
  std::string unit_listing_ ABSL_GUARDED_BY(mu_);  // cached systemctl list-units output
  absl::Time unit_listing_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace pulse::adapters::agents
