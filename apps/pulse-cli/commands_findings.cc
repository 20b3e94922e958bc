// findings list|ack|snooze|dismiss|resolve: the manifest's finding capabilities; unsnooze and
// reopen: the server's undo routes (surface.h).
#include "commands.h"
#include "json_output.h"
#include "render.h"

namespace pulse::cli {
namespace {

rapidjson::Document FindingArgsJson(const FindingArgs& args) {
  rapidjson::Document doc(rapidjson::kObjectType);
  SetStringArg(doc, "finding_id", args.finding_id);
  return doc;
}

int Lifecycle(CommandContext& ctx, std::string_view capability, const rapidjson::Document& args) {
  return ctx.Show(CapabilityCall(capability, args),
                  [&](const rapidjson::Value& reply) { RenderSuccess(ctx.console(), reply); });
}

}  // namespace

int CmdFindingsList(CommandContext& ctx, const FindingsListArgs& args) {
  rapidjson::Document query(rapidjson::kObjectType);
  if (!args.resource_id.empty()) {
    SetStringArg(query, "resource_id", args.resource_id);
  }
  if (args.include_resolved) {
    SetStringArg(query, "include_resolved", "1");
    SetStringArg(query, "include_hidden", "1");
  }
  if (args.limit > 0) {
    SetIntArg(query, "limit", args.limit);
  }
  return ctx.Show(CapabilityCall("list_findings", query),
                  [&](const rapidjson::Value& reply) { RenderFindings(ctx.console(), reply); });
}

int CmdFindingAck(CommandContext& ctx, const FindingArgs& args) {
  return Lifecycle(ctx, "acknowledge_finding", FindingArgsJson(args));
}

int CmdFindingSnooze(CommandContext& ctx, const FindingArgs& args) {
  rapidjson::Document body = FindingArgsJson(args);
  SetIntArg(body, "duration_hours", args.hours);
  return Lifecycle(ctx, "snooze_finding", body);
}

int CmdFindingDismiss(CommandContext& ctx, const FindingArgs& args) {
  rapidjson::Document body = FindingArgsJson(args);
  SetStringArg(body, "reason", args.reason);
  if (!args.note.empty()) {
    SetStringArg(body, "note", args.note);
  }
  return Lifecycle(ctx, "dismiss_finding", body);
}

int CmdFindingResolve(CommandContext& ctx, const FindingArgs& args) {
  rapidjson::Document body = FindingArgsJson(args);
  if (!args.note.empty()) {
    SetStringArg(body, "resolution_note", args.note);
  }
  return Lifecycle(ctx, "resolve_finding", body);
}

int CmdFindingUnsnooze(CommandContext& ctx, const FindingArgs& args) {
  return ctx.Show(RouteCall("unsnooze_finding", {}, {}, OutputJson(FindingArgsJson(args))),
                  [&](const rapidjson::Value& reply) { RenderSuccess(ctx.console(), reply); });
}

int CmdFindingReopen(CommandContext& ctx, const FindingArgs& args) {
  return ctx.Show(RouteCall("reopen_finding", {}, {}, OutputJson(FindingArgsJson(args))),
                  [&](const rapidjson::Value& reply) { RenderSuccess(ctx.console(), reply); });
}

}  // namespace pulse::cli
