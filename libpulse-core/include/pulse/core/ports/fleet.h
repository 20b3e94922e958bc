// Fleet: the infrastructure the engine watches and changes — nodes, VMs, containers,
// services, storage — addressed by canonical ids (node:pve1, vm:101, app-container:web,
// service:pve1/nginx; see actions/resource_id.h). Reads are bounded by the caps below; the one
// mutation is Dispatch of an advertised capability; ObservePostcondition reads the result back
// through an observer that should not share the executor's trust domain; RunReadOnlyCommand
// runs only commands the exec classifier proves read-only.
// Thread-safety: implementations must be safe to call concurrently from any thread.
// Codes: NotFound (unknown resource, or an unknown metric/log source), InvalidArgument (a
// query outside the documented bounds), Unavailable / DeadlineExceeded (transient; the read
// may be retried), FailedPrecondition (the resource cannot serve the request in its current
// state). Dispatch and RunReadOnlyCommand document their own codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/capability.h"
#include "pulse/core/model/exec_output.h"
#include "pulse/core/model/fleet_source.h"

namespace pulse::core {

// One resource as the fleet currently sees it. Everything but `attributes` is identity or
// state: a change to any of them changes the plan's resource version (drift).
struct FleetResource {
  std::string id;          // canonical id; its type prefix equals `type`
  std::string type;        // node, vm, lxc, app-container, service, storage, backup-job, ...
  std::string name;        // display name
  std::string status;      // online, offline, running, stopped, exited, degraded, ...
  std::string technology;  // proxmox, docker, systemd, pbs, ... ("" when unknown)
  std::string parent_id;   // canonical id of the host/parent, "" for roots
  // Opaque state revision: the adapter changes it whenever observable state changes that the
  // fields above do not show (a config edit, a restart counter). "" when it has none.
  std::string revision;
  // Descriptive facts (os, ip, version, ...). Not part of the resource version.
  std::map<std::string, std::string> attributes;

  friend bool operator==(const FleetResource&, const FleetResource&) = default;
};

// A directed edge: runs_on, contains, depends_on, member_of, backs_up, ...
struct FleetRelationship {
  std::string from_id;
  std::string to_id;
  std::string kind;

  friend bool operator==(const FleetRelationship&, const FleetRelationship&) = default;
};

inline constexpr std::size_t kFleetMaxResults = 1000;

// All filters are exact (case-insensitive) matches; empty = any. `text` is a case-insensitive
// substring of id or name (search). An empty query lists the fleet.
struct FleetResourceQuery {
  std::string text;
  std::string type;
  std::string status;
  std::string technology;
  std::size_t limit = 100;  // 1..kFleetMaxResults
};

// The neighbourhood of `root_id` within `depth` edges (either direction), or the whole fleet
// when root_id is empty.
struct FleetTopologyQuery {
  std::string root_id;
  int depth = 1;                    // 1..8
  std::size_t max_resources = 500;  // 1..kFleetMaxResults
};

struct FleetTopology {
  std::vector<FleetResource> resources;
  std::vector<FleetRelationship> relationships;
  bool truncated = false;  // max_resources was reached
};

struct FleetStatus {
  std::string resource_id;
  std::string status;
  std::string summary;                       // one line for humans
  std::map<std::string, std::string> facts;  // uptime, restart_count, health, ...
  absl::Time observed_at;
};

inline constexpr std::size_t kFleetMaxLogLines = 1000;
inline constexpr std::size_t kFleetMaxLogBytes = 256 * 1024;

struct FleetLogQuery {
  std::string source;  // unit, container or log name; "" = the resource's default
  std::optional<absl::Time> since;
  std::size_t max_lines = 200;        // 1..kFleetMaxLogLines: the newest lines are kept
  std::size_t max_bytes = 64 * 1024;  // 1..kFleetMaxLogBytes
};

struct FleetLogExcerpt {
  std::vector<std::string> lines;  // oldest first, each without its newline
  bool truncated = false;          // older lines were dropped to honour the bounds
};

inline constexpr std::size_t kFleetMaxConfigBytes = 256 * 1024;

struct FleetConfig {
  std::string format;   // json, yaml, ini, text
  std::string content;  // at most kFleetMaxConfigBytes
  bool truncated = false;
  bool redacted = false;  // secrets were replaced by the adapter
};

inline constexpr std::size_t kFleetMaxMetricPoints = 5000;

struct FleetMetricQuery {
  std::string metric;  // cpu, memory, disk, net_in, net_out, ...
  absl::Time start;
  absl::Time end;                // start < end
  std::size_t max_points = 500;  // 1..kFleetMaxMetricPoints; adapters downsample to fit
};

struct FleetMetricPoint {
  absl::Time at;
  double value = 0;

