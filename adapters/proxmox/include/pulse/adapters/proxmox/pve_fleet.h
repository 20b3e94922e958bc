// PveFleet: the Fleet port over one Proxmox VE cluster (or single node) reached through the
// configured node's API and, when it cannot be reached, the other members' (docs/fleet.md,
// "proxmox-ve"; PveClient::Follow). Resources from /cluster/resources (and the HA
// manager's /cluster/ha/status/current): node:<node>, vm:<vmid> (qemu), lxc:<vmid>,
// storage:<node>/<storage>; guests run_on their node, storage is member_of its node (a guest or
// storage whose node is not online carries attribute node_status, e.g. "offline"). A node the
// cluster counts in whose API answers 595/596 reads status "unreachable" with fact api_error.
// Status reads go to /nodes/{node}/status, /nodes/{node}/qemu|lxc/{vmid}/status/current and the
// listing's storage entry. Metric history (cpu, memory, disk as percents, storage usage) is
// PVE's own: the resource's rrddata (timeframe hour for a window within the last hour, day
// otherwise; cf AVERAGE), followed by the samples this process took from the listings since,
// so a forecast starts with the cluster's past rather than an empty series.
// Each listing also reads /cluster/backup and /cluster/tasks (best effort, like HA): every
// backup job is a backup-job:<source>/<job id> resource (backs_up its guests) whose facts give
// its last run's result and time from the vzdump tasks and how late its next run is
// (pve_tasks.h); a locked guest's status names the task holding the lock and since when; a task
// first seen ended is a change of the feed (ChangesSince).
// Capabilities, with allow_actions, on a guest that is not a template: a stopped guest offers
// start (low risk), a running one shutdown and reboot (medium, elevated) and stop (high);
// all need admin approval. Dispatch reads status/current first (a guest locked by a backup,
// migration or snapshot is refused with reason_code "guest_locked" before anything is sent),
// POSTs the command, then follows the returned UPID on /nodes/{node}/tasks/{upid}/status until
// it stops or the action's deadline passes (exitstatus OK: succeeded; another exit status:
// failed, reason "task_failed"; deadline: inconclusive, "task_deadline"). The postcondition is
// an independent status/current read on the observer's own client.
// Thread-safety: every method may be called concurrently.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/adapters/proxmox/pve_client.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::proxmox {

struct PveFleetOptions {
  PveClientOptions client;
  // The source's name, the first part of its backup jobs' ids (backup-job:<source>/<job id>).
  std::string source_name = "pve";
  bool allow_actions = false;  // off: every catalogue is empty
  // How long one start/shutdown/stop/reboot may take, dispatch to the task's exit status.
  absl::Duration action_deadline = absl::Seconds(120);
  // The timeout PVE's shutdown is given (then the task fails; PVE does not force a stop).
  absl::Duration shutdown_timeout = absl::Seconds(90);
  absl::Duration task_poll_interval = absl::Milliseconds(500);
  // The dispatch already followed the task to its end, so the state has settled: a short wait
  // covers PVE reporting it.
  absl::Duration observe_timeout = absl::Seconds(10);
  absl::Duration observe_poll_interval = absl::Milliseconds(500);
  // Reads answer from the last listing when it is younger than this (zero: list every read).
  absl::Duration max_staleness = absl::Seconds(5);
  std::size_t max_samples = 720;  // per resource and metric, the oldest dropped first
  // Follow the cluster (PveClient::Follow): learn the other members' addresses and certificates
  // when the source opens and again at this interval, and go on through them when the
  // configured node cannot be reached. Off: the configured URL only.
  bool follow_cluster = true;
  absl::Duration follow_interval = absl::Minutes(1);
  // An rrddata answer is reused for this long (PVE consolidates its hour series once a minute).
  absl::Duration rrd_max_age = absl::Seconds(60);
};

// The stable reason codes of refused or failed dispatches.
inline constexpr std::string_view kReasonGuestLocked = "guest_locked";
inline constexpr std::string_view kReasonTaskFailed = "task_failed";
inline constexpr std::string_view kReasonTaskDeadline = "task_deadline";
inline constexpr std::string_view kReasonStateChanged = "state_changed";

class PveFleet final : public core::Fleet {
 public:
  // Opens the clients and reads /version and the cluster's resources: a bad token, a refused
  // certificate or an unreachable node fails here.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PveFleet>> Open(PveFleetOptions options);
  ~PveFleet() override = default;
  PveFleet(const PveFleet&) = delete;
  PveFleet& operator=(const PveFleet&) = delete;

