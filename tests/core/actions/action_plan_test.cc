#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "action_test_support.h"
#include "pulse/core/actions/action_identity.h"

namespace pulse::core {
namespace {

using testing::FakeFleet;
using namespace testing::actions;  // NOLINT: test fixtures

TEST_CASE("planning an admin capability stores a pending plan with its initial events",
          "[core][actions]") {
  Harness h;
  const absl::Time now = h.clock.Now();
  absl::StatusOr<Refusable<PlanOutcome>> out =
      h.service.Plan(Request("restart", R"({"timeout":30,"mode":"graceful"})", Human("alice")));
  REQUIRE(out.ok());
  REQUIRE_FALSE(out->refused());
  const ActionRecord& r = out->value().record;
  CHECK(out->value().created);
  CHECK(r.state == ActionState::kPendingApproval);
  CHECK(r.plan.requires_approval);
  CHECK(r.plan.allowed);
  CHECK(r.plan.approval_requirement == ApprovalRequirement{ApprovalLevel::kAdmin, 1, false});
  CHECK(r.plan.params_json == R"({"mode":"graceful","timeout":30})");
  CHECK(r.request.params_json == r.plan.params_json);
  CHECK(r.plan.planned_at == now);
  CHECK(r.plan.expires_at == now + absl::Minutes(5));
  CHECK(r.plan.predicted_blast_radius == std::vector<std::string>{"vm:101", "node:pve1"});
  CHECK(r.plan.preflight.target == "vm:101");
  CHECK(r.plan.preflight.current_state == "running");
  CHECK_FALSE(r.plan.preflight.safety_checks.empty());
  CHECK_FALSE(r.plan.preflight.verification_steps.empty());
  CHECK(r.plan.action_id.rfind("act_", 0) == 0);
  CHECK(r.plan.action_id.size() == 4 + 32);
  CHECK(r.plan.plan_hash.rfind("sha256:", 0) == 0);
  CHECK(r.plan.plan_hash.size() == 7 + 64);
  CHECK(r.plan.plan_hash == ComputePlanHash(r.plan, r.request));
  CHECK(EventStates(h, r.id()) ==
        std::vector<ActionState>{ActionState::kPlanned, ActionState::kPendingApproval});
  CHECK(StoredRecord(h, r.id()) == r);
  CHECK(h.audit.Find(r.id(), "planned").size() == 1);
}

TEST_CASE("a capability without an approval floor is planned ready to execute", "[core][actions]") {
  Harness h;
  const ActionRecord r = MustPlan(h, Request("snapshot", "", Human("alice")));
  CHECK(r.state == ActionState::kPlanned);
  CHECK_FALSE(r.plan.requires_approval);
  CHECK(r.plan.params_json == "{}");
  CHECK(EventStates(h, r.id()) == std::vector<ActionState>{ActionState::kPlanned});
}

TEST_CASE("a dry-run-only capability plans but is not executable", "[core][actions]") {
  Harness h;
  const ActionRecord r = MustPlan(h, Request("migrate", "{}", Human("alice")));
  CHECK(r.state == ActionState::kPlanned);
  CHECK_FALSE(r.plan.allowed);
  CHECK_FALSE(r.plan.requires_approval);
  CHECK(r.plan.approval_requirement.floor == ApprovalLevel::kDryRunOnly);
}

TEST_CASE("automation gets no approval only for eligible capabilities under the ceiling",
          "[core][actions]") {
  Harness h;
  const ActionRecord low = MustPlan(
      h, Request("reload", R"({"unit":"nginx.service"})", Agent("patrol"), "service:pve1/nginx"));
  CHECK(low.state == ActionState::kPlanned);
  CHECK(low.plan.approval_requirement.floor == ApprovalLevel::kNone);

  const ActionRecord elevated =
      MustPlan(h, Request("restart-elevated", "{}", Agent("patrol"), "service:pve1/nginx"));
  CHECK(elevated.state == ActionState::kPendingApproval);
  CHECK(elevated.plan.approval_requirement.floor == ApprovalLevel::kAdmin);
  CHECK(elevated.plan.approval_policy == ApprovalLevel::kNone);

  const ActionRecord never =
      MustPlan(h, Request("flush", "{}", Policy("autopilot"), "service:pve1/nginx"));
  CHECK(never.plan.approval_requirement.floor == ApprovalLevel::kAdmin);

  const ActionRecord human =
      MustPlan(h, Request("flush", "{}", Human("alice"), "service:pve1/nginx", "req-human"));
  CHECK(human.plan.approval_requirement.floor == ApprovalLevel::kNone);
  CHECK(human.state == ActionState::kPlanned);
}

TEST_CASE("the automatic ceiling and quorum options shape the requirement", "[core][actions]") {
  ActionPolicyOptions options;
  options.automatic_ceiling = AutoAuthorization::kElevated;
  options.approval_quorum = 3;
  options.require_requester_separation = true;
  Harness h(options);
  const ActionRecord elevated =
      MustPlan(h, Request("restart-elevated", "{}", Agent("patrol"), "service:pve1/nginx"));
  CHECK(elevated.state == ActionState::kPlanned);
  const ActionRecord restart = MustPlan(h, Request("restart", "{}", Human("alice")));
  CHECK(restart.plan.approval_requirement == ApprovalRequirement{ApprovalLevel::kAdmin, 3, true});

  ActionPolicyOptions off;
  off.automatic_ceiling = AutoAuthorization::kNever;
  off.approval_quorum = 99;
  Harness g(off);
  CHECK(g.service.options().approval_quorum == kMaxApprovalQuorum);
  const ActionRecord reload = MustPlan(
      g, Request("reload", R"({"unit":"nginx.service"})", Agent("patrol"), "service:pve1/nginx"));
  CHECK(reload.state == ActionState::kPendingApproval);
}

TEST_CASE("an identical re-plan returns the stored record without a second insert",
          "[core][actions]") {
  Harness h;
  const ActionRequest request =
      Request("restart", R"({"mode":"force","timeout":5})", Agent("assistant"));
  const ActionRecord first = MustPlan(h, request);
  h.clock.Advance(absl::Seconds(30));
  ActionRequest reordered = request;
  reordered.params_json = R"({ "timeout" : 5, "mode" : "force" })";
  absl::StatusOr<Refusable<PlanOutcome>> again = h.service.Plan(reordered);
  REQUIRE(again.ok());
  REQUIRE_FALSE(again->refused());
  CHECK_FALSE(again->value().created);
  CHECK(again->value().record == first);
  CHECK(h.store.size() == 1);
  CHECK(EventStates(h, first.id()).size() == 2);
}

TEST_CASE("a changed request or resource yields a different action", "[core][actions]") {
  Harness h;
  const ActionRecord first = MustPlan(h, Request("restart", "{}", Human("alice")));
  const ActionRecord other_id =
      MustPlan(h, Request("restart", "{}", Human("alice"), "vm:101", "req-2"));
  CHECK(other_id.id() != first.id());
  h.fleet.EditResource("vm:101", [](FleetResource& r) { r.revision = "r2"; });
  const ActionRecord after_change = MustPlan(h, Request("restart", "{}", Human("alice")));
  CHECK(after_change.id() != first.id());
  CHECK(after_change.plan.resource_version != first.plan.resource_version);
  CHECK(h.store.size() == 3);
}

TEST_CASE("a re-plan after the neighbourhood changed is a new action, not a clash",
          "[core][actions]") {
  Harness h;
  const ActionRecord first = MustPlan(h, Request("restart", "{}", Human("alice")));
  h.fleet.AddRelationship({"storage:ceph", "vm:101", "backs"});
  const ActionRecord second = MustPlan(h, Request("restart", "{}", Human("alice")));
  CHECK(second.id() != first.id());
  CHECK(second.plan.resource_version == first.plan.resource_version);
  CHECK(second.plan.predicted_blast_radius ==
        std::vector<std::string>{"vm:101", "node:pve1", "storage:ceph"});
}

TEST_CASE("re-planning an expired plan returns it as expired", "[core][actions]") {
  Harness h;
  const ActionRecord first = MustPlan(h, Request("restart", "{}", Human("alice")));
  h.clock.Advance(absl::Minutes(5));
  absl::StatusOr<Refusable<PlanOutcome>> again =
      h.service.Plan(Request("restart", "{}", Human("alice")));
  REQUIRE(again.ok());
  REQUIRE_FALSE(again->refused());
  CHECK_FALSE(again->value().created);
  CHECK(again->value().record.id() == first.id());
  CHECK(again->value().record.state == ActionState::kExpired);
}

TEST_CASE("planning against an unknown resource is resource_not_found", "[core][actions]") {
  Harness h;
  const ActionRefusal r =
      MustRefuse(h.service.Plan(Request("restart", "{}", Human("alice"), "vm:999")));
  CHECK(r.code == AgentErrorCode::kResourceNotFound);
  CHECK(h.store.size() == 0);
  CHECK(h.audit.entries().back().code == "resource_not_found");
}

TEST_CASE("a capability not advertised in the resource's current state is capability_not_found",
          "[core][actions]") {
  Harness h;
  CHECK(MustRefuse(h.service.Plan(Request("start", "{}", Human("alice")))).code ==
        AgentErrorCode::kCapabilityNotFound);
  // The catalogue is state-dependent: once the VM is stopped, restart is gone and start appears.
  h.fleet.EditResource("vm:101", [](FleetResource& r) { r.status = "stopped"; });
  h.fleet.SetCatalogue("vm:101", {MakeCapability("start", ApprovalLevel::kAdmin)});
  CHECK(MustRefuse(h.service.Plan(Request("restart", "{}", Human("alice")))).code ==
        AgentErrorCode::kCapabilityNotFound);
  CHECK(MustPlan(h, Request("start", "{}", Human("alice"))).state == ActionState::kPendingApproval);
}

TEST_CASE("an unreadable fleet or invalid declaration is action_execution_unavailable",
          "[core][actions]") {
  Harness h;
  h.fleet.SetError(FakeFleet::Method::kListCapabilities, absl::UnavailableError("agent down"));
  CHECK(MustRefuse(h.service.Plan(Request("restart", "{}", Human("alice")))).code ==
        AgentErrorCode::kActionExecutionUnavailable);
  h.fleet.ClearError(FakeFleet::Method::kListCapabilities);
  h.fleet.SetError(FakeFleet::Method::kGetTopology, absl::DeadlineExceededError("slow"));
  CHECK(MustRefuse(h.service.Plan(Request("restart", "{}", Human("alice")))).code ==
        AgentErrorCode::kActionExecutionUnavailable);
  h.fleet.ClearError(FakeFleet::Method::kGetTopology);
  Capability broken = RestartCapability();
  broken.params[0].pattern = "\\d+";  // unsupported class: the declaration is invalid
  h.fleet.SetCatalogue("vm:101", {broken});
  CHECK(MustRefuse(h.service.Plan(Request("restart", "{}", Human("alice")))).code ==
        AgentErrorCode::kActionExecutionUnavailable);
  CHECK(h.store.size() == 0);
}

TEST_CASE("invalid params are invalid_action_request with a reason per field", "[core][actions]") {
  Harness h;
  struct Case {
    std::string params;
    std::string field;
    std::string reason_part;
  };
  const std::vector<Case> cases = {
      {R"({"mode":"graceful","force":true})", "force", "not declared"},
      {R"({" mode":"graceful"})", "params", "whitespace"},
      {R"({"mode":"reboot"})", "mode", "declared values"},
      {R"({"mode":1})", "mode", "type string"},
      {R"({"timeout":"30"})", "timeout", "type integer"},
      {R"({"timeout":1.5})", "timeout", "type integer"},
      {R"({"timeout":30.0})", "timeout", "type integer"},
      {R"({"timeout":null})", "timeout", "type integer"},
      {R"(["mode"])", "params", "JSON object"},
      {R"({"mode":"graceful")", "params", "well-formed"},
      {R"({"mode":"graceful","mode":"force"})", "mode", "more than once"},
      {R"({"mode":"grace\u0000ful"})", "params", "without NUL"},
  };
  for (const Case& c : cases) {
    INFO(c.params);
    const ActionRefusal r =
        MustRefuse(h.service.Plan(Request("restart", c.params, Human("alice"))));
    CHECK(r.code == AgentErrorCode::kInvalidActionRequest);
    REQUIRE(r.details.count(c.field) == 1);
    CHECK(r.details.at(c.field).find(c.reason_part) != std::string::npos);
  }
  const ActionRefusal missing =
      MustRefuse(h.service.Plan(Request("reload", "{}", Agent("patrol"), "service:pve1/nginx")));
  CHECK(missing.details.at("unit") == "is required");
  const ActionRefusal pattern = MustRefuse(h.service.Plan(
      Request("reload", R"({"unit":"nginx; rm -rf /"})", Agent("patrol"), "service:pve1/nginx")));
  CHECK(pattern.details.at("unit") == "does not match the declared pattern");
  CHECK(pattern.message.find("rm -rf") == std::string::npos);
  CHECK(h.store.size() == 0);
}

TEST_CASE("malformed request fields are refused before the fleet is consulted", "[core][actions]") {
  Harness h;
  h.fleet.SetError(FakeFleet::Method::kGetResource, absl::InternalError("must not be called"));
  auto refuse = [&](ActionRequest request) { return MustRefuse(h.service.Plan(request)); };
  ActionRequest bad_id = Request("restart", "{}", Human("alice"));
  bad_id.request_id = "req with spaces";
  CHECK(refuse(bad_id).details.count("requestId") == 1);
  ActionRequest bad_resource = Request("restart", "{}", Human("alice"), "vm:101/../x");
  CHECK(refuse(bad_resource).details.count("resourceId") == 1);
  ActionRequest bad_capability = Request("Restart!", "{}", Human("alice"));
  CHECK(refuse(bad_capability).details.count("capabilityName") == 1);
  ActionRequest blank_reason = Request("restart", "{}", Human("alice"));
  blank_reason.reason = "  \n ";
  CHECK(refuse(blank_reason).details.count("reason") == 1);
  ActionRequest control_reason = Request("restart", "{}", Human("alice"));
  control_reason.reason = std::string("ok\x01", 3);
  CHECK(refuse(control_reason).code == AgentErrorCode::kInvalidActionRequest);
  ActionRequest no_actor = Request("restart", "{}", Human(""));
  CHECK(refuse(no_actor).code == AgentErrorCode::kActionActorUnavailable);
  CHECK(h.store.size() == 0);
}

TEST_CASE("a store failure during planning is an error status, not a refusal", "[core][actions]") {
  Harness h;
  h.store.FailNext(absl::UnavailableError("disk gone"));
  absl::StatusOr<Refusable<PlanOutcome>> out =
      h.service.Plan(Request("restart", "{}", Human("alice")));
  CHECK(absl::IsUnavailable(out.status()));
}

TEST_CASE("every refusal code the service emits is declared by its capability", "[core][actions]") {
  // The codes each operation can answer with, as documented in action_service.h; the manifest
  // advertises sets P, D and E, so a code outside them would be an undeclared emission.
  using C = AgentErrorCode;
  const std::vector<C> plan = {C::kActionActorUnavailable, C::kInvalidActionRequest,
                               C::kResourceNotFound, C::kCapabilityNotFound,
                               C::kActionExecutionUnavailable};
  const std::vector<C> decide = {C::kMissingId,
                                 C::kInvalidId,
                                 C::kActionActorUnavailable,
                                 C::kInvalidActionDecision,
                                 C::kActionNotFound,
                                 C::kActionPlanIdentityMismatch,
                                 C::kActionDecisionConflict,
                                 C::kActionPlanExpired,
                                 C::kActionNotPending,
                                 C::kActionApprovalForbidden,
                                 C::kActionStepUpUnavailable,
                                 C::kActionSeparationRequired,
                                 C::kActionExecutionUnavailable,
                                 C::kActionPlanDrift,
                                 C::kResourceRemediationLocked};
  const std::vector<C> execute = {C::kMissingId,
                                  C::kInvalidId,
                                  C::kActionActorUnavailable,
                                  C::kInvalidActionExecution,
                                  C::kActionNotFound,
                                  C::kActionPlanIdentityMismatch,
                                  C::kActionAlreadyExecuting,
                                  C::kActionExecutionFinal,
                                  C::kActionPlanExpired,
                                  C::kActionDryRunOnly,
                                  C::kActionNotApproved,
                                  C::kActionExecutionForbidden,
                                  C::kActionExecutionUnavailable,
                                  C::kActionPlanDrift,
                                  C::kResourceRemediationLocked,
                                  C::kActionNotExecuting};
  auto declared = [](const std::vector<C>& set, C code) {
    return std::find(set.begin(), set.end(), code) != set.end();
  };
  for (C c : plan) {
    INFO(ToString(c));
    CHECK(declared(PlanErrorCodes(), c));
  }
  for (C c : decide) {
    INFO(ToString(c));
    CHECK(declared(DecideErrorCodes(), c));
  }
  for (C c : execute) {
    INFO(ToString(c));
    CHECK(declared(ExecuteErrorCodes(), c));
  }
}

}  // namespace
}  // namespace pulse::core

