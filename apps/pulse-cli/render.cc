#include "render.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "human_time.h"
#include "json_output.h"
#include "render_internal.h"
#include "text_safety.h"

namespace pulse::cli {

namespace render_internal {

std::string Cut(const rapidjson::Value& v, std::string_view key, std::size_t width) {
  return SafeCell(Str(v, key), width);
}

std::string Dash(const std::string& text) { return text.empty() ? "-" : text; }

std::string When(const rapidjson::Value& v, std::string_view key, bool absolute) {
  const std::string text = Str(v, key);
  if (text.empty()) {
    return "-";
  }
  return SafeCell(HumanTime(text, absl::Now(), absolute), absolute ? 60 : 32);
}

std::string IntText(const rapidjson::Value& v, std::string_view key) {
  const std::optional<std::int64_t> n = Int(v, key);
  return n.has_value() ? std::to_string(*n) : "-";
}

const rapidjson::Value& Obj(const rapidjson::Value& v, std::string_view key) {
  static const rapidjson::Value kNull;
  const rapidjson::Value* m = Member(v, key);
  return m != nullptr && m->IsObject() ? *m : kNull;
}

const rapidjson::Value* Items(const rapidjson::Value& reply, std::string_view key) {
  if (reply.IsArray()) {
    return &reply;
  }
  const rapidjson::Value* items = Member(reply, key);
  return items != nullptr && items->IsArray() ? items : nullptr;
}

std::string Plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string StringList(const rapidjson::Value& v, std::string_view key, std::string_view sep) {
  const rapidjson::Value* a = Member(v, key);
  std::string out;
  if (a == nullptr || !a->IsArray()) {
    return out;
  }
  for (const rapidjson::Value& item : a->GetArray()) {
    out += (out.empty() ? "" : std::string(sep)) + SafeText(ScalarText(item), false);
  }
  return out;
}

}  // namespace render_internal

using namespace render_internal;  // NOLINT(google-build-using-namespace): the render helpers

namespace {

constexpr std::size_t kMaxGenericItems = 50;
constexpr int kMaxGenericDepth = 6;

void GenericLines(const Console& console, const rapidjson::Value& value, int depth,
                  const std::string& indent) {
  if (depth > kMaxGenericDepth) {
    console.Out(indent + "…\n");
    return;
  }
  if (value.IsObject()) {
    for (const auto& m : value.GetObject()) {
      const std::string key = SafeCell(ScalarText(m.name), 60);
      if (m.value.IsObject() || (m.value.IsArray() && !m.value.Empty() &&
                                 (m.value[0].IsObject() || m.value[0].IsArray()))) {
        console.Out(indent + console.PaintOut(Style::kBold, key) + ":\n");
        GenericLines(console, m.value, depth + 1, indent + "  ");
      } else if (m.value.IsArray()) {
        std::string joined;
        std::size_t n = 0;
        for (const rapidjson::Value& item : m.value.GetArray()) {
          if (n++ == kMaxGenericItems) {
            joined += ", …";
            break;
          }
          joined += (joined.empty() ? "" : ", ") + ScalarText(item);
        }
        console.Out(indent + console.PaintOut(Style::kBold, key) + ": " +
                    SafeText(joined.empty() ? "-" : joined, false) + "\n");
      } else {
        console.Out(indent + console.PaintOut(Style::kBold, key) + ": " +
                    SafeText(ScalarText(m.value), true) + "\n");
      }
    }
    return;
  }
  if (value.IsArray()) {
    std::size_t n = 0;
    for (const rapidjson::Value& item : value.GetArray()) {
      if (n++ == kMaxGenericItems) {
        console.Out(indent + "… " + std::to_string(value.Size() - kMaxGenericItems) + " more\n");
        break;
      }
      if (item.IsObject() || item.IsArray()) {
        console.Out(indent + "-\n");
        GenericLines(console, item, depth + 1, indent + "  ");
      } else {
        console.Out(indent + "- " + SafeText(ScalarText(item), false) + "\n");
      }
    }
    return;
  }
  console.Out(indent + SafeText(ScalarText(value), true) + "\n");
}

std::string FindingState(const rapidjson::Value& f) {
  if (!Str(f, "resolved_at").empty()) {
    return "resolved";
  }
  if (!Str(f, "dismissed_reason").empty()) {
    return "dismissed";
  }
  if (!Str(f, "snoozed_until").empty()) {
    return "snoozed";
  }
  if (!Str(f, "acknowledged_at").empty()) {
    return "acknowledged";
  }
  return "active";
}

}  // namespace

std::optional<Style> SeverityStyle(std::string_view severity) {
  if (severity == "critical") {
    return Style::kRed;
  }
  if (severity == "warning") {
    return Style::kYellow;
  }
  if (severity == "watch") {
    return Style::kCyan;
  }
  return Style::kDim;
}

std::optional<Style> StateStyle(std::string_view state) {
  if (state == "completed" || state == "approved" || state == "healthy" || state == "ok" ||
      state == "answered" || state == "idle" || state == "succeeded" || state == "confirmed") {
    return Style::kGreen;
  }
  if (state == "failed" || state == "rejected" || state == "error" || state == "contradicted") {
    return Style::kRed;
  }
  if (state == "pending_approval" || state == "planned" || state == "issues_found" ||
      state == "awaiting_approval" || state == "running" || state == "executing") {
    return Style::kYellow;
  }
  if (state == "expired") {
    return Style::kDim;
  }
  return std::nullopt;
}

void RenderTable(const Console& console, const std::vector<std::string>& headers,
                 const std::vector<std::vector<Cell>>& rows, std::string_view indent) {
  std::vector<std::size_t> widths(headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) {
    widths[c] = DisplayWidth(headers[c]);
    for (const std::vector<Cell>& row : rows) {
      if (c < row.size()) {
        widths[c] = std::max(widths[c], DisplayWidth(row[c].text));
      }
    }
  }
  // Fitted to the terminal: the last column (a title or message) gives up columns first, down to
  // 20, then the widest other column, down to 8; id columns (ID, RUN) last, since an id is what
  // the next command needs. Cut cells end with "…".
  const std::size_t limit = console.traits().columns;
  const auto total = [&] {
    std::size_t sum = DisplayWidth(indent);
    for (std::size_t w : widths) {
      sum += w + 2;
    }
    return sum - 2;
  };
  const auto shrink = [&](std::size_t c, std::size_t floor) {
    while (total() > limit && widths[c] > floor) {
      --widths[c];
    }
  };
  if (limit > 0 && !widths.empty() && total() > limit) {
    shrink(widths.size() - 1, 20);
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      if (headers[c] != "ID" && headers[c] != "RUN") {
        order.push_back(c);
      }
    }
    while (total() > limit) {
      std::size_t widest = widths.size();
      for (std::size_t c : order) {
        if (widths[c] > 8 && (widest == widths.size() || widths[c] > widths[widest])) {
          widest = c;
        }
      }
      if (widest == widths.size()) {
        break;
      }
      --widths[widest];
    }
  }
  const auto fit = [&](const Cell& cell, std::size_t c) {
    return DisplayWidth(cell.text) <= widths[c] ? cell
                                                : Cell{SafeCell(cell.text, widths[c]), cell.style};
  };
  const auto line = [&](const std::vector<Cell>& raw, bool header) {
    std::vector<Cell> cells;
    for (std::size_t c = 0; c < raw.size() && c < widths.size(); ++c) {
      cells.push_back(fit(raw[c], c));
    }
    std::string out(indent);
    for (std::size_t c = 0; c < headers.size(); ++c) {
      const Cell cell = c < cells.size() ? cells[c] : Cell{};
      const bool last = c + 1 == headers.size();
      const std::string pad = last ? "" : std::string(widths[c] - DisplayWidth(cell.text) + 2, ' ');
      if (header) {
        out += console.PaintOut(Style::kBold, cell.text) + pad;
      } else if (cell.style.has_value()) {
        out += console.PaintOut(*cell.style, cell.text) + pad;
      } else {
        out += cell.text + pad;
      }
    }
    console.Out(out + "\n");
  };
  std::vector<Cell> header_cells;
  header_cells.reserve(headers.size());
  for (const std::string& h : headers) {
    header_cells.push_back(Cell{h});
  }
  line(header_cells, true);
  for (const std::vector<Cell>& row : rows) {
    line(row, false);
  }
}

