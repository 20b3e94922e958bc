// actions list|show|approve|reject|execute: the governed action queue (server routes
// list_actions and get_action) and the manifest's decide_action and execute_action. Approval is
// bound to the plan hash the operator was shown: the decision carries it, so a plan that
// changed in between is refused by the server rather than approved unseen.
#include <algorithm>
#include <cctype>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "json_output.h"
#include "render.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

constexpr std::string_view kDefaultApproveReason = "approved with pulse-cli";
constexpr std::string_view kDefaultRejectReason = "rejected with pulse-cli";
constexpr std::string_view kDefaultExecuteReason = "executed with pulse-cli";

absl::StatusOr<ApiCall> DetailCall(const std::string& action_id) {
  return RouteCall("get_action", {{"actionId", action_id}});
}

bool Confirmed(const std::string& answer) {
  std::string a;
  for (char c : answer) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      a.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return a == "y" || a == "yes";
}

int Decide(CommandContext& ctx, const ActionArgs& args, std::string_view outcome,
           std::string_view default_reason, const std::string& plan_hash) {
  rapidjson::Document call_args(rapidjson::kObjectType);
  SetStringArg(call_args, "actionId", args.action_id);
  SetStringArg(call_args, "outcome", outcome);
  SetStringArg(call_args, "reason", args.reason.empty() ? default_reason : args.reason);
  if (!plan_hash.empty()) {
    SetStringArg(call_args, "planHash", plan_hash);
  }
  return ctx.Show(CapabilityCall("decide_action", call_args),
                  [&](const rapidjson::Value& reply) { RenderDecision(ctx.console(), reply); });
}

}  // namespace

int CmdActionsList(CommandContext& ctx, const ActionsListArgs& args) {
  std::vector<std::pair<std::string, std::string>> query = {
      {"view", args.settled ? "settled" : "pending"}};
  if (args.limit > 0) {
    query.emplace_back("limit", std::to_string(args.limit));
  }
  return ctx.Show(RouteCall("list_actions", {}, query),
                  [&](const rapidjson::Value& reply) { RenderActionList(ctx.console(), reply); });
}

namespace {

// A request id nobody else will pick: "cli-" and 16 random hex digits. A repeated plan command
// is a new request; --request-id makes a retry return the same plan.
std::string FreshRequestId() {
  std::random_device random;
  std::string id = "cli-";
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&id, absl::Hex(random() & 0xffffU, absl::kZeroPad4));
  }
  return id;
}

// Adds KEY=VALUE parameters to `params`: the value as a string, or parsed as JSON (`json`).
// Usage failures name the argument.
std::optional<Failure> AddParams(const std::vector<std::string>& items, bool json,
                                 rapidjson::Value& params, rapidjson::Document& doc) {
  const char* flag = json ? "--param-json" : "--param";
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos || key.empty() || key.size() > 128) {
      return LocalFailure(
          ExitCode::kUsage, kCodeUsage,
          std::string(flag) + " wants KEY=VALUE, got \"" + SafeCell(item, 80) + "\"");
    }
    if (params.HasMember(key.c_str())) {
      return LocalFailure(ExitCode::kUsage, kCodeUsage,
                          "parameter \"" + SafeCell(key, 80) + "\" is given twice");
    }
    rapidjson::Value value;
    const std::string text = item.substr(eq + 1);
    if (json) {
      rapidjson::Document parsed;
      parsed.Parse(text.data(), text.size());
      if (parsed.HasParseError()) {
        return LocalFailure(ExitCode::kUsage, kCodeUsage,
                            "--param-json " + SafeCell(key, 80) + ": the value is not JSON");
      }
      value.CopyFrom(parsed, doc.GetAllocator());
    } else {
      value.SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()),
                      doc.GetAllocator());
    }
    params.AddMember(rapidjson::Value(key.c_str(), doc.GetAllocator()), value, doc.GetAllocator());
  }
  return std::nullopt;
}

}  // namespace

int CmdActionPlan(CommandContext& ctx, const PlanArgs& args) {
  rapidjson::Document body(rapidjson::kObjectType);
  SetStringArg(body, "requestId", args.request_id.empty() ? FreshRequestId() : args.request_id);
  SetStringArg(body, "resourceId", args.resource_id);
  SetStringArg(body, "capabilityName", args.capability);
  SetStringArg(body, "reason", args.reason);
  SetStringArg(body, "requestedBy", "pulse-cli");
  rapidjson::Value params(rapidjson::kObjectType);
  for (const auto& [items, json] : {std::pair{&args.params, false}, {&args.json_params, true}}) {
    if (std::optional<Failure> bad = AddParams(*items, json, params, body)) {
      return ctx.Fail(*bad);
    }
  }
  body.AddMember("params", params, body.GetAllocator());
  return ctx.Show(CapabilityCall("plan_action", body),
                  [&](const rapidjson::Value& reply) { RenderPlan(ctx.console(), reply); });
}

