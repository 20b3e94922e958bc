// Human-readable views of the server's JSON replies. Every string that came from the server
// goes through SafeText/SafeCell before it is printed; colours only where the Console allows.
// A reply of an unexpected shape is still shown (RenderGeneric) rather than refused, so a
// newer server stays usable. Functions write to the console; they keep no state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "console.h"
#include "rapidjson/document.h"

namespace pulse::cli {

struct Cell {
  std::string text;  // already safe
  std::optional<Style> style = std::nullopt;
};

// Columns padded to their widest cell; a bold header row; every line starts with `indent`.
void RenderTable(const Console& console, const std::vector<std::string>& headers,
                 const std::vector<std::vector<Cell>>& rows, std::string_view indent = "");
// "  label   value" lines, labels aligned; values already safe.
void RenderFields(const Console& console,
                  const std::vector<std::pair<std::string, std::string>>& fields);
// Any JSON as indented "key: value" lines (bounded: long arrays and deep nesting elided).
void RenderGeneric(const Console& console, const rapidjson::Value& value);

// What a plan asks a human to decide, from an approval_needed event (snake_case) or from an
// action's audit record (camelCase).
struct ApprovalCard {
  std::string action_id;
  std::string capability;
  std::string target;
  std::string risk;
  std::string plan_hash;
  std::string params;
  std::string intended_change;
  std::string current_state;
  std::string expires_at;
  std::string state;
};
ApprovalCard CardFromApprovalEvent(const rapidjson::Value& data);
ApprovalCard CardFromAudit(const rapidjson::Value& audit);
// The card; `session_id` (may be "") adds how to let the Assistant continue.
void RenderApprovalCard(const Console& console, const ApprovalCard& card,
                        std::string_view session_id);

void RenderFindings(const Console& console, const rapidjson::Value& reply);
void RenderActionList(const Console& console, const rapidjson::Value& reply);
void RenderActionDetail(const Console& console, const rapidjson::Value& reply);
// A new plan (plan_action's reply) and the command that takes it further.
void RenderPlan(const Console& console, const rapidjson::Value& plan);
void RenderDecision(const Console& console, const rapidjson::Value& reply);
void RenderExecution(const Console& console, const rapidjson::Value& reply);
void RenderCapabilities(const Console& console, const rapidjson::Value& manifest);
void RenderFleet(const Console& console, const rapidjson::Value& reply);
// list_agents' reply: one row per host agent (host, state, version, last seen, resources).
void RenderAgents(const Console& console, const rapidjson::Value& reply);
void RenderResource(const Console& console, const rapidjson::Value& context,
                    const rapidjson::Value* capabilities);
void RenderSessions(const Console& console, const rapidjson::Value& reply);
void RenderSession(const Console& console, const rapidjson::Value& reply);
// A Patrol run record: counts, summary, remediations, the model's analysis.
void RenderPatrolRun(const Console& console, const rapidjson::Value& reply);
// The run history (newest first), the Patrol status, the autonomy settings.
void RenderPatrolRuns(const Console& console, const rapidjson::Value& reply);
void RenderPatrolStatus(const Console& console, const rapidjson::Value& reply);
void RenderPatrolAutonomy(const Console& console, const rapidjson::Value& reply);
// {success, message}: the message, or "done".
void RenderSuccess(const Console& console, const rapidjson::Value& reply);
void RenderStatus(const Console& console, std::string_view server, const rapidjson::Value& health,
                  const rapidjson::Value* patrol, std::string_view patrol_error);

// The colour of a finding severity or an action/run state.
std::optional<Style> SeverityStyle(std::string_view severity);
std::optional<Style> StateStyle(std::string_view state);

}  // namespace pulse::cli