void RenderFields(const Console& console,
                  const std::vector<std::pair<std::string, std::string>>& fields) {
  std::size_t width = 0;
  for (const auto& [label, value] : fields) {
    width = std::max(width, DisplayWidth(label));
  }
  for (const auto& [label, value] : fields) {
    const std::string pad(width - DisplayWidth(label) + 2, ' ');
    console.Out(absl::StrCat("  ", console.PaintOut(Style::kBold, label), pad, value, "\n"));
  }
}

void RenderGeneric(const Console& console, const rapidjson::Value& value) {
  GenericLines(console, value, 0, "");
}

void RenderFindings(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value* items = Items(reply, "items");
  if (items == nullptr) {
    RenderGeneric(console, reply);
    return;
  }
  if (items->Empty()) {
    console.Out("No findings.\n");
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& f : items->GetArray()) {
    const std::string severity = Str(f, "severity");
    const std::string state = FindingState(f);
    rows.push_back({Cell{SafeCell(severity, 10), SeverityStyle(severity)}, Cell{Cut(f, "id", 40)},
                    Cell{Cut(f, "resource_id", 32)}, Cell{Cut(f, "category", 12)},
                    Cell{state, state == "active" ? std::nullopt : std::optional(Style::kDim)},
                    Cell{Cut(f, "title", 70)}});
  }
  RenderTable(console, {"SEVERITY", "ID", "RESOURCE", "CATEGORY", "STATE", "TITLE"}, rows);
  console.Out(console.PaintOut(Style::kDim, Plural(items->Size(), "finding", "findings")) + "\n");
}

