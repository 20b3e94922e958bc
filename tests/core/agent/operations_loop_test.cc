#include "pulse/core/agent/operations_loop.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agent_views_test_support.h"

namespace pulse::testing::agent {
namespace {

using core::OperationsLoopCounts;
using core::OperationsLoopNextAction;
using core::OperationsLoopStepStatus;
using core::OperationsLoopValueState;

std::vector<OperationsLoopStepStatus> Statuses(const core::OperationsLoopRollup& r) {
  std::vector<OperationsLoopStepStatus> out;
  for (const core::OperationsLoopStep& s : r.steps) {
    out.push_back(s.status);
  }
  return out;
}

std::vector<std::int64_t> StepCounts(const core::OperationsLoopRollup& r) {
  std::vector<std::int64_t> out;
  for (const core::OperationsLoopStep& s : r.steps) {
    out.push_back(s.count);
  }
  return out;
}

constexpr auto kDone = OperationsLoopStepStatus::kComplete;
constexpr auto kNow = OperationsLoopStepStatus::kCurrent;
constexpr auto kLater = OperationsLoopStepStatus::kPending;

TEST_CASE("an empty loop asks for a Patrol run", "[core][agent]") {
  const core::OperationsLoopRollup r = core::RollUpOperationsLoop({});
  CHECK(r.next_action == OperationsLoopNextAction::kRunPatrol);
  CHECK(r.value_state == OperationsLoopValueState::kNotStarted);
  CHECK(r.completed_steps == 0);
  CHECK(r.progress_label == "0 of 4 steps complete");
  CHECK(Statuses(r) == std::vector<OperationsLoopStepStatus>{kNow, kLater, kLater, kLater});
  CHECK(r.steps[0].id == "patrol");
  CHECK(r.steps[3].id == "verification");
}

TEST_CASE("Patrol evidence leads to the findings, then to the Assistant", "[core][agent]") {
  OperationsLoopCounts c;
  c.patrol_evidence = 3;
  c.patrol_issue_evidence = 2;
  c.active_findings = 2;
  core::OperationsLoopRollup r = core::RollUpOperationsLoop(c);
  CHECK(r.next_action == OperationsLoopNextAction::kReviewFindings);
  CHECK(r.value_state == OperationsLoopValueState::kInProgress);
  CHECK(Statuses(r) == std::vector<OperationsLoopStepStatus>{kDone, kNow, kLater, kLater});
  CHECK(r.progress_label == "1 of 4 steps complete");

  c.active_findings = 0;  // the issues went away without a governed action
  CHECK(core::RollUpOperationsLoop(c).next_action == OperationsLoopNextAction::kOpenAssistant);

  c.patrol_issue_evidence = 0;  // info-only evidence is not an issue: the Patrol step stays open
  CHECK(core::RollUpOperationsLoop(c).next_action == OperationsLoopNextAction::kRunPatrol);
  CHECK(core::RollUpOperationsLoop(c).value_state == OperationsLoopValueState::kInProgress);
}

TEST_CASE("pending approvals come first and the governance step counts them until a decision",
          "[core][agent]") {
  OperationsLoopCounts c;
  c.pending_approvals = 2;
  core::OperationsLoopRollup r = core::RollUpOperationsLoop(c);
  CHECK(r.next_action == OperationsLoopNextAction::kReviewApprovals);
  CHECK(StepCounts(r) == std::vector<std::int64_t>{0, 0, 2, 0});
  CHECK(r.value_state == OperationsLoopValueState::kInProgress);

  c.approved_decisions = 1;
  c.rejected_decisions = 3;
  r = core::RollUpOperationsLoop(c);
  CHECK(StepCounts(r) == std::vector<std::int64_t>{0, 0, 4, 3});  // decisions; rejections close
  CHECK(r.value_state == OperationsLoopValueState::kGovernedDecisionRecorded);
  CHECK(r.next_action == OperationsLoopNextAction::kReviewApprovals);
  CHECK(Statuses(r) == std::vector<OperationsLoopStepStatus>{kNow, kLater, kDone, kDone});
}

TEST_CASE("a verified governed fix completes the loop once an external agent is ready",
          "[core][agent]") {
  OperationsLoopCounts c;
  c.patrol_evidence = 1;
  c.patrol_issue_evidence = 1;
  c.governed_actions = 1;
  c.approved_decisions = 1;
  c.verified_outcomes = 1;
  c.resolved_loops = 1;
  core::OperationsLoopRollup r = core::RollUpOperationsLoop(c);
  CHECK(r.completed_steps == 4);
  CHECK(r.progress_label == "4 of 4 steps complete");
  CHECK(r.next_action == OperationsLoopNextAction::kOpenMcp);
  CHECK(r.value_state == OperationsLoopValueState::kVerifiedNeedsMcp);

  c.external_agent_ready = true;
  r = core::RollUpOperationsLoop(c);
  CHECK(r.next_action == OperationsLoopNextAction::kComplete);
  CHECK(r.value_state == OperationsLoopValueState::kVerified);

  c.resolved_loops = 0;  // verified, but never approved by a human: no governed value proof
  CHECK(core::RollUpOperationsLoop(c).value_state ==
        OperationsLoopValueState::kGovernedDecisionRecorded);
}

TEST_CASE("an approved but unverified action points back to the Assistant", "[core][agent]") {
  OperationsLoopCounts c;
  c.patrol_issue_evidence = 1;
  c.governed_actions = 1;
  c.approved_decisions = 1;
  const core::OperationsLoopRollup r = core::RollUpOperationsLoop(c);
  CHECK(Statuses(r) == std::vector<OperationsLoopStepStatus>{kDone, kDone, kDone, kNow});
  CHECK(r.next_action == OperationsLoopNextAction::kOpenAssistant);
}

TEST_CASE("the loop status body has every counter, mirrored aliases and the enums",
          "[core][agent]") {
  OperationsLoopCounts c;
  c.patrol_evidence = 5;
  c.patrol_issue_evidence = 4;
  c.active_findings = 3;
  c.pending_approvals = 2;
  c.governed_actions = 6;
  c.approved_decisions = 2;
  c.rejected_decisions = 1;
  c.verified_outcomes = 2;
  c.resolved_loops = 1;
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  rapidjson::Document doc = Body(core::OperationsLoopStatusToJson(c, now - absl::Hours(24), now));
  const rapidjson::Document expected = Json(R"({
    "nextAction": "review_approvals", "progressLabel": "4 of 4 steps complete",
    "steps": [
      {"id": "patrol", "label": "Patrol evidence", "status": "complete", "count": 4},
      {"id": "assistant", "label": "Assistant collaboration", "status": "complete", "count": 6},
      {"id": "governance", "label": "Governed decision", "status": "complete", "count": 3},
      {"id": "verification", "label": "Verified outcome", "status": "complete", "count": 3}
    ],
    "patrolEvidenceCount": 5, "patrolIssueEvidenceCount": 4, "activeFindingCount": 3,
    "pendingApprovalCount": 2, "governedActionCount": 6, "approvedDecisionCount": 2,
    "rejectedDecisionCount": 1, "verifiedOutcomeCount": 2,
    "operationsLoopStarterCount": 0, "assistantOperationsLoopStarterCount": 0,
    "patrolOperationsLoopStarterCount": 0, "mcpOperationsLoopStarterCount": 0,
    "patrolControlOperationsLoopStarterCount": 0,
    "patrolControlCompletedOperationsLoopCount": 0,
    "patrolControlResolvedOperationsLoopCount": 1,
    "patrolControlValueState": "verified_needs_mcp",
    "patrolAutonomyOperationsLoopStarterCount": 0,
    "patrolAutonomyCompletedOperationsLoopCount": 0,
    "patrolAutonomyResolvedOperationsLoopCount": 1,
    "patrolAutonomyValueState": "verified_needs_mcp",
    "proActivationOperationsLoopStarterCount": 0,
    "proActivationCompletedOperationsLoopCount": 0,
    "proActivationResolvedOperationsLoopCount": 1,
    "proActivationValueProofState": "verified_needs_mcp",
    "externalAgentReady": false,
    "windowStart": "2027-01-14T08:00:00Z", "generatedAt": "2027-01-15T08:00:00Z"
  })");
  INFO(Text(doc));
  CHECK(doc == expected);
}

TEST_CASE("starter counts sum per surface and feed the patrol-control aliases", "[core][agent]") {
  OperationsLoopCounts c;
  c.assistant_starters = 1;
  c.patrol_starters = 2;
  c.mcp_starters = 4;
  c.completed_loops = 1;
  rapidjson::Document doc =
      Body(core::OperationsLoopStatusToJson(c, absl::UnixEpoch(), absl::UnixEpoch()));
  CHECK(At(doc, "operationsLoopStarterCount").GetInt64() == 7);
  CHECK(At(doc, "patrolControlOperationsLoopStarterCount").GetInt64() == 2);
  CHECK(At(doc, "proActivationOperationsLoopStarterCount").GetInt64() == 2);
  CHECK(At(doc, "patrolAutonomyCompletedOperationsLoopCount").GetInt64() == 1);
}

// Through AgentViews: a warning on vm:101 and an info on nginx seen now, one seen 40 days ago,
// the Patrol runtime finding; a restart approved, executed and independently verified, a
// rejected flush and a pending stop, all requested by an agent.
struct LoopScene {
  ViewsHarness h;
  std::vector<std::string> secrets;  // ids, names and actors the body must never contain

