// AgentDocker: the local Docker daemon as part of pulse-agent's host (docs/agent.md, "Local
// containers"). When the daemon's socket answers, the agent opens a DockerFleet on it (actions
// only when allow.json says "docker": true, read-only exec only when it also says "exec": true)
// and reports its resources in the host's namespace: the server accepts from an agent only
// node:<host> and <type>:<host>/<local> (wire.h, ResourceBelongsToHost), so every Docker id
// <type>:<local> becomes <type>:<host>/<local>, and the engine's own node:<name> becomes
// docker-engine:<host>/<name>, a child of node:<host> that runs_on it. A daemon that is absent
// or stops answering drops the containers from the report, never the report; each transition
// (up, down) is logged once. The daemon is (re)opened lazily on the next use, so one started
// after the agent is picked up by the next report.
// Thread-safety: every method may be called concurrently (the fleet is opened under a mutex and
// is never replaced once open; DockerFleet itself is thread-safe).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/docker/docker_fleet.h"

namespace pulse::adapters::hostagent {

// The type the Docker engine's own node takes in the host's namespace (node:<host> is the host).
inline constexpr std::string_view kDockerEngineType = "docker-engine";
// The default endpoint, and the --docker-endpoint value that turns Docker off.
inline constexpr std::string_view kDefaultDockerEndpoint = "unix:///var/run/docker.sock";
inline constexpr std::string_view kDockerEndpointNone = "none";

// The id a Docker fleet's `docker_id` takes in `host`'s namespace; "" when `docker_id` is not a
// canonical id or the mapped id would be too long (the resource is then left out). Pure.
std::string DockerIdToHost(std::string_view docker_id, std::string_view host);
// The reverse: the Docker fleet's id of `host_id` when it is a mapped Docker id of `host`
// (app-container, compose-project, compose-service or docker-engine under <host>/); nullopt
// for every other id, the host's own resources included. Pure.
std::optional<std::string> HostIdToDocker(std::string_view host_id, std::string_view host);

struct AgentDockerOptions {
  std::string host;  // IsAgentHostName
  // unix:///path (docker_source.h's rules); "none" is refused here: do not build an AgentDocker.
  std::string endpoint = std::string(kDefaultDockerEndpoint);
  bool allow_actions = false;  // allow.json "docker"
  bool allow_exec = false;     // allow.json "docker" and "exec"
  // One line per transition (the daemon answering, or not any more); may be empty.
  std::function<void(bool up, std::string_view line)> log;
  // The fleet's settings beyond the endpoint and the two switches (tests shorten them).
  docker::DockerFleetOptions fleet;
};

class AgentDocker {
 public:
  // InvalidArgument ("docker_endpoint_invalid: ...") for an endpoint that is not unix:// and an
  // absolute path as a docker source allows. Opens nothing yet.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AgentDocker>> Create(
      AgentDockerOptions options);

  // The fleet, opened now when it is not open yet; nullptr (the transition logged) when it
  // cannot be opened. Once open it stays open: a daemon that goes away later makes its reads
  // fail, which callers report through MarkDown, and it reconnects on its own.
  docker::DockerFleet* Fleet();
  // A read of the open fleet failed with `status`: logged once until it answers again.
  void MarkDown(const absl::Status& status);
  // A read succeeded: logged once when it was down before.
  void MarkUp();

  const std::string& host() const { return options_.host; }
  bool allow_actions() const { return options_.allow_actions; }

 private:
  explicit AgentDocker(AgentDockerOptions options) : options_(std::move(options)) {}
  void Transition(bool up, const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AgentDockerOptions options_;
  absl::Mutex mu_;
  std::unique_ptr<docker::DockerFleet> fleet_ ABSL_GUARDED_BY(mu_);
  std::optional<bool> up_ ABSL_GUARDED_BY(mu_);  // nullopt until the first use
};

}  // namespace pulse::adapters::hostagent
