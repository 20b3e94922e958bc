// Settings changed at runtime: the AI settings (GET/PUT /api/settings/ai, docs/server.md).
// Both need settings:write (the HTTP layer checks it) and a human token: the settings decide
// where fleet context is sent and what it may cost, so software acting on its own judgement
// (an agent) or a script (a service) may neither read nor change them. The Patrol thresholds
// (GET/PUT /api/settings/patrol, docs/patrol.md "Thresholds"): anyone with monitoring:read
// reads them; a change needs settings:write and a human token, and is audited.
#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/patrol_thresholds.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {
namespace {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

// Models GET answers at most (a provider may list hundreds; the console offers these).
constexpr std::size_t kMaxListedModels = 200;

std::optional<HttpReply> RefuseNonHuman(const HttpRequest& request) {
  const core::ActionActor actor = ActorFor(request);
  if (actor.kind == core::ActorKind::kHuman && request.principal.authenticated) {
    return std::nullopt;
  }
  return HttpReply::Error(AgentErrorCode::kHumanTokenRequired,
                          absl::StrCat("only a human token may read or change the AI settings; "
                                       "this caller acts as ",
                                       std::string(core::ToString(actor.kind))));
}

// Decodes the PUT body. The route's schema (surface.cc) has already refused unknown members,
// wrong types, over-long strings and out-of-range caps; this turns the members into a change.
absl::StatusOr<AiSettingsChange> DecodeChange(const std::string& body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  if (!doc.ok() || !doc->IsObject()) {
    return absl::InvalidArgumentError("the body must be a JSON object");
  }
  // A member given twice would leave which one counts to the parser: refused.
  std::vector<std::string_view> seen;
  for (const auto& member : std::as_const(*doc).GetObject()) {
    const std::string_view name = core::StringViewOf(member.name);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(core::QuoteForMessage(name), " is given more than once"));
    }
    seen.push_back(name);
  }
  AiSettingsChange change;
  const auto text = [&](const char* name, std::optional<std::string>& out) -> absl::Status {
    const rapidjson::Value* v = core::GetMember(*doc, name);
    if (v == nullptr) {
      return absl::OkStatus();
    }
    if (!v->IsString()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be a string"));
    }
    out = std::string(core::StringViewOf(*v));
    return absl::OkStatus();
  };
  PULSE_RETURN_IF_ERROR(text("provider", change.provider));
  PULSE_RETURN_IF_ERROR(text("base_url", change.base_url));
  PULSE_RETURN_IF_ERROR(text("model", change.model));
  PULSE_RETURN_IF_ERROR(text("patrol_model", change.patrol_model));
  if (const rapidjson::Value* key = core::GetMember(*doc, "api_key"); key != nullptr) {
    if (key->IsNull()) {
      change.api_key.emplace(std::nullopt);
    } else if (key->IsString() && key->GetStringLength() > 0) {
      change.api_key.emplace(std::string(core::StringViewOf(*key)));
    } else {
      return absl::InvalidArgumentError("api_key must be a non-empty string, or null to remove it");
    }
  }
  const auto budget = [&](const char* name, std::optional<double>& out) -> absl::Status {
    const rapidjson::Value* v = core::GetMember(*doc, name);
    if (v == nullptr) {
      return absl::OkStatus();
    }
    if (!v->IsNumber() || v->GetDouble() < 0 ||
        v->GetDouble() > adapters::storage::kMaxAiBudgetUsd) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be a number from 0 (no cap) to 1000000"));
    }
    out = v->GetDouble();
    return absl::OkStatus();
  };
  PULSE_RETURN_IF_ERROR(budget("monthly_budget_usd", change.monthly_budget_usd));
  PULSE_RETURN_IF_ERROR(budget("session_budget_usd", change.session_budget_usd));
  return change;
}

void WritePreflight(core::JsonWriter& w, const ModelPreflight& p) {
  w.StartObject();
  w.Member("model", p.model);
  w.Member("outcome", ToString(p.outcome));
  w.Member("message", p.message);
  w.TimeMember("checked_at", p.checked_at);
  w.EndObject();
}

