#include <catch2/catch.hpp>
#include <string>

#include "action_test_support.h"

namespace pulse::core {
namespace {

using testing::FakeFleet;
using namespace testing::actions;  // NOLINT: test fixtures

ActionRecord PendingRestart(Harness& h, ActionActor requester = Agent("assistant")) {
  return MustPlan(h, Request("restart", R"({"mode":"graceful"})", std::move(requester)));
}

TEST_CASE("an approval moves a pending plan to approved with a decision and a transition event",
          "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  h.clock.Advance(absl::Seconds(10));
  absl::StatusOr<Refusable<DecideOutcome>> out =
      h.service.Decide(Decision(planned, DecisionOutcome::kApproved, Human("alice"), "ok"));
  REQUIRE(out.ok());
  REQUIRE_FALSE(out->refused());
  const ActionRecord& r = out->value().record;
  CHECK_FALSE(out->value().replayed);
  CHECK(r.state == ActionState::kApproved);
  CHECK(r.decision_revision == 1);
  REQUIRE(r.approvals.size() == 1);
  CHECK(r.approvals[0].actor == Human("alice"));
  CHECK(r.approvals[0].outcome == DecisionOutcome::kApproved);
  CHECK(r.approvals[0].reason == "ok");
  CHECK(r.approvals[0].plan_hash == planned.plan.plan_hash);
  CHECK(r.approvals[0].at == h.clock.Now());
  CHECK(r.plan == planned.plan);
  absl::StatusOr<std::vector<ActionLifecycleEvent>> events = h.store.ListEvents(r.id());
  REQUIRE(events.ok());
  REQUIRE(events->size() == 4);
  CHECK((*events)[2].kind == LifecycleEventKind::kDecision);
  CHECK((*events)[2].decision == std::optional(DecisionOutcome::kApproved));
  CHECK((*events)[2].decision_revision == std::optional<std::uint32_t>(1));
  CHECK((*events)[3].kind == LifecycleEventKind::kTransition);
  CHECK((*events)[3].state == ActionState::kApproved);
}

TEST_CASE("a rejection is terminal and can never execute", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  const ActionRecord rejected =
      MustDecide(h, Decision(planned, DecisionOutcome::kRejected, Human("alice"), "not now"));
  CHECK(rejected.state == ActionState::kRejected);
  CHECK(MustRefuse(h.service.Execute(Execution(rejected, Human("alice")))).code ==
        AgentErrorCode::kActionExecutionFinal);
  CHECK(MustRefuse(h.service.Decide(Approve(rejected, Human("bob")))).code ==
        AgentErrorCode::kActionNotPending);
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("an exact replay of a decision returns the stored record unchanged", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  const DecideRequest approve = Decision(planned, DecisionOutcome::kApproved, Human("alice"), "ok");
  const ActionRecord approved = MustDecide(h, approve);
  const std::uint64_t transitions = h.store.transitions();
  h.clock.Advance(absl::Minutes(1));
  absl::StatusOr<Refusable<DecideOutcome>> again = h.service.Decide(approve);
  REQUIRE(again.ok());
  REQUIRE_FALSE(again->refused());
  CHECK(again->value().replayed);
  CHECK(again->value().record == approved);
  CHECK(h.store.transitions() == transitions);
  // The replay still answers once the action has moved on.
  MustExecute(h, Execution(approved, Human("alice")));
  absl::StatusOr<Refusable<DecideOutcome>> late = h.service.Decide(approve);
  REQUIRE(late.ok());
  REQUIRE_FALSE(late->refused());
  CHECK(late->value().replayed);
  CHECK(late->value().record.state == ActionState::kCompleted);
}

TEST_CASE("a conflicting replay by the same actor is action_decision_conflict", "[core][actions]") {
  ActionPolicyOptions two;
  two.approval_quorum = 2;
  Harness h(two);
  const ActionRecord planned = PendingRestart(h);
  MustDecide(h, Decision(planned, DecisionOutcome::kApproved, Human("alice"), "ok"));
  const ActionRefusal other_reason = MustRefuse(
      h.service.Decide(Decision(planned, DecisionOutcome::kApproved, Human("alice"), "changed")));
  CHECK(other_reason.code == AgentErrorCode::kActionDecisionConflict);
  const ActionRefusal flip = MustRefuse(
      h.service.Decide(Decision(planned, DecisionOutcome::kRejected, Human("alice"), "ok")));
  CHECK(flip.code == AgentErrorCode::kActionDecisionConflict);
  REQUIRE(flip.record.has_value());
  CHECK(flip.record->state == ActionState::kPendingApproval);
  CHECK(StoredRecord(h, planned.id()).approvals.size() == 1);
}

TEST_CASE("quorum counts distinct approving humans", "[core][actions]") {
  ActionPolicyOptions two;
  two.approval_quorum = 2;
  Harness h(two);
  const ActionRecord planned = PendingRestart(h);
  const ActionRecord one = MustDecide(h, Approve(planned, Human("alice")));
  CHECK(one.state == ActionState::kPendingApproval);
  CHECK(one.decision_revision == 1);
  CHECK(MustRefuse(h.service.Execute(Execution(one, Human("alice")))).code ==
        AgentErrorCode::kActionNotApproved);
  const ActionRecord two_of_two = MustDecide(h, Approve(planned, Human("bob")));
  CHECK(two_of_two.state == ActionState::kApproved);
  CHECK(two_of_two.decision_revision == 2);
  CHECK(EventStates(h, planned.id()) ==
        std::vector<ActionState>{ActionState::kPlanned, ActionState::kPendingApproval,
                                 ActionState::kPendingApproval, ActionState::kApproved,
                                 ActionState::kApproved});
}

TEST_CASE("any rejection ends a quorum vote", "[core][actions]") {
  ActionPolicyOptions two;
  two.approval_quorum = 2;
  Harness h(two);
  const ActionRecord planned = PendingRestart(h);
  MustDecide(h, Approve(planned, Human("alice")));
  const ActionRecord rejected =
      MustDecide(h, Decision(planned, DecisionOutcome::kRejected, Human("bob")));
  CHECK(rejected.state == ActionState::kRejected);
  CHECK(rejected.approvals.size() == 2);
}

TEST_CASE("the requester may not approve when separation is required", "[core][actions]") {
  ActionPolicyOptions separated;
  separated.require_requester_separation = true;
  Harness h(separated);
  const ActionRecord planned = PendingRestart(h, Human("alice"));
  const ActionRefusal r = MustRefuse(h.service.Decide(Approve(planned, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionSeparationRequired);
  CHECK(StoredRecord(h, planned.id()).state == ActionState::kPendingApproval);
  // The requester may still reject their own request, and someone else may approve.
  CHECK(MustDecide(h, Approve(planned, Human("bob"))).state == ActionState::kApproved);

  Harness g;  // without the option the requester may approve
  const ActionRecord own = PendingRestart(g, Human("alice"));
  CHECK(MustDecide(g, Approve(own, Human("alice"))).state == ActionState::kApproved);
}

TEST_CASE("only humans decide", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Agent("assistant")))).code ==
        AgentErrorCode::kActionApprovalForbidden);
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Policy("autopilot")))).code ==
        AgentErrorCode::kActionApprovalForbidden);
  CHECK(StoredRecord(h, planned.id()).approvals.empty());
}

