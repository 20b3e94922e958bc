#include <catch2/catch.hpp>
#include <string>

#include "action_test_support.h"

namespace pulse::core {
namespace {

using testing::FakeFleet;
using namespace testing::actions;  // NOLINT: test fixtures

OperatorState Lock(const std::string& resource, absl::Time at) {
  OperatorState s;
  s.resource_id = resource;
  s.never_auto_remediate = true;
  s.set_at = at;
  s.set_by = "ops";
  return s;
}

TEST_CASE("executing an approved plan records executing before dispatch, then completed",
          "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  ActionState state_during_dispatch = ActionState::kPlanned;
  h.fleet.SetDispatchHook(
      [&](const DispatchRequest& d) { state_during_dispatch = h.store.Get(d.action_id)->state; });
  h.clock.Advance(absl::Seconds(20));
  const ExecuteOutcome out = MustExecute(h, Execution(approved, Human("alice")));
  CHECK(state_during_dispatch == ActionState::kExecuting);
  CHECK(out.dispatched);
  CHECK_FALSE(out.replayed);
  const ActionRecord& r = out.record;
  CHECK(r.state == ActionState::kCompleted);
  REQUIRE(r.result.has_value());
  CHECK(r.result->execution.status == ExecutionStatus::kSucceeded);
  CHECK(r.result->verification.status == VerificationStatus::kConfirmed);
  CHECK(r.result->verification.evidence_class == EvidenceClass::kIndependent);
  CHECK(r.result->verification.observer_id == "observer:control-plane");
  CHECK(r.result->dispatched);
  CHECK(r.result->executor_id == "agent:fake");
  CHECK(r.result->started_at == std::optional(h.clock.Now()));
  CHECK(r.result->error_message.empty());
  CHECK(IsVerifiedFix(*r.result));
  CHECK(h.fleet.executions() == 1);
  CHECK(h.fleet.observe_calls() == 1);
  const std::vector<DispatchRequest> sent = h.fleet.dispatched();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].attempt_id == approved.id() + ".dispatch.1");
  CHECK(sent[0].params_json == R"({"mode":"graceful"})");
  CHECK(sent[0].plan_hash == approved.plan.plan_hash);
  CHECK(EventStates(h, r.id()) ==
        std::vector<ActionState>{ActionState::kPlanned, ActionState::kPendingApproval,
                                 ActionState::kApproved, ActionState::kApproved,
                                 ActionState::kExecuting, ActionState::kCompleted});
  CHECK(h.audit.Find(r.id(), "dispatch_started").size() == 1);
  CHECK(h.audit.Find(r.id(), "completed").size() == 1);
}

TEST_CASE("a planned approval-free action executes directly", "[core][actions]") {
  Harness h;
  const ActionRecord planned = MustPlan(h, Request("snapshot", "{}", Human("alice")));
  const ExecuteOutcome out = MustExecute(h, Execution(planned, Human("bob")));
  CHECK(out.record.state == ActionState::kCompleted);
  CHECK(h.fleet.executions() == 1);
}

TEST_CASE("automation executes only its own approval-free plans", "[core][actions]") {
  Harness h;
  const ActionRecord own = MustPlan(
      h, Request("reload", R"({"unit":"nginx.service"})", Agent("patrol"), "service:pve1/nginx"));
  CHECK(MustRefuse(h.service.Execute(Execution(own, Agent("someone-else")))).code ==
        AgentErrorCode::kActionExecutionForbidden);
  CHECK(MustRefuse(h.service.Execute(Execution(own, Policy("patrol")))).code ==
        AgentErrorCode::kActionExecutionForbidden);
  CHECK(MustExecute(h, Execution(own, Agent("patrol"))).record.state == ActionState::kCompleted);
  // A human-approved plan may be executed by the agent that resumes the conversation.
  const ActionRecord approved = ApprovedRestart(h);
  CHECK(MustExecute(h, Execution(approved, Agent("assistant"))).record.state ==
        ActionState::kCompleted);
}

