#include "pulse/core/agent/operations_loop.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

namespace w = agent_wire;
using Next = OperationsLoopNextAction;
using Value = OperationsLoopValueState;
using StepStatus = OperationsLoopStepStatus;

constexpr std::array<WireName<Next>, 6> kNextActionNames = {{
    {Next::kRunPatrol, "run_patrol"},
    {Next::kReviewFindings, "review_findings"},
    {Next::kOpenAssistant, "open_assistant"},
    {Next::kReviewApprovals, "review_approvals"},
    {Next::kOpenMcp, "open_mcp"},
    {Next::kComplete, "complete"},
}};

constexpr std::array<WireName<Value>, 5> kValueStateNames = {{
    {Value::kNotStarted, "not_started"},
    {Value::kInProgress, "in_progress"},
    {Value::kGovernedDecisionRecorded, "governed_decision_recorded"},
    {Value::kVerifiedNeedsMcp, "verified_needs_mcp"},
    {Value::kVerified, "verified"},
}};

constexpr std::array<WireName<StepStatus>, 3> kStepStatusNames = {{
    {StepStatus::kComplete, "complete"},
    {StepStatus::kCurrent, "current"},
    {StepStatus::kPending, "pending"},
}};

constexpr std::size_t kPatrolStep = 0;
constexpr std::size_t kAssistantStep = 1;
constexpr std::size_t kGovernanceStep = 2;
constexpr std::size_t kVerificationStep = 3;

Value ValueStateOf(const OperationsLoopCounts& c) {
  if (c.resolved_loops > 0) {
    return c.external_agent_ready ? Value::kVerified : Value::kVerifiedNeedsMcp;
  }
  if (c.approved_decisions + c.rejected_decisions > 0) {
    return Value::kGovernedDecisionRecorded;
  }
  if (c.patrol_evidence > 0 || c.governed_actions > 0 || c.pending_approvals > 0) {
    return Value::kInProgress;
  }
  return Value::kNotStarted;
}

}  // namespace

std::string_view ToString(OperationsLoopNextAction action) {
  return WireNameOf(kNextActionNames, action);
}

std::string_view ToString(OperationsLoopValueState state) {
  return WireNameOf(kValueStateNames, state);
}

std::string_view ToString(OperationsLoopStepStatus status) {
  return WireNameOf(kStepStatusNames, status);
}

OperationsLoopRollup RollUpOperationsLoop(const OperationsLoopCounts& c) {
  const std::int64_t decisions = c.approved_decisions + c.rejected_decisions;
  OperationsLoopRollup out;
  out.steps[kPatrolStep] = {"patrol", "Patrol evidence", StepStatus::kPending,
                            c.patrol_issue_evidence};
  out.steps[kAssistantStep] = {"assistant", "Assistant collaboration", StepStatus::kPending,
                               c.governed_actions};
  out.steps[kGovernanceStep] = {"governance", "Governed decision", StepStatus::kPending,
                                decisions > 0 ? decisions : c.pending_approvals};
  out.steps[kVerificationStep] = {"verification", "Verified outcome", StepStatus::kPending,
                                  c.verified_outcomes + c.rejected_decisions};
  const std::array<bool, 4> complete = {c.patrol_issue_evidence > 0, c.governed_actions > 0,
                                        decisions > 0,
                                        c.verified_outcomes + c.rejected_decisions > 0};
  std::optional<std::size_t> current;
  for (std::size_t i = 0; i < out.steps.size(); ++i) {
    if (complete[i]) {
      out.steps[i].status = StepStatus::kComplete;
      ++out.completed_steps;
    } else if (!current.has_value()) {
      out.steps[i].status = StepStatus::kCurrent;
      current = i;
    }
  }
  if (c.pending_approvals > 0) {
    out.next_action = Next::kReviewApprovals;
  } else if (!current.has_value()) {
    out.next_action = c.external_agent_ready ? Next::kComplete : Next::kOpenMcp;
  } else if (*current == kPatrolStep) {
    out.next_action = Next::kRunPatrol;
  } else if (*current == kAssistantStep && c.active_findings > 0) {
    out.next_action = Next::kReviewFindings;
  } else {
    out.next_action = Next::kOpenAssistant;
  }
  out.value_state = ValueStateOf(c);
  out.progress_label =
      absl::StrCat(out.completed_steps, " of ", out.steps.size(), " steps complete");
  return out;
}

std::string OperationsLoopStatusToJson(const OperationsLoopCounts& c, absl::Time window_start,
                                       absl::Time generated_at) {
  const OperationsLoopRollup rollup = RollUpOperationsLoop(c);
  const std::int64_t starters = c.assistant_starters + c.patrol_starters + c.mcp_starters;
  const std::string_view value_state = ToString(rollup.value_state);
  JsonWriter out;
  out.StartObject();
  out.Member(w::kNextAction, ToString(rollup.next_action));
  out.Member(w::kProgressLabel, rollup.progress_label);
  out.Key(w::kSteps);
  out.StartArray();
  for (const OperationsLoopStep& step : rollup.steps) {
    out.StartObject();
    out.Member(w::kId, step.id);
    out.Member(w::kLabel, step.label);
    out.Member(w::kStatus, ToString(step.status));
    out.Member(w::kCount, step.count);
    out.EndObject();
  }
  out.EndArray();
  out.Member(w::kPatrolEvidenceCount, c.patrol_evidence);
  out.Member(w::kPatrolIssueEvidenceCount, c.patrol_issue_evidence);
  out.Member(w::kActiveFindingCount, c.active_findings);
  out.Member(w::kPendingApprovalCount, c.pending_approvals);
  out.Member(w::kGovernedActionCount, c.governed_actions);
  out.Member(w::kApprovedDecisionCount, c.approved_decisions);
  out.Member(w::kRejectedDecisionCount, c.rejected_decisions);
  out.Member(w::kVerifiedOutcomeCount, c.verified_outcomes);
  out.Member(w::kOperationsLoopStarterCount, starters);
  out.Member(w::kAssistantStarterCount, c.assistant_starters);
  out.Member(w::kPatrolStarterCount, c.patrol_starters);
  out.Member(w::kMcpStarterCount, c.mcp_starters);
  // Patrol-mode starters are the primary "patrol control" starter count.
  out.Member(w::kPatrolControlStarterCount, c.patrol_starters);
  out.Member(w::kPatrolControlCompletedCount, c.completed_loops);
  out.Member(w::kPatrolControlResolvedCount, c.resolved_loops);
  out.Member(w::kPatrolControlValueState, value_state);
  out.Member(w::kPatrolAutonomyStarterCount, c.patrol_starters);
  out.Member(w::kPatrolAutonomyCompletedCount, c.completed_loops);
  out.Member(w::kPatrolAutonomyResolvedCount, c.resolved_loops);
  out.Member(w::kPatrolAutonomyValueState, value_state);
  out.Member(w::kProActivationStarterCount, c.patrol_starters);
  out.Member(w::kProActivationCompletedCount, c.completed_loops);
  out.Member(w::kProActivationResolvedCount, c.resolved_loops);
  out.Member(w::kProActivationValueProofState, value_state);
  out.Member(w::kExternalAgentReady, c.external_agent_ready);
  out.TimeMember(w::kWindowStart, window_start);
  out.TimeMember(w::kGeneratedAt, generated_at);
  out.EndObject();
  return out.Take();
}

}  // namespace pulse::core