TEST_CASE("a credential that planned as an agent cannot approve as a human, even unseparated",
          "[core][actions]") {
  Harness h;  // requester separation off: only the kind flip refuses
  const ActionRecord planned = PendingRestart(h, Agent("tok_0000000000000001"));
  ActionActor same = Human("tok_0000000000000001");
  same.name = "dual";
  const ActionRefusal r = MustRefuse(h.service.Decide(Approve(planned, same)));
  CHECK(r.code == AgentErrorCode::kActionApprovalForbidden);
  CHECK(StoredRecord(h, planned.id()).approvals.empty());
  // A service token is not a human either.
  CHECK(MustRefuse(h.service.Decide(
                       Approve(planned, ActionActor{ActorKind::kService, "tok_0000000000000002"})))
            .code == AgentErrorCode::kActionApprovalForbidden);
  // Another human approves, and the approval keeps the approver's name beside the id.
  ActionActor bob = Human("tok_0000000000000003");
  bob.name = "bob";
  const ActionRecord approved = MustDecide(h, Approve(planned, bob));
  REQUIRE(approved.approvals.size() == 1);
  CHECK(approved.approvals[0].actor.name == "bob");
  CHECK(SameActor(approved.approvals[0].actor, Human("tok_0000000000000003")));
}

TEST_CASE("an mfa floor cannot be approved without a step-up verifier", "[core][actions]") {
  Harness h;
  const ActionRecord planned = MustPlan(h, Request("destroy", "{}", Human("alice")));
  REQUIRE(planned.state == ActionState::kPendingApproval);
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Human("bob")))).code ==
        AgentErrorCode::kActionStepUpUnavailable);
  CHECK(MustDecide(h, Decision(planned, DecisionOutcome::kRejected, Human("bob"))).state ==
        ActionState::kRejected);
}