TEST_CASE("verification is independent only across trust domains", "[core][actions]") {
  Harness h;
  PostconditionObservation same_agent;
  same_agent.status = VerificationStatus::kConfirmed;
  same_agent.observer_id = "agent:fake";
  same_agent.observer_trust_domain = "agent";  // the executor's own domain
  h.fleet.SetObservation(same_agent);
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.state == ActionState::kCompleted);
  CHECK(out.record.result->verification.evidence_class == EvidenceClass::kAgentAttested);
  CHECK_FALSE(IsVerifiedFix(*out.record.result));
  CHECK(LegacyVerificationOutcome(out.record.result) == "verified");
}

TEST_CASE("a contradicted postcondition keeps execution truth and verification truth apart",
          "[core][actions]") {
  Harness h;
  PostconditionObservation contradicted;
  contradicted.status = VerificationStatus::kContradicted;
  contradicted.observer_id = "observer:api";
  contradicted.observer_trust_domain = "control-plane";
  contradicted.summary = "guest still stopped";
  h.fleet.SetObservation(contradicted);
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.state == ActionState::kCompleted);
  CHECK(out.record.result->execution.status == ExecutionStatus::kSucceeded);
  CHECK(out.record.result->verification.status == VerificationStatus::kContradicted);
  CHECK(out.record.result->verification.summary == "guest still stopped");
  CHECK_FALSE(IsVerifiedFix(*out.record.result));
  CHECK(LegacyVerificationOutcome(out.record.result) == "failed");
}

TEST_CASE("a failed execution is terminal failed and is still observed", "[core][actions]") {
  Harness h;
  DispatchReceipt failed;
  failed.status = ExecutionStatus::kFailed;
  failed.reason_code = "qm_exit_2";
  failed.summary = "qm reboot returned 2";
  failed.executor_id = "agent:pve1";
  failed.executor_trust_domain = "agent";
  h.fleet.SetDispatchReceipt(failed);
  PostconditionObservation unchanged;
  unchanged.status = VerificationStatus::kContradicted;
  unchanged.observer_trust_domain = "control-plane";
  h.fleet.SetObservation(unchanged);
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.state == ActionState::kFailed);
  CHECK(out.record.result->execution.status == ExecutionStatus::kFailed);
  CHECK(out.record.result->execution.reason_code == "qm_exit_2");
  CHECK(out.record.result->error_message == "execution failed: qm reboot returned 2");
  CHECK(out.record.result->verification.status == VerificationStatus::kContradicted);
  CHECK(LegacyVerificationOutcome(out.record.result) == "unknown");
  CHECK(h.fleet.observe_calls() == 1);
}

TEST_CASE("an executor that refuses to start is not run and is not observed", "[core][actions]") {
  Harness h;
  h.fleet.SetError(FakeFleet::Method::kDispatch,
                   absl::FailedPreconditionError("guest locked by backup"));
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.state == ActionState::kFailed);
  CHECK(out.record.result->execution.status == ExecutionStatus::kNotRun);
  CHECK(out.record.result->execution.reason_code == "executor_refused");
  CHECK(out.record.result->verification.status == VerificationStatus::kNotAttempted);
  CHECK(out.record.result->verification.evidence_class == EvidenceClass::kNone);
  CHECK(h.fleet.observe_calls() == 0);
}

TEST_CASE("an executor error of unknown outcome is inconclusive and is observed",
          "[core][actions]") {
  Harness h;
  h.fleet.SetError(FakeFleet::Method::kDispatch, absl::DeadlineExceededError("agent timeout"));
  h.fleet.SetError(FakeFleet::Method::kObservePostcondition, absl::UnavailableError("api down"));
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.state == ActionState::kFailed);
  CHECK(out.record.result->execution.status == ExecutionStatus::kInconclusive);
  CHECK(out.record.result->verification.status == VerificationStatus::kInconclusive);
  CHECK(out.record.result->verification.reason_code == "observation_failed");
  CHECK(h.fleet.observe_calls() == 1);
}

TEST_CASE("hostile executor text is bounded and cleaned before it is stored", "[core][actions]") {
  Harness h;
  DispatchReceipt receipt;
  receipt.status = ExecutionStatus::kSucceeded;
  receipt.reason_code = "not a token; DROP TABLE";
  receipt.summary = std::string("ok\x01\xff", 4) + std::string(10000, 'x');
  receipt.executor_trust_domain = "agent";
  h.fleet.SetDispatchReceipt(receipt);
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.result->execution.reason_code.empty());
  CHECK(out.record.result->execution.summary.size() <= 2048);
  CHECK(out.record.result->execution.summary.rfind("ok??", 0) == 0);
}