  friend bool operator==(const FleetMetricPoint&, const FleetMetricPoint&) = default;
};

struct FleetMetricSeries {
  std::string resource_id;
  std::string metric;
  std::string unit;                      // percent, bytes, bytes_per_second, ...
  std::vector<FleetMetricPoint> points;  // ascending time
};

// One governed dispatch. `attempt_id` is the idempotency key: an adapter must never run the
// same attempt twice; a repeated call returns the first receipt.
struct DispatchRequest {
  std::string action_id;
  std::string attempt_id;  // "<action_id>.dispatch.1"
  std::string resource_id;
  std::string capability_name;
  std::string params_json;  // validated, canonical
  std::string plan_hash;
};

// The executor's account of what happened. Never verification truth by itself.
struct DispatchReceipt {
  ExecutionStatus status = ExecutionStatus::kInconclusive;  // not_run when it refused to start
  std::string reason_code;                                  // stable snake_case token, "" when none
  std::string summary;                                      // bounded human text, no secrets
  std::string executor_id;                                  // e.g. agent:pve1
  // Who vouches for the executor (e.g. "agent:pve1", "docker-host:web1"). Compared with the
  // observer's domain to classify the evidence.
  std::string executor_trust_domain;
};

struct PostconditionQuery {
  std::string action_id;
  std::string resource_id;
  std::string capability_name;
  std::string params_json;
  absl::Time dispatched_at;
};

// An observation of the intended end state, read independently of the dispatch.
struct PostconditionObservation {
  VerificationStatus status = VerificationStatus::kInconclusive;  // never not_attempted
  std::string observer_id;
  // The core classifies the evidence as independent only when this is non-empty and differs
  // from the receipt's executor_trust_domain; otherwise it is agent_attested.
  std::string observer_trust_domain;
  std::string reason_code;
  std::string summary;
  absl::Time observed_at;
};

// One change a fleet reported about a resource: a container died, was OOM-killed, turned
// unhealthy, restarted (docs/fleet.md, "Changes"). Plain values.
struct FleetChange {
  std::uint64_t seq = 0;    // the fleet's cursor: increasing in arrival order
  absl::Time at;            // when the source says it happened
  std::string resource_id;  // the fleet's id; "" for a change about the whole source
  // die, oom, health_status, restart, start, stop, kill, create, destroy, ...; events_lost
  // when the source's own feed had a gap (changes may be missing then).
  std::string kind;
  std::string detail;  // "exit code 1", "unhealthy", ... ("" when none)
  std::string source;  // the source's name in a fleet of several sources ("" otherwise)

  friend bool operator==(const FleetChange&, const FleetChange&) = default;
};

inline constexpr std::size_t kFleetMaxChanges = 1000;

class Fleet {
 public:
  virtual ~Fleet() = default;

  // Lists or searches resources, ordered by id. InvalidArgument for a limit outside
  // 1..kFleetMaxResults.
  [[nodiscard]] virtual absl::StatusOr<std::vector<FleetResource>> ListResources(
      const FleetResourceQuery& query) = 0;

  // One resource by canonical id. NotFound when it does not exist.
  [[nodiscard]] virtual absl::StatusOr<FleetResource> GetResource(std::string_view id) = 0;

  // Resources and relationships around a root. NotFound for an unknown root.
  [[nodiscard]] virtual absl::StatusOr<FleetTopology> GetTopology(
      const FleetTopologyQuery& query) = 0;

  // Live status of one resource.
  [[nodiscard]] virtual absl::StatusOr<FleetStatus> GetStatus(std::string_view id) = 0;

