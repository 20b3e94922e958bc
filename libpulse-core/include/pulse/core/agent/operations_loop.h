// The operations-loop rollup behind GET /api/agent/patrol-control/status (docs/api.md,
// requirement MAN-10): Patrol evidence -> Assistant collaboration -> governed decision ->
// verified outcome, as counts only. The counts are gathered by AgentViews; this header holds
// the pure part, which turns counts into the four steps, the next action, the value state and
// the wire body. Nothing here names a resource, finding, action, actor or command.
// Pure values and functions; thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace pulse::core {

// How far back the windowed counts look (Pulse aggregates starters over 30 days).
inline constexpr absl::Duration kOperationsLoopWindow = absl::Hours(24 * 30);

// Every count is over [window_start, generated_at] unless it says "now".
struct OperationsLoopCounts {
  // Findings seen in the window (last_seen_at), any severity; the Patrol runtime finding is
  // not evidence about the fleet and is never counted.
  std::int64_t patrol_evidence = 0;
  // The part of patrol_evidence with severity warning or critical.
  std::int64_t patrol_issue_evidence = 0;
  // Active now with severity warning or critical: what the default findings list shows.
  std::int64_t active_findings = 0;
  // pending_approval now, plan not past its TTL.
  std::int64_t pending_approvals = 0;
  // Governed actions planned in the window (any state).
  std::int64_t governed_actions = 0;
  // Decisions recorded in the window, split by outcome (one per deciding human and action).
  std::int64_t approved_decisions = 0;
  std::int64_t rejected_decisions = 0;
  // Actions finished in the window whose result is a verified fix (IsVerifiedFix).
  std::int64_t verified_outcomes = 0;
  // The part of verified_outcomes whose action also carries an approved decision.
  std::int64_t resolved_loops = 0;
  // Workflow-starter activity per surface. This build records no workflow-prompt activity
  // (there is no activity store), so AgentViews always leaves these 0; they stay in the struct
  // so a future activity port can fill them without changing the wire body.
  std::int64_t assistant_starters = 0;
  std::int64_t patrol_starters = 0;
  std::int64_t mcp_starters = 0;
  // A completed loop needs a starter, Patrol-issue evidence, collaboration and a closing
  // decision in the same window; without starter activity it is always 0 here.
  std::int64_t completed_loops = 0;
  // Supplied by the caller (see OperationsLoopInputs in agent_views.h).
  bool external_agent_ready = false;
};

enum class OperationsLoopNextAction {
  kRunPatrol,
  kReviewFindings,
  kOpenAssistant,
  kReviewApprovals,
  kOpenMcp,
  kComplete,
};
// Wire: run_patrol, review_findings, open_assistant, review_approvals, open_mcp, complete.
std::string_view ToString(OperationsLoopNextAction action);

enum class OperationsLoopValueState {
  kNotStarted,
  kInProgress,
  kGovernedDecisionRecorded,
  kVerifiedNeedsMcp,
  kVerified,
};
// Wire: not_started, in_progress, governed_decision_recorded, verified_needs_mcp, verified.
std::string_view ToString(OperationsLoopValueState state);

enum class OperationsLoopStepStatus { kComplete, kCurrent, kPending };
// Wire: complete, current, pending.
std::string_view ToString(OperationsLoopStepStatus status);

struct OperationsLoopStep {
  std::string_view id;     // patrol, assistant, governance, verification
  std::string_view label;  // fixed English text
  OperationsLoopStepStatus status = OperationsLoopStepStatus::kPending;
  std::int64_t count = 0;
};

struct OperationsLoopRollup {
  std::array<OperationsLoopStep, 4> steps;
  int completed_steps = 0;
  OperationsLoopNextAction next_action = OperationsLoopNextAction::kRunPatrol;
  OperationsLoopValueState value_state = OperationsLoopValueState::kNotStarted;
  std::string progress_label;  // "<n> of 4 steps complete"
};

// The four steps, each complete on its own evidence; the first incomplete one is current:
//   patrol        count patrol_issue_evidence; complete when > 0.
//   assistant     count governed_actions (a governed plan is the artefact of collaboration;
//                 no Assistant activity is recorded otherwise); complete when > 0.
//   governance    count pending_approvals until a decision exists, then approved + rejected
//                 decisions; complete when a decision exists.
//   verification  count verified_outcomes + rejected_decisions (a rejection closes the loop
//                 too); complete when > 0.
// next_action: review_approvals while anything awaits a decision; else run_patrol, then
// review_findings (active findings) or open_assistant for the first incomplete step; with
// every step complete, open_mcp until an external agent is ready, then complete.
// value_state: verified (resolved loop and an external agent ready) or verified_needs_mcp;
// else governed_decision_recorded once a decision exists; else in_progress once there is any
// evidence, action or pending approval; else not_started.
OperationsLoopRollup RollUpOperationsLoop(const OperationsLoopCounts& counts);

// The AgentOperationsLoopStatus body: nextAction, progressLabel, steps[{id, label, status,
// count}], the counters of docs/api.md (patrolControl* primary, patrolAutonomy* and proActivation*
// mirroring them), the three value states, externalAgentReady, windowStart, generatedAt.
std::string OperationsLoopStatusToJson(const OperationsLoopCounts& counts, absl::Time window_start,
                                       absl::Time generated_at);

}  // namespace pulse::core