void RenderCapabilities(const Console& console, const rapidjson::Value& manifest) {
  const rapidjson::Value* caps = Items(manifest, "capabilities");
  if (caps == nullptr) {
    RenderGeneric(console, manifest);
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& c : caps->GetArray()) {
    const std::string mode = Str(c, "actionMode");
    rows.push_back(
        {Cell{Cut(c, "name", 40)}, Cell{Cut(c, "method", 8) + " " + Cut(c, "path", 60)},
         Cell{Cut(c, "scope", 24)},
         Cell{SafeCell(mode, 8), mode == "write" ? std::optional(Style::kYellow) : std::nullopt},
         Cell{Cut(c, "approvalPolicy", 16)}});
  }
  RenderTable(console, {"CAPABILITY", "ROUTE", "SCOPE", "MODE", "APPROVAL"}, rows);
  console.Out(
      console.PaintOut(Style::kDim, "manifest " + Dash(Cut(manifest, "version", 20)) + ", " +
                                        Plural(caps->Size(), "capability", "capabilities")) +
      "\n");
}

namespace {

// A resource's observed status: green when it runs, red when it is down, yellow in between.
std::optional<Style> LiveStyle(std::string_view status) {
  if (status == "running" || status == "online" || status == "ok" || status == "healthy" ||
      status == "active" || status == "available") {
    return Style::kGreen;
  }
  if (status == "stopped" || status == "exited" || status == "offline" || status == "dead" ||
      status == "failed" || status == "unknown" || status == "inactive") {
    return Style::kRed;
  }
  if (status.empty()) {
    return std::nullopt;
  }
  return Style::kYellow;
}

}  // namespace

