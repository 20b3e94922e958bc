// What became of a Patrol fix reaches its finding (patrol/fix_projection.h): the outcome each
// stored action state implies, a wakeup that re-reads the action and writes once, a finding
// linked to another plan left alone, and the start-up reconciliation.
#include "pulse/core/patrol/fix_projection.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "patrol_test_support.h"

namespace pulse::testing::patrol {
namespace {

using core::ActionRecord;
using core::ActionState;
using core::ExecutionStatus;
using core::InvestigationOutcome;
using core::VerificationStatus;

ActionRecord Action(const std::string& id, const std::string& finding_id, ActionState state) {
  ActionRecord r;
  r.plan.action_id = id;
  r.request.request_id = "patrol-0123." + finding_id;
  r.request.resource_id = "app-container:worker";
  r.plan.resource_id = "app-container:worker";
  r.state = state;
  return r;
}

void Decided(ActionRecord& r, core::ActorKind kind, core::DecisionOutcome outcome) {
  core::ApprovalRecord a;
  a.actor = {kind, "someone"};
  a.outcome = outcome;
  r.approvals.push_back(a);
}

void Result(ActionRecord& r, bool dispatched, ExecutionStatus execution,
            VerificationStatus verification, core::EvidenceClass evidence) {
  core::ActionExecutionResult result;
  result.dispatched = dispatched;
  result.execution.status = execution;
  result.verification.status = verification;
  result.verification.evidence_class = evidence;
  r.result = result;
}

// Hands out stored records as they are (the lifecycle's validation is not under test here).
class RecordedActions final : public core::ActionStore {
 public:
  void Put(const ActionRecord& record) { records_[record.id()] = record; }
  absl::StatusOr<core::ActionInsertOutcome> InsertIfAbsent(
      const ActionRecord&, const std::vector<core::ActionLifecycleEvent>&) override {
    return absl::UnimplementedError("read-only");
  }
  absl::StatusOr<ActionRecord> Get(std::string_view action_id) override {
    auto it = records_.find(std::string(action_id));
    if (it == records_.end()) {
      return absl::NotFoundError("no such action");
    }
    return it->second;
  }
  absl::StatusOr<ActionRecord> Transition(const core::ActionTransition&) override {
    return absl::UnimplementedError("read-only");
  }
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> ListEvents(std::string_view) override {
    return std::vector<core::ActionLifecycleEvent>{};
  }
  absl::StatusOr<std::vector<ActionRecord>> ListByState(const std::vector<ActionState>&,
                                                        std::size_t) override {
    return std::vector<ActionRecord>{};
  }
  absl::StatusOr<std::vector<ActionRecord>> ListPage(const core::ActionPageQuery&) override {
    return std::vector<ActionRecord>{};
  }