TEST_CASE("a terminal action is never dispatched again and resubmission returns it",
          "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  const ExecuteOutcome first = MustExecute(h, Execution(approved, Human("alice")));
  h.clock.Advance(absl::Hours(1));  // long past the TTL: a stored disposition, not an expiry
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Refusable<ExecuteOutcome>> again =
        h.service.Execute(Execution(approved, Human("alice")));
    REQUIRE(again.ok());
    REQUIRE_FALSE(again->refused());
    CHECK(again->value().replayed);
    CHECK_FALSE(again->value().dispatched);
    CHECK(again->value().record == first.record);
  }
  CHECK(h.fleet.dispatch_calls() == 1);
}

TEST_CASE("execute refuses a plan that still needs a decision", "[core][actions]") {
  Harness h;
  const ActionRecord pending = MustPlan(h, Request("restart", "{}", Agent("assistant")));
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(pending, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionNotApproved);
  CHECK(StoredRecord(h, pending.id()).state == ActionState::kPendingApproval);
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("execute of a dry-run-only plan persists a refusal and dispatches nothing",
          "[core][actions]") {
  Harness h;
  const ActionRecord planned = MustPlan(h, Request("migrate", "{}", Human("alice")));
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(planned, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionDryRunOnly);
  CHECK(StartsWith(r.message, kDryRunOnlyPrefix));
  REQUIRE(r.record.has_value());
  CHECK(r.record->state == ActionState::kFailed);
  CHECK(r.record->result->execution.status == ExecutionStatus::kNotRun);
  CHECK(r.record->approvals.empty());
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("execute is bound to the plan hash", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  ExecuteRequest stale = Execution(approved, Human("alice"));
  stale.plan_hash = "sha256:" + std::string(64, '1');
  CHECK(MustRefuse(h.service.Execute(stale)).code == AgentErrorCode::kActionPlanIdentityMismatch);
  CHECK(h.fleet.dispatch_calls() == 0);
  ExecuteRequest bound = Execution(approved, Human("alice"));
  bound.plan_hash = approved.plan.plan_hash;
  CHECK(MustExecute(h, bound).dispatched);
}

TEST_CASE("resource drift between approval and execute fails the plan without dispatch",
          "[core][actions]") {
  struct Drift {
    const char* what;
    std::function<void(FakeFleet&)> change;
  };
  const std::vector<Drift> drifts = {
      {"status",
       [](FakeFleet& f) {
         f.EditResource("vm:101", [](FleetResource& r) { r.status = "paused"; });
       }},
      {"revision",
       [](FakeFleet& f) { f.EditResource("vm:101", [](FleetResource& r) { r.revision = "r2"; }); }},
      {"parent",
       [](FakeFleet& f) {
         f.EditResource("vm:101", [](FleetResource& r) { r.parent_id = "node:pve2"; });
       }},
      {"capability floor",
       [](FakeFleet& f) {
         std::vector<Capability> c = VmCatalogue();
         c[0].minimum_approval = ApprovalLevel::kMfa;
         f.SetCatalogue("vm:101", c);
       }},
      {"capability params",
       [](FakeFleet& f) {
         std::vector<Capability> c = VmCatalogue();
         c[0].params[0].enum_values = {"graceful", "force", "hard"};
         f.SetCatalogue("vm:101", c);
       }},
      {"catalogue membership",
       [](FakeFleet& f) {
         std::vector<Capability> c = VmCatalogue();
         c.push_back(MakeCapability("resize", ApprovalLevel::kAdmin));
         f.SetCatalogue("vm:101", c);
       }},
      {"new neighbour",
       [](FakeFleet& f) {
         f.AddRelationship({"vm:101", "storage:ceph", "uses"});
       }},
  };
  for (const Drift& d : drifts) {
    DYNAMIC_SECTION("drift of " << d.what) {
      Harness h;
      const ActionRecord approved = ApprovedRestart(h);
      d.change(h.fleet);
      const ActionRefusal r = MustRefuse(h.service.Execute(Execution(approved, Human("alice"))));
      CHECK(r.code == AgentErrorCode::kActionPlanDrift);
      CHECK(StartsWith(r.message, kPlanDriftPrefix));
      REQUIRE(r.record.has_value());
      const ActionRecord stored = StoredRecord(h, approved.id());
      CHECK(stored == *r.record);
      CHECK(stored.state == ActionState::kFailed);
      REQUIRE(stored.result.has_value());
      CHECK(StartsWith(stored.result->error_message, kPlanDriftPrefix));
      CHECK(stored.result->execution.status == ExecutionStatus::kNotRun);
      CHECK(stored.result->execution.reason_code == "action_plan_drift");
      CHECK_FALSE(stored.result->dispatched);
      CHECK(stored.request == approved.request);
      CHECK(stored.plan == approved.plan);
      CHECK(stored.approvals == approved.approvals);
      CHECK(h.fleet.dispatch_calls() == 0);
      const std::vector<AuditEntry> audit = h.audit.Find(approved.id(), "refused");
      REQUIRE(audit.size() == 1);
      CHECK(audit[0].code == "action_plan_drift");
      // Terminal now: resubmission returns the failed disposition and still never dispatches.
      absl::StatusOr<Refusable<ExecuteOutcome>> again =
          h.service.Execute(Execution(approved, Human("alice")));
      REQUIRE(again.ok());
      REQUIRE_FALSE(again->refused());
      CHECK(again->value().replayed);
      CHECK(again->value().record.state == ActionState::kFailed);
      CHECK(h.fleet.dispatch_calls() == 0);
    }
  }
}

TEST_CASE("a withdrawn capability or vanished resource is drift", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  h.fleet.SetCatalogue("vm:101", {MakeCapability("start", ApprovalLevel::kAdmin)});
  const ActionRefusal withdrawn =
      MustRefuse(h.service.Execute(Execution(approved, Human("alice"))));
  CHECK(withdrawn.code == AgentErrorCode::kActionPlanDrift);
  CHECK(withdrawn.message.find("no longer advertised") != std::string::npos);

  Harness g;
  const ActionRecord other = ApprovedRestart(g);
  g.fleet.RemoveResource("vm:101");
  const ActionRefusal gone = MustRefuse(g.service.Execute(Execution(other, Human("alice"))));
  CHECK(gone.code == AgentErrorCode::kActionPlanDrift);
  CHECK(gone.message.find("no longer exists") != std::string::npos);
  CHECK(g.fleet.dispatch_calls() == 0);
}

TEST_CASE("an unreadable fleet at execute refuses without persisting", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  h.fleet.SetError(FakeFleet::Method::kListCapabilities, absl::UnavailableError("agent down"));
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(approved, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionExecutionUnavailable);
  CHECK(StoredRecord(h, approved.id()) == approved);
  h.fleet.ClearError(FakeFleet::Method::kListCapabilities);
  CHECK(MustExecute(h, Execution(approved, Human("alice"))).record.state ==
        ActionState::kCompleted);
}

TEST_CASE("the remediation lock refuses dispatch even after a human approval", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  REQUIRE(h.operator_state.Set(Lock("vm:101", h.clock.Now())).ok());
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(approved, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kResourceRemediationLocked);
  CHECK(StartsWith(r.message, kRemediationLockedPrefix));
  const ActionRecord stored = StoredRecord(h, approved.id());
  CHECK(stored.state == ActionState::kFailed);
  CHECK(StartsWith(stored.result->error_message, kRemediationLockedPrefix));
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(h.audit.Find(approved.id(), "refused").size() == 1);
}

TEST_CASE("the remediation lock refuses automatic dispatch", "[core][actions]") {
  Harness h;
  const ActionRecord own = MustPlan(
      h, Request("reload", R"({"unit":"nginx.service"})", Agent("patrol"), "service:pve1/nginx"));
  REQUIRE(h.operator_state.Set(Lock("service:pve1/nginx", h.clock.Now())).ok());
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(own, Agent("patrol"))));
  CHECK(r.code == AgentErrorCode::kResourceRemediationLocked);
  CHECK(StartsWith(r.message, kRemediationLockedPrefix));
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("a lock on another resource or a cleared lock does not block", "[core][actions]") {
  Harness h;
  REQUIRE(h.operator_state.Set(Lock("service:pve1/nginx", h.clock.Now())).ok());
  OperatorState unlocked = Lock("vm:101", h.clock.Now());
  unlocked.never_auto_remediate = false;
  REQUIRE(h.operator_state.Set(unlocked).ok());
  CHECK(MustExecute(h, Execution(ApprovedRestart(h), Human("alice"))).record.state ==
        ActionState::kCompleted);
}

TEST_CASE("an unreadable lock fails automatic dispatch closed", "[core][actions]") {
  Harness h;
  const ActionRecord own = MustPlan(
      h, Request("reload", R"({"unit":"nginx.service"})", Agent("patrol"), "service:pve1/nginx"));
  h.operator_state.FailGets(absl::UnavailableError("operator state store down"));
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(own, Agent("patrol"))));
  CHECK(r.code == AgentErrorCode::kResourceRemediationLocked);
  CHECK(StartsWith(r.message, kLockStateUnknownPrefix));
  const ActionRecord stored = StoredRecord(h, own.id());
  CHECK(stored.state == ActionState::kFailed);
  CHECK(StartsWith(stored.result->error_message, kLockStateUnknownPrefix));
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("an unreadable lock does not block a human-backed dispatch", "[core][actions]") {
  Harness h;
  h.operator_state.FailGets(absl::UnavailableError("operator state store down"));
  // Approved by a human, executed by the agent.
  const ExecuteOutcome approved = MustExecute(h, Execution(ApprovedRestart(h), Agent("assistant")));
  CHECK(approved.record.state == ActionState::kCompleted);
  CHECK(h.audit.Find(approved.record.id(), "lock_state_unknown").size() == 1);
  // Executed by a human without an approval requirement.
  const ActionRecord snapshot = MustPlan(h, Request("snapshot", "{}", Human("alice")));
  CHECK(MustExecute(h, Execution(snapshot, Human("alice"))).record.state ==
        ActionState::kCompleted);
  CHECK(h.fleet.executions() == 2);
}