void RenderFleet(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value* items = Items(reply, "resources");
  if (items == nullptr) {
    RenderGeneric(console, reply);
    return;
  }
  if (items->Empty()) {
    console.Out("No resources match.\n");
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& r : items->GetArray()) {
    const rapidjson::Value& findings = Obj(r, "findings");
    const std::int64_t critical = Int(findings, "critical").value_or(0);
    const std::int64_t warning = Int(findings, "warning").value_or(0);
    const std::int64_t total = Int(findings, "total").value_or(0);
    std::optional<Style> style;
    if (critical > 0) {
      style = Style::kRed;
    } else if (warning > 0) {
      style = Style::kYellow;
    }
    // STATE is what the fleet observes now; INTENT what the operator declared, when it is
    // anything but the default.
    std::vector<std::string> intents;
    if (const std::string lifecycle = Str(r, "lifecycleState");
        !lifecycle.empty() && lifecycle != "active") {
      intents.push_back(SafeCell(lifecycle, 16));
    }
    if (Bool(r, "neverAutoRemediate").value_or(false)) {
      intents.emplace_back("locked");
    }
    if (Bool(r, "intentionallyOffline").value_or(false)) {
      intents.emplace_back("offline");
    }
    std::string intent;
    for (const std::string& i : intents) {
      intent += (intent.empty() ? "" : ",") + i;
    }
    const std::string live = Str(r, "status");
    rows.push_back({Cell{Cut(r, "canonicalId", 40)}, Cell{Cut(r, "resourceType", 16)},
                    Cell{Cut(r, "resourceName", 32)}, Cell{Cut(r, "technology", 16)},
                    Cell{Dash(SafeCell(live, 16)), LiveStyle(live)}, Cell{Dash(intent)},
                    Cell{total == 0 ? "-" : std::to_string(total), style},
                    Cell{IntText(r, "pendingApprovalCount")}});
  }
  RenderTable(
      console,
      {"RESOURCE", "TYPE", "NAME", "TECHNOLOGY", "STATE", "INTENT", "FINDINGS", "APPROVALS"}, rows);
  console.Out(console.PaintOut(Style::kDim, Plural(items->Size(), "resource", "resources")) + "\n");
}

void RenderAgents(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value* items = Items(reply, "agents");
  if (items == nullptr) {
    RenderGeneric(console, reply);
    return;
  }
  if (items->Empty()) {
    console.Out(
        "No host agents yet. Bind a token to a host with pulse-server token create --kind agent "
        "--host NAME, then start pulse-agent there (docs/agent.md).\n");
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& a : items->GetArray()) {
    const std::string state = Str(a, "state");
    // Connected is the healthy state; disconnected may be a restart in progress; stale means
    // the host's resources read as unknown; pending has never reported, which needs no alarm.
    std::optional<Style> style;
    if (state == "connected") {
      style = Style::kGreen;
    } else if (state == "disconnected") {
      style = Style::kYellow;
    } else if (state == "stale") {
      style = Style::kRed;
    }
    rows.push_back({Cell{Cut(a, "host", 64)}, Cell{Dash(SafeCell(state, 16)), style},
                    Cell{Dash(Cut(a, "agent_version", 24))}, Cell{When(a, "last_seen")},
                    Cell{IntText(a, "resources")}});
  }
  RenderTable(console, {"HOST", "STATE", "VERSION", "LAST SEEN", "RESOURCES"}, rows);
  std::string footer = Plural(items->Size(), "agent", "agents");
  if (const std::optional<std::int64_t> stale = Int(reply, "stale_after_seconds")) {
    footer += "; stale after " + HumanDuration(absl::Seconds(*stale)) + " without a report";
  }
  console.Out(console.PaintOut(Style::kDim, footer) + "\n");
}

