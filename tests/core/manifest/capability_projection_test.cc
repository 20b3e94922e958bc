#include "pulse/core/manifest/capability_projection.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

rapidjson::Document Parse(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(text);
  REQUIRE(doc.ok());
  return std::move(doc).value();
}

const AgentCapability& Cap(std::string_view name) {
  const AgentCapability* c = FindAgentCapability(name);
  REQUIRE(c != nullptr);
  return *c;
}

absl::StatusOr<CapabilityCall> Call(std::string_view name, std::string_view args) {
  const rapidjson::Document doc = Parse(args);
  return ProjectCapabilityCall(Cap(name), doc);
}

TEST_CASE("annotations follow the action mode", "[core][manifest][projection]") {
  CHECK(AnnotationsFor(ActionMode::kRead) == ToolAnnotations{true, false, true, true});
  CHECK(AnnotationsFor(ActionMode::kMixed) == ToolAnnotations{false, false, false, true});
  CHECK(AnnotationsFor(ActionMode::kWrite) == ToolAnnotations{false, true, false, true});
  CHECK(AnnotationsFor(static_cast<ActionMode>(42)) == ToolAnnotations{true, false, true, true});
  CHECK(ProjectCapabilityTool(Cap("get_fleet_context")).annotations ==
        ToolAnnotations{true, false, true, true});
  CHECK(ProjectCapabilityTool(Cap("execute_action")).annotations ==
        ToolAnnotations{false, true, false, true});
}

TEST_CASE("tools are the contract's capabilities, never the event stream nor a human-only one",
          "[core][manifest][projection]") {
  const std::vector<CapabilityTool> tools = ProjectCapabilityTools();
  std::vector<std::string> names;
  for (const CapabilityTool& tool : tools) {
    names.push_back(tool.name);
  }
  CHECK(names == McpToolCapabilityNames());
  CHECK(std::find(names.begin(), names.end(), "subscribe_events") == names.end());
  // An agent must not acknowledge Autopilot for a human: no tool for it.
  CHECK(std::find(names.begin(), names.end(), "acknowledge_patrol_autopilot") == names.end());
  CHECK(std::find(names.begin(), names.end(), "revoke_patrol_autopilot") == names.end());
  // Nor may an agent manage API tokens (it could mint itself a human one).
  for (const char* token_route : {"list_api_tokens", "create_api_token", "revoke_api_token"}) {
    CHECK(std::find(names.begin(), names.end(), token_route) == names.end());
  }
  CHECK(names.size() == AgentCapabilities().size() - 6);
}

TEST_CASE("the description ends with the capability metadata block",
          "[core][manifest][projection]") {
  const AgentCapability& snooze = Cap("snooze_finding");
  const std::string expected =
      snooze.description +
      "\n\nPulse capability metadata:"
      "\n- category: finding"
      "\n- route: POST /api/ai/patrol/snooze"
      "\n- required scope: ai:execute"
      "\n- action mode: write"
      "\n- approval policy: scope_only"
      "\n- request body: { finding_id: string, duration_hours: number, note? }"
      "\n- response: { success: true, message: string }"
      "\n- stable error codes: invalid_finding_request, finding_not_found, "
      "finding_action_not_allowed, patrol_unavailable";
  CHECK(CapabilityToolDescription(snooze) == expected);

  // Empty items are left out.
  const std::string status = CapabilityToolDescription(Cap("get_patrol_control_status"));
  CHECK(status.find("- request body:") == std::string::npos);
  CHECK(status.find("- stable error codes:") == std::string::npos);
  CHECK(status.find("- response: AgentOperationsLoopStatus") != std::string::npos);
}

TEST_CASE("a missing title falls back to the sentence-cased name", "[core][manifest][projection]") {
  AgentCapability c = Cap("get_fleet_context");
  CHECK(ProjectCapabilityTool(c).title == "Get fleet context");
  c.title.clear();
  c.name = "list_all_things";
  CHECK(ProjectCapabilityTool(c).title == "List all things");
}

TEST_CASE("_meta carries route, scope and governance", "[core][manifest][projection]") {
  const CapabilityTool tool = ProjectCapabilityTool(Cap("decide_action"));
  const rapidjson::Document meta = Parse(tool.meta_json);
  const auto& m = meta["pulse.capability"];
  CHECK(StringViewOf(m["name"]) == "decide_action");
  CHECK(StringViewOf(m["category"]) == "action");
  CHECK(StringViewOf(m["scope"]) == "actions:approve");
  CHECK(StringViewOf(m["route"]["method"]) == "POST");
  CHECK(StringViewOf(m["route"]["path"]) == "/api/actions/{actionId}/decision");
  CHECK(StringViewOf(m["governance"]["actionMode"]) == "write");
  CHECK(StringViewOf(m["governance"]["approvalPolicy"]) == "action_plan");
  CHECK(StringViewOf(m["governance"]["approvalSummary"]) ==
        "governed action-plan approval is required before execution");
  CHECK(m["errorCodes"].Size() == DecideErrorCodes().size());
  CHECK(m.HasMember("requestBodyShape"));

  const rapidjson::Document status =
      Parse(ProjectCapabilityTool(Cap("get_patrol_control_status")).meta_json);
  CHECK_FALSE(status["pulse.capability"].HasMember("errorCodes"));
  CHECK_FALSE(status["pulse.capability"].HasMember("requestBodyShape"));
}

