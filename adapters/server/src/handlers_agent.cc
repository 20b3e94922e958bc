// The agent surface: the manifest, health, metrics, workflow prompts, the context views
// (fleet, resource, resource capabilities, Patrol work status and its legacy alias), operator
// state, and the agent event stream.
#include <cstdio>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/http/body_validator.h"
#include "pulse/adapters/http/standard_handlers.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/manifest/workflow_prompts.h"
#include "pulse/core/model/operator_state.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
using core::AgentErrorCode;
using http::HttpReply;
using http::HttpRequest;

constexpr std::string_view kOperationsLoopPrompt = "pulse_operations_loop";

// POL-17: an external agent can work the operations loop when one unexpired token covers the
// scope of every capability the pulse_operations_loop prompt needs.
bool ExternalAgentReady(core::TokenStore& tokens, absl::Time now) {
  std::set<core::Scope> needed;
  bool have_prompt = false;
  for (const core::WorkflowPrompt& prompt : core::WorkflowPrompts()) {
    if (prompt.name != kOperationsLoopPrompt) {
      continue;
    }
    have_prompt = true;
    for (const std::string& name : prompt.required_capabilities) {
      if (const core::AgentCapability* capability = core::FindAgentCapability(name)) {
        needed.insert(capability->scope);
      }
    }
  }
  absl::StatusOr<std::vector<core::ApiTokenInfo>> listed = tokens.List();
  if (!have_prompt || !listed.ok()) {
    return false;
  }
  for (const core::ApiTokenInfo& info : *listed) {
    if (core::IsApiTokenExpired(info, now)) {
      continue;
    }
    absl::StatusOr<core::ScopeSet> scopes = core::ScopeSet::Parse(info.scopes);
    if (!scopes.ok()) {
      continue;
    }
    bool covers = true;
    for (core::Scope scope : needed) {
      covers = covers && scopes->Has(scope);
    }
    if (covers) {
      return true;
    }
  }
  return false;
}

// The reply of a read view: its JSON, 404 resource_not_found (for the views of one resource,
// the only ones that declare it), or 503.
HttpReply ViewReply(const absl::StatusOr<std::string>& view, std::string_view what,
                    bool of_one_resource = false) {
  if (view.ok()) {
    return HttpReply::Json(*view);
  }
  if (of_one_resource && view.status().code() == absl::StatusCode::kNotFound) {
    return HttpReply::Error(AgentErrorCode::kResourceNotFound, "Resource not found");
  }
  return Unavailable(what, view.status());
}

HttpReply OperationsLoopStatus(ServerContext& ctx) {
  core::OperationsLoopInputs inputs;
  inputs.external_agent_ready = ExternalAgentReady(ctx.tokens, ctx.clock.Now());
  return ViewReply(ctx.views.OperationsLoopStatus(inputs), "the operations loop status");
}

HttpReply GetOperatorState(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "resourceId");
  absl::StatusOr<core::OperatorState> state = ctx.operator_state.Get(id);
  if (state.status().code() == absl::StatusCode::kNotFound) {
    core::AgentError error = core::MakeAgentError(AgentErrorCode::kOperatorStateNotSet,
                                                  "No operator state is set for this resource");
    error.details["resourceId"] = id;
    return HttpReply::Error(error);
  }
  if (!state.ok()) {
    return Unavailable("the operator state store", state.status());
  }
  return HttpReply::Json(core::OperatorStateToJson(*state, ctx.clock.Now()));
}

HttpReply SetOperatorState(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "resourceId");
  const std::string body =
      http::BodyWithPathParams(request.body, request.path_params, http::PathParamsInBody::kAdd);
  const absl::Time now = ctx.clock.Now();
  absl::StatusOr<core::OperatorState> state =
      core::ParseOperatorStateInput(body, id, now, ActorFor(request).id);
  if (!state.ok()) {
    return HttpReply::Error(AgentErrorCode::kOperatorStateInvalid,
                            std::string(state.status().message()));
  }
  const absl::Status stored = ctx.operator_state.Set(*state);
  if (stored.code() == absl::StatusCode::kInvalidArgument) {
    return HttpReply::Error(AgentErrorCode::kOperatorStateInvalid, std::string(stored.message()));
  }
  if (!stored.ok()) {
    return Unavailable("the operator state store", stored);
  }
  return HttpReply::Json(core::OperatorStateToJson(*state, now));
}

HttpReply ClearOperatorState(ServerContext& ctx, const HttpRequest& request) {
  const std::string& id = PathParam(request, "resourceId");
  const absl::Status cleared = ctx.operator_state.Clear(id);
  if (!cleared.ok()) {
    return Unavailable("the operator state store", cleared);
  }
  return HttpReply::Json(R"({"success":true,"message":"Operator state cleared"})");
}