void RenderResource(const Console& console, const rapidjson::Value& context,
                    const rapidjson::Value* capabilities) {
  console.Out(console.PaintOut(Style::kBold, Cut(context, "canonicalId", 120)) + "  " +
              Cut(context, "resourceName", 80) + " (" + Cut(context, "resourceType", 30) + ", " +
              Cut(context, "technology", 30) + ")\n");
  const rapidjson::Value* sections = Member(context, "contextSections");
  if (sections != nullptr && sections->IsArray()) {
    for (const rapidjson::Value& s : sections->GetArray()) {
      const std::string summary = Cut(s, "summary", 200);
      console.Out(console.PaintOut(Style::kBold, Cut(s, "title", 60)) +
                  (summary.empty() ? "" : ": " + summary) + "\n");
      const rapidjson::Value& facts = Obj(s, "facts");
      if (facts.IsObject()) {
        std::vector<std::pair<std::string, std::string>> fields;
        for (const auto& m : facts.GetObject()) {
          fields.emplace_back(SafeCell(ScalarText(m.name), 40), SafeCell(ScalarText(m.value), 160));
        }
        RenderFields(console, fields);
      }
    }
  }
  for (std::string_view list : {"activeFindings", "pendingApprovals", "recentActions"}) {
    const rapidjson::Value* items = Member(context, list);
    if (items != nullptr && items->IsArray() && !items->Empty()) {
      console.Out(console.PaintOut(Style::kBold, std::string(list)) + ":\n");
      GenericLines(console, *items, 1, "  ");
    }
  }
  const rapidjson::Value* caps =
      capabilities != nullptr ? Items(*capabilities, "capabilities") : nullptr;
  if (caps != nullptr && !caps->Empty()) {
    console.Out(console.PaintOut(Style::kBold, "Governed capabilities") + "\n");
    std::vector<std::vector<Cell>> rows;
    for (const rapidjson::Value& c : caps->GetArray()) {
      const std::string risk = Str(c, "risk");
      rows.push_back(
          {Cell{Cut(c, "name", 32)},
           Cell{SafeCell(risk, 10), risk == "high" ? std::optional(Style::kRed) : std::nullopt},
           Cell{Cut(c, "minimumApprovalLevel", 16)}, Cell{Cut(c, "description", 80)}});
    }
    RenderTable(console, {"CAPABILITY", "RISK", "APPROVAL", "DESCRIPTION"}, rows, "  ");
  }
}

void RenderSessions(const Console& console, const rapidjson::Value& reply) {
  const rapidjson::Value* items = Items(reply, "sessions");
  if (items == nullptr) {
    RenderGeneric(console, reply);
    return;
  }
  if (items->Empty()) {
    console.Out("No sessions.\n");
    return;
  }
  std::vector<std::vector<Cell>> rows;
  for (const rapidjson::Value& s : items->GetArray()) {
    const std::string status = Str(s, "status");
    rows.push_back({Cell{Cut(s, "id", 64)}, Cell{SafeCell(status, 24), StateStyle(status)},
                    Cell{IntText(s, "message_count")}, Cell{When(s, "updated_at")}});
  }
  RenderTable(console, {"SESSION", "STATUS", "MESSAGES", "UPDATED"}, rows);
}

void RenderSession(const Console& console, const rapidjson::Value& reply) {
  if (!reply.IsObject()) {
    RenderGeneric(console, reply);
    return;
  }
  const std::string status = Str(reply, "status");
  std::vector<std::pair<std::string, std::string>> fields = {
      {"session", Cut(reply, "id", 128)},
      {"status", console.PaintOut(StateStyle(status).value_or(Style::kBold), SafeCell(status, 40))},
      {"created", When(reply, "created_at", true)},
      {"updated", When(reply, "updated_at", true)},
      {"safety state", Dash(Cut(reply, "safety_state", 40))},
  };
  const rapidjson::Value& awaiting = Obj(reply, "awaiting_action");
  if (awaiting.IsObject()) {
    fields.emplace_back("awaiting", Cut(awaiting, "action_id", 128) + " (plan hash " +
                                        Cut(awaiting, "plan_hash", 160) + ")");
  }
  const rapidjson::Value& usage = Obj(reply, "usage");
  if (usage.IsObject()) {
    fields.emplace_back("usage", IntText(usage, "provider_calls") + " model calls, " +
                                     IntText(usage, "input_tokens") + " in / " +
                                     IntText(usage, "output_tokens") + " out tokens");
  }
  RenderFields(console, fields);
  const rapidjson::Value* messages = Member(reply, "messages");
  if (messages == nullptr || !messages->IsArray()) {
    return;
  }
  for (const rapidjson::Value& m : messages->GetArray()) {
    const std::string role = Str(m, "role");
    const rapidjson::Value& tool = Obj(m, "tool_result");
    if (tool.IsObject()) {
      const bool error = Bool(tool, "is_error").value_or(false);
      console.Out(console.PaintOut(Style::kDim, "  tool " + Cut(tool, "tool_name", 40) +
                                                    (error ? " (error)" : "") + ": " +
                                                    Cut(tool, "content", 120)) +
                  "\n");
      continue;
    }
    const std::string content = Str(m, "content");
    if (role == "refused_claim") {
      // The model's answer the loop refused while a change was unverified: never an answer.
      console.Out(console.PaintOut(Style::kYellow, "  refused claim (unverified, not an answer):") +
                  " " + SafeText(content, true) + "\n");
      continue;
    }
    if (!content.empty()) {
      const Style style = role == "user" ? Style::kCyan : Style::kBold;
      console.Out(console.PaintOut(style, SafeCell(role, 16) + ":") + " " +
                  SafeText(content, true) + "\n");
    }
    const rapidjson::Value* calls = Member(m, "tool_calls");
    if (calls != nullptr && calls->IsArray()) {
      for (const rapidjson::Value& c : calls->GetArray()) {
        console.Out(console.PaintOut(Style::kDim,
                                     "  → " + Cut(c, "name", 40) + " " + Cut(c, "input", 100)) +
                    "\n");
      }
    }
  }
}

