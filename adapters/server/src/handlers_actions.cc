// Governed actions: plan, decide and execute (the manifest's action capabilities), and the
// action queue and detail views. The actor is always the authenticated caller (ActorFor);
// `requestedBy` in a plan body is ignored. Refusals are the lifecycle's own codes (sets P, D,
// E); a store or fleet the engine could not use is 503 service_unavailable.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/http/body_validator.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/actions/action_redaction.h"
#include "pulse/core/agent/agent_query.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
using core::AgentErrorCode;
using http::HttpReply;
using http::HttpRequest;

const std::string& ActionIdParam(const HttpRequest& request) {
  return PathParam(request, "actionId");
}

HttpReply Refused(const core::ActionRefusal& refusal) {
  return HttpReply::Error(refusal.ToAgentError());
}

// `json` (one object) with `extra` members written after its own.
std::string WithMembers(std::string_view json,
                        const std::function<void(core::JsonWriter&)>& extra) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json);
  core::JsonWriter w;
  w.StartObject();
  if (doc.ok() && doc->IsObject()) {
    for (const auto& member : std::as_const(*doc).GetObject()) {
      w.Key(core::StringViewOf(member.name));
      w.Value(member.value);
    }
  }
  extra(w);
  w.EndObject();
  return w.Take();
}

HttpReply Plan(ServerContext& ctx, const HttpRequest& request) {
  absl::StatusOr<core::ActionRequest> decoded =
      core::ParsePlanActionBody(request.body, ActorFor(request));
  if (!decoded.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidActionRequest,
                            std::string(decoded.status().message()));
  }
  absl::StatusOr<core::Refusable<core::PlanOutcome>> planned = ctx.action_service.Plan(*decoded);
  if (!planned.ok()) {
    return Unavailable("planning the action", planned.status());
  }
  if (planned->refused()) {
    return Refused(planned->refusal());
  }
  const core::PlanOutcome& outcome = planned->value();
  const core::ActionPlan shown = core::RedactedActionRecord(outcome.record).plan;
  return HttpReply::Json(WithMembers(core::ActionPlanToJson(shown), [&](core::JsonWriter& w) {
    w.Member("state", core::ToString(outcome.record.state));
    w.Member("created", outcome.created);
  }));
}

HttpReply Decide(ServerContext& ctx, const HttpRequest& request) {
  const std::string body =
      http::BodyWithPathParams(request.body, request.path_params, http::PathParamsInBody::kRemove);
  absl::StatusOr<core::DecisionBody> decoded = core::ParseDecisionBody(body);
  if (!decoded.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidActionDecision,
                            std::string(decoded.status().message()));
  }
  core::DecideRequest decide;
  decide.action_id = ActionIdParam(request);
  decide.outcome = decoded->outcome;
  decide.reason = decoded->reason;
  decide.plan_hash = decoded->plan_hash;
  decide.actor = ActorFor(request);
  absl::StatusOr<core::Refusable<core::DecideOutcome>> decided = ctx.action_service.Decide(decide);
  if (!decided.ok()) {
    return Unavailable("deciding the action", decided.status());
  }
  if (decided->refused()) {
    return Refused(decided->refusal());
  }
  const core::ActionRecord& record = decided->value().record;
  core::JsonWriter w;
  w.StartObject();
  w.Member("actionId", record.id());
  w.Member("state", core::ToString(record.state));
  for (auto it = record.approvals.rbegin(); it != record.approvals.rend(); ++it) {
    if (it->actor == decide.actor) {
      w.Key("approval");
      core::WriteApprovalJson(w, *it, core::ApprovalActorName::kWithoutName);
      break;
    }
  }
  w.Key("audit");
  w.RawValue(core::ActionRecordToJson(core::RedactedActionRecord(record)));
  w.Member("replayed", decided->value().replayed);
  w.EndObject();
  return HttpReply::Json(w.Take());
}

HttpReply Execute(ServerContext& ctx, const HttpRequest& request) {
  const std::string body =
      http::BodyWithPathParams(request.body, request.path_params, http::PathParamsInBody::kRemove);
  absl::StatusOr<core::ExecuteBody> decoded = core::ParseExecuteBody(body);
  if (!decoded.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidActionExecution,
                            std::string(decoded.status().message()));
  }
  core::ExecuteRequest execute;
  execute.action_id = ActionIdParam(request);
  execute.reason = decoded->reason;
  execute.plan_hash = decoded->plan_hash;
  execute.actor = ActorFor(request);
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> executed =
      ctx.action_service.Execute(execute);
  if (!executed.ok()) {
    return Unavailable("executing the action", executed.status());
  }
  if (executed->refused()) {
    return Refused(executed->refusal());
  }
  const core::ExecuteOutcome& outcome = executed->value();
  core::JsonWriter w;
  w.StartObject();
  w.Member("actionId", outcome.record.id());
  w.Member("state", core::ToString(outcome.record.state));
  if (outcome.record.result.has_value()) {
    w.Key("result");
    w.RawValue(core::ActionExecutionResultToJson(*outcome.record.result));
  }
  w.Key("audit");
  w.RawValue(core::ActionRecordToJson(core::RedactedActionRecord(outcome.record)));
  w.Member("replayed", outcome.replayed);
  w.Member("dispatched", outcome.dispatched);
  w.EndObject();
  return HttpReply::Json(w.Take());
}

HttpReply List(ServerContext& ctx, const HttpRequest& request) {
  absl::StatusOr<core::ActionListQuery> query = core::ParseActionListQuery(request.query);
  if (!query.ok()) {
    std::optional<core::AgentError> error = core::AgentQueryError(query.status());
    return HttpReply::Error(error.value_or(core::MakeAgentError(
        AgentErrorCode::kInvalidRequest, std::string(query.status().message()))));
  }
  absl::StatusOr<core::ActionPage> page = ctx.views.ActionListPage(*query);
  if (!page.ok()) {
    LogLine(absl::StrCat("listing actions failed: ", page.status().ToString()));
    return HttpReply::Error(AgentErrorCode::kActionListFailed, "the actions could not be listed");
  }
  HttpReply reply = HttpReply::Json(std::move(page->body));
  if (page->next_cursor.has_value()) {
    reply.headers.emplace_back(std::string(core::agent_wire::kNextCursorHeader),
                               *std::move(page->next_cursor));
  }
  return reply;
}

HttpReply Detail(ServerContext& ctx, const HttpRequest& request) {
  absl::StatusOr<core::Refusable<std::string>> detail =
      ctx.views.ActionDetail(ActionIdParam(request));
  if (!detail.ok()) {
    LogLine(absl::StrCat("reading an action failed: ", detail.status().ToString()));
    return HttpReply::Error(AgentErrorCode::kActionDetailFailed, "the action could not be read");
  }
  if (detail->refused()) {
    return Refused(detail->refusal());
  }
  return HttpReply::Json(detail->value());
}

}  // namespace

absl::Status BindActionRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle(
      "plan_action", [&ctx](const HttpRequest& request) { return Plan(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "decide_action", [&ctx](const HttpRequest& request) { return Decide(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "execute_action", [&ctx](const HttpRequest& request) { return Execute(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "list_actions", [&ctx](const HttpRequest& request) { return List(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "get_action", [&ctx](const HttpRequest& request) { return Detail(ctx, request); }));
  return absl::OkStatus();
}

}  // namespace pulse::server
