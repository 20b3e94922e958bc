// Patrol: start a run, read run records and the status, read and set the autonomy level.
// A run is reserved here (so a busy scope answers 409 patrol_already_running with the running
// id, and an unresolvable scope 422 patrol_scope_unresolved, before anything runs) and executed
// by the PatrolScheduler's thread; the reply carries the run id at once.
// "Admin" in the API (docs/api.md) has no separate notion in this product: every API token
// is an operator credential, so the route's scope is the whole guard — ai:execute to run and
// read Patrol, settings:write to read and change its autonomy and to record or revoke the
// Autopilot acknowledgement (humans only).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/autonomy.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
using core::AgentErrorCode;
using http::HttpReply;
using http::HttpRequest;

std::string Message(const absl::Status& status) {
  std::string text(status.message());
  // Core messages start with their code ("invalid_patrol_scope: ..."); the envelope has it.
  const std::size_t colon = text.find(": ");
  if (colon != std::string::npos && text.find(' ') > colon) {
    text.erase(0, colon + 2);
  }
  return text;
}

HttpReply RunPatrol(ServerContext& ctx, const HttpRequest& request) {
  absl::StatusOr<core::PatrolScope> scope = core::ParsePatrolScopeRequest(request.body);
  if (!scope.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidPatrolScope, Message(scope.status()));
  }
  absl::StatusOr<core::PatrolBegin> begun = ctx.patrol.Begin(*scope, core::PatrolTrigger::kManual);
  if (absl::IsNotFound(begun.status())) {
    return HttpReply::Error(AgentErrorCode::kPatrolScopeUnresolved, Message(begun.status()));
  }
  if (!begun.ok()) {
    return Unavailable("Patrol", begun.status());
  }
  if (!begun->ticket.has_value()) {
    core::AgentError error = core::MakeAgentError(AgentErrorCode::kPatrolAlreadyRunning,
                                                  "a Patrol run of this scope is already running");
    error.details["current_run_id"] = begun->running_run_id;
    return HttpReply::Error(error);
  }
  const core::PatrolTicket& ticket = *begun->ticket;
  core::JsonWriter w;
  w.StartObject();
  w.Member("success", true);
  w.Member("accepted", true);
  w.Member("message", scope->Full() ? "Patrol run started"
                                    : absl::StrCat("Scoped Patrol run started over ",
                                                   ticket.resources.size(), " resource(s)"));
  w.Member("run_id", ticket.run_id);
  w.TimeMember("started_at", ticket.started_at);
  if (!scope->Full()) {
    w.Key("scope_resolution");
    w.StartObject();
    w.Key("resource_ids");
    w.StartArray();
    for (const core::FleetResource& r : ticket.resources) {
      w.String(r.id);
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  std::string body = w.Take();
  if (!ctx.scheduler.Enqueue(*std::move(begun->ticket))) {
    return HttpReply::Error(AgentErrorCode::kServiceUnavailable, "the server is shutting down");
  }
  return HttpReply::Json(std::move(body));
}

HttpReply ListRuns(ServerContext& ctx) {
  absl::StatusOr<std::vector<core::PatrolRunRecord>> runs =
      ctx.patrol_runs.List(core::kPatrolRunHistoryLimit);
  if (!runs.ok()) {
    return Unavailable("the Patrol run store", runs.status());
  }
  std::string out = "[";
  for (std::size_t i = 0; i < runs->size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ",", core::PatrolRunToJson((*runs)[i]));
  }
  out += "]";
  return HttpReply::Json(std::move(out));
}

HttpReply GetRun(ServerContext& ctx, const HttpRequest& request) {
  absl::StatusOr<core::PatrolRunRecord> run = ctx.patrol_runs.Get(PathParam(request, "runId"));
  if (absl::IsNotFound(run.status())) {
    return HttpReply::Error(AgentErrorCode::kPatrolRunNotFound, "Patrol run not found");
  }
  if (!run.ok()) {
    return Unavailable("the Patrol run store", run.status());
  }
  return HttpReply::Json(core::PatrolRunToJson(*run));
}

// Why Patrol cannot do its model work now (C-API-10), from live inputs: the AI settings in
// force, the last tool-call preflight of Patrol's model, the model's record in this process and
// the schedule — never only from the last failed run. First match wins.
struct Blocked {
  std::string_view reason;  // no_provider | preflight_failed | budget_exhausted | paused
  std::string message;
};

constexpr std::string_view kWhereToFix =
    "Settings > AI (Provider & Models): configure a provider and pick a Patrol model that can "
    "call tools";