// The settings as GET answers them: never the key, only whether one is set.
std::string SettingsJson(AiRuntime& ai, const AiSettings& s) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("provider", s.provider);
  w.Member("base_url", s.base_url);
  w.Member("model", s.model);
  w.Member("patrol_model", s.patrol_model);
  w.Member("effective_patrol_model", s.EffectivePatrolModel());
  w.Member("api_key_set", s.api_key_set);
  w.Key("monthly_budget_usd");
  w.Double(s.monthly_budget_usd);
  w.Key("session_budget_usd");
  w.Double(s.session_budget_usd);
  // This month's metered spend the monthly cap is checked against (every chat and Patrol run).
  if (absl::StatusOr<std::pair<std::string, double>> spent = ai.Spend().ThisMonth(); spent.ok()) {
    w.Key("month_spend");
    w.StartObject();
    w.Member("month", spent->first);
    w.Key("cost_usd");
    w.Double(spent->second);
    w.Member("cap_reached", s.monthly_budget_usd > 0 && spent->second >= s.monthly_budget_usd);
    w.EndObject();
  }
  w.TimeMemberIfSet("updated_at", s.updated_at);
  w.MemberIfNotEmpty("updated_by", s.updated_by);
  w.Key("preflight");
  w.StartArray();
  for (const ModelPreflight& p : ai.Preflights()) {
    WritePreflight(w, p);
  }
  w.EndArray();
  // The provider's own list, so the console can offer it; "" models_error when it was read.
  w.Key("models");
  w.StartArray();
  std::string models_error;
  if (const std::shared_ptr<AiEngine> engine = ai.Current(); engine != nullptr) {
    adapters::providers::ProviderConfig listing = engine->config;
    listing.timeouts = kSettingsProbeTimeouts;
    absl::StatusOr<std::vector<adapters::providers::ModelInfo>> models =
        adapters::providers::ListModels(listing);
    if (models.ok()) {
      const std::size_t n = std::min(models->size(), kMaxListedModels);
      for (std::size_t i = 0; i < n; ++i) {
        w.StartObject();
        w.Member("id", (*models)[i].id);
        w.MemberIfNotEmpty("display_name", (*models)[i].display_name);
        w.EndObject();
      }
    } else {
      // Provider messages name neither the key nor the endpoint (provider_factory.h).
      models_error = std::string(models.status().message());
    }
  }
  w.EndArray();
  w.MemberIfNotEmpty("models_error", models_error);
  w.EndObject();
  return w.Take();
}

HttpReply GetSettings(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *std::move(refused);
  }
  return HttpReply::Json(SettingsJson(ctx.ai, ctx.ai.Settings()));
}

HttpReply UpdateSettings(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *std::move(refused);
  }
  absl::StatusOr<AiSettingsChange> change = DecodeChange(request.body);
  if (!change.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            std::string(change.status().message()));
  }
  const absl::Time before = ctx.clock.Now();
  absl::StatusOr<AiSettings> updated = ctx.ai.Update(*change, ActorFor(request));
  if (absl::IsInvalidArgument(updated.status())) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            std::string(updated.status().message()));
  }
  if (absl::IsFailedPrecondition(updated.status())) {
    // The provider's model list could not be read (provider messages carry no key or URL).
    return HttpReply::Error(AgentErrorCode::kProviderUnavailable,
                            std::string(updated.status().message()));
  }
  if (!updated.ok()) {
    return Unavailable("the AI settings", updated.status());
  }
  LogLine(absl::StrCat("the AI settings were changed by ", ActorFor(request).id, ": ",
                       updated->provider, ":", updated->model));
  // A preflight of Patrol's model that this change ran is a model check for Patrol: one that
  // observed a tool call clears the runtime finding, a failed one counts (docs/patrol.md).
  if (const std::optional<ModelPreflight> preflight = ctx.ai.PatrolPreflight();
      preflight.has_value() && preflight->checked_at >= before) {
    const bool ok = preflight->outcome == ModelPreflight::Outcome::kOk;
    absl::Status observed = ctx.patrol.ObserveModel(
        ok, ok ? "" : absl::StrCat("preflight_", std::string(ToString(preflight->outcome))),
        preflight->message);
    if (!observed.ok()) {
      LogLine(absl::StrCat("the Patrol runtime finding was not updated: ", observed.ToString()));
    }
  }
  return HttpReply::Json(SettingsJson(ctx.ai, *updated));
}