  const std::string& version() const { return version_; }

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  // FailedPrecondition: the source reads no logs yet (tasks and syslog are later work).
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  // The resource as listed, as JSON (no secrets are listed by PVE's resource calls).
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  // cpu, memory, disk (percent) for nodes and guests; usage (percent) for storage: the
  // resource's rrddata rows older than the first sample this process took, then those samples.
  // Rows PVE left without the metric's values are skipped. An rrddata read that fails (the
  // node is offline, its proxy broken, the token lacks Sys.Audit / VM.Audit /
  // Datastore.Audit) leaves the series to the samples alone: history is best effort.
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  // The tasks that ended since the source opened, oldest first (docs/fleet.md, "Changes"):
  // kind "task" (exit status OK or warnings) or "task_failed", about the guest the task ran on
  // (or its node), detail "<type>: <exit status>". Seen when a listing reads /cluster/tasks.
  std::vector<core::FleetChange> ChangesSince(std::uint64_t after_seq, std::size_t max) override;
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;

 private:
  struct Guest {
    std::string node;
    std::string kind;  // qemu or lxc
    std::int64_t vmid = 0;
    bool is_template = false;
  };
  struct View {
    std::map<std::string, core::FleetResource> resources;
    std::vector<core::FleetRelationship> relationships;
    std::map<std::string, Guest> guests;  // by resource id
    // Status facts of storage and backup jobs, which come from the listings, by resource id.
    std::map<std::string, core::FleetStatus> listed;
    std::vector<PveTask> tasks;  // /cluster/tasks: who holds a guest's lock
    absl::Time at;
  };

  PveFleet(PveFleetOptions options, std::unique_ptr<PveClient> client,
           std::unique_ptr<PveClient> observer, std::string version);
  absl::StatusOr<std::shared_ptr<const View>> CurrentView();
  absl::StatusOr<std::shared_ptr<const View>> Refresh() ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);
  // The key of one resource's metric in samples_.
  static std::string MetricKey(std::string_view id, std::string_view metric);
  void Record(const std::string& id, const std::string& metric, absl::Time at, double value);
  // The resource's rrddata rows of `timeframe`, from the cache when younger than rrd_max_age.
  absl::StatusOr<std::vector<core::FleetMetricPoint>> RrdPoints(const View& view,
                                                                const core::FleetResource& resource,
                                                                std::string_view metric,
                                                                std::string_view timeframe);
  absl::StatusOr<std::string> GuestPath(const Guest& guest, std::string_view tail) const;
  std::vector<core::Capability> CatalogueFor(const Guest& guest, std::string_view status) const;
  absl::StatusOr<core::DispatchReceipt> Run(const core::DispatchRequest& request);

  // Learns the cluster's endpoints (on the reading client, then handed to the observer).
  void FollowCluster() ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);

  const PveFleetOptions options_;
  // The change feed from the cluster's tasks (Refresh appends; bounded by kFleetMaxChanges).
  void RecordTaskChanges(const View& view) ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);
  // Changes between two views that no task announces: a guest that was running and is stopped
  // ("stop"), a storage whose usage rose to kStorageThresholdPct or over ("storage_threshold").
  void RecordStateChanges(const View& view) ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);
  void Append(std::vector<core::FleetChange> fresh) ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<PveClient> client_;    // reads and dispatch
  const std::unique_ptr<PveClient> observer_;  // postconditions: its own connections
  const std::string version_;
  const std::string executor_id_;

  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Time followed_at_ ABSL_GUARDED_BY(refresh_mu_) = absl::InfinitePast();
  // Why a member has no endpoint (or keeps an old one), by node name.
  std::map<std::string, std::string> follow_problems_ ABSL_GUARDED_BY(refresh_mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const View> view_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::DispatchReceipt> receipts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<core::FleetMetricPoint>> samples_ ABSL_GUARDED_BY(mu_);
  struct RrdAnswer {
    absl::Time at;
    std::vector<PveRrdRow> rows;
  };
  // rrddata answers by path and timeframe; entries older than rrd_max_age are dropped when a
  // new one is stored, so the map holds at most the resources read within that time.
  std::map<std::string, RrdAnswer> rrd_ ABSL_GUARDED_BY(mu_);
  std::deque<core::FleetChange> changes_ ABSL_GUARDED_BY(mu_);
  std::uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // The finished tasks of the last /cluster/tasks read (a task is a change once, when it is
  // first seen finished); unset until the first read, whose tasks are the past, not changes.
  std::optional<std::set<std::string>> finished_tasks_ ABSL_GUARDED_BY(refresh_mu_);
  // The last view's guest statuses and storage usage (percent), by resource id; unset until the
  // first view, whose states are the starting point, not changes.
  std::optional<std::map<std::string, std::string>> guest_status_ ABSL_GUARDED_BY(refresh_mu_);
  std::map<std::string, double> storage_usage_ ABSL_GUARDED_BY(refresh_mu_);
};

// A storage whose usage rises to this percentage or over is a storage_threshold change (once per
// crossing).
inline constexpr double kStorageThresholdPct = 90.0;

}  // namespace pulse::proxmox