std::optional<Blocked> BlockedNow(const AiSettings& ai,
                                  const std::optional<ModelPreflight>& preflight,
                                  const core::PatrolModelHealth& health,
                                  const PatrolSchedule& schedule, const absl::Status& month_spend) {
  if (ai.provider.empty()) {
    return Blocked{"no_provider",
                   absl::StrCat("no model provider is configured, so Patrol runs only its "
                                "deterministic checks; ",
                                std::string(kWhereToFix))};
  }
  if (preflight.has_value() && preflight->outcome != ModelPreflight::Outcome::kOk) {
    return Blocked{"preflight_failed",
                   absl::StrCat("the Patrol model ", preflight->model,
                                " failed its tool-call "
                                "preflight (",
                                std::string(ToString(preflight->outcome)),
                                "): ", preflight->message, "; ", std::string(kWhereToFix))};
  }
  if (!month_spend.ok()) {
    // The monthly spend cap (AI settings) refuses every metered call until the month ends.
    return Blocked{"budget_exhausted",
                   absl::StrCat(std::string(month_spend.message()),
                                " Patrol runs only its deterministic checks meanwhile.")};
  }
  if (health.consecutive_failures > 0 && (health.last_failure == core::kReasonCostBudgetExhausted ||
                                          health.last_failure == core::kReasonCostUnknown)) {
    return Blocked{"budget_exhausted",
                   absl::StrCat("Patrol's last model call stopped on its spend budget (",
                                health.last_failure, "); raise the budget in Settings > AI")};
  }
  if (!schedule.enabled) {
    return Blocked{"paused",
                   "the schedule is off (patrol interval 0): Patrol runs only when started"};
  }
  return std::nullopt;
}

// The end times Patrol's status reports (C-API-11): the newest full run that finished without
// error, the newest such scoped run, and the newest finished run of any kind.
struct RunTimes {
  std::optional<absl::Time> full;
  std::string full_run_id;
  std::optional<absl::Time> scoped;
  std::optional<absl::Time> activity;
};

RunTimes EndTimes(const std::vector<core::PatrolRunRecord>& runs) {
  RunTimes t;
  const auto later = [](std::optional<absl::Time>& slot, absl::Time at) {
    if (!slot.has_value() || at > *slot) {
      slot = at;
      return true;
    }
    return false;
  };
  for (const core::PatrolRunRecord& r : runs) {
    if (r.status == core::PatrolRunStatus::kRunning || !r.completed_at.has_value()) {
      continue;
    }
    later(t.activity, *r.completed_at);
    if (r.status == core::PatrolRunStatus::kError) {
      continue;
    }
    if (r.scope.Full()) {
      if (later(t.full, *r.completed_at)) {
        t.full_run_id = r.id;
      }
    } else {
      later(t.scoped, *r.completed_at);
    }
  }
  return t;
}

HttpReply Status(ServerContext& ctx) {
  absl::StatusOr<core::AutonomySettings> autonomy = ctx.patrol.Autonomy();
  if (!autonomy.ok()) {
    return Unavailable("the Patrol settings", autonomy.status());
  }
  absl::StatusOr<std::vector<core::PatrolRunRecord>> runs =
      ctx.patrol_runs.List(core::kPatrolRunHistoryLimit);
  if (!runs.ok()) {
    return Unavailable("the Patrol run store", runs.status());
  }
  const std::vector<std::string> running = ctx.patrol.RunningIds();
  const PatrolSchedule schedule = ctx.scheduler.Schedule();
  const AiSettings ai = ctx.ai.Settings();
  const std::optional<ModelPreflight> preflight = ctx.ai.PatrolPreflight();
  const core::PatrolModelHealth health = ctx.patrol.ModelHealth();
  const std::optional<Blocked> blocked =
      BlockedNow(ai, preflight, health, schedule, ctx.ai.Spend().Admit());
  core::JsonWriter w;
  w.StartObject();
  w.Member("runtime_state", !running.empty()      ? "running"
                            : blocked.has_value() ? "blocked"
                                                  : "idle");
  if (blocked.has_value()) {
    w.Member("blocked_reason", blocked->reason);
    w.Member("blocked_message", blocked->message);
  }
  w.Member("running", !running.empty());
  w.Key("running_run_ids");
  w.StringArray(running);
  w.Member("enabled", schedule.enabled);
  w.Member("interval_ms", absl::ToInt64Milliseconds(schedule.interval));
  w.TimeMemberIfSet("next_patrol_at", schedule.next_run_at);
  // Whether the AI settings in force give Patrol a model, which one, and how its last tool-call
  // preflight went (a model that cannot call tools leaves Patrol to its deterministic checks).
  w.Member("model_configured", !ai.provider.empty());
  if (!ai.provider.empty()) {
    w.Member("model", ModelIdentity(ai.provider, ai.EffectivePatrolModel()));
  }
  if (preflight.has_value()) {
    w.Key("model_preflight");
    w.StartObject();
    w.Member("outcome", ToString(preflight->outcome));
    w.Member("message", preflight->message);
    w.TimeMember("checked_at", preflight->checked_at);
    w.EndObject();
  }
  w.Key("model_failures");
  w.StartObject();
  w.Member("consecutive", static_cast<std::int64_t>(health.consecutive_failures));
  w.Member("threshold", static_cast<std::int64_t>(core::kModelFailureThreshold));
  if (!health.last_failure.empty()) {
    w.Member("last_reason", health.last_failure);
    w.Member("last_detail", health.last_failure_detail);
  }
  w.TimeMemberIfSet("last_failed_at", health.last_failure_at);
  w.TimeMemberIfSet("last_succeeded_at", health.last_success_at);
  w.EndObject();
  w.Member("autonomy_level", core::ToString(core::EffectiveAutonomy(*autonomy)));
  const RunTimes times = EndTimes(*runs);
  w.TimeMemberIfSet("last_patrol_at", times.full);
  if (!times.full_run_id.empty()) {
    w.Member("last_full_run_id", times.full_run_id);
  }
  w.TimeMemberIfSet("last_scoped_patrol_at", times.scoped);
  w.TimeMemberIfSet("last_activity_at", times.activity);
  if (!runs->empty()) {
    const core::PatrolRunRecord& r = runs->front();
    w.Member("last_run_id", r.id);
    w.Member("last_status", core::ToString(r.status));
    w.Member("findings_count", static_cast<std::int64_t>(r.finding_ids.size()));
    w.Member("error_count", r.error_count);
    w.Member("healthy", r.status == core::PatrolRunStatus::kHealthy);
  }
  w.EndObject();
  return HttpReply::Json(w.Take());
}