// ---- the Patrol thresholds ---------------------------------------------------------------

HttpReply GetPatrolSettings(ServerContext& ctx) {
  absl::StatusOr<core::PatrolThresholdSettings> current = ctx.patrol.Thresholds();
  if (!current.ok()) {
    return Unavailable("the Patrol thresholds", current.status());
  }
  return HttpReply::Json(
      absl::StrCat(R"({"thresholds":)", core::PatrolThresholdsToJson(*current), "}"));
}

// The audit details of a change: each section's JSON before and after, when it changed.
void ThresholdChanges(const core::PatrolThresholdSettings& before,
                      const core::PatrolThresholdSettings& after,
                      std::map<std::string, std::string>& details) {
  const auto section = [](const core::PatrolThresholdSettings& s, int which) {
    core::PatrolThresholdSettings only;
    only.updated_at.reset();
    if (which == 0) {
      only.defaults = s.defaults;
    } else if (which == 1) {
      only.resource_types = s.resource_types;
    } else {
      only.resources = s.resources;
    }
    return core::PatrolThresholdsToJson(only);
  };
  static constexpr std::string_view kNames[] = {"defaults", "resource_types", "resources"};
  for (int i = 0; i < 3; ++i) {
    const std::string was = section(before, i);
    const std::string now = section(after, i);
    if (was != now) {
      // Bounded: a detail is a small fact, not the whole table.
      details[std::string(kNames[i])] =
          absl::StrCat(was.size() > 512 ? was.substr(0, 512) + "..." : was, " -> ",
                       now.size() > 512 ? now.substr(0, 512) + "..." : now);
    }
  }
}

HttpReply UpdatePatrolSettings(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *std::move(refused);
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(request.body);
  if (!doc.ok() || !doc->IsObject()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, "the body must be a JSON object");
  }
  const rapidjson::Value* thresholds = core::GetMember(*doc, "thresholds");
  if (thresholds == nullptr || doc->MemberCount() != 1) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            "the body is { thresholds: { defaults, resource_types, resources } }");
  }
  absl::StatusOr<core::PatrolThresholdSettings> next =
      core::PatrolThresholdsFromJson(core::ToJsonString(*thresholds), /*with_meta=*/false);
  if (!next.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(next.status().message()));
  }
  absl::StatusOr<core::PatrolThresholdSettings> before = ctx.patrol.Thresholds();
  if (!before.ok()) {
    return Unavailable("the Patrol thresholds", before.status());
  }
  const core::ActionActor actor = ActorFor(request);
  next->updated_at = ctx.clock.Now();
  next->updated_by = actor.id;
  core::AuditEntry entry;
  entry.at = *next->updated_at;
  entry.category = "settings";
  entry.event = "patrol_thresholds_changed";
  entry.subject_id = "patrol";
  entry.actor_kind = std::string(core::ToString(actor.kind));
  entry.actor_id = actor.id;
  entry.message = "the Patrol thresholds were changed";
  ThresholdChanges(*before, *next, entry.details);
  // Audited first: a change the log cannot record is not made.
  if (absl::Status audited = ctx.audit.Append(entry); !audited.ok()) {
    return Unavailable("the audit log", audited);
  }
  if (absl::Status saved = ctx.patrol.SetThresholds(*next); !saved.ok()) {
    return Unavailable("the Patrol thresholds", saved);
  }
  LogLine(absl::StrCat("the Patrol thresholds were changed by ", actor.id));
  return HttpReply::Json(
      absl::StrCat(R"({"thresholds":)", core::PatrolThresholdsToJson(*next), "}"));
}

}  // namespace

absl::Status BindSettingsRoutes(adapters::http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle(
      "get_ai_settings", [&ctx](const HttpRequest& request) { return GetSettings(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle("update_ai_settings", [&ctx](const HttpRequest& request) {
    return UpdateSettings(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "get_patrol_settings", [&ctx](const HttpRequest&) { return GetPatrolSettings(ctx); }));
  PULSE_RETURN_IF_ERROR(router.Handle("update_patrol_settings", [&ctx](const HttpRequest& request) {
    return UpdatePatrolSettings(ctx, request);
  }));
  return absl::OkStatus();
}

}  // namespace pulse::server
