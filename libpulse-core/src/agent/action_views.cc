// AgentViews: the action list and detail bodies of /api/actions (docs/api.md).

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent_views_internal.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/actions/action_redaction.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

namespace w = agent_wire;
using Code = ActionReadinessCode;

constexpr std::array<WireName<Code>, 7> kReadinessNames = {{
    {Code::kReady, "ready"},
    {Code::kReadinessCheckFailed, "readiness_check_failed"},
    {Code::kPlanExpired, "action_plan_expired"},
    {Code::kPlanDrift, "action_plan_drift"},
    {Code::kDryRunOnly, "action_dry_run_only"},
    {Code::kRemediationLocked, "resource_remediation_locked"},
    {Code::kNotActionable, "action_not_actionable"},
}};

ActionReadiness Readiness(Code code, std::string message, absl::Time now) {
  ActionReadiness r;
  r.ready = code == Code::kReady;
  r.code = code;
  r.message = std::move(message);
  r.refreshable = code == Code::kPlanExpired || code == Code::kPlanDrift;
  r.checked_at = now;
  return r;
}

ActionReadiness Expired(const ActionRecord& record, absl::Time now) {
  return Readiness(Code::kPlanExpired,
                   absl::StrCat("the plan expired at ", FormatRfc3339(record.plan.expires_at),
                                "; refresh it to plan again"),
                   now);
}

}  // namespace

std::string_view ToString(ActionReadinessCode code) { return WireNameOf(kReadinessNames, code); }

absl::StatusOr<ActionPage> AgentViews::ActionListPage(const ActionListQuery& query) {
  PULSE_RETURN_IF_ERROR(action_service_.SweepExpired(kActionSweepLimit));
  const std::size_t limit = std::clamp<std::size_t>(query.limit, 1, kMaxActionListLimit);
  ActionPageQuery page;
  page.view =
      query.view == ActionListView::kPending ? ActionPageView::kInFlight : ActionPageView::kSettled;
  page.after = query.after;
  page.limit = limit + 1;  // one more than shown says whether a next page exists
  PULSE_ASSIGN_OR_RETURN(std::vector<ActionRecord> records, actions_.ListPage(page));
  ActionPage out;
  if (records.size() > limit) {
    records.resize(limit);
    out.next_cursor =
        EncodeActionCursor(query.view, ActionPagePositionOf(records.back(), page.view));
  }
  JsonWriter body;
  body.StartObject();
  body.Member(w::kView, ToString(query.view));
  body.Key(w::kActions);
  body.StartArray();
  for (const ActionRecord& r : records) {
    body.RawValue(ActionRecordToJson(RedactedActionRecord(r)));
  }
  body.EndArray();
  body.Member(w::kCount, records.size());
  body.Member(w::kReadOnly, false);
  body.EndObject();
  out.body = body.Take();
  return out;
}

absl::StatusOr<std::string> AgentViews::ActionList(const ActionListQuery& query) {
  PULSE_ASSIGN_OR_RETURN(ActionPage page, ActionListPage(query));
  return std::move(page.body);
}

absl::StatusOr<Refusable<std::string>> AgentViews::ActionDetail(std::string_view action_id) {
  PULSE_ASSIGN_OR_RETURN(Refusable<ActionRecord> record, action_service_.Get(action_id));
  if (record.refused()) {
    return record.refusal();
  }
  PULSE_ASSIGN_OR_RETURN(Refusable<std::vector<ActionLifecycleEvent>> events,
                         action_service_.Events(action_id));
  if (events.refused()) {
    return events.refusal();
  }
  const ActionReadiness readiness = CheckReadiness(record.value());

  JsonWriter out;
  out.StartObject();
  out.Key(w::kAudit);
  out.RawValue(ActionRecordToJson(RedactedActionRecord(record.value())));
  out.Key(w::kEvents);
  out.StartArray();
  for (ActionLifecycleEvent e : events.value()) {
    e.message = RedactSecrets(e.message);  // a transition message may quote a reason
    out.RawValue(LifecycleEventToJson(e));
  }
  out.EndArray();
  out.Key(w::kReadiness);
  out.StartObject();
  out.Member(w::kReady, readiness.ready);
  out.Member(w::kCode, ToString(readiness.code));
  out.Member(w::kMessage, readiness.message);
  out.Member(w::kRefreshable, readiness.refreshable);
  out.TimeMember(w::kCheckedAt, readiness.checked_at);
  out.EndObject();
  out.Member(w::kReadOnly, false);
  out.EndObject();
  return Refusable<std::string>(out.Take());
}

ActionReadiness AgentViews::CheckReadiness(const ActionRecord& record) {
  const absl::Time now = clock_.Now();
  switch (record.state) {
    case ActionState::kExpired:
      return Expired(record, now);
    case ActionState::kExecuting:
    case ActionState::kCompleted:
    case ActionState::kFailed:
    case ActionState::kRejected:
      return Readiness(Code::kNotActionable,
                       absl::StrCat("the action is ", ToAbsl(ToString(record.state)),
                                    "; nothing is left to decide or run"),
                       now);
    case ActionState::kPlanned:
    case ActionState::kPendingApproval:
    case ActionState::kApproved:
      break;
  }
  if (now >= record.plan.expires_at) {
    return Expired(record, now);
  }
  if (record.plan.approval_policy == ApprovalLevel::kDryRunOnly ||
      record.plan.approval_requirement.floor == ApprovalLevel::kDryRunOnly) {
    return Readiness(Code::kDryRunOnly,
                     "the capability is dry-run only: the plan can be reviewed, never executed",
                     now);
  }
  absl::StatusOr<std::optional<std::string>> drift = action_service_.CheckDrift(record);
  if (!drift.ok()) {
    return Readiness(Code::kReadinessCheckFailed,
                     absl::StrCat("the fleet could not be read to re-validate the plan: ",
                                  drift.status().message()),
                     now);
  }
  if (drift->has_value()) {
    return Readiness(Code::kPlanDrift, **drift, now);
  }
  absl::StatusOr<OperatorState> lock = operator_state_.Get(record.plan.resource_id);
  if (lock.ok() && lock->never_auto_remediate) {
    return Readiness(
        Code::kRemediationLocked,
        absl::StrCat("the operator state of ", record.plan.resource_id, " forbids remediation"),
        now);
  }
  if (!lock.ok() && !absl::IsNotFound(lock.status())) {
    return Readiness(
        Code::kReadinessCheckFailed,
        absl::StrCat("the remediation lock could not be read: ", lock.status().message()), now);
  }
  return Readiness(Code::kReady,
                   record.state == ActionState::kPendingApproval
                       ? "the plan is current and awaits a decision"
                       : "the plan is current and can be executed",
                   now);
}

}  // namespace pulse::core
