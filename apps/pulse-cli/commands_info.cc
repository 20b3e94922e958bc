// capabilities, fleet list|show, sessions list|show, status.
#include "commands.h"
#include "json_output.h"
#include "render.h"

namespace pulse::cli {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

rapidjson::Document ResourceArgs(const std::string& resource_id) {
  rapidjson::Document args(rapidjson::kObjectType);
  SetStringArg(args, "resourceId", resource_id);
  return args;
}

}  // namespace

int CmdCapabilities(CommandContext& ctx) {
  return ctx.Show(RouteCall("get_capabilities"),
                  [&](const rapidjson::Value& reply) { RenderCapabilities(ctx.console(), reply); });
}

int CmdFleetList(CommandContext& ctx, const FleetListArgs& args) {
  rapidjson::Document query(rapidjson::kObjectType);
  if (args.has_findings) {
    SetBoolArg(query, "hasFindings", true);
  }
  if (!args.severity.empty()) {
    SetStringArg(query, "severity", args.severity);
  }
  if (!args.resource_type.empty()) {
    SetStringArg(query, "resourceType", args.resource_type);
  }
  if (!args.technology.empty()) {
    SetStringArg(query, "technology", args.technology);
  }
  return ctx.Show(CapabilityCall("get_fleet_context", query),
                  [&](const rapidjson::Value& reply) { RenderFleet(ctx.console(), reply); });
}

int CmdAgents(CommandContext& ctx) {
  return ctx.Show(CapabilityCall("list_agents", rapidjson::Value(rapidjson::kObjectType)),
                  [&](const rapidjson::Value& reply) { RenderAgents(ctx.console(), reply); });
}

int CmdFleetShow(CommandContext& ctx, const std::string& resource_id) {
  const rapidjson::Document args = ResourceArgs(resource_id);
  const absl::StatusOr<ApiCall> context_call = CapabilityCall("get_resource_context", args);
  const absl::StatusOr<ApiCall> caps_call = CapabilityCall("list_resource_capabilities", args);
  if (!context_call.ok() || !caps_call.ok()) {
    return ctx.BadCall(!context_call.ok() ? context_call.status() : caps_call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> context = ctx.FetchJson(*context_call, failure);
  if (!context.has_value()) {
    return ctx.Fail(failure);
  }
  Failure caps_failure;
  std::optional<rapidjson::Document> caps = ctx.FetchJson(*caps_call, caps_failure);
  if (ctx.console().json()) {
    rapidjson::Document out(rapidjson::kObjectType);
    Allocator& a = out.GetAllocator();
    out.AddMember("context", rapidjson::Value(*context, a), a);
    out.AddMember("capabilities",
                  caps.has_value() ? rapidjson::Value(*caps, a) : rapidjson::Value(), a);
    return ctx.PrintJson(out);
  }
  RenderResource(ctx.console(), *context, caps.has_value() ? &*caps : nullptr);
  if (!caps.has_value()) {
    ctx.console().Err("pulse-cli: capabilities unavailable: " + caps_failure.code + "\n");
  }
  return 0;
}

int CmdSessionsList(CommandContext& ctx) {
  return ctx.Show(RouteCall("list_sessions"),
                  [&](const rapidjson::Value& reply) { RenderSessions(ctx.console(), reply); });
}

int CmdSessionShow(CommandContext& ctx, const SessionArgs& args) {
  return ctx.Show(RouteCall("get_session", {{"sessionId", args.session_id}}),
                  [&](const rapidjson::Value& reply) { RenderSession(ctx.console(), reply); });
}

int CmdStatus(CommandContext& ctx) {
  const absl::StatusOr<ApiCall> health_call = RouteCall("healthz");
  const absl::StatusOr<ApiCall> patrol_call =
      CapabilityCall("get_patrol_control_status", rapidjson::Value(rapidjson::kObjectType));
  if (!health_call.ok() || !patrol_call.ok()) {
    return ctx.BadCall(!health_call.ok() ? health_call.status() : patrol_call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> health = ctx.FetchJson(*health_call, failure);
  if (!health.has_value()) {
    return ctx.Fail(failure);
  }
  Failure patrol_failure;
  std::optional<rapidjson::Document> patrol = ctx.FetchJson(*patrol_call, patrol_failure);
  if (ctx.console().json()) {
    rapidjson::Document out(rapidjson::kObjectType);
    Allocator& a = out.GetAllocator();
    out.AddMember("server", rapidjson::Value(ctx.server().c_str(), a), a);
    out.AddMember("health", rapidjson::Value(*health, a), a);
    out.AddMember("patrol", patrol.has_value() ? rapidjson::Value(*patrol, a) : rapidjson::Value(),
                  a);
    if (!patrol.has_value()) {
      absl::StatusOr<rapidjson::Document> envelope = ParseReplyJson(EnvelopeJson(patrol_failure));
      if (envelope.ok()) {
        out.AddMember("patrolError", rapidjson::Value(*envelope, a), a);
      }
    }
    return ctx.PrintJson(out);
  }
  const std::string patrol_error =
      patrol.has_value()
          ? std::string()
          : patrol_failure.code + ": " + patrol_failure.message +
                (patrol_failure.hint.empty() ? "" : " (" + patrol_failure.hint + ")");
  RenderStatus(ctx.console(), ctx.server(), *health, patrol.has_value() ? &*patrol : nullptr,
               patrol_error);
  return 0;
}

}  // namespace pulse::cli