TEST_CASE("a decision is bound to the plan hash", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  DecideRequest stale = Approve(planned, Human("alice"));
  stale.plan_hash = "sha256:" + std::string(64, '0');
  CHECK(MustRefuse(h.service.Decide(stale)).code == AgentErrorCode::kActionPlanIdentityMismatch);
  DecideRequest bound = Approve(planned, Human("alice"));
  bound.plan_hash = planned.plan.plan_hash;
  CHECK(MustDecide(h, bound).state == ActionState::kApproved);
}

TEST_CASE("deciding a plan that needs no decision is action_not_pending", "[core][actions]") {
  Harness h;
  const ActionRecord planned = MustPlan(h, Request("snapshot", "{}", Human("alice")));
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Human("bob")))).code ==
        AgentErrorCode::kActionNotPending);
}

TEST_CASE("deciding an expired plan materializes the expiry and refuses", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  h.clock.Advance(absl::Minutes(5));
  const ActionRefusal r = MustRefuse(h.service.Decide(Approve(planned, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionPlanExpired);
  REQUIRE(r.record.has_value());
  CHECK(r.record->state == ActionState::kExpired);
  CHECK(StoredRecord(h, planned.id()).state == ActionState::kExpired);
  CHECK(EventStates(h, planned.id()).back() == ActionState::kExpired);
  // Once expired it is final for every later caller.
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Human("bob")))).code ==
        AgentErrorCode::kActionNotPending);
}

TEST_CASE("an approval re-validates the plan against the live fleet", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  h.fleet.EditResource("vm:101", [](FleetResource& r) { r.status = "stopped"; });
  const ActionRefusal drift = MustRefuse(h.service.Decide(Approve(planned, Human("alice"))));
  CHECK(drift.code == AgentErrorCode::kActionPlanDrift);
  CHECK(StartsWith(drift.message, kPlanDriftPrefix));
  CHECK(StoredRecord(h, planned.id()).state == ActionState::kPendingApproval);
  // A rejection needs no readiness.
  CHECK(MustDecide(h, Decision(planned, DecisionOutcome::kRejected, Human("alice"))).state ==
        ActionState::kRejected);
}

TEST_CASE("an approval is refused while the remediation lock is set", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  OperatorState lock;
  lock.resource_id = "vm:101";
  lock.never_auto_remediate = true;
  lock.set_at = h.clock.Now();
  lock.set_by = "ops";
  REQUIRE(h.operator_state.Set(lock).ok());
  const ActionRefusal r = MustRefuse(h.service.Decide(Approve(planned, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kResourceRemediationLocked);
  CHECK(StartsWith(r.message, kRemediationLockedPrefix));
  CHECK(StoredRecord(h, planned.id()).state == ActionState::kPendingApproval);
  // An unreadable lock does not block a human decision (execute checks again).
  REQUIRE(h.operator_state.Clear("vm:101").ok());
  h.operator_state.FailGets(absl::UnavailableError("db locked"));
  CHECK(MustDecide(h, Approve(planned, Human("alice"))).state == ActionState::kApproved);
}

TEST_CASE("decide validates the id, the actor and the reason", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  DecideRequest missing = Approve(planned, Human("alice"));
  missing.action_id = "";
  CHECK(MustRefuse(h.service.Decide(missing)).code == AgentErrorCode::kMissingId);
  DecideRequest invalid = Approve(planned, Human("alice"));
  invalid.action_id = "act_../../etc";
  CHECK(MustRefuse(h.service.Decide(invalid)).code == AgentErrorCode::kInvalidId);
  DecideRequest too_long = Approve(planned, Human("alice"));
  too_long.action_id = std::string(129, 'a');
  CHECK(MustRefuse(h.service.Decide(too_long)).code == AgentErrorCode::kInvalidId);
  DecideRequest unknown = Approve(planned, Human("alice"));
  unknown.action_id = "act_0000";
  CHECK(MustRefuse(h.service.Decide(unknown)).code == AgentErrorCode::kActionNotFound);
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Human("")))).code ==
        AgentErrorCode::kActionActorUnavailable);
  DecideRequest huge_reason = Approve(planned, Human("alice"));
  huge_reason.reason = std::string(2000, 'x');
  CHECK(MustRefuse(h.service.Decide(huge_reason)).code == AgentErrorCode::kInvalidActionDecision);
  DecideRequest bad_utf8 = Approve(planned, Human("alice"));
  bad_utf8.reason = "\xC3\x28";
  CHECK(MustRefuse(h.service.Decide(bad_utf8)).code == AgentErrorCode::kInvalidActionDecision);
}