HttpReply SubscribeEvents(ServerContext& ctx, const HttpRequest& request) {
  std::shared_ptr<http::SseStream> stream =
      ctx.bus.Subscribe(!request.principal.scopes.Has(core::Scope::kAiExecute));
  if (stream == nullptr) {
    return HttpReply::Error(AgentErrorCode::kServiceUnavailable, "the server is shutting down");
  }
  return HttpReply::EventStream(std::move(stream));
}

}  // namespace

const std::string& PathParam(const HttpRequest& request, const std::string& name) {
  static const std::string kEmpty;
  auto it = request.path_params.find(name);
  return it == request.path_params.end() ? kEmpty : it->second;
}

core::ActionActor ActorFor(const HttpRequest& request) {
  core::ActionActor actor;
  switch (request.principal.kind) {
    case core::ApiTokenKind::kHuman:
      actor.kind = core::ActorKind::kHuman;
      break;
    case core::ApiTokenKind::kAgent:
      actor.kind = core::ActorKind::kAgent;
      break;
    case core::ApiTokenKind::kService:
      actor.kind = core::ActorKind::kService;
      break;
  }
  // The marker header an external agent adapter sends (docs/security.md; core::
  // kAgentSurfaceHeader) can only narrow: a human's token sent through an agent surface acts as
  // an agent (an agent may not approve, nor execute a plan someone else made); no header makes
  // an agent or service token act as a human.
  if (actor.kind == core::ActorKind::kHuman && !request.Header(core::kAgentSurfaceHeader).empty()) {
    actor.kind = core::ActorKind::kAgent;
  }
  actor.id = request.principal.token_id;
  actor.name = request.principal.token_name;
  return actor;
}

void LogLine(std::string_view line) {
  const std::string text = absl::StrCat("pulse-server: ", std::string(line), "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
}

HttpReply Unavailable(std::string_view what, const absl::Status& status) {
  LogLine(absl::StrCat(std::string(what), " failed: ", status.ToString()));
  return HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                          absl::StrCat(std::string(what), " is unavailable; retry later"));
}

absl::Status BindAgentRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle("get_capabilities", http::ManifestHandler()));
  PULSE_RETURN_IF_ERROR(router.Handle("healthz", http::HealthHandler()));
  PULSE_RETURN_IF_ERROR(router.Handle("metrics", [&ctx](const HttpRequest&) {
    ctx.metrics.RefreshActionGauge(ctx.actions);
    ctx.metrics.RefreshReadPool(ctx.database.ReadPoolStats());
    ctx.metrics.RefreshFleetSources(ctx.fleet.SourceStatuses());
    const ChatRuns::Stats runs = ctx.runs.stats();
    ctx.metrics.RefreshRunPool(runs.working, runs.queued, runs.workers, ctx.runs.options().workers,
                               ctx.runs.options().queue);
    return HttpReply::Text(ctx.registry.Render(), std::string(http::kPrometheusContentType));
  }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("render_workflow_prompt", http::RenderWorkflowPromptHandler()));
  PULSE_RETURN_IF_ERROR(router.Handle("get_fleet_context", [&ctx](const HttpRequest& request) {
    return ViewReply(ctx.views.FleetContext(core::ParseFleetContextQuery(request.query)),
                     "the fleet context");
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_resource_context", [&ctx](const HttpRequest& request) {
    const bool redact = !request.principal.scopes.Has(core::Scope::kAiExecute);
    return ViewReply(ctx.views.ResourceContext(PathParam(request, "resourceId"), redact),
                     "the resource context", true);
  }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("list_resource_capabilities", [&ctx](const HttpRequest& request) {
        return ViewReply(ctx.views.ResourceCapabilities(PathParam(request, "resourceId")),
                         "the resource capabilities", true);
      }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_patrol_control_status", [&ctx](const HttpRequest&) {
    return OperationsLoopStatus(ctx);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_operations_loop_status", [&ctx](const HttpRequest&) {
    return OperationsLoopStatus(ctx);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_operator_state", [&ctx](const HttpRequest& request) {
    return GetOperatorState(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("set_operator_state", [&ctx](const HttpRequest& request) {
    return SetOperatorState(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("clear_operator_state", [&ctx](const HttpRequest& request) {
    return ClearOperatorState(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle("subscribe_events", [&ctx](const HttpRequest& request) {
    return SubscribeEvents(ctx, request);
  }));
  return absl::OkStatus();
}

}  // namespace pulse::server
