// AgentsFleet: the Fleet port over the hosts that pulse-agent processes report (the `agents`
// source kind, docs/agent.md). Resources are what each host's last report says, in the host's
// namespace (node:<host>, service:<host>/<unit>, storage:<host>/<mount>, ...); a host that is
// stale or has not reported since the server started keeps its last shape with status `unknown`,
// and a host bound but never reported shows as its node, pending. Nothing is deleted.
//
// Changes go through the host's agent: Dispatch sends a command and waits for the agent's
// result; ObservePostcondition then asks the agent for a fresh report and reads the unit's state
// from it, never from the dispatch's answer. Executor and observer are the same agent, so the
// evidence is agent_attested, which is the truth: there is no independent observer of a remote
// host. The catalogue (service units and the host's Docker containers) is the server's decision
// (options: allow_actions, action_allowlist); the
// agent checks every command again against its own allowlist and may refuse (a not_run receipt
// with the agent's reason). Read-only commands (RunReadOnlyCommand, ReadLogs) run on the agent
// after the exec classifier accepted them here and there.
// Thread-safety: every method may be called concurrently (the hub is thread-safe).
// Lifetime: borrows the hub.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::adapters::hostagent {

struct AgentsFleetOptions {
  // Whether any service of any agent host may be started, stopped or restarted by Pulse.
  bool allow_actions = false;
  // Unit names (nginx or nginx.service) and container names that may be acted on, or "*" for
  // every unit and container.
  std::vector<std::string> action_allowlist;
  // Whether read-only commands (pulse_read exec, logs) are sent to agents.
  bool allow_exec = true;
};

class AgentsFleet final : public core::Fleet {
 public:
  AgentsFleet(AgentHub& hub, AgentsFleetOptions options);

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override;
  // True: the hosts' last reports, kept in memory (the bindings other processes made are read
  // from the store at most every two seconds, a read that refuses rather than waits where
  // waiting is not allowed: core/ports/no_blocking.h).
  bool ListsFromMemory() const override { return true; }
  // 0 while no host is bound or reporting (the listing is empty, and a host that appears stays:
  // hosts are never deleted); nullopt once there is one (its freshness changes with time alone,
  // so callers list).
  std::optional<std::uint64_t> ListingGeneration() override;
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override;
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override;
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override;
  // journalctl on the agent (the node's journal, or the unit's); FailedPrecondition when the
  // agent is not connected or exec is off.
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override;
  // The resource as last reported, as JSON, secret-named attributes redacted.
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override;
  // The samples of the reports this server accepted.
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override;
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override;
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override;
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& query) override;
  absl::StatusOr<core::ExecOutput> RunReadOnlyCommand(std::string_view resource_id,
                                                      std::string_view command) override;

 private:
  // The resource with its status as the fleet should show it (unknown unless fresh).
  absl::StatusOr<core::FleetResource> Find(std::string_view id, HostView* view);
  std::vector<core::Capability> CatalogueFor(const core::FleetResource& resource,
                                             const HostView& view) const;
  absl::StatusOr<core::ExecOutput> Exec(std::string_view host, std::string_view resource_id,
                                        std::string_view command);

  AgentHub& hub_;
  AgentsFleetOptions options_;
};

}  // namespace pulse::adapters::hostagent