  // The newest log lines within the query's bounds. InvalidArgument for bounds above the caps.
  [[nodiscard]] virtual absl::StatusOr<FleetLogExcerpt> ReadLogs(std::string_view id,
                                                                 const FleetLogQuery& query) = 0;

  // The resource's effective configuration, secrets redacted.
  [[nodiscard]] virtual absl::StatusOr<FleetConfig> ReadConfig(std::string_view id) = 0;

  // History of one metric. NotFound for a metric the resource does not record.
  [[nodiscard]] virtual absl::StatusOr<FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const FleetMetricQuery& query) = 0;

  // The typed capability catalogue of the resource in its current state (a stopped container
  // offers start, a running one restart and stop). Every entry must pass ValidateCapability;
  // the core refuses to plan against an invalid one. NotFound for an unknown resource.
  [[nodiscard]] virtual absl::StatusOr<std::vector<Capability>> ListCapabilities(
      std::string_view id) = 0;

  // Runs one advertised capability. Returns a receipt whenever the adapter knows what
  // happened (including a refusal to start: status not_run). An error status means the
  // capability was NOT started for NotFound, FailedPrecondition, InvalidArgument and
  // PermissionDenied; for any other code the outcome is unknown and the core records it as
  // inconclusive.
  [[nodiscard]] virtual absl::StatusOr<DispatchReceipt> Dispatch(
      const DispatchRequest& request) = 0;

  // Observes whether the capability's intended end state now holds, independently of the
  // dispatch path where the adapter can. Errors make the verification inconclusive.
  [[nodiscard]] virtual absl::StatusOr<PostconditionObservation> ObservePostcondition(
      const PostconditionQuery& query) = 0;

  // Runs one read-only command on the resource (pulse_read action=exec) and returns its output,
  // at most kMaxExecOutputBytes. The pulse_read handler classifies `command` with
  // ClassifyExecCommand (tools/exec_classifier.h) BEFORE calling and never passes a refused
  // one; an implementation must nevertheless classify it again and refuse whatever the
  // classifier refuses (defence in depth: the handler is not the only possible caller), and
  // run only the verdict's argv, never through a shell. A non-zero exit is an output, not an
  // error. Codes: PermissionDenied (refused command, or commands disabled), NotFound (unknown
  // resource), FailedPrecondition (the resource has nowhere to run a command), Unavailable /
  // DeadlineExceeded (transient), Unimplemented (this fleet runs no commands: the default, so
  // implementations without a command path keep compiling).
  [[nodiscard]] virtual absl::StatusOr<ExecOutput> RunReadOnlyCommand(
      std::string_view /*resource_id*/, std::string_view /*command*/) {
    return absl::UnimplementedError("this fleet does not run commands");
  }

  // Whether ListResources and GetTopology answer from memory: never a call to another system,
  // a file read or a wait on a lock held across one. An HTTP event loop answers the routes
  // that read the fleet itself only when this holds (no_blocking.h). False by default.
  [[nodiscard]] virtual bool ListsFromMemory() const { return false; }

  // A number that changes whenever ListResources (any query) could answer differently from its
  // last answer, and never comes back to one it answered before; read without listing, so a
  // caller that kept what a listing showed may use it while the number holds (the fleet
  // context, FleetContextCache). nullopt when the fleet cannot tell: the default, and callers
  // list.
  [[nodiscard]] virtual std::optional<std::uint64_t> ListingGeneration() { return std::nullopt; }

  // The sources this fleet is made of and their last known state, in configured order
  // (docs/fleet.md). Answers from memory, never blocking on a source. Empty for a fleet that
  // is one source (the default).
  [[nodiscard]] virtual std::vector<FleetSourceStatus> SourceStatuses() { return {}; }

  // The changes after `after_seq`, oldest first, at most `max` (1..kFleetMaxChanges). Answers
  // from memory, never blocking on a source. A fleet keeps a bounded number of changes: a
  // reader that falls behind misses the oldest (a gap in `seq` shows it). Empty for a fleet
  // without a change stream (the default).
  [[nodiscard]] virtual std::vector<FleetChange> ChangesSince(std::uint64_t /*after_seq*/,
                                                              std::size_t /*max*/) {
    return {};
  }
};

}  // namespace pulse::core