  LoopScene() {
    h.PutFinding("f-warn", "vm:101", core::Severity::kWarning);
    h.PutFinding("f-info", "service:pve1/nginx", core::Severity::kInfo);
    h.PutFinding("f-old", "vm:101", core::Severity::kCritical, absl::Hours(24 * 50));
    h.EditFinding("f-old", [&](core::Finding& f) {
      f.last_seen_at = h.clock.Now() - absl::Hours(24 * 40);
      f.resolved_at = f.last_seen_at;
    });
    h.PutFinding(core::kRuntimeFindingKey, core::kRuntimeFindingResourceId,
                 core::Severity::kCritical);
    const core::ActionActor agent = Agent("copilot-7");
    const core::ActionRecord fixed =
        h.Execute(h.Decide(h.Plan("restart", R"({"mode":"graceful"})", "vm:101", "req-fix", agent),
                           core::DecisionOutcome::kApproved));
    REQUIRE(fixed.result.has_value());
    REQUIRE(core::IsVerifiedFix(*fixed.result));
    const core::ActionRecord rejected =
        h.Decide(h.Plan("flush", "{}", "service:pve1/nginx", "req-rej", agent),
                 core::DecisionOutcome::kRejected);
    const core::ActionRecord pending = h.Plan("stop", "{}", "vm:101", "req-pend", agent);
    secrets = {fixed.id(), rejected.id(), pending.id(), "vm:101",  "web-01",   "nginx",
               "alice",    "copilot-7",   "f-warn",     "restart", "graceful", "flush"};
  }
};

TEST_CASE("the loop status counts what the stores hold and names nothing", "[core][agent]") {
  LoopScene s;
  const absl::StatusOr<std::string> body = s.h.views.OperationsLoopStatus({});
  rapidjson::Document doc = Body(body);
  INFO(*body);
  CHECK(At(doc, "patrolEvidenceCount").GetInt64() == 2);  // not the old or the runtime one
  CHECK(At(doc, "patrolIssueEvidenceCount").GetInt64() == 1);
  CHECK(At(doc, "activeFindingCount").GetInt64() == 1);
  CHECK(At(doc, "pendingApprovalCount").GetInt64() == 1);
  CHECK(At(doc, "governedActionCount").GetInt64() == 3);
  CHECK(At(doc, "approvedDecisionCount").GetInt64() == 1);
  CHECK(At(doc, "rejectedDecisionCount").GetInt64() == 1);
  CHECK(At(doc, "verifiedOutcomeCount").GetInt64() == 1);
  CHECK(At(doc, "patrolControlResolvedOperationsLoopCount").GetInt64() == 1);
  CHECK(At(doc, "patrolControlCompletedOperationsLoopCount").GetInt64() == 0);
  CHECK(At(doc, "operationsLoopStarterCount").GetInt64() == 0);
  CHECK(At(doc, "nextAction") == Json(R"("review_approvals")"));
  CHECK(At(doc, "patrolControlValueState") == Json(R"("verified_needs_mcp")"));
  CHECK(At(doc, "externalAgentReady") == Json("false"));
  CHECK(At(doc, "windowStart") == Json(R"("2026-12-16T08:00:00Z")"));
  for (const std::string& secret : s.secrets) {
    INFO(secret);
    CHECK(body->find(secret) == std::string::npos);
  }

  core::OperationsLoopInputs ready;
  ready.external_agent_ready = true;
  rapidjson::Document with_agent = Body(s.h.views.OperationsLoopStatus(ready));
  CHECK(At(with_agent, "externalAgentReady") == Json("true"));
  CHECK(At(with_agent, "patrolControlValueState") == Json(R"("verified")"));
}

TEST_CASE("the loop status counts only its 30-day window", "[core][agent]") {
  LoopScene s;
  s.h.clock.Advance(absl::Hours(24 * 31));
  rapidjson::Document doc = Body(s.h.views.OperationsLoopStatus({}));
  CHECK(At(doc, "patrolEvidenceCount").GetInt64() == 0);
  CHECK(At(doc, "governedActionCount").GetInt64() == 0);
  CHECK(At(doc, "approvedDecisionCount").GetInt64() == 0);
  CHECK(At(doc, "rejectedDecisionCount").GetInt64() == 0);
  CHECK(At(doc, "verifiedOutcomeCount").GetInt64() == 0);
  CHECK(At(doc, "pendingApprovalCount").GetInt64() == 0);  // expired long ago
  CHECK(At(doc, "activeFindingCount").GetInt64() == 1);    // still active now
  CHECK(At(doc, "nextAction") == Json(R"("run_patrol")"));
}

}  // namespace
}  // namespace pulse::testing::agent
