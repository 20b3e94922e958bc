// DockerFleet: the Fleet port over one Docker Engine (engine_client.h). Resources: the daemon
// host as node:<host name>, each container as app-container:<name> (state as status; health,
// restart count, image, started-at, exit code, OOM kill and labels as attributes; the
// container id and StartedAt in the revision, so a recreated or restarted container is drift),
// and Compose projects and services (compose-project:<project>,
// compose-service:<project>/<service>) that containers are member_of (docs/docker.md, "The
// Docker fleet"). Capabilities, when options.allow_actions: a running container offers restart
// (low risk) and stop (medium), a stopped one start (low). Dispatch calls the Engine with the
// action's deadline and never retries; the postcondition is read by a separate inspect on its
// own connection (the expected state, a StartedAt after the dispatch, the same container id).
// Metric history is what this process sampled (stats on reads, at most one per
// sample_interval). Thread-safety: every method may be called concurrently (a mutex guards
// the receipts and samples; Engine calls run outside it).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/docker/engine_client.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::docker {

struct DockerFleetOptions {
  EngineOptions engine;
  bool allow_actions = false;  // off: every catalogue is empty
  absl::Duration action_deadline = absl::Seconds(60);
  absl::Duration stop_grace = absl::Seconds(10);
  absl::Duration observe_timeout = absl::Seconds(30);
  absl::Duration sample_interval = absl::Seconds(10);
  // Read-only exec (docs/docker.md, "Read-only exec"): off, RunReadOnlyCommand refuses every
  // command before anything reaches the daemon. On: only commands the exec classifier admits
  // run in a running container, with no TTY and no stdin, within exec_deadline.
  bool allow_exec = false;
  absl::Duration exec_deadline = absl::Seconds(30);
};

class DockerFleet final : public core::Fleet {
 public:
  // Connects (version negotiation) and reads /info. Errors as EngineErrorKind.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DockerFleet>> Open(
      DockerFleetOptions options);
  ~DockerFleet() override;
  DockerFleet(const DockerFleet&) = delete;
  DockerFleet& operator=(const DockerFleet&) = delete;

  const std::string& node_id() const { return node_id_; }

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  // Containers: cpu (percent), memory (bytes); samples taken by this process.
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;
  // Only with options.allow_exec (docker_fleet_exec.cc). PermissionDenied when off or refused
  // by the classifier, FailedPrecondition for a container that is not running (or a file
  // operand that cannot be resolved in it) and for the node.
  absl::StatusOr<core::ExecOutput> RunReadOnlyCommand(std::string_view resource_id,
                                                      std::string_view command) override;

 private:
  struct Snapshot {
    std::map<std::string, core::FleetResource> resources;
    std::vector<core::FleetRelationship> relationships;
    std::map<std::string, ContainerDetails> containers;  // by resource id
  };
  struct Sample {
    absl::Time at;
    double cpu_percent = 0;
    double memory_bytes = 0;
  };

  DockerFleet(DockerFleetOptions options, std::unique_ptr<EngineClient> engine,
              std::unique_ptr<EngineClient> observer, EngineInfo info);
  absl::StatusOr<Snapshot> Probe() const;
  absl::StatusOr<ContainerDetails> ContainerOf(std::string_view id) const;
  std::vector<core::Capability> CatalogueFor(const ContainerDetails& details) const;
  void TakeSample(const std::string& resource_id, const std::string& container_id);

  const DockerFleetOptions options_;
  const std::unique_ptr<EngineClient> engine_;    // reads and dispatch
  const std::unique_ptr<EngineClient> observer_;  // postconditions: its own connections
  const EngineInfo info_;
  const std::string node_id_;

  absl::Mutex mu_;
  std::map<std::string, core::DispatchReceipt> receipts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<Sample>> samples_ ABSL_GUARDED_BY(mu_);
};

// The resource of one inspected container on `node_id` (pure; exposed for tests).
core::FleetResource ContainerResource(const ContainerDetails& details, std::string_view node_id);

}  // namespace pulse::docker
