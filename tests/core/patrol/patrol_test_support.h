// Shared fixture of the Patrol core tests: PatrolService over the in-memory fakes — a small
// fleet (a node, a VM, an app container, a service, a storage pool, a backup job) with live
// status facts and capabilities, the real FindingsService and ActionService, and optionally a
// scripted model.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_finding_store.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/in_memory_patrol_run_store.h"
#include "pulse/testing/in_memory_session_store.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/scripted_llm_provider.h"
#include "pulse/testing/sequential_id_source.h"

namespace pulse::testing::patrol {

inline core::Capability Cap(std::string name, core::ApprovalLevel floor,
                            core::AutoAuthorization auto_class) {
  core::Capability c;
  c.name = std::move(name);
  c.description = "test capability";
  c.minimum_approval = floor;
  c.auto_authorization = auto_class;
  c.risk = auto_class == core::AutoAuthorization::kLowRisk ? core::ActionRisk::kLow
                                                           : core::ActionRisk::kMedium;
  return c;
}

inline core::FleetResource Res(std::string id, std::string type, std::string name,
                               std::string status, std::string parent = "") {
  core::FleetResource r;
  r.id = std::move(id);
  r.type = std::move(type);
  r.name = std::move(name);
  r.status = std::move(status);
  r.parent_id = std::move(parent);
  return r;
}

inline core::ActionPolicyOptions ElevatedCeiling() {
  core::ActionPolicyOptions options;
  options.automatic_ceiling = core::AutoAuthorization::kElevated;
  return options;
}

struct Fixture {
  FakeClock clock;
  SequentialIdSource ids;
  FakeFleet fleet;
  InMemoryMetricsHistory history;
  InMemoryFindingStore finding_store;
  InMemoryOperatorStateStore operator_state;
  core::TriageFindingVerifier verifier{fleet, history, clock};
  core::FindingsService findings{finding_store, clock, verifier, history, &operator_state};
  InMemoryActionStore action_store;
  InMemoryAuditLog audit;
  core::ActionService actions{action_store, fleet, operator_state, audit, clock};
  // What the server gives Patrol for an acknowledged Autopilot: the same stores under a
  // ceiling that admits elevated capabilities.
  core::ActionService autopilot_actions{action_store, fleet, operator_state,
                                        audit,        clock, ElevatedCeiling()};
  InMemoryPatrolRunStore runs;
  InMemorySessionStore sessions;
  InlineTaskRunner runner;
  ScriptedLlmProvider provider;
  std::unique_ptr<core::PatrolService> patrol;

  explicit Fixture(bool with_model = false) {
    fleet.PutResource(Res("node:pve1", "node", "pve1", "online"));
    fleet.PutResource(
        Res("vm:101", "vm", "web-01", "running", "node:pve1"),
        {Cap("restart", core::ApprovalLevel::kAdmin, core::AutoAuthorization::kElevated)});
    fleet.PutResource(
        Res("app-container:worker", "app-container", "worker", "exited", "vm:101"),
        {Cap("start", core::ApprovalLevel::kNone, core::AutoAuthorization::kLowRisk)});
    fleet.PutResource(Res("service:pve1/nginx", "service", "nginx", "active", "node:pve1"));
    fleet.PutResource(
        Res("storage:pve1/local-zfs", "storage", "local-zfs", "available", "node:pve1"));
    fleet.PutResource(
        Res("backup-job:nightly", "backup-job", "nightly", "failed"),
        {Cap("run-now", core::ApprovalLevel::kNone, core::AutoAuthorization::kLowRisk)});
    SetFacts("node:pve1", "online", {{"cpu_pct", "20.0"}, {"memory_pct", "40.0"}});
    SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "50.0"}});
    SetFacts("app-container:worker", "exited", {{"exit_code", "1"}});
    SetFacts("service:pve1/nginx", "active", {{"sub_state", "running"}});
    SetFacts("storage:pve1/local-zfs", "available", {{"usage_pct", "88.0"}});
    SetFacts("backup-job:nightly", "failed", {{"last_result", "failed"}});
    // A pool filling by 1 pp/day over the last week.
    for (int h = 0; h <= 24 * 7; h += 6) {
      history.Add("storage:pve1/local-zfs", "usage",
                  {clock.Now() - absl::Hours(24 * 7 - h), 81.0 + h / 24.0});
    }
    MakePatrol(with_model);
  }

  void MakePatrol(bool with_model) {
    std::optional<core::PatrolModel> model;
    if (with_model) {
      model.emplace(core::PatrolModel{provider, sessions, runner, core::ModelRoute{}, nullptr});
    }
    core::PatrolServiceOptions options;
    options.autopilot_actions = &autopilot_actions;
    patrol = std::make_unique<core::PatrolService>(fleet, findings, actions, operator_state, runs,
                                                   history, clock, ids, std::move(model),
                                                   std::move(options));
  }

  void SetFacts(const std::string& id, const std::string& status,
                std::map<std::string, std::string> facts) {
    core::FleetStatus s;
    s.resource_id = id;
    s.status = status;
    s.summary = id + " is " + status;
    s.facts = std::move(facts);
    s.observed_at = clock.Now();
    fleet.SetStatus(std::move(s));
    fleet.EditResource(id, [&](core::FleetResource& r) { r.status = status; });
  }

  void SetAutonomy(core::AutonomyLevel level, bool acknowledged = false) {
    core::AutonomySettings s;
    s.level = level;
    if (acknowledged) {
      s.acknowledgement = core::AutopilotAcknowledgement{"ack-1", "tok_human", clock.Now()};
    }
    REQUIRE(patrol->SetAutonomy(s).ok());
  }

  core::PatrolRunRecord Run(core::PatrolScope scope = {},
                            core::PatrolTrigger trigger = core::PatrolTrigger::kManual) {
    absl::StatusOr<core::PatrolRunRecord> r = patrol->Run(scope, trigger);
    REQUIRE(r.ok());
    return *r;
  }

  std::vector<core::Finding> Active() {
    absl::StatusOr<std::vector<core::Finding>> list = findings.List(core::FindingQuery{});
    REQUIRE(list.ok());
    return *list;
  }

  static std::string Id(const std::string& resource, core::Category category,
                        const std::string& key) {
    return core::FindingIdFor(resource, category, key);
  }
};

}  // namespace pulse::testing::patrol
