// AgentExecutor: runs one command the server sent, under the agent's own governance
// (docs/agent.md, "Governance at the host"). Whatever the server admitted, a command is
// refused (status not_run) when its deadline passed (deadline_passed), it names a resource of
// another host (wrong_host) or one this host does not have (unknown_resource), a capability
// the agent does not know (unknown_capability), a capability or service outside allow.json
// (agent_allowlist), or an exec command the classifier refuses (agent_classifier). A dispatch
// runs at most once per (action id, attempt id): the key is claimed in the state file before
// LocalHostFleet::Dispatch runs it, a finished key is answered from the file (replayed) and a
// key left `started` by a crash is answered inconclusive/interrupted, never run again.
// A command on a local container (agent_docker.h: app-container:<host>/<name>) goes to the
// DockerFleet under its Docker id, through the same checks and the same state file, and only
// when allow.json says "docker": true (agent_allowlist otherwise); without a Docker daemon it is
// unknown_resource.
// Thread-safe: commands may run concurrently (the fleets and the state file are).
// Lifetime: borrows the fleet, the allowlist, the state file, the clock and the AgentDocker.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/adapters/hostagent/agent_allowlist.h"
#include "pulse/adapters/hostagent/agent_docker.h"
#include "pulse/adapters/hostagent/agent_state.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/core/ports/clock.h"

namespace pulse::adapters::hostagent {

// The reason codes of a refused command (Result::reason_code with status not_run), and of an
// attempt a crash interrupted (status inconclusive).
inline constexpr std::string_view kReasonDeadlinePassed = "deadline_passed";
inline constexpr std::string_view kReasonAgentAllowlist = "agent_allowlist";
inline constexpr std::string_view kReasonAgentClassifier = "agent_classifier";
inline constexpr std::string_view kReasonUnknownResource = "unknown_resource";
inline constexpr std::string_view kReasonWrongHost = "wrong_host";
inline constexpr std::string_view kReasonUnknownCapability = "unknown_capability";
inline constexpr std::string_view kReasonInterrupted = "interrupted";
// Neither a refusal nor a run: the state file could not record the claim, or the capability
// is not offered in the unit's present state (start on a running unit).
inline constexpr std::string_view kReasonStateUnavailable = "agent_state_unavailable";
inline constexpr std::string_view kReasonNotOffered = "capability_not_offered";

// The options LocalHostFleet needs so its own catalogue matches allow.json: actions on, the
// allowlisted services, exec as allow.json says.
agents::LocalHostFleetOptions FleetOptionsFor(const AgentAllowlist& allowlist,
                                              std::string host_name);

class AgentExecutor {
 public:
  // `host` is the protocol host name (IsAgentHostName) the fleet was opened with.
  // `docker` is null when the agent does not look at Docker (--docker-endpoint none).
  AgentExecutor(std::string host, agents::LocalHostFleet& fleet, const AgentAllowlist& allowlist,
                AgentStateFile& state, const core::Clock& clock, AgentDocker* docker = nullptr)
      : host_(std::move(host)),
        fleet_(fleet),
        allowlist_(allowlist),
        state_(state),
        clock_(clock),
        docker_(docker) {}

  // The result of a dispatch or exec command (a report command is the runtime's). Never fails:
  // every outcome, refusals included, is a Result for the server.
  Result Execute(const Command& command);

  // What the allowlist would accept on `resource_id` now: its catalogue in LocalHostFleet
  // (service units of allow.json) narrowed to allow.json's capabilities, or for a local
  // container its DockerFleet catalogue narrowed alike when allow.json says "docker": true;
  // sorted.
  std::vector<std::string> AllowedCapabilities(std::string_view resource_id);

  const std::string& host() const { return host_; }
  AgentDocker* docker() const { return docker_; }

 private:
  Result Dispatch(const Command& command, Result result);
  Result Exec(const Command& command, Result result);
  // The checks of a container dispatch; `docker_id` is the command's resource in the Docker
  // fleet.
  Result DispatchContainer(const Command& command, Result result, const std::string& docker_id);
  // Claims the key in the state file, dispatches `request` on `fleet` and records the outcome.
  Result RunClaimed(const Command& command, Result result, core::Fleet& fleet,
                    core::DispatchRequest request);

  const std::string host_;
  agents::LocalHostFleet& fleet_;
  const AgentAllowlist& allowlist_;
  AgentStateFile& state_;
  const core::Clock& clock_;
  AgentDocker* const docker_;
};

}  // namespace pulse::adapters::hostagent