HttpReply GetAutonomy(ServerContext& ctx) {
  absl::StatusOr<core::AutonomySettings> autonomy = ctx.patrol.Autonomy();
  if (!autonomy.ok()) {
    return Unavailable("the Patrol settings", autonomy.status());
  }
  return HttpReply::Json(core::AutonomyToJson(*autonomy));
}

HttpReply SetAutonomy(ServerContext& ctx, const HttpRequest& request) {
  const core::ActionActor actor = ActorFor(request);
  std::optional<absl::Status> refused;
  absl::StatusOr<core::AutonomySettings> saved =
      ctx.patrol.UpdateAutonomy([&](const core::AutonomySettings& current)
                                    -> absl::StatusOr<std::optional<core::AutonomySettings>> {
        absl::StatusOr<core::AutonomySettings> next =
            core::ParseAutonomyUpdate(request.body, current, actor.id,
                                      actor.kind == core::ActorKind::kHuman, ctx.clock.Now());
        if (!next.ok()) {
          refused = next.status();
          return std::nullopt;
        }
        return *std::move(next);
      });
  if (!saved.ok()) {
    return Unavailable("the Patrol settings", saved.status());
  }
  if (refused.has_value()) {
    return HttpReply::Error(AgentErrorCode::kInvalidAutonomyLevel, Message(*refused));
  }
  return HttpReply::Json(core::AutonomyToJson(*saved));
}

// Autopilot acknowledgements are a human's statement: a caller marked as an agent
// (X-Pulse-Agent-Surface) may neither record nor revoke one.
std::optional<HttpReply> RefuseAgent(const core::ActionActor& actor, std::string_view what) {
  if (actor.kind == core::ActorKind::kHuman && !actor.id.empty()) {
    return std::nullopt;
  }
  return HttpReply::Error(AgentErrorCode::kAutopilotAcknowledgementForbidden,
                          absl::StrCat("only a human may ", std::string(what),
                                       " an Autopilot acknowledgement; this caller is an agent"));
}

std::string AcknowledgementReply(const core::AutonomySettings& settings, bool created) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("created", created);
  w.Key("acknowledgement");
  w.RawValue(core::AcknowledgementToJson(*settings.acknowledgement));
  w.Key("autonomy");
  w.RawValue(core::AutonomyToJson(settings));
  w.EndObject();
  return w.Take();
}

HttpReply Acknowledge(ServerContext& ctx, const HttpRequest& request) {
  const core::ActionActor actor = ActorFor(request);
  if (std::optional<HttpReply> refused = RefuseAgent(actor, "record")) {
    return *refused;
  }
  absl::StatusOr<std::string> id = core::ParseAcknowledgementRequest(request.body);
  if (!id.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidAutopilotAcknowledgement,
                            std::string(id.status().message()));
  }
  bool created = false;
  absl::StatusOr<core::AutonomySettings> saved =
      ctx.patrol.UpdateAutonomy([&](const core::AutonomySettings& current)
                                    -> absl::StatusOr<std::optional<core::AutonomySettings>> {
        core::AcknowledgementChange change =
            core::RecordAcknowledgement(current, *id, actor.id, ctx.clock.Now());
        created = change.created;
        if (!change.created) {
          return std::nullopt;
        }
        return std::move(change.settings);
      });
  if (!saved.ok()) {
    return Unavailable("the Patrol settings", saved.status());
  }
  return HttpReply::Json(AcknowledgementReply(*saved, created), created ? 201 : 200);
}

