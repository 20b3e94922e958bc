// The action views: the approval card (from a stream event or an audit record), the action
// queue, one action's detail, and the results of a decision and an execution.
#include <cstdint>

#include "json_output.h"
#include "render.h"
#include "render_internal.h"
#include "text_safety.h"

namespace pulse::cli {

using namespace render_internal;  // NOLINT(google-build-using-namespace): the render helpers

ApprovalCard CardFromApprovalEvent(const rapidjson::Value& data) {
  const rapidjson::Value& preflight = Obj(data, "preflight");
  ApprovalCard card;
  card.action_id = Str(data, "action_id");
  card.capability = Str(data, "capability");
  card.target = Str(data, "resource_id");
  card.risk = Str(data, "risk");
  card.plan_hash = Str(data, "plan_hash");
  card.intended_change = Str(preflight, "intended_change");
  card.current_state = Str(preflight, "current_state");
  card.state = Str(data, "state");
  return card;
}

ApprovalCard CardFromAudit(const rapidjson::Value& audit) {
  const rapidjson::Value& request = Obj(audit, "request");
  const rapidjson::Value& plan = Obj(audit, "plan");
  const rapidjson::Value& preflight = Obj(plan, "preflight");
  ApprovalCard card;
  card.action_id = Str(audit, "id");
  card.capability = Str(request, "capabilityName");
  card.target = Str(request, "resourceId");
  card.risk = Str(plan, "risk");
  card.plan_hash = Str(plan, "planHash");
  const rapidjson::Value* params = Member(request, "params");
  if (params != nullptr && params->IsObject() && params->MemberCount() > 0) {
    card.params = OutputJson(*params);
  }
  card.intended_change = Str(preflight, "intendedChange");
  card.current_state = Str(preflight, "currentState");
  card.expires_at = Str(plan, "expiresAt");
  card.state = Str(audit, "state");
  return card;
}

void RenderApprovalCard(const Console& console, const ApprovalCard& card,
                        std::string_view session_id) {
  const std::string id = SafeCell(card.action_id, 128);
  const std::string capability = SafeCell(card.capability, 80);
  const std::string target = SafeCell(card.target, 120);
  console.Out(console.PaintOut(Style::kYellow, console.PaintOut(Style::kBold, "Approval needed")) +
              "\n");
  std::vector<std::pair<std::string, std::string>> fields = {
      {"action", id},
      {"capability", capability},
      {"target", target},
      {"risk", console.PaintOut(
                   card.risk == "high" || card.risk == "critical" ? Style::kRed : Style::kYellow,
                   SafeCell(Dash(card.risk), 40))},
      {"plan hash", SafeCell(Dash(card.plan_hash), 160)},
  };
  if (!card.params.empty()) {
    fields.emplace_back("params", SafeCell(card.params, 200));
  }
  if (!card.current_state.empty()) {
    fields.emplace_back("now", SafeCell(card.current_state, 200));
  }
  if (!card.intended_change.empty()) {
    fields.emplace_back("change", SafeCell(card.intended_change, 200));
  }
  if (!card.expires_at.empty()) {
    fields.emplace_back("expires", SafeCell(card.expires_at, 60));
  }
  RenderFields(console, fields);
  console.Out("  Approving authorises exactly this plan (bound to its hash): " + capability +
              " on " + target +
              ". Nothing runs until it is executed; a changed plan must be "
              "approved again.\n");
  console.Out("  approve:  pulse-cli actions approve " + id + "\n");
  console.Out("  reject:   pulse-cli actions reject " + id + "\n");
  if (!session_id.empty()) {
    console.Out("  then:     pulse-cli sessions resume " + SafeCell(session_id, 128) +
                "   (the Assistant executes and verifies it)\n");
  } else {
    console.Out("  then:     pulse-cli actions execute " + id + "\n");
  }
}

void RenderActionList(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value* items = Items(reply, "actions");
  if (items == nullptr) {
    RenderGeneric(console, reply);
    return;
  }
  const std::string view = Str(reply, "view");
  if (items->Empty()) {
    console.Out(view == "settled" ? "No settled actions.\n" : "No actions waiting.\n");
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& a : items->GetArray()) {
    const rapidjson::Value& request = Obj(a, "request");
    const rapidjson::Value& plan = Obj(a, "plan");
    const std::string state = Str(a, "state");
    rows.push_back({Cell{Cut(a, "id", 48)}, Cell{SafeCell(state, 20), StateStyle(state)},
                    Cell{Cut(request, "capabilityName", 24)}, Cell{Cut(request, "resourceId", 32)},
                    Cell{Dash(Cut(plan, "risk", 10))},
                    Cell{view == "settled" ? When(a, "updatedAt") : When(plan, "expiresAt")}});
  }
  RenderTable(console,
              {"ACTION", "STATE", "CAPABILITY", "RESOURCE", "RISK",
               view == "settled" ? "UPDATED" : "EXPIRES"},
              rows);
  console.Out(console.PaintOut(Style::kDim, Plural(items->Size(), "action", "actions")) + "\n");
}

void RenderActionDetail(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value& audit = Obj(reply, "audit");
  if (!audit.IsObject()) {
    RenderGeneric(console, reply);
    return;
  }
  const rapidjson::Value& request = Obj(audit, "request");
  const rapidjson::Value& plan = Obj(audit, "plan");
  const rapidjson::Value& preflight = Obj(plan, "preflight");
  const std::string state = Str(audit, "state");
  std::vector<std::pair<std::string, std::string>> fields = {
      {"action", Cut(audit, "id", 128)},
      {"state", console.PaintOut(StateStyle(state).value_or(Style::kBold), SafeCell(state, 40))},
      {"capability", Cut(request, "capabilityName", 80)},
      {"target", Cut(request, "resourceId", 120)},
      {"risk", Dash(Cut(plan, "risk", 20))},
      {"plan hash", Dash(Cut(plan, "planHash", 160))},
      {"reason", Dash(Cut(request, "reason", 200))},
      {"requested by", Dash(Cut(request, "requestedBy", 80))},
      {"planned", When(plan, "plannedAt", true)},
      {"expires", When(plan, "expiresAt", true)},
  };
  const rapidjson::Value* params = Member(request, "params");
  if (params != nullptr && params->IsObject() && params->MemberCount() > 0) {
    fields.emplace_back("params", SafeCell(OutputJson(*params), 200));
  }
  if (!Str(preflight, "currentState").empty()) {
    fields.emplace_back("now", Cut(preflight, "currentState", 200));
  }
  if (!Str(preflight, "intendedChange").empty()) {
    fields.emplace_back("change", Cut(preflight, "intendedChange", 200));
  }
  const std::string checks = StringList(preflight, "safetyChecks", " ");
  if (!checks.empty()) {
    fields.emplace_back("safety checks", SafeCell(checks, 300));
  }
  const rapidjson::Value& result = Obj(audit, "result");
  if (result.IsObject()) {
    const std::string execution = Str(Obj(result, "execution"), "status");
    const std::string verification = Str(Obj(result, "verification"), "status");
    fields.emplace_back("execution", console.PaintOut(StateStyle(execution).value_or(Style::kBold),
                                                      SafeCell(Dash(execution), 40)) +
                                         " " + Cut(Obj(result, "execution"), "summary", 160));
    fields.emplace_back("verification",
                        console.PaintOut(StateStyle(verification).value_or(Style::kBold),
                                         SafeCell(Dash(verification), 40)) +
                            " (" + Dash(Cut(Obj(result, "verification"), "evidenceClass", 30)) +
                            ") " + Cut(Obj(result, "verification"), "summary", 160));
  }
  const rapidjson::Value& readiness = Obj(reply, "readiness");
  if (readiness.IsObject()) {
    fields.emplace_back("readiness",
                        Dash(Cut(readiness, "code", 40)) + " " + Cut(readiness, "message", 160));
  }
  RenderFields(console, fields);
  const rapidjson::Value* events = Member(reply, "events");
  if (events != nullptr && events->IsArray() && !events->Empty()) {
    console.Out(console.PaintOut(Style::kBold, "Lifecycle") + "\n");
    std::vector<std::vector<Cell>> rows;
    for (const rapidjson::Value& e : events->GetArray()) {
      const std::string s = Str(e, "state");
      rows.push_back({Cell{When(e, "timestamp")}, Cell{SafeCell(s, 20), StateStyle(s)},
                      Cell{Cut(e, "kind", 16)}, Cell{Cut(e, "message", 80)}});
    }
    RenderTable(console, {"AT", "STATE", "KIND", "MESSAGE"}, rows, "  ");
  }
}

void RenderDecision(const Console& console, const rapidjson::Value& reply) {
  const std::string state = Str(reply, "state");
  const std::string id = Cut(reply, "actionId", 128);
  console.Out("Action " + id + " is now " +
              console.PaintOut(StateStyle(state).value_or(Style::kBold), SafeCell(state, 40)) +
              ".\n");
  if (state == "approved") {
    console.Out("  execute:  pulse-cli actions execute " + id + "\n");
  }
}

void RenderExecution(const Console& console, const rapidjson::Value& reply) {
  const std::string state = Str(reply, "state");
  const rapidjson::Value& result = Obj(reply, "result");
  const rapidjson::Value& execution = Obj(result, "execution");
  const rapidjson::Value& verification = Obj(result, "verification");
  console.Out("Action " + Cut(reply, "actionId", 128) + " is " +
              console.PaintOut(StateStyle(state).value_or(Style::kBold), SafeCell(state, 40)) +
              (Bool(reply, "replayed").value_or(false) ? " (already executed before)" : "") +
              ".\n");
  if (result.IsObject()) {
    const std::string e = Str(execution, "status");
    const std::string v = Str(verification, "status");
    RenderFields(console,
                 {{"execution",
                   console.PaintOut(StateStyle(e).value_or(Style::kBold), SafeCell(Dash(e), 40)) +
                       " " + Cut(execution, "summary", 200)},
                  {"verification",
                   console.PaintOut(StateStyle(v).value_or(Style::kBold), SafeCell(Dash(v), 40)) +
                       " (" + Dash(Cut(verification, "evidenceClass", 30)) + ") " +
                       Cut(verification, "summary", 200)}});
  }
}

void RenderPlan(const Console& console, const rapidjson::Value& plan) {
  const std::string id = Str(plan, "actionId");
  if (!plan.IsObject() || id.empty()) {
    RenderGeneric(console, plan);
    return;
  }
  const bool allowed = Bool(plan, "allowed").value_or(false);
  const bool needs_approval = Bool(plan, "requiresApproval").value_or(true);
  std::vector<std::pair<std::string, std::string>> fields = {
      {"action", SafeCell(id, 80)},
      {"allowed", allowed ? std::string("yes")
                          : console.PaintOut(Style::kRed, "no: " + Cut(plan, "message", 120))},
      {"approval", needs_approval ? "required (" + Cut(plan, "approvalPolicy", 40) + ")"
                                  : std::string("not required")},
      {"plan hash", Cut(plan, "planHash", 80)},
      {"expires", When(plan, "expiresAt", true)},
  };
  if (allowed) {
    fields.emplace_back(
        "next", console.PaintOut(Style::kBold, std::string("pulse-cli actions ") +
                                                   (needs_approval ? "approve " : "execute ") +
                                                   SafeCell(id, 80)));
  }
  RenderFields(console, fields);
}

}  // namespace pulse::cli