namespace pulse::core {
namespace {

using namespace testing::actions;  // NOLINT: test fixtures

// A chat confirmation is not an approval (docs/security.md "Consent and session ownership").
ActionRequest PostureReload(std::string posture, std::string request_id = "req-p") {
  ActionRequest r = Request("reload", R"({"unit":"nginx.service"})", Agent("assistant"),
                            "service:pve1/nginx", std::move(request_id));
  r.approval_posture = std::move(posture);
  return r;
}

TEST_CASE(
    "a session posture that requires a human makes an approval-free plan wait for a "
    "recorded approval",
    "[core][actions][consent]") {
  Harness h;
  const ActionRecord free = MustPlan(h, PostureReload("", "req-free"));
  REQUIRE(free.state == ActionState::kPlanned);  // the capability's own rule: no approval

  const ActionRecord r = MustPlan(h, PostureReload("control_level:controlled"));
  CHECK(r.state == ActionState::kPendingApproval);
  CHECK(r.plan.requires_approval);
  CHECK(r.plan.approval_requirement.floor == ApprovalLevel::kAdmin);
  CHECK(r.plan.approval_policy == ApprovalLevel::kNone);  // the capability's floor, unchanged
  CHECK(r.plan.message.find("control_level:controlled") != std::string::npos);
  CHECK(r.request.approval_posture == "control_level:controlled");
  CHECK(StoredRecord(h, r.id()) == r);
  CHECK(r.plan.plan_hash == ComputePlanHash(r.plan, r.request));
  // The posture is part of the plan's identity, and its rebuild (drift check) is stable.
  ActionRequest other = PostureReload("control_level:read_only");
  CHECK(MustPlan(h, other).id() != r.id());
  absl::StatusOr<std::optional<std::string>> drift = h.service.CheckDrift(r);
  REQUIRE(drift.ok());
  CHECK_FALSE(drift->has_value());

  // No execute without the approval; the approval is a record bound to the plan hash.
  absl::StatusOr<Refusable<ExecuteOutcome>> early = h.service.Execute(Execution(r, Human("alice")));
  REQUIRE(early.ok());
  REQUIRE(early->refused());
  CHECK(early->refusal().code == AgentErrorCode::kActionNotApproved);
  CHECK(h.fleet.dispatch_calls() == 0);
  DecideRequest stale = Approve(r, Human("alice"));
  stale.plan_hash = "sha256:" + std::string(64, '0');
  absl::StatusOr<Refusable<DecideOutcome>> refused = h.service.Decide(stale);
  REQUIRE(refused.ok());
  REQUIRE(refused->refused());
  CHECK(refused->refusal().code == AgentErrorCode::kActionPlanIdentityMismatch);
  const ActionRecord approved = MustDecide(h, Approve(r, Human("alice")));
  CHECK(approved.state == ActionState::kApproved);
  REQUIRE(approved.approvals.size() == 1);
  CHECK(approved.approvals[0].plan_hash == r.plan.plan_hash);
  CHECK(approved.approvals[0].actor == Human("alice"));
  const ExecuteOutcome ran = MustExecute(h, Execution(approved, Human("bob")));
  CHECK(ran.dispatched);
  CHECK(ran.record.approvals.size() == 1);
}

TEST_CASE("a malformed approval posture is refused", "[core][actions][consent]") {
  Harness h;
  for (const std::string& bad : {std::string("Control Level"), std::string(65, 'a'),
                                 std::string("level\n"), std::string("é")}) {
    absl::StatusOr<Refusable<PlanOutcome>> out = h.service.Plan(PostureReload(bad));
    REQUIRE(out.ok());
    REQUIRE(out->refused());
    CHECK(out->refusal().code == AgentErrorCode::kInvalidActionRequest);
    CHECK(out->refusal().details.count("approvalPosture") == 1);
  }
}

}  // namespace
}  // namespace pulse::core
