// Shared fixtures for the action tests: a harness wiring ActionService to the fakes, a small
// fleet (a VM on a node, a service, a container) with typical capabilities, and actors.
#pragma once

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pulse/core/actions/action_service.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"

namespace pulse::testing::actions {

inline core::ActionActor Human(std::string id) { return {core::ActorKind::kHuman, std::move(id)}; }
inline core::ActionActor Agent(std::string id) { return {core::ActorKind::kAgent, std::move(id)}; }
inline core::ActionActor Policy(std::string id) {
  return {core::ActorKind::kPolicy, std::move(id)};
}

// restart: admin floor; optional mode (graceful|force) and timeout (integer seconds).
inline core::Capability RestartCapability() {
  core::Capability c;
  c.name = "restart";
  c.description = "Restart the guest";
  c.minimum_approval = core::ApprovalLevel::kAdmin;
  c.auto_authorization = core::AutoAuthorization::kNever;
  c.risk = core::ActionRisk::kMedium;
  c.params = {
      {"mode", core::ParamType::kString, false, {"graceful", "force"}, "", false, "how"},
      {"timeout", core::ParamType::kInteger, false, {}, "", false, "seconds"},
  };
  return c;
}

// reload: no approval floor, low-risk automation; required unit matching a systemd name.
inline core::Capability ReloadCapability() {
  core::Capability c;
  c.name = "reload";
  c.description = "Reload the service configuration";
  c.minimum_approval = core::ApprovalLevel::kNone;
  c.auto_authorization = core::AutoAuthorization::kLowRisk;
  c.risk = core::ActionRisk::kLow;
  c.params = {
      {"unit", core::ParamType::kString, true, {}, "^[a-z][a-z0-9-]*\\.service$", false, "unit"}};
  return c;
}

inline core::Capability MakeCapability(
    std::string name, core::ApprovalLevel floor,
    core::AutoAuthorization auto_class = core::AutoAuthorization::kNever) {
  core::Capability c;
  c.name = std::move(name);
  c.description = "test capability";
  c.minimum_approval = floor;
  c.auto_authorization = auto_class;
  return c;
}

inline core::FleetResource Vm101() {
  core::FleetResource r;
  r.id = "vm:101";
  r.type = "vm";
  r.name = "web-01";
  r.status = "running";
  r.technology = "proxmox";
  r.parent_id = "node:pve1";
  r.revision = "r1";
  return r;
}

inline core::FleetResource Nginx() {
  core::FleetResource r;
  r.id = "service:pve1/nginx";
  r.type = "service";
  r.name = "nginx";
  r.status = "active";
  r.technology = "systemd";
  r.parent_id = "node:pve1";
  r.revision = "s1";
  return r;
}

inline core::FleetResource Node() {
  core::FleetResource r;
  r.id = "node:pve1";
  r.type = "node";
  r.name = "pve1";
  r.status = "online";
  r.technology = "proxmox";
  return r;
}

inline std::vector<core::Capability> VmCatalogue() {
  return {RestartCapability(), MakeCapability("stop", core::ApprovalLevel::kAdmin),
          MakeCapability("snapshot", core::ApprovalLevel::kNone),
          MakeCapability("migrate", core::ApprovalLevel::kDryRunOnly),
          MakeCapability("destroy", core::ApprovalLevel::kMfa)};
}

inline std::vector<core::Capability> NginxCatalogue() {
  return {ReloadCapability(),
          MakeCapability("restart-elevated", core::ApprovalLevel::kNone,
                         core::AutoAuthorization::kElevated),
          MakeCapability("flush", core::ApprovalLevel::kNone, core::AutoAuthorization::kNever)};
}

struct Harness {
  explicit Harness(core::ActionPolicyOptions options = {})
      : service(store, fleet, operator_state, audit, clock, options) {
    fleet.PutResource(Node(), {});
    fleet.PutResource(Vm101(), VmCatalogue());
    fleet.PutResource(Nginx(), NginxCatalogue());
    fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
    fleet.AddRelationship({"service:pve1/nginx", "node:pve1", "runs_on"});
  }