TEST_CASE("a decision racing another decision re-reads and still counts both", "[core][actions]") {
  ActionPolicyOptions two;
  two.approval_quorum = 2;
  Harness h(two);
  const ActionRecord planned = PendingRestart(h);
  bool raced = false;
  h.store.SetBeforeTransition([&](const ActionTransition& t) {
    if (!raced && t.appended_approval.has_value() && t.appended_approval->actor.id == "alice") {
      raced = true;
      // Bob's decision lands between Alice's read and her compare-and-swap.
      ActionTransition bob = t;
      bob.appended_approval->actor = Human("bob");
      bob.events.front().actor = Human("bob");
      bob.new_state = ActionState::kPendingApproval;
      bob.events.resize(1);
      bob.events.front().state = ActionState::kPendingApproval;
      REQUIRE(h.store.Transition(bob).ok());
    }
  });
  const ActionRecord approved = MustDecide(h, Approve(planned, Human("alice")));
  CHECK(raced);
  CHECK(h.store.cas_conflicts() >= 1);
  CHECK(approved.state == ActionState::kApproved);
  CHECK(approved.decision_revision == 2);
  REQUIRE(approved.approvals.size() == 2);
  CHECK(approved.approvals[0].actor == Human("bob"));
  CHECK(approved.approvals[1].actor == Human("alice"));
}

TEST_CASE("an expiry racing a decision below quorum re-reads and expires the plan",
          "[core][actions]") {
  // Every caller that materializes expiry: Get, Decide, Execute and the sweep.
  const int caller = GENERATE(0, 1, 2, 3);
  INFO("caller " << caller);
  ActionPolicyOptions two;
  two.approval_quorum = 2;
  Harness h(two);
  const ActionRecord planned = PendingRestart(h);
  h.clock.Advance(absl::Minutes(5));
  bool raced = false;
  h.store.SetBeforeTransition([&](const ActionTransition& t) {
    if (raced || t.new_state != ActionState::kExpired) {
      return;
    }
    raced = true;
    // Bob's approval, one short of the quorum, commits between the expiry's read and its
    // compare-and-swap: same state, revision 0 -> 1.
    const ActionRecord read = StoredRecord(h, planned.id());
    ActionTransition bob;
    bob.action_id = read.id();
    bob.expected_states = {ActionState::kPendingApproval};
    bob.expected_plan_hash = read.plan.plan_hash;
    bob.expected_decision_revision = read.decision_revision;
    bob.new_state = ActionState::kPendingApproval;
    bob.new_decision_revision = read.decision_revision + 1;
    bob.appended_approval = ApprovalRecord{Human("bob"), DecisionOutcome::kApproved, "",
                                           h.clock.Now(), read.plan.plan_hash};
    bob.updated_at = h.clock.Now();
    ActionLifecycleEvent decision;
    decision.action_id = read.id();
    decision.state = ActionState::kPendingApproval;
    decision.kind = LifecycleEventKind::kDecision;
    bob.events = {decision};
    REQUIRE(h.store.Transition(bob).ok());
  });

  switch (caller) {
    case 0: {
      absl::StatusOr<Refusable<ActionRecord>> got = h.service.Get(planned.id());
      REQUIRE(got.ok());
      REQUIRE_FALSE(got->refused());
      CHECK(got->value().state == ActionState::kExpired);
      break;
    }
    case 1:
      CHECK(MustRefuse(h.service.Decide(Approve(planned, Human("alice")))).code ==
            AgentErrorCode::kActionPlanExpired);
      break;
    case 2:
      CHECK(MustRefuse(h.service.Execute(Execution(planned, Human("alice")))).code ==
            AgentErrorCode::kActionPlanExpired);
      break;
    default: {
      absl::StatusOr<std::size_t> moved = h.service.SweepExpired(10);
      REQUIRE(moved.ok());
      CHECK(*moved == 1);
      break;
    }
  }
  CHECK(raced);
  // The lost compare was retried on the re-read record, with Bob's decision kept.
  CHECK(h.store.cas_conflicts() == 1);
  const ActionRecord stored = StoredRecord(h, planned.id());
  CHECK(stored.state == ActionState::kExpired);
  CHECK(stored.decision_revision == 1);
  REQUIRE(stored.approvals.size() == 1);
  CHECK(stored.approvals[0].actor == Human("bob"));
  CHECK(EventStates(h, planned.id()).back() == ActionState::kExpired);
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("a fleet outage during approval refuses without changing the plan", "[core][actions]") {
  Harness h;
  const ActionRecord planned = PendingRestart(h);
  h.fleet.SetError(FakeFleet::Method::kGetResource, absl::UnavailableError("agent down"));
  CHECK(MustRefuse(h.service.Decide(Approve(planned, Human("alice")))).code ==
        AgentErrorCode::kActionExecutionUnavailable);
  CHECK(StoredRecord(h, planned.id()) == planned);
}

}  // namespace
}  // namespace pulse::core
