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
// Reads answer from a snapshot kept by one listing plus an inspect of each container that is
// new or changed since (an Engine event touched it, or its listed state or health differs),
// refreshed when older than max_staleness, so a whole-fleet read costs one Engine call in the
// steady state, not one per container. A background thread follows /events (reconnecting with
// backoff after the daemon goes away) to mark containers changed and to keep a bounded change
// stream (die, oom, health_status, restart, ...); another samples the stats of every running
// container each sample_interval into a bounded metric history (docs/docker.md, "Snapshot,
// samples and events"). Thread-safety: every method may be called concurrently (mutexes guard
// the snapshot, receipts, samples and changes; Engine calls run outside them).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
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
  // Stats of every running container are sampled this often into the metric history;
  // zero: no sampler (a status or history read then samples the container on demand).
  absl::Duration sample_interval = absl::Seconds(15);
  std::size_t max_samples = 720;  // per container, the oldest dropped first
  // The snapshot is re-listed on a read when older than this (zero: on every read).
  absl::Duration max_staleness = absl::Seconds(2);
  // Follow /events in the background (changes, and containers marked for a re-inspect).
  bool watch_events = true;
  absl::Duration events_window = absl::Seconds(1);  // one long poll of /events
  absl::Duration max_backoff = absl::Seconds(8);    // between reconnects to a lost daemon
  std::size_t max_changes = 1000;                   // the change stream keeps the newest
  // Read-only exec (docs/docker.md, "Read-only exec"): off, RunReadOnlyCommand refuses every
  // command before anything reaches the daemon. On: only commands the exec classifier admits
  // run in a running container, with no TTY and no stdin, within exec_deadline.
  bool allow_exec = false;
  absl::Duration exec_deadline = absl::Seconds(30);
};

// One change the Engine reported about a container: the docker source's change stream.
struct DockerChange {
  std::uint64_t seq = 0;    // 1, 2, ... in arrival order
  absl::Time at;            // the Engine's time of the event
  std::string resource_id;  // app-container:<name>
  std::string container_id;
  // die, oom, health_status, restart, start, stop, kill, create, destroy; "events_lost" when
  // the event stream was reconnected after a gap (changes may be missing then).
  std::string kind;
  std::string detail;  // "exit code 1", "unhealthy", ...
};

// Counters of the docker source, for tests, /metrics and the benchmark.
struct DockerFleetCounters {
  std::uint64_t engine_calls = 0;      // Engine calls made by reads and refreshes
  std::uint64_t refreshes = 0;         // snapshot listings
  std::uint64_t inspects = 0;          // containers inspected by refreshes
  std::uint64_t samples = 0;           // stats samples taken
  std::uint64_t events = 0;            // Engine events received
  std::uint64_t event_reconnects = 0;  // /events streams re-opened after a failure
  bool events_connected = false;       // the last /events poll succeeded
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

  // The changes after `after_seq` (oldest first), at most `max`, with the container ids.
  // Answers from memory.
  std::vector<DockerChange> ContainerChangesSince(std::uint64_t after_seq, std::size_t max) const;
  DockerFleetCounters Counters() const;
  // Takes one round of samples now (what the sampler thread does each interval).
  void SampleNow();

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  // Containers: cpu (percent of one CPU), memory (bytes), memory_pct (percent of the limit);
  // the samples this process took.
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
  // The change stream (ContainerChangesSince) as the port's changes.
  std::vector<core::FleetChange> ChangesSince(std::uint64_t after_seq, std::size_t max) override;

 private:
  // One container as last inspected.
  struct Entry {
    ContainerDetails details;
    std::string listed_state;  // State and health as the listing showed them at inspect time
    std::string listed_health;
  };
  // An immutable picture of the fleet; readers share it.
  struct View {
    std::map<std::string, core::FleetResource> resources;
    std::vector<core::FleetRelationship> relationships;
    std::map<std::string, ContainerDetails> containers;  // by resource id
    absl::Time at;
  };
  struct Sample {
    absl::Time at;
    double cpu_percent = 0;
    double memory_bytes = 0;
    double memory_percent = 0;
  };
  struct CpuMark {  // the raw counters of a container's previous sample
    std::uint64_t total = 0;
    std::uint64_t system = 0;
  };

  DockerFleet(DockerFleetOptions options, std::unique_ptr<EngineClient> engine,
              std::unique_ptr<EngineClient> observer, std::unique_ptr<EngineClient> background,
              EngineInfo info);
  // The snapshot, re-listed when older than `max_age` or when a container was marked changed.
  absl::StatusOr<std::shared_ptr<const View>> CurrentView(absl::Duration max_age);
  absl::StatusOr<std::shared_ptr<const View>> Refresh() ABSL_EXCLUSIVE_LOCKS_REQUIRED(refresh_mu_);
  bool FreshLocked(absl::Duration max_age) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // `ooms`: the time of each container's latest `oom` event (by container id).
  std::shared_ptr<const View> BuildView(const std::map<std::string, Entry>& entries,
                                        const std::map<std::string, absl::Time>& ooms) const;
  absl::StatusOr<ContainerDetails> ContainerOf(std::string_view id) const;
  std::vector<core::Capability> CatalogueFor(const ContainerDetails& details) const;
  void RecordSample(const std::string& resource_id, const ContainerStats& stats, bool one_shot);
  void MarkChanged(const std::string& container_id);
  void OnEvent(const EngineEvent& event);
  void AddChange(DockerChange change);
  void WatchEvents();
  void RunSampler();
  // Sleeps up to `d`; false when the fleet is closing.
  bool Wait(absl::Duration d);

  const DockerFleetOptions options_;
  const std::unique_ptr<EngineClient> engine_;      // reads and dispatch
  const std::unique_ptr<EngineClient> observer_;    // postconditions: its own connections
  const std::unique_ptr<EngineClient> background_;  // events and samples
  const EngineInfo info_;
  const std::string node_id_;

  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one refresh at a time
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);  // by container id
  std::shared_ptr<const View> view_ ABSL_GUARDED_BY(mu_);
  bool changed_ ABSL_GUARDED_BY(mu_) = false;  // an event arrived since the last refresh
  std::map<std::string, bool> marked_ ABSL_GUARDED_BY(mu_);  // container ids to re-inspect
  // The latest `oom` event of each container (by container id): the daemon's State.OOMKilled
  // misses an OOM whose event it handles after the exit; the event itself is not missed.
  std::map<std::string, absl::Time> ooms_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::DispatchReceipt> receipts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<Sample>> samples_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, CpuMark> cpu_marks_ ABSL_GUARDED_BY(mu_);
  std::deque<DockerChange> changes_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_change_ ABSL_GUARDED_BY(mu_) = 1;
  DockerFleetCounters counters_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watcher_;
  std::thread sampler_;
};

// The resource of one inspected container on `node_id` (pure; exposed for tests).
core::FleetResource ContainerResource(const ContainerDetails& details, std::string_view node_id);

// Whether an `oom` event at `oom` means the kernel ended this run of the container: it has
// stopped, and the event came after its latest start (an OOM of an earlier run, or of a child
// process while the container still runs, is not) (pure; exposed for tests).
bool OomKilledByEvent(const ContainerDetails& details, absl::Time oom);

// The health a listing's Status text shows ("Up 1 minute (unhealthy)" -> "unhealthy"); "" when
// none (pure; exposed for tests).
std::string ListedHealth(std::string_view status);

}  // namespace pulse::docker