 private:
  std::map<std::string, ActionRecord> records_;
};

TEST_CASE("each stored action state implies one finding outcome", "[core][patrol][fix]") {
  using core::ActorKind;
  using core::DecisionOutcome;
  using core::EvidenceClass;
  for (ActionState s :
       {ActionState::kPlanned, ActionState::kPendingApproval, ActionState::kApproved}) {
    CHECK(core::FixOutcomeOf(Action("a", "f", s)) == InvestigationOutcome::kFixQueued);
  }
  CHECK(core::FixOutcomeOf(Action("a", "f", ActionState::kExecuting)) ==
        InvestigationOutcome::kFixExecuted);

  ActionRecord human = Action("a", "f", ActionState::kRejected);
  Decided(human, ActorKind::kHuman, DecisionOutcome::kRejected);
  CHECK(core::FixOutcomeOf(human) == InvestigationOutcome::kFixRejected);
  ActionRecord agent = Action("a", "f", ActionState::kRejected);
  Decided(agent, ActorKind::kAgent, DecisionOutcome::kRejected);
  CHECK(core::FixOutcomeOf(agent) == InvestigationOutcome::kNeedsAttention);
  CHECK(core::FixOutcomeOf(Action("a", "f", ActionState::kExpired)) ==
        InvestigationOutcome::kNeedsAttention);

  ActionRecord refused = Action("a", "f", ActionState::kFailed);
  Result(refused, false, ExecutionStatus::kNotRun, VerificationStatus::kNotAttempted,
         EvidenceClass::kNone);
  CHECK(core::FixOutcomeOf(refused) == InvestigationOutcome::kFixNotAdmitted);
  ActionRecord verified = Action("a", "f", ActionState::kCompleted);
  Result(verified, true, ExecutionStatus::kSucceeded, VerificationStatus::kConfirmed,
         EvidenceClass::kIndependent);
  CHECK(core::FixOutcomeOf(verified) == InvestigationOutcome::kFixVerified);
  ActionRecord attested = verified;
  attested.result->verification.evidence_class = EvidenceClass::kAgentAttested;
  CHECK(core::FixOutcomeOf(attested) == InvestigationOutcome::kFixVerificationUnknown);
  ActionRecord contradicted = verified;
  contradicted.result->verification.status = VerificationStatus::kContradicted;
  CHECK(core::FixOutcomeOf(contradicted) == InvestigationOutcome::kFixVerificationFailed);
  ActionRecord inconclusive = verified;
  inconclusive.result->verification.status = VerificationStatus::kInconclusive;
  CHECK(core::FixOutcomeOf(inconclusive) == InvestigationOutcome::kFixVerificationUnknown);
  ActionRecord failed = Action("a", "f", ActionState::kFailed);
  Result(failed, true, ExecutionStatus::kFailed, VerificationStatus::kNotAttempted,
         EvidenceClass::kNone);
  CHECK(core::FixOutcomeOf(failed) == InvestigationOutcome::kFixFailed);
  ActionRecord interrupted = failed;
  interrupted.result->dispatched = false;
  interrupted.result->execution.status = ExecutionStatus::kInconclusive;
  CHECK(core::FixOutcomeOf(interrupted) == InvestigationOutcome::kFixVerificationUnknown);
}

TEST_CASE("a wakeup projects the stored action once onto the finding it is the fix of",
          "[core][patrol][fix]") {
  Fixture f;
  core::FindingReport report;
  report.resource_id = "app-container:worker";
  report.category = core::Category::kReliability;
  report.key = "container-exited";
  report.title = "worker exited";
  report.description = "exit code 1";
  report.recommendation = "start it";
  report.evidence = "state exited";
  absl::StatusOr<core::ReportOutcome> reported = f.findings.Report(report);
  REQUIRE(reported.ok());
  const std::string id = reported->finding_id;
  REQUIRE(f.findings
              .RecordInvestigation(id, core::InvestigationStatus::kCompleted,
                                   InvestigationOutcome::kFixQueued, "s1", "act_current")
              .ok());
  RecordedActions actions;
  core::FixProjector projector(actions, f.findings);

  // Another plan for the same finding (an older run's): not its fix, nothing written.
  ActionRecord older = Action("act_older", id, ActionState::kRejected);
  Decided(older, core::ActorKind::kHuman, core::DecisionOutcome::kRejected);
  actions.Put(older);
  CHECK_FALSE(*projector.Wake("act_older"));
  CHECK(f.findings.Get(id)->investigation_outcome == InvestigationOutcome::kFixQueued);

  ActionRecord current = Action("act_current", id, ActionState::kRejected);
  Decided(current, core::ActorKind::kHuman, core::DecisionOutcome::kRejected);
  actions.Put(current);
  // The restart case: the decision is stored, no wakeup came; start-up reconciliation finds it.
  CHECK(*projector.ReconcileAll() == 1);
  core::Finding projected = *f.findings.Get(id);
  CHECK(projected.investigation_outcome == InvestigationOutcome::kFixRejected);
  CHECK(core::DeriveLoopState(projected, f.clock.Now()) == core::LoopState::kNeedsAttention);
  const core::LifecycleEvent& event = projected.lifecycle.back();
  CHECK(event.type == core::LifecycleEventType::kInvestigationRecordUpdated);
  CHECK(event.metadata.at("action_id") == "act_current");
  CHECK(event.metadata.at("outcome") == "fix_rejected");

  // Idempotent: more wakeups and another reconciliation write nothing.
  const std::size_t events = projected.lifecycle.size();
  CHECK_FALSE(*projector.Wake("act_current"));
  CHECK(*projector.ReconcileAll() == 0);
  CHECK(f.findings.Get(id)->lifecycle.size() == events);
  CHECK_FALSE(projector.Wake("act_unknown").ok());
}

}  // namespace
}  // namespace pulse::testing::patrol
