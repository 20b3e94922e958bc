// The Patrol views: one run record, the run history, the status and the autonomy settings.
#include <string>
#include <utility>
#include <vector>

#include "human_time.h"
#include "json_output.h"
#include "render.h"
#include "render_internal.h"
#include "text_safety.h"

namespace pulse::cli {

using namespace render_internal;  // NOLINT(google-build-using-namespace): the render helpers

namespace {

// The schedule's interval_ms in words: "15 min".
std::string IntervalText(const rapidjson::Value& reply) {
  const rapidjson::Value* ms = Member(reply, "interval_ms");
  if (ms == nullptr || !ms->IsInt64() || ms->GetInt64() < 0) {
    return "-";
  }
  return HumanDuration(absl::Milliseconds(ms->GetInt64()));
}

std::string YesNo(const rapidjson::Value& v, std::string_view key) {
  const std::optional<bool> b = Bool(v, key);
  return b.has_value() ? (*b ? "yes" : "no") : "-";
}

}  // namespace

void RenderPatrolRun(const Console& console, const rapidjson::Value& reply) {
  if (!reply.IsObject() || Str(reply, "status").empty()) {
    RenderGeneric(console, reply);
    return;
  }
  const std::string status = Str(reply, "status");
  std::vector<std::pair<std::string, std::string>> fields = {
      {"run", Dash(Cut(reply, "id", 128))},
      {"status", console.PaintOut(StateStyle(status).value_or(Style::kBold), SafeCell(status, 40))},
  };
  if (!Str(reply, "autonomy_level").empty()) {
    fields.emplace_back("autonomy", Cut(reply, "autonomy_level", 20));
  }
  const std::pair<std::string_view, std::string_view> counts[] = {
      {"resources_checked", "resources checked"},
      {"new_findings", "new findings"},
      {"existing_findings", "still present"},
      {"resolved_findings", "resolved"},
  };
  for (const auto& [key, label] : counts) {
    if (Int(reply, key).has_value()) {
      fields.emplace_back(std::string(label), IntText(reply, key));
    }
  }
  const std::pair<std::string_view, std::string_view> texts[] = {
      {"findings_summary", "summary"},
      {"error_summary", "error"},
      {"model_pass_skipped_reason", "model pass skipped"},
  };
  for (const auto& [key, label] : texts) {
    if (!Str(reply, key).empty()) {
      fields.emplace_back(std::string(label), Cut(reply, key, 200));
    }
  }
  RenderFields(console, fields);
  const rapidjson::Value* remediations = Member(reply, "remediations");
  if (remediations != nullptr && remediations->IsArray() && !remediations->Empty()) {
    std::vector<std::vector<Cell>> rows;
    for (const rapidjson::Value& m : remediations->GetArray()) {
      const std::string outcome = Str(m, "outcome");
      rows.push_back({Cell{Cut(m, "finding_id", 24)},
                      Cell{SafeCell(outcome, 28), StateStyle(outcome)},
                      Cell{Dash(Cut(m, "action_id", 48))}, Cell{Dash(Cut(m, "note", 60))}});
    }
    console.Out("\n");
    RenderTable(console, {"FINDING", "REMEDIATION", "ACTION", "NOTE"}, rows);
  }
  const std::string analysis = Str(reply, "ai_analysis");
  if (!analysis.empty()) {
    console.Out("\n" + SafeText(analysis, true) + "\n");
  }
}

void RenderPatrolRuns(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value* items = Items(reply, "runs");
  if (items == nullptr) {
    RenderGeneric(console, reply);
    return;
  }
  if (items->Empty()) {
    console.Out("No Patrol runs yet.\n");
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& r : items->GetArray()) {
    const std::string status = Str(r, "status");
    rows.push_back({Cell{Cut(r, "id", 48)}, Cell{SafeCell(status, 20), StateStyle(status)},
                    Cell{Dash(Cut(r, "trigger_reason", 12))}, Cell{When(r, "started_at")},
                    Cell{IntText(r, "new_findings")}, Cell{IntText(r, "existing_findings")},
                    Cell{IntText(r, "resolved_findings")}});
  }
  RenderTable(console, {"RUN", "STATUS", "TRIGGER", "STARTED", "NEW", "PRESENT", "RESOLVED"}, rows);
  console.Out(console.PaintOut(Style::kDim, Plural(items->Size(), "run", "runs")) + "\n");
}

void RenderPatrolStatus(const Console& console, const rapidjson::Value& reply) {
  if (!reply.IsObject() || !Bool(reply, "running").has_value()) {
    RenderGeneric(console, reply);
    return;
  }
  std::string state = Dash(Cut(reply, "runtime_state", 12));
  if (!Str(reply, "blocked_reason").empty()) {
    state += " (" + Cut(reply, "blocked_reason", 32) + ")";
  }
  std::vector<std::pair<std::string, std::string>> fields = {
      {"state", state},
      {"running", YesNo(reply, "running")},
      {"schedule", Bool(reply, "enabled").value_or(false) ? "every " + IntervalText(reply)
                                                          : std::string("manual runs only")},
      {"model pass", Bool(reply, "model_configured").value_or(false)
                         ? std::string("available")
                         : std::string("no provider configured")},
      {"autonomy", Dash(Cut(reply, "autonomy_level", 20))},
  };
  if (!Str(reply, "next_patrol_at").empty()) {
    fields.emplace_back("next run", When(reply, "next_patrol_at", true));
  }
  if (!Str(reply, "last_run_id").empty()) {
    const std::string last = Str(reply, "last_status");
    fields.emplace_back("last run", Cut(reply, "last_run_id", 48) + " " +
                                        console.PaintOut(StateStyle(last).value_or(Style::kBold),
                                                         SafeCell(last, 20)));
    fields.emplace_back("active findings", IntText(reply, "findings_count"));
  }
  if (!Str(reply, "last_patrol_at").empty()) {
    fields.emplace_back("last full patrol", When(reply, "last_patrol_at", true));
  }
  RenderFields(console, fields);
}

void RenderPatrolAutonomy(const Console& console, const rapidjson::Value& reply) {
  if (!reply.IsObject() || Str(reply, "effective_autonomy_level").empty()) {
    RenderGeneric(console, reply);
    return;
  }
  std::vector<std::pair<std::string, std::string>> fields = {
      {"effective level",
       console.PaintOut(Style::kBold, Cut(reply, "effective_autonomy_level", 20))},
      {"saved level", Dash(Cut(reply, "requested_autonomy_level", 20))},
      {"Autopilot unlocked", YesNo(reply, "full_mode_unlocked")},
  };
  const rapidjson::Value& ack = Obj(reply, "autopilot_acknowledgement");
  if (ack.IsObject()) {
    fields.emplace_back("acknowledgement", Cut(ack, "acknowledgement_id", 80) + " by " +
                                               Cut(ack, "actor_id", 40) + " at " +
                                               When(ack, "acknowledged_at", true));
  }
  fields.emplace_back("investigation budget", IntText(reply, "investigation_budget"));
  fields.emplace_back("investigation timeout", IntText(reply, "investigation_timeout_sec") + " s");
  RenderFields(console, fields);
}

}  // namespace pulse::cli
