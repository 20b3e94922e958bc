// The demo fleet behind the governed-action lifecycle: pulse::core::ActionService with the
// in-memory stores plans, approves, executes and verifies against the simulated state.
#include <catch2/catch.hpp>
#include <string>

#include "agents_test_support.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"

namespace pulse::testing::agents {
namespace {

core::ActionActor Human(std::string id) { return {core::ActorKind::kHuman, std::move(id)}; }
core::ActionActor Agent(std::string id) { return {core::ActorKind::kAgent, std::move(id)}; }

struct Lifecycle {
  explicit Lifecycle(absl::Duration delay = absl::ZeroDuration())
      : fleet(OpenDemo(clock, delay)), service(store, *fleet, operator_state, audit, clock) {}

  core::ActionRecord MustPlan(const std::string& resource, const std::string& capability,
                              const core::ActionActor& actor, std::string params = "{}") {
    core::ActionRequest r;
    r.request_id = "req-" + capability;
    r.resource_id = resource;
    r.capability_name = capability;
    r.params_json = std::move(params);
    r.reason = "demo scenario";
    r.actor = actor;
    absl::StatusOr<core::Refusable<core::PlanOutcome>> out = service.Plan(r);
    REQUIRE(out.ok());
    if (out->refused()) {
      FAIL("plan refused: " << out->refusal().message);
    }
    return out->value().record;
  }

  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> Execute(const core::ActionRecord& record,
                                                                const core::ActionActor& actor) {
    core::ExecuteRequest e;
    e.action_id = record.id();
    e.actor = actor;
    return service.Execute(e);
  }

  FakeClock clock;
  InMemoryActionStore store;
  InMemoryOperatorStateStore operator_state;
  InMemoryAuditLog audit;
  std::unique_ptr<adapters::agents::DemoFleet> fleet;
  core::ActionService service;
};

void CheckVerifiedFix(const core::ActionRecord& record) {
  CHECK(record.state == core::ActionState::kCompleted);
  REQUIRE(record.result.has_value());
  CHECK(record.result->execution.status == core::ExecutionStatus::kSucceeded);
  CHECK(record.result->verification.status == core::VerificationStatus::kConfirmed);
  CHECK(record.result->verification.evidence_class == core::EvidenceClass::kIndependent);
  CHECK(record.result->verification.observer_id == "demo-observer:control-plane");
  CHECK(record.result->executor_id.rfind("demo-agent:", 0) == 0);
  CHECK(core::IsVerifiedFix(*record.result));
}

TEST_CASE("a human-approved VM stop runs end to end and is verified independently",
          "[adapters][agents][lifecycle]") {
  Lifecycle h;
  const core::ActionRecord planned =
      h.MustPlan("vm:101", "stop", Human("alice"), R"({"mode":"shutdown"})");
  CHECK(planned.state == core::ActionState::kPendingApproval);
  CHECK(planned.plan.risk == core::ActionRisk::kHigh);
  CHECK(planned.plan.predicted_blast_radius.front() == "vm:101");

  core::DecideRequest approve;
  approve.action_id = planned.id();
  approve.outcome = core::DecisionOutcome::kApproved;
  approve.actor = Human("bob");
  absl::StatusOr<core::Refusable<core::DecideOutcome>> decided = h.service.Decide(approve);
  REQUIRE(decided.ok());
  REQUIRE_FALSE(decided->refused());
  CHECK(decided->value().record.state == core::ActionState::kApproved);

  h.clock.Advance(absl::Seconds(30));
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> executed = h.Execute(planned, Human("bob"));
  REQUIRE(executed.ok());
  REQUIRE_FALSE(executed->refused());
  CHECK(executed->value().dispatched);
  CheckVerifiedFix(executed->value().record);
  CHECK(MustGet(*h.fleet, "vm:101").status == "stopped");
  CHECK(CapabilityNames(*h.fleet, "vm:101") == std::vector<std::string>{"start"});

  // Executing again replays the stored outcome; nothing is dispatched twice.
  executed = h.Execute(planned, Human("bob"));
  REQUIRE(executed.ok());
  REQUIRE_FALSE(executed->refused());
  CHECK(executed->value().replayed);
  CHECK_FALSE(executed->value().dispatched);
}

TEST_CASE("an agent restarts the crash-looping service without a human and the fix verifies",
          "[adapters][agents][lifecycle]") {
  Lifecycle h(absl::Seconds(2));  // the change lands two seconds after dispatch
  const core::ActionRecord planned = h.MustPlan("service:pve2/postfix", "restart", Agent("patrol"));
  CHECK(planned.state == core::ActionState::kPlanned);  // low_risk, under the default ceiling
  CHECK_FALSE(planned.plan.requires_approval);
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> executed =
      h.Execute(planned, Agent("patrol"));
  REQUIRE(executed.ok());
  REQUIRE_FALSE(executed->refused());
  CheckVerifiedFix(executed->value().record);
  const core::FleetStatus status = MustStatus(*h.fleet, "service:pve2/postfix");
  CHECK(status.status == "active");
  CHECK(status.facts.count("faults") == 0);
}

TEST_CASE("a capability the resource no longer offers is refused by the lifecycle",
          "[adapters][agents][lifecycle]") {
  Lifecycle h;
  // Not in the catalogue at planning time.
  core::ActionRequest r;
  r.request_id = "req-x";
  r.resource_id = "vm:108";
  r.capability_name = "stop";
  r.reason = "stop a stopped VM";
  r.actor = Human("alice");
  absl::StatusOr<core::Refusable<core::PlanOutcome>> plan = h.service.Plan(r);
  REQUIRE(plan.ok());
  REQUIRE(plan->refused());
  CHECK(plan->refusal().code == core::AgentErrorCode::kCapabilityNotFound);

  // Withdrawn between planning and execution: the fault changes the catalogue, so the plan
  // drifts and nothing is dispatched.
  const core::ActionRecord planned = h.MustPlan("app-container:web", "restart", Human("alice"));
  REQUIRE(h.fleet->InjectFault("app-container:web", adapters::agents::DemoFaultKind::kExited).ok());
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> executed =
      h.Execute(planned, Human("alice"));
  REQUIRE(executed.ok());
  REQUIRE(executed->refused());
  CHECK(executed->refusal().code == core::AgentErrorCode::kActionPlanDrift);
  CHECK(MustStatus(*h.fleet, "app-container:web").facts.at("restart_count") == "0");
}

TEST_CASE("a fix the observer contradicts is recorded but not verified",
          "[adapters][agents][lifecycle]") {
  Lifecycle h;
  REQUIRE(h.fleet
              ->InjectFault("service:pve1/nginx", adapters::agents::DemoFaultKind::kCrashLoop,
                            /*persistent=*/true)
              .ok());
  const core::ActionRecord planned = h.MustPlan("service:pve1/nginx", "restart", Human("alice"));
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> executed =
      h.Execute(planned, Human("alice"));
  REQUIRE(executed.ok());
  REQUIRE_FALSE(executed->refused());
  const core::ActionRecord& record = executed->value().record;
  REQUIRE(record.result.has_value());
  CHECK(record.result->execution.status == core::ExecutionStatus::kSucceeded);
  CHECK(record.result->verification.status == core::VerificationStatus::kContradicted);
  CHECK_FALSE(core::IsVerifiedFix(*record.result));
}

}  // namespace
}  // namespace pulse::testing::agents
