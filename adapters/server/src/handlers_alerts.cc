// Alert intake (POST /api/ai/investigate-alert; docs/alerts.md) and the ledger of the fleet
// changes that start Patrol runs (GET /api/ai/patrol/triggers). Prometheus Alertmanager's
// webhook, or the native shape, becomes findings and a scoped Patrol run (core/alerts). The
// route needs ai:execute; Alertmanager sends its token with http_config.authorization (a Bearer
// token), which the HTTP layer accepts like X-API-Token.
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/alerts/alert_intake.h"
#include "pulse/core/alerts/event_trigger.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

HttpReply InvestigateAlert(ServerContext& ctx, const HttpRequest& request) {
  absl::StatusOr<core::AlertBatch> batch = core::ParseAlertIntake(request.body);
  if (!batch.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(batch.status().message()));
  }
  absl::StatusOr<core::AlertIntakeResult> result = ctx.alerts.Receive(*batch);
  if (!result.ok()) {
    return Unavailable("the alert intake", result.status());
  }
  std::size_t mapped = 0;
  std::size_t unmapped = 0;
  std::size_t ambiguous = 0;
  std::size_t resolved = 0;
  core::JsonWriter w;
  w.StartObject();
  w.Member("shape", batch->shape);
  w.Member("received", static_cast<std::int64_t>(result->alerts.size()));
  w.Key("alerts");
  w.StartArray();
  for (const core::AlertOutcome& a : result->alerts) {
    switch (a.mapping.kind) {
      case core::AlertMapping::Kind::kMapped:
        ++mapped;
        break;
      case core::AlertMapping::Kind::kAmbiguous:
        ++ambiguous;
        break;
      case core::AlertMapping::Kind::kUnmapped:
        ++unmapped;
        break;
    }
    resolved += a.firing ? 0 : 1;
    w.StartObject();
    w.Member("name", a.name);
    w.Member("fingerprint", a.fingerprint);
    w.Member("status", a.firing ? "firing" : "resolved");
    w.Member("mapping", core::ToString(a.mapping.kind));
    w.MemberIfNotEmpty("resource_id", a.mapping.resource_id);
    w.MemberIfNotEmpty("rule", a.mapping.rule);
    w.MemberIfNotEmpty("reason", a.mapping.reason);
    w.MemberIfNotEmpty("finding_id", a.finding_id);
    w.Member("finding_outcome", a.finding_outcome);
    w.MemberIfNotEmpty("detail", a.detail);
    w.Member("investigation", a.investigation);
    w.EndObject();
  }
  w.EndArray();
  w.Member("mapped", static_cast<std::int64_t>(mapped));
  w.Member("unmapped", static_cast<std::int64_t>(unmapped));
  w.Member("ambiguous", static_cast<std::int64_t>(ambiguous));
  w.MemberIfNotEmpty("run_id", result->run_id);
  w.EndObject();
  LogLine(
      absl::StrCat("alert intake (", batch->shape,
                   batch->receiver.empty() ? "" : absl::StrCat(", receiver ", batch->receiver),
                   "): ", result->alerts.size(), " alert(s) (", resolved, " resolved), ", mapped,
                   " mapped, ", unmapped, " unmapped, ", ambiguous, " ambiguous",
                   result->run_id.empty() ? "" : absl::StrCat("; Patrol run ", result->run_id)));
  return HttpReply::Json(w.Take());
}

HttpReply ListTriggers(ServerContext& ctx) {
  const std::vector<core::TriggerLedgerEntry> ledger = ctx.triggers.Ledger();
  core::JsonWriter w;
  w.StartObject();
  w.Member("enabled", ctx.config.patrol_event_runs_per_hour > 0);
  w.Member("window_seconds", absl::ToInt64Seconds(ctx.config.patrol_event_window));
  w.Member("cooldown_seconds", absl::ToInt64Seconds(ctx.config.patrol_event_cooldown));
  w.Member("max_runs_per_hour", static_cast<std::int64_t>(ctx.config.patrol_event_runs_per_hour));
  w.Member("runs_in_last_hour", static_cast<std::int64_t>(ctx.triggers.RunsInLastHour()));
  w.Key("ledger");
  w.StartArray();
  for (auto it = ledger.rbegin(); it != ledger.rend(); ++it) {  // newest first
    w.StartObject();
    w.TimeMember("at", it->at);
    w.Member("seq", static_cast<std::int64_t>(it->seq));
    w.Member("resource_id", it->resource_id);
    w.Member("change", it->change);
    w.MemberIfNotEmpty("detail", it->detail);
    w.Member("decision", it->decision);
    w.MemberIfNotEmpty("reason", it->reason);
    w.MemberIfNotEmpty("run_id", it->run_id);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return HttpReply::Json(w.Take());
}

}  // namespace

absl::Status BindAlertRoutes(adapters::http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle(
      "investigate_alert", [&ctx](const HttpRequest& r) { return InvestigateAlert(ctx, r); }));
  return router.Handle("list_patrol_triggers",
                       [&ctx](const HttpRequest& /*r*/) { return ListTriggers(ctx); });
}

}  // namespace pulse::server