  FakeClock clock;
  InMemoryActionStore store;
  FakeFleet fleet;
  InMemoryOperatorStateStore operator_state;
  InMemoryAuditLog audit;
  core::ActionService service;
};

inline core::ActionRequest Request(std::string capability, std::string params_json,
                                   core::ActionActor actor, std::string resource = "vm:101",
                                   std::string request_id = "req-1") {
  core::ActionRequest r;
  r.request_id = std::move(request_id);
  r.resource_id = std::move(resource);
  r.capability_name = std::move(capability);
  r.params_json = std::move(params_json);
  r.reason = "kernel patch needs a restart";
  r.actor = std::move(actor);
  return r;
}

// Plans and requires success.
inline core::ActionRecord MustPlan(Harness& h, const core::ActionRequest& request) {
  absl::StatusOr<core::Refusable<core::PlanOutcome>> out = h.service.Plan(request);
  REQUIRE(out.ok());
  if (out->refused()) {
    FAIL("plan refused: " << out->refusal().message);
  }
  return out->value().record;
}

inline core::DecideRequest Decision(const core::ActionRecord& record, core::DecisionOutcome outcome,
                                    core::ActionActor actor, std::string reason = "") {
  core::DecideRequest d;
  d.action_id = record.id();
  d.outcome = outcome;
  d.reason = std::move(reason);
  d.actor = std::move(actor);
  return d;
}

inline core::DecideRequest Approve(const core::ActionRecord& record, core::ActionActor actor) {
  return Decision(record, core::DecisionOutcome::kApproved, std::move(actor));
}

inline core::ExecuteRequest Execution(const core::ActionRecord& record, core::ActionActor actor) {
  core::ExecuteRequest e;
  e.action_id = record.id();
  e.actor = std::move(actor);
  return e;
}

inline core::ActionRecord MustDecide(Harness& h, const core::DecideRequest& request) {
  absl::StatusOr<core::Refusable<core::DecideOutcome>> out = h.service.Decide(request);
  REQUIRE(out.ok());
  if (out->refused()) {
    FAIL("decision refused: " << out->refusal().message);
  }
  return out->value().record;
}

inline core::ExecuteOutcome MustExecute(Harness& h, const core::ExecuteRequest& request) {
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> out = h.service.Execute(request);
  REQUIRE(out.ok());
  if (out->refused()) {
    FAIL("execution refused: " << out->refusal().message);
  }
  return out->value();
}

// The refusal code of a call that must be refused.
template <class T>
core::ActionRefusal MustRefuse(const absl::StatusOr<core::Refusable<T>>& out) {
  REQUIRE(out.ok());
  REQUIRE(out->refused());
  return out->refusal();
}

// A planned, admin-floor restart of vm:101 approved by alice.
inline core::ActionRecord ApprovedRestart(Harness& h) {
  const core::ActionRecord planned =
      MustPlan(h, Request("restart", R"({"mode":"graceful"})", Agent("assistant")));
  return MustDecide(h, Approve(planned, Human("alice")));
}

inline core::ActionRecord StoredRecord(Harness& h, const std::string& id) {
  absl::StatusOr<core::ActionRecord> r = h.store.Get(id);
  REQUIRE(r.ok());
  return *r;
}

inline std::vector<core::ActionState> EventStates(Harness& h, const std::string& id) {
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events = h.store.ListEvents(id);
  REQUIRE(events.ok());
  std::vector<core::ActionState> out;
  for (const core::ActionLifecycleEvent& e : *events) {
    out.push_back(e.state);
  }
  return out;
}

inline bool StartsWith(const std::string& text, std::string_view prefix) {
  return text.rfind(std::string(prefix), 0) == 0;
}

}  // namespace pulse::testing::actions
