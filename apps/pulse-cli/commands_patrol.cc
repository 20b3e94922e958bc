// patrol run|runs|status|autonomy: every request is a manifest capability (run_patrol,
// get_patrol_run, list_patrol_runs, get_patrol_status, get/set_patrol_autonomy,
// acknowledge/revoke_patrol_autopilot), projected the way pulse-mcp projects a tool call. `patrol
// run` starts a run (the server answers at once with its id), then reads the run record until the
// run has finished, and shows that record.
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "commands.h"
#include "render.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

// A Patrol run can include a model pass and investigations: wait far longer than a read.
constexpr absl::Duration kPatrolRunWait = absl::Minutes(10);
constexpr absl::Duration kPatrolPollInterval = absl::Milliseconds(250);

rapidjson::Value Strings(const std::vector<std::string>& items,
                         rapidjson::Document::AllocatorType& a) {
  rapidjson::Value out(rapidjson::kArrayType);
  for (const std::string& item : items) {
    out.PushBack(rapidjson::Value(item.c_str(), static_cast<rapidjson::SizeType>(item.size()), a),
                 a);
  }
  return out;
}

std::string StringMember(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? std::string(v[key].GetString())
                                                               : std::string();
}

// Reads the record of `run_id` until it is no longer running (or the wait is over).
std::optional<rapidjson::Document> AwaitRun(CommandContext& ctx, const std::string& run_id,
                                            Failure& failure) {
  rapidjson::Document args(rapidjson::kObjectType);
  SetStringArg(args, "runId", run_id);
  const absl::StatusOr<ApiCall> call = CapabilityCall("get_patrol_run", args);
  if (!call.ok()) {
    failure = LocalFailure(ExitCode::kUsage, kCodeUsage, std::string(call.status().message()));
    return std::nullopt;
  }
  const absl::Time deadline = absl::Now() + kPatrolRunWait;
  while (true) {
    std::optional<rapidjson::Document> record = ctx.FetchJson(*call, failure);
    if (!record.has_value()) {
      return std::nullopt;
    }
    const std::string status = StringMember(*record, "status");
    if (status.empty()) {
      failure = InvalidResponse("the Patrol run record has no status");
      return std::nullopt;
    }
    if (status != "running") {
      return record;
    }
    if (absl::Now() >= deadline) {
      failure = LocalFailure(ExitCode::kRefused, kCodePatrolRunPending,
                             "Patrol run " + run_id + " is still running after 10 minutes");
      failure.hint = "pulse-cli patrol runs shows it when it has finished";
      return std::nullopt;
    }
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(kPatrolPollInterval));
  }
}

}  // namespace

int CmdPatrolRun(CommandContext& ctx, const PatrolRunArgs& args) {
  rapidjson::Document scope(rapidjson::kObjectType);
  if (!args.resource_ids.empty()) {
    scope.AddMember("resource_ids", Strings(args.resource_ids, scope.GetAllocator()),
                    scope.GetAllocator());
  }
  if (!args.resource_types.empty()) {
    scope.AddMember("resource_types", Strings(args.resource_types, scope.GetAllocator()),
                    scope.GetAllocator());
  }
  const absl::StatusOr<ApiCall> call = CapabilityCall("run_patrol", scope);
  if (!call.ok()) {
    return ctx.BadCall(call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> accepted = ctx.FetchJson(*call, failure);
  if (!accepted.has_value()) {
    return ctx.Fail(failure);
  }
  const std::string run_id = StringMember(*accepted, "run_id");
  if (run_id.empty()) {
    return ctx.Fail(InvalidResponse("the server accepted the run but named no run_id"));
  }
  if (ctx.console().traits().progress) {
    ctx.console().Err(ctx.console().PaintErr(Style::kDim, "· Patrol is running…") + "\n");
  }
  std::optional<rapidjson::Document> record = AwaitRun(ctx, run_id, failure);
  if (!record.has_value()) {
    return ctx.Fail(failure);
  }
  if (ctx.console().json()) {
    ctx.PrintJson(*record);
  } else {
    RenderPatrolRun(ctx.console(), *record);
  }
  if (StringMember(*record, "status") == "error") {
    // The record is the one document printed; stderr and the exit code say the run failed.
    ctx.console().Err("pulse-cli: " + std::string(kCodePatrolRunFailed) + ": " +
                      SafeText(StringMember(*record, "error_summary"), false) + "\n");
    return static_cast<int>(ExitCode::kRefused);
  }
  return 0;
}

int CmdPatrolRuns(CommandContext& ctx) {
  return ctx.Show(CapabilityCall("list_patrol_runs", rapidjson::Value(rapidjson::kObjectType)),
                  [&](const rapidjson::Value& reply) { RenderPatrolRuns(ctx.console(), reply); });
}

int CmdPatrolStatus(CommandContext& ctx) {
  return ctx.Show(CapabilityCall("get_patrol_status", rapidjson::Value(rapidjson::kObjectType)),
                  [&](const rapidjson::Value& reply) { RenderPatrolStatus(ctx.console(), reply); });
}

int CmdPatrolAutonomyGet(CommandContext& ctx) {
  return ctx.Show(
      CapabilityCall("get_patrol_autonomy", rapidjson::Value(rapidjson::kObjectType)),
      [&](const rapidjson::Value& reply) { RenderPatrolAutonomy(ctx.console(), reply); });
}

int CmdPatrolAutonomySet(CommandContext& ctx, const PatrolAutonomyArgs& args) {
  rapidjson::Document body(rapidjson::kObjectType);
  SetStringArg(body, "autonomy_level", args.level);
  if (args.investigation_budget > 0) {
    SetIntArg(body, "investigation_budget", args.investigation_budget);
  }
  if (args.investigation_timeout_sec > 0) {
    SetIntArg(body, "investigation_timeout_sec", args.investigation_timeout_sec);
  }
  return ctx.Show(CapabilityCall("set_patrol_autonomy", body), [&](const rapidjson::Value& reply) {
    RenderPatrolAutonomy(ctx.console(), reply);
  });
}

int CmdPatrolAcknowledge(CommandContext& ctx, const PatrolAutonomyArgs& args) {
  rapidjson::Document body(rapidjson::kObjectType);
  SetStringArg(body, "acknowledgement_id", args.acknowledgement_id);
  return ctx.Show(
      CapabilityCall("acknowledge_patrol_autopilot", body), [&](const rapidjson::Value& reply) {
        const rapidjson::Value* autonomy =
            reply.IsObject() && reply.HasMember("autonomy") ? &reply["autonomy"] : nullptr;
        RenderPatrolAutonomy(ctx.console(), autonomy != nullptr ? *autonomy : reply);
      });
}

int CmdPatrolRevoke(CommandContext& ctx, const PatrolAutonomyArgs& args) {
  rapidjson::Document call_args(rapidjson::kObjectType);
  SetStringArg(call_args, "acknowledgementId", args.acknowledgement_id);
  if (!args.reason.empty()) {
    SetStringArg(call_args, "reason", args.reason);
  }
  return ctx.Show(
      CapabilityCall("revoke_patrol_autopilot", call_args), [&](const rapidjson::Value& reply) {
        const rapidjson::Value* autonomy =
            reply.IsObject() && reply.HasMember("autonomy") ? &reply["autonomy"] : nullptr;
        RenderPatrolAutonomy(ctx.console(), autonomy != nullptr ? *autonomy : reply);
      });
}

}  // namespace pulse::cli