HttpReply Revoke(ServerContext& ctx, const HttpRequest& request) {
  const core::ActionActor actor = ActorFor(request);
  if (std::optional<HttpReply> refused = RefuseAgent(actor, "revoke")) {
    return *refused;
  }
  // The reason comes in the body ({reason}) or, from a client that projects the capability's
  // arguments as a DELETE's query (pulse-cli), as ?reason=; both pass the same rules.
  std::string body = request.body;
  if (const std::optional<std::string_view> query = request.Query("reason");
      query.has_value() && body.find_first_not_of(" \t\r\n") == std::string::npos) {
    core::JsonWriter w;
    w.StartObject();
    w.Member("reason", *query);
    w.EndObject();
    body = w.Take();
  }
  absl::StatusOr<std::string> reason = core::ParseRevocationRequest(body);
  if (!reason.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidAutopilotAcknowledgement,
                            std::string(reason.status().message()));
  }
  bool not_found = false;
  absl::StatusOr<core::AutonomySettings> saved =
      ctx.patrol.UpdateAutonomy([&](const core::AutonomySettings& current)
                                    -> absl::StatusOr<std::optional<core::AutonomySettings>> {
        absl::StatusOr<core::AutonomySettings> next = core::RevokeAcknowledgement(
            current, PathParam(request, "acknowledgementId"), actor.id, *reason, ctx.clock.Now());
        if (absl::IsNotFound(next.status())) {
          not_found = true;
          return std::nullopt;
        }
        if (!next.ok()) {
          return next.status();
        }
        return *std::move(next);
      });
  if (!saved.ok()) {
    return Unavailable("the Patrol settings", saved.status());
  }
  if (not_found) {
    return HttpReply::Error(AgentErrorCode::kAutopilotAcknowledgementNotFound,
                            "no Autopilot acknowledgement with this id is recorded");
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("revoked", true);
  w.Key("revocation");
  w.RawValue(core::RevocationToJson(*saved->last_revocation));
  w.Key("autonomy");
  w.RawValue(core::AutonomyToJson(*saved));
  w.EndObject();
  return HttpReply::Json(w.Take());
}

// GET /api/ai/patrol/stream (docs/patrol.md "The Patrol stream"). Last-Event-ID, when sent, is
// the decimal seq of the last event the client saw (1..20 digits); anything else is refused.
HttpReply SubscribePatrolStream(ServerContext& ctx, const HttpRequest& request) {
  const std::string_view header = request.Header("last-event-id");
  std::optional<std::uint64_t> last_event_id;
  if (!header.empty()) {
    std::uint64_t id = 0;
    const bool digits =
        header.size() <= 20 &&
        std::all_of(header.begin(), header.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || !absl::SimpleAtoi(core::ToAbsl(header), &id)) {
      return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                              "Last-Event-ID must be the decimal id of a Patrol stream event");
    }
    last_event_id = id;
  }
  std::shared_ptr<http::SseStream> stream = ctx.patrol_stream.Subscribe(last_event_id);
  if (stream == nullptr) {
    return HttpReply::Error(AgentErrorCode::kServiceUnavailable, "the server is shutting down");
  }
  return HttpReply::EventStream(std::move(stream));
}

}  // namespace

absl::Status BindPatrolRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle("patrol_stream", [&ctx](const HttpRequest& request) {
    return SubscribePatrolStream(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "run_patrol", [&ctx](const HttpRequest& request) { return RunPatrol(ctx, request); }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("list_patrol_runs", [&ctx](const HttpRequest&) { return ListRuns(ctx); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "get_patrol_run", [&ctx](const HttpRequest& request) { return GetRun(ctx, request); }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("get_patrol_status", [&ctx](const HttpRequest&) { return Status(ctx); }));
  PULSE_RETURN_IF_ERROR(router.Handle("get_patrol_autonomy",
                                      [&ctx](const HttpRequest&) { return GetAutonomy(ctx); }));
  PULSE_RETURN_IF_ERROR(router.Handle("set_patrol_autonomy", [&ctx](const HttpRequest& request) {
    return SetAutonomy(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("acknowledge_patrol_autopilot",
                    [&ctx](const HttpRequest& request) { return Acknowledge(ctx, request); }));
  PULSE_RETURN_IF_ERROR(
      router.Handle("revoke_patrol_autopilot",
                    [&ctx](const HttpRequest& request) { return Revoke(ctx, request); }));
  return absl::OkStatus();
}

}  // namespace pulse::server