void RenderSuccess(const Console& console, const rapidjson::Value& reply) {
  const std::string message = Str(reply, "message");
  console.Out(console.PaintOut(Style::kGreen, "ok") + " " +
              (message.empty() ? std::string("done") : SafeText(message, false)) + "\n");
}

namespace {

struct NextStep {
  std::string words;    // what to do, in plain words
  std::string command;  // what to type; "" when there is nothing to type
};

// The operations loop's nextAction (get_operations_loop_status) for a person at a terminal.
NextStep DescribeNextStep(std::string_view action, std::string_view server) {
  if (action == "run_patrol") {
    return {"let Patrol check the fleet", "pulse-cli patrol run"};
  }
  if (action == "review_findings") {
    return {"review what Patrol found", "pulse-cli findings"};
  }
  if (action == "open_assistant") {
    return {"ask the Assistant about a finding", "pulse-cli ask \"what should I fix first?\""};
  }
  if (action == "review_approvals") {
    return {"decide the actions waiting for your approval", "pulse-cli actions"};
  }
  if (action == "open_mcp") {
    return {"connect an MCP agent (docs/mcp.md)",
            absl::StrCat("pulse-mcp --server ", SafeCell(server, 120))};
  }
  if (action == "complete") {
    return {"none: findings were acted on and verified", ""};
  }
  return {Dash(SafeCell(action, 60)), ""};
}

}  // namespace

void RenderStatus(const Console& console, std::string_view server, const rapidjson::Value& health,
                  const rapidjson::Value* patrol, std::string_view patrol_error) {
  const std::string state = Str(health, "status");
  std::vector<std::pair<std::string, std::string>> fields = {
      {"server", SafeCell(server, 200)},
      {"health",
       console.PaintOut(StateStyle(state).value_or(Style::kRed), SafeCell(Dash(state), 40))},
  };
  if (patrol != nullptr) {
    const NextStep next = DescribeNextStep(Str(*patrol, "nextAction"), server);
    fields.emplace_back("next step", next.words);
    if (!next.command.empty()) {
      fields.emplace_back("type", console.PaintOut(Style::kBold, next.command));
    }
    fields.emplace_back("progress", Dash(Cut(*patrol, "progressLabel", 60)));
    fields.emplace_back("active findings", IntText(*patrol, "activeFindingCount"));
    fields.emplace_back("pending approvals", IntText(*patrol, "pendingApprovalCount"));
    fields.emplace_back("governed actions", IntText(*patrol, "governedActionCount"));
    fields.emplace_back("verified outcomes", IntText(*patrol, "verifiedOutcomeCount"));
  } else if (!patrol_error.empty()) {
    fields.emplace_back("patrol", console.PaintOut(Style::kDim, SafeCell(patrol_error, 200)));
  }
  RenderFields(console, fields);
}

}  // namespace pulse::cli