int CmdActionShow(CommandContext& ctx, const ActionArgs& args) {
  return ctx.Show(DetailCall(args.action_id),
                  [&](const rapidjson::Value& reply) { RenderActionDetail(ctx.console(), reply); });
}

int CmdActionApprove(CommandContext& ctx, const ActionArgs& args) {
  const absl::StatusOr<ApiCall> detail_call = DetailCall(args.action_id);
  if (!detail_call.ok()) {
    return ctx.BadCall(detail_call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> detail = ctx.FetchJson(*detail_call, failure);
  if (!detail.has_value()) {
    return ctx.Fail(failure);
  }
  const rapidjson::Value* audit = Member(*detail, "audit");
  if (audit == nullptr || !audit->IsObject()) {
    return ctx.Fail(InvalidResponse("the action detail has no audit record"));
  }
  const ApprovalCard card = CardFromAudit(*audit);
  const bool decidable = card.state == "pending_approval" || card.state == "planned";
  // What the operator sees is what the decision binds to; in --json mode stdout is reserved.
  const Console shown = ctx.console().json() ? ctx.console().ToStderr() : ctx.console();
  if (decidable) {
    if (card.plan_hash.empty()) {
      return ctx.Fail(InvalidResponse("the action's plan has no plan hash"));
    }
    if (!args.yes && !ctx.console().traits().interactive) {
      return ctx.Fail(LocalFailure(
          ExitCode::kUsage, kCodeUsage,
          "approving needs a confirmation and stdin is not a terminal; review the plan with "
          "`pulse-cli actions show " +
              SafeCell(args.action_id, 128) + "` and pass --yes to approve it"));
    }
    if (!args.yes || !ctx.console().json()) {
      RenderApprovalCard(shown, card, "");
    }
    if (!args.yes) {
      ctx.console().Err("Approve " + SafeCell(card.capability, 80) + " on " +
                        SafeCell(card.target, 120) + " with plan hash " +
                        SafeCell(card.plan_hash, 160) + "? [y/N] ");
      const std::optional<std::string> answer = ctx.console().ReadLine();
      if (!answer.has_value() || !Confirmed(*answer)) {
        return ctx.Fail(
            LocalFailure(ExitCode::kRefused, kCodeNotConfirmed, "not approved: not confirmed"));
      }
    }
  }
  // A plan that is no longer decidable goes to the server anyway, which answers with the
  // stable code (action_not_pending, action_plan_expired, ...).
  return Decide(ctx, args, "approved", kDefaultApproveReason, card.plan_hash);
}

int CmdActionReject(CommandContext& ctx, const ActionArgs& args) {
  return Decide(ctx, args, "rejected", kDefaultRejectReason, "");
}

int CmdActionExecute(CommandContext& ctx, const ActionArgs& args) {
  std::string plan_hash;
  const absl::StatusOr<ApiCall> detail_call = DetailCall(args.action_id);
  if (!detail_call.ok()) {
    return ctx.BadCall(detail_call.status());
  }
  Failure failure;
  std::optional<rapidjson::Document> detail = ctx.FetchJson(*detail_call, failure);
  if (detail.has_value()) {
    const rapidjson::Value* audit = Member(*detail, "audit");
    if (audit != nullptr) {
      plan_hash = CardFromAudit(*audit).plan_hash;
    }
  } else if (failure.exit != ExitCode::kAuth) {
    // Reading the action needs actions:approve, executing it actions:execute: a token with
    // only the latter executes without binding the hash here (the server binds its approval).
    return ctx.Fail(failure);
  }
  rapidjson::Document call_args(rapidjson::kObjectType);
  SetStringArg(call_args, "actionId", args.action_id);
  SetStringArg(call_args, "reason", args.reason.empty() ? kDefaultExecuteReason : args.reason);
  if (!plan_hash.empty()) {
    SetStringArg(call_args, "planHash", plan_hash);
  }
  return ctx.Show(CapabilityCall("execute_action", call_args),
                  [&](const rapidjson::Value& reply) { RenderExecution(ctx.console(), reply); });
}

}  // namespace pulse::cli