TEST_CASE("execute of a rejected or expired plan is action_execution_final", "[core][actions]") {
  Harness h;
  const ActionRecord pending = MustPlan(h, Request("restart", "{}", Agent("assistant")));
  MustDecide(h, Decision(pending, DecisionOutcome::kRejected, Human("alice")));
  CHECK(MustRefuse(h.service.Execute(Execution(pending, Human("alice")))).code ==
        AgentErrorCode::kActionExecutionFinal);
  const ActionRecord planned =
      MustPlan(h, Request("snapshot", "{}", Human("alice"), "vm:101", "req-exp"));
  h.clock.Advance(absl::Minutes(6));
  CHECK(MustRefuse(h.service.Execute(Execution(planned, Human("alice")))).code ==
        AgentErrorCode::kActionPlanExpired);
  CHECK(MustRefuse(h.service.Execute(Execution(planned, Human("alice")))).code ==
        AgentErrorCode::kActionExecutionFinal);
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("a plan is live until 4:59.999 and expired at exactly 5:00", "[core][actions]") {
  SECTION("decide") {
    Harness h;
    const ActionRecord planned = MustPlan(h, Request("restart", "{}", Agent("assistant")));
    h.clock.Advance(absl::Minutes(5) - absl::Milliseconds(1));
    CHECK(MustDecide(h, Approve(planned, Human("alice"))).state == ActionState::kApproved);
    Harness g;
    const ActionRecord late = MustPlan(g, Request("restart", "{}", Agent("assistant")));
    g.clock.Advance(absl::Minutes(5));
    CHECK(MustRefuse(g.service.Decide(Approve(late, Human("alice")))).code ==
          AgentErrorCode::kActionPlanExpired);
  }
  SECTION("execute") {
    Harness h;
    const ActionRecord approved = ApprovedRestart(h);
    h.clock.Advance(absl::Minutes(5) - absl::Milliseconds(1));
    CHECK(MustExecute(h, Execution(approved, Human("alice"))).record.state ==
          ActionState::kCompleted);
    Harness g;
    const ActionRecord late = ApprovedRestart(g);
    g.clock.Advance(absl::Minutes(5));
    const ActionRefusal r = MustRefuse(g.service.Execute(Execution(late, Human("alice"))));
    CHECK(r.code == AgentErrorCode::kActionPlanExpired);
    CHECK(r.record->state == ActionState::kExpired);
    CHECK(g.fleet.dispatch_calls() == 0);
  }
  SECTION("read and sweep") {
    Harness h;
    const ActionRecord a = MustPlan(h, Request("restart", "{}", Agent("assistant")));
    const ActionRecord b =
        MustPlan(h, Request("snapshot", "{}", Human("alice"), "vm:101", "req-b"));
    h.clock.Advance(absl::Minutes(5) - absl::Nanoseconds(1));
    absl::StatusOr<std::size_t> none = h.service.SweepExpired(100);
    REQUIRE(none.ok());
    CHECK(*none == 0);
    absl::StatusOr<Refusable<ActionRecord>> live = h.service.Get(a.id());
    REQUIRE(live.ok());
    CHECK(live->value().state == ActionState::kPendingApproval);
    h.clock.Advance(absl::Nanoseconds(1));
    absl::StatusOr<Refusable<ActionRecord>> read = h.service.Get(a.id());
    REQUIRE(read.ok());
    CHECK(read->value().state == ActionState::kExpired);
    absl::StatusOr<std::size_t> swept = h.service.SweepExpired(100);
    REQUIRE(swept.ok());
    CHECK(*swept == 1);
    CHECK(StoredRecord(h, b.id()).state == ActionState::kExpired);
  }
}

TEST_CASE("execute validates the id and the actor", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  ExecuteRequest missing = Execution(approved, Human("alice"));
  missing.action_id.clear();
  CHECK(MustRefuse(h.service.Execute(missing)).code == AgentErrorCode::kMissingId);
  ExecuteRequest invalid = Execution(approved, Human("alice"));
  invalid.action_id = "act 1";
  CHECK(MustRefuse(h.service.Execute(invalid)).code == AgentErrorCode::kInvalidId);
  ExecuteRequest unknown = Execution(approved, Human("alice"));
  unknown.action_id = "act_unknown";
  CHECK(MustRefuse(h.service.Execute(unknown)).code == AgentErrorCode::kActionNotFound);
  CHECK(MustRefuse(h.service.Execute(Execution(approved, Human("a b")))).code ==
        AgentErrorCode::kActionActorUnavailable);
  ExecuteRequest bad_reason = Execution(approved, Human("alice"));
  bad_reason.reason = std::string("\0", 1);
  CHECK(MustRefuse(h.service.Execute(bad_reason)).code == AgentErrorCode::kInvalidActionExecution);
  CHECK(h.fleet.dispatch_calls() == 0);
}

TEST_CASE("a store failure after dispatch leaves the action executing for recovery",
          "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  h.fleet.SetDispatchHook(
      [&](const DispatchRequest&) { h.store.FailNext(absl::UnavailableError("disk full")); });
  absl::StatusOr<Refusable<ExecuteOutcome>> out =
      h.service.Execute(Execution(approved, Human("alice")));
  CHECK(absl::IsUnavailable(out.status()));
  CHECK(StoredRecord(h, approved.id()).state == ActionState::kExecuting);
  CHECK(h.fleet.executions() == 1);
  CHECK(MustRefuse(h.service.Execute(Execution(approved, Human("alice")))).code ==
        AgentErrorCode::kActionAlreadyExecuting);
  CHECK(h.fleet.dispatch_calls() == 1);
}

TEST_CASE("audit failures never block or undo the lifecycle", "[core][actions]") {
  Harness h;
  h.audit.FailAppends(absl::UnavailableError("audit sink down"));
  const ExecuteOutcome out = MustExecute(h, Execution(ApprovedRestart(h), Human("alice")));
  CHECK(out.record.state == ActionState::kCompleted);
  CHECK(h.service.audit_failures() >= 3);
}

}  // namespace
}  // namespace pulse::core