TEST_CASE("the tools/list JSON has one entry per tool with schemas and hints",
          "[core][manifest][projection]") {
  const rapidjson::Document tools = Parse(ProjectCapabilityToolsJson());
  REQUIRE(tools.IsArray());
  REQUIRE(tools.Size() == McpToolCapabilityNames().size());
  for (const auto& tool : tools.GetArray()) {
    INFO(StringViewOf(tool["name"]));
    CHECK(tool["inputSchema"].IsObject());
    CHECK(tool["annotations"]["openWorldHint"].GetBool());
    CHECK(tool["_meta"].HasMember("pulse.capability"));
    const AgentCapability& c = Cap(StringViewOf(tool["name"]));
    CHECK(tool.HasMember("outputSchema") == !c.output_schema.empty());
  }
  CHECK(ProjectCapabilityToolsJson() == ProjectCapabilityToolsJson());
}

TEST_CASE("path arguments are percent-encoded as one segment", "[core][manifest][projection]") {
  absl::StatusOr<CapabilityCall> call =
      Call("get_resource_context", R"({"resourceId":"vm:101/a b~c"})");
  REQUIRE(call.ok());
  CHECK(call->method == "GET");
  CHECK(call->path == "/api/agent/resource-context/vm%3A101%2Fa%20b~c");
  CHECK(call->query.empty());
  CHECK_FALSE(call->body_json.has_value());
  CHECK(call->Target() == call->path);
}

TEST_CASE("missing or non-string path arguments are named", "[core][manifest][projection]") {
  absl::StatusOr<CapabilityCall> missing = Call("decide_action", R"({"outcome":"approved"})");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "missing path argument(s): actionId");
  absl::StatusOr<CapabilityCall> number = Call("execute_action", R"({"actionId":7})");
  REQUIRE_FALSE(number.ok());
  CHECK(number.status().message() == "missing path argument(s): actionId (not a string)");
  CHECK_FALSE(Call("execute_action", R"({"actionId":""})").ok());
  CHECK_FALSE(Call("execute_action", R"({"actionId":null})").ok());
}

TEST_CASE("GET arguments become a sorted query and internal keys never leave",
          "[core][manifest][projection]") {
  absl::StatusOr<CapabilityCall> call = Call(
      "get_fleet_context",
      R"({"severity":"critical","hasFindings":true,"_approval_id":"ap-1","technology":"a&b=c",)"
      R"("nested":{"x":1},"ratio":0.5})");
  REQUIRE(call.ok());
  CHECK(call->query == std::vector<std::pair<std::string, std::string>>{{"hasFindings", "true"},
                                                                        {"severity", "critical"},
                                                                        {"technology", "a&b=c"}});
  CHECK(call->Target() ==
        "/api/agent/fleet-context?hasFindings=true&severity=critical&technology=a%26b%3Dc");
  absl::StatusOr<CapabilityCall> with_path =
      Call("get_operator_state", R"({"resourceId":"vm:1","limit":5})");
  REQUIRE(with_path.ok());
  CHECK(with_path->query == std::vector<std::pair<std::string, std::string>>{{"limit", "5"}});
}

TEST_CASE("other methods send the remaining arguments, or `body` verbatim, as JSON",
          "[core][manifest][projection]") {
  absl::StatusOr<CapabilityCall> decide =
      Call("decide_action", R"({"actionId":"act_1","outcome":"approved","_approval_id":"secret"})");
  REQUIRE(decide.ok());
  CHECK(decide->path == "/api/actions/act_1/decision");
  REQUIRE(decide->body_json.has_value());
  CHECK(*decide->body_json == R"({"outcome":"approved"})");
  CHECK(decide->query.empty());

  absl::StatusOr<CapabilityCall> execute = Call("execute_action", R"({"actionId":"act_1"})");
  REQUIRE(execute.ok());
  CHECK(*execute->body_json == "{}");

  absl::StatusOr<CapabilityCall> verbatim =
      Call("acknowledge_finding", R"({"body":{"finding_id":"f-1"},"other":1})");
  REQUIRE(verbatim.ok());
  CHECK(*verbatim->body_json == R"({"finding_id":"f-1"})");
}

TEST_CASE("streams and non-object arguments cannot be called", "[core][manifest][projection]") {
  CHECK_FALSE(Call("subscribe_events", "{}").ok());
  CHECK_FALSE(Call("get_fleet_context", "[]").ok());
}

}  // namespace
}  // namespace pulse::core
