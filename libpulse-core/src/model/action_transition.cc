#include "pulse/core/model/action_transition.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

bool ResultAllowed(ActionState state) {
  return state == ActionState::kCompleted || state == ActionState::kFailed;
}

bool DecisionState(ActionState state) {
  return state == ActionState::kPendingApproval || state == ActionState::kApproved ||
         state == ActionState::kRejected;
}

absl::Status CheckEvents(std::string_view action_id, ActionState final_state,
                         const std::vector<ActionLifecycleEvent>& events) {
  if (events.empty()) {
    return absl::InvalidArgumentError("a transition must append at least one lifecycle event");
  }
  for (const ActionLifecycleEvent& e : events) {
    if (e.action_id != action_id) {
      return absl::InvalidArgumentError("a lifecycle event names another action");
    }
  }
  if (events.back().state != final_state) {
    return absl::InvalidArgumentError("the last lifecycle event must name the new state");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MakeActionCasConflict(const ActionCasConflict& conflict, std::string_view message) {
  absl::Status status = absl::AbortedError(std::string(message));
  status.SetPayload(kActionCasConflictPayload,
                    absl::Cord(absl::StrCat("state=", ToAbsl(ToString(conflict.current_state)),
                                            ";revision=", conflict.current_decision_revision,
                                            ";identity=", conflict.identity_mismatch ? 1 : 0)));
  return status;
}

std::optional<ActionCasConflict> GetActionCasConflict(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kAborted) {
    return std::nullopt;
  }
  absl::optional<absl::Cord> payload = status.GetPayload(kActionCasConflictPayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  ActionCasConflict conflict;
  bool have_state = false;
  bool have_revision = false;
  bool have_identity = false;
  for (absl::string_view part : absl::StrSplit(std::string(*payload), ';')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, '=');
    if (kv.first == "state") {
      std::optional<ActionState> s = ParseActionState(ToStd(kv.second));
      if (!s.has_value()) {
        return std::nullopt;
      }
      conflict.current_state = *s;
      have_state = true;
    } else if (kv.first == "revision") {
      if (!absl::SimpleAtoi(kv.second, &conflict.current_decision_revision)) {
        return std::nullopt;
      }
      have_revision = true;
    } else if (kv.first == "identity") {
      conflict.identity_mismatch = kv.second == "1";
      have_identity = true;
    }
  }
  if (!have_state || !have_revision || !have_identity) {
    return std::nullopt;
  }
  return conflict;
}

absl::Status ValidateActionTransition(const ActionTransition& t) {
  if (t.action_id.empty()) {
    return absl::InvalidArgumentError("transition without an action id");
  }
  if (t.expected_plan_hash.empty()) {
    return absl::InvalidArgumentError("transition without the expected plan hash");
  }
  if (t.expected_states.empty()) {
    return absl::InvalidArgumentError("transition without expected states");
  }
  for (ActionState from : t.expected_states) {
    if (!IsLegalActionTransition(from, t.new_state)) {
      return absl::InvalidArgumentError(absl::StrCat("illegal transition ", ToAbsl(ToString(from)),
                                                     " -> ", ToAbsl(ToString(t.new_state))));
    }
  }
  if (t.result.has_value() != ResultAllowed(t.new_state)) {
    return absl::InvalidArgumentError(
        "a result must accompany exactly the transitions into completed or failed");
  }
  if (t.new_state == ActionState::kCompleted &&
      t.result->execution.status != ExecutionStatus::kSucceeded) {
    return absl::InvalidArgumentError("completed requires a succeeded execution");
  }
  if (t.appended_approval.has_value() && !DecisionState(t.new_state)) {
    return absl::InvalidArgumentError("a decision can only lead to a decision state");
  }
  return CheckEvents(t.action_id, t.new_state, t.events);
}

absl::Status CheckCas(const ActionRecord& current, const ActionTransition& t) {
  ActionCasConflict conflict{current.state, current.decision_revision, false};
  if (current.plan.plan_hash != t.expected_plan_hash) {
    conflict.identity_mismatch = true;
    return MakeActionCasConflict(conflict, "the action's plan identity differs");
  }
  if (std::find(t.expected_states.begin(), t.expected_states.end(), current.state) ==
      t.expected_states.end()) {
    return MakeActionCasConflict(conflict,
                                 absl::StrCat("the action is ", ToAbsl(ToString(current.state))));
  }
  if (t.expected_decision_revision.has_value() &&
      *t.expected_decision_revision != current.decision_revision) {
    return MakeActionCasConflict(conflict, "the action's decision revision moved");
  }
  return absl::OkStatus();
}

absl::Status CheckTransitionAgainst(const ActionRecord& current, const ActionTransition& t) {
  if (!IsLegalActionTransition(current.state, t.new_state)) {
    return absl::FailedPreconditionError(absl::StrCat("illegal transition ",
                                                      ToAbsl(ToString(current.state)), " -> ",
                                                      ToAbsl(ToString(t.new_state))));
  }
  if (t.result.has_value() && current.result.has_value()) {
    return absl::FailedPreconditionError("the action's result is already recorded");
  }
  if (t.appended_approval.has_value()) {
    if (t.new_decision_revision != current.decision_revision + 1) {
      return absl::FailedPreconditionError("a decision must advance the revision by one");
    }
    if (t.appended_approval->plan_hash != current.plan.plan_hash) {
      return absl::FailedPreconditionError("the decision binds another plan");
    }
    for (const ApprovalRecord& earlier : current.approvals) {
      if (SameActor(earlier.actor, t.appended_approval->actor)) {
        return absl::FailedPreconditionError("the approver has already decided");
      }
    }
  } else if (t.new_decision_revision != current.decision_revision) {
    return absl::FailedPreconditionError("only a decision may change the revision");
  }
  return absl::OkStatus();
}

void ApplyActionTransition(const ActionTransition& t, ActionRecord& record) {
  record.state = t.new_state;
  record.decision_revision = t.new_decision_revision;
  if (t.appended_approval.has_value()) {
    record.approvals.push_back(*t.appended_approval);
  }
  if (t.result.has_value()) {
    record.result = t.result;
  }
  record.updated_at = t.updated_at;
}

absl::Status ValidateNewActionRecord(const ActionRecord& record,
                                     const std::vector<ActionLifecycleEvent>& events) {
  if (record.state != ActionState::kPlanned && record.state != ActionState::kPendingApproval) {
    return absl::InvalidArgumentError("a new action starts planned or pending_approval");
  }
  if (record.decision_revision != 0 || !record.approvals.empty() || record.result.has_value()) {
    return absl::InvalidArgumentError("a new action has no decisions and no result");
  }
  if (record.plan.action_id.empty() || record.plan.plan_hash.empty()) {
    return absl::InvalidArgumentError("a new action needs its action id and plan hash");
  }
  if (record.plan.request_id != record.request.request_id ||
      record.plan.resource_id != record.request.resource_id ||
      record.plan.capability_name != record.request.capability_name ||
      record.plan.params_json != record.request.params_json) {
    return absl::InvalidArgumentError("the plan does not match its request");
  }
  if ((record.state == ActionState::kPendingApproval) != record.plan.requires_approval) {
    return absl::InvalidArgumentError("the initial state contradicts the approval requirement");
  }
  return CheckEvents(record.plan.action_id, record.state, events);
}

}  // namespace pulse::core
