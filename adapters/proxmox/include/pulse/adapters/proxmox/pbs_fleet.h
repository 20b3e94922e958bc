// PbsFleet: the Fleet port over one Proxmox Backup Server, read-only (docs/fleet.md,
// "proxmox-backup"). Each listing reads /status/datastore-usage, the root namespace's
// /admin/datastore/{store}/snapshots of every readable datastore and the server's recent
// garbage collection, verification job and prune job tasks (/nodes/localhost/tasks with a
// typefilter each), and yields:
//   pbs:<source>                              the server (type pbs)
//   datastore:<source>/<store>                a datastore, member_of the server: usage, the last
//                                             garbage collection, verify and prune job results
//   backup-group:<source>/<store>/<type>/<id> a backup group (vm, ct, host), member_of its
//                                             datastore: the newest snapshot's time, age and
//                                             verification, and the PVE guest it backs up
//                                             (attribute "guest": vm:<vmid> or lxc:<vmid>)
// Status facts come from that listing, so Patrol's rules read what one listing saw. The usage of
// each datastore is sampled into a bounded in-memory history (metric "usage", percent). No
// capabilities: every catalogue is empty and a dispatch is refused before anything is sent.
// Thread-safety: every method may be called concurrently.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/proxmox/pbs_api.h"
#include "pulse/adapters/proxmox/pve_client.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::proxmox {

struct PbsFleetOptions {
  // The source's name: the local part of pbs:<source> and the prefix of the other ids
  // ([a-z0-9-], as fleet source names are).
  std::string source_name;
  PveClientOptions client;  // api is forced to ProxmoxApi::kBackupServer
  // A backup group whose newest snapshot is older than this is reported stale (fact
  // backup_max_age_seconds; Patrol's pbs-backup-stale rule compares against it).
  absl::Duration backup_max_age = absl::Hours(26);
  // Reads answer from the last listing when it is younger than this (zero: list every read).
  absl::Duration max_staleness = absl::Seconds(5);
  std::size_t max_tasks = 100;    // the newest tasks of each job type one listing reads
  std::size_t max_samples = 720;  // per datastore, the oldest dropped first
};

class PbsFleet final : public core::Fleet {
 public:
  // Opens the client and reads /version and a first listing: a bad token, a refused
  // certificate or an unreachable server fails here. InvalidArgument for a source name that
  // cannot be part of an id.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PbsFleet>> Open(PbsFleetOptions options);
  ~PbsFleet() override = default;
  PbsFleet(const PbsFleet&) = delete;
  PbsFleet& operator=(const PbsFleet&) = delete;

  const std::string& version() const { return version_; }

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  // FailedPrecondition: the source reads no task logs yet.
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  // The resource as listed, as text.
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  // usage (percent) of datastores: the samples this process took from the listings.
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  // Always empty (the source is read-only).
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  // NotFound for an unknown resource; otherwise FailedPrecondition: the source offers no
  // capabilities. Nothing is sent.
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  // FailedPrecondition, as Dispatch.
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;

 private:
  struct View {
    std::map<std::string, core::FleetResource> resources;
    std::vector<core::FleetRelationship> relationships;
    std::map<std::string, core::FleetStatus> statuses;  // by resource id
    absl::Time at;
  };

  // The newest finished job task per (datastore, kind: gc, verify_job, prune_job).
  struct Jobs {
    bool readable = true;  // false: PBS refused the task list
    std::map<std::pair<std::string, std::string>, PbsTask> newest;
  };

  PbsFleet(PbsFleetOptions options, std::unique_ptr<PveClient> client, std::string version);
  absl::StatusOr<std::shared_ptr<const View>> CurrentView();
  absl::StatusOr<std::shared_ptr<const View>> Refresh();
  absl::StatusOr<Jobs> ReadJobs() const;
  // Adds the datastore and its backup groups to `view`; true when a job on it failed.
  absl::StatusOr<bool> AddDatastore(View& view, const PbsDatastoreUsage& usage, const Jobs& jobs);
  // Adds the store's backup groups; their count. Sets failed_verifications on `store_status`.
  absl::StatusOr<std::size_t> AddGroups(View& view, const std::string& store,
                                        const std::string& store_id,
                                        core::FleetStatus& store_status) const;
  void Record(const std::string& id, absl::Time at, double value);

  const PbsFleetOptions options_;
  const std::unique_ptr<PveClient> client_;
  const std::string version_;

  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const View> view_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<core::FleetMetricPoint>> samples_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::proxmox
