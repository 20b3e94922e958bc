#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/workflow_prompts.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

rapidjson::Document Parse(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(text);
  REQUIRE(doc.ok());
  return std::move(doc).value();
}

std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray()) {
    out.emplace_back(StringViewOf(v));
  }
  return out;
}

std::vector<std::string> Keys(const rapidjson::Value& object) {
  std::vector<std::string> out;
  for (const auto& m : object.GetObject()) {
    out.emplace_back(StringViewOf(m.name));
  }
  return out;
}

std::vector<std::string> CodeNames(const std::vector<AgentErrorCode>& codes) {
  std::vector<std::string> out;
  for (AgentErrorCode code : codes) {
    out.emplace_back(ToString(code));
  }
  return out;
}

const std::vector<std::string> kManifestOrder = {"get_resource_context",
                                                 "list_resource_capabilities",
                                                 "get_fleet_context",
                                                 "list_agents",
                                                 "get_patrol_control_status",
                                                 "get_operator_state",
                                                 "set_operator_state",
                                                 "clear_operator_state",
                                                 "subscribe_events",
                                                 "list_findings",
                                                 "acknowledge_finding",
                                                 "snooze_finding",
                                                 "dismiss_finding",
                                                 "resolve_finding",
                                                 "run_patrol",
                                                 "list_patrol_runs",
                                                 "get_patrol_run",
                                                 "get_patrol_status",
                                                 "get_patrol_autonomy",
                                                 "set_patrol_autonomy",
                                                 "acknowledge_patrol_autopilot",
                                                 "revoke_patrol_autopilot",
                                                 "plan_action",
                                                 "decide_action",
                                                 "execute_action",
                                                 "list_api_tokens",
                                                 "create_api_token",
                                                 "revoke_api_token"};

TEST_CASE("the catalogue passes its own validation", "[core][manifest]") {
  const absl::Status status = ValidateManifest();
  INFO(status.ToString());
  CHECK(status.ok());
}

TEST_CASE("the catalogue serves context, operator state, events, findings, Patrol and actions only",
          "[core][manifest]") {
  std::vector<std::string> names;
  for (const AgentCapability& c : AgentCapabilities()) {
    names.push_back(c.name);
  }
  CHECK(names == kManifestOrder);
  CHECK(FindAgentCapability("add_node") == nullptr);
  CHECK(FindAgentCapability("list_nodes") == nullptr);
  REQUIRE(FindAgentCapability("plan_action") != nullptr);
  CHECK(FindAgentCapability("plan_action")->name == "plan_action");
}

TEST_CASE("routes, scopes and governance follow the wire catalogue", "[core][manifest]") {
  struct Row {
    const char* name;
    const char* method;
    const char* path;
    const char* scope;
    const char* mode;
    const char* policy;
    const char* category;
  };
  const Row rows[] = {
      {"get_resource_context", "GET", "/api/agent/resource-context/{resourceId}", "monitoring:read",
       "read", "scope_only", "context"},
      {"list_resource_capabilities", "GET", "/api/agent/resource-capabilities/{resourceId}",
       "monitoring:read", "read", "scope_only", "context"},
      {"get_fleet_context", "GET", "/api/agent/fleet-context", "monitoring:read", "read",
       "scope_only", "context"},
      {"list_agents", "GET", "/api/agents", "monitoring:read", "read", "scope_only", "context"},
      {"get_patrol_control_status", "GET", "/api/agent/patrol-control/status", "monitoring:read",
       "read", "scope_only", "context"},
      {"get_operator_state", "GET", "/api/resources/{resourceId}/operator-state", "monitoring:read",
       "read", "scope_only", "operator-state"},
      {"set_operator_state", "PUT", "/api/resources/{resourceId}/operator-state",
       "monitoring:write", "write", "scope_only", "operator-state"},
      {"clear_operator_state", "DELETE", "/api/resources/{resourceId}/operator-state",
       "monitoring:write", "write", "scope_only", "operator-state"},
      {"subscribe_events", "GET", "/api/agent/events", "monitoring:read", "read", "scope_only",
       "context"},
      {"list_findings", "GET", "/api/ai/patrol/findings", "ai:execute", "read", "scope_only",
       "finding"},
      {"acknowledge_finding", "POST", "/api/ai/patrol/acknowledge", "ai:execute", "write",
       "scope_only", "finding"},
      {"snooze_finding", "POST", "/api/ai/patrol/snooze", "ai:execute", "write", "scope_only",
       "finding"},
      {"dismiss_finding", "POST", "/api/ai/patrol/dismiss", "ai:execute", "write", "scope_only",
       "finding"},
      {"resolve_finding", "POST", "/api/ai/patrol/resolve", "ai:execute", "write", "scope_only",
       "finding"},
      {"acknowledge_patrol_autopilot", "POST", "/api/ai/patrol/autonomy/acknowledgements",
       "settings:write", "write", "scope_only", "patrol"},
      {"revoke_patrol_autopilot", "DELETE",
       "/api/ai/patrol/autonomy/acknowledgements/{acknowledgementId}", "settings:write", "write",
       "scope_only", "patrol"},
      {"plan_action", "POST", "/api/actions/plan", "actions:plan", "write", "action_plan",
       "action"},
      {"decide_action", "POST", "/api/actions/{actionId}/decision", "actions:approve", "write",
       "action_plan", "action"},
      {"execute_action", "POST", "/api/actions/{actionId}/execute", "actions:execute", "write",
       "action_plan", "action"},
      {"list_api_tokens", "GET", "/api/security/tokens", "settings:write", "read", "scope_only",
       "security"},
      {"create_api_token", "POST", "/api/security/tokens", "settings:write", "write", "scope_only",
       "security"},
      {"revoke_api_token", "DELETE", "/api/security/tokens/{tokenId}", "settings:write", "write",
       "scope_only", "security"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    const AgentCapability* c = FindAgentCapability(row.name);
    REQUIRE(c != nullptr);
    CHECK(c->method == row.method);
    CHECK(c->path == row.path);
    CHECK(ToString(c->scope) == row.scope);
    CHECK(ToString(c->action_mode) == row.mode);
    CHECK(ToString(c->approval_policy) == row.policy);
    CHECK(c->category == row.category);
  }
}

TEST_CASE("error codes are the advertised sets from the closed vocabulary", "[core][manifest]") {
  CHECK(CodeNames(FindAgentCapability("get_resource_context")->error_codes) ==
        std::vector<std::string>{"resource_not_found"});
  CHECK(CodeNames(FindAgentCapability("get_operator_state")->error_codes) ==
        std::vector<std::string>{"operator_state_not_set"});
  CHECK(CodeNames(FindAgentCapability("set_operator_state")->error_codes) ==
        std::vector<std::string>{"operator_state_invalid"});
  CHECK(FindAgentCapability("get_fleet_context")->error_codes.empty());
  for (const char* name :
       {"acknowledge_finding", "snooze_finding", "dismiss_finding", "resolve_finding"}) {
    CHECK(FindAgentCapability(name)->error_codes == FindingErrorCodes());
    CHECK(FindAgentCapability(name)->body_error_code == AgentErrorCode::kInvalidFindingRequest);
  }
  CHECK(FindAgentCapability("plan_action")->error_codes == PlanErrorCodes());
  CHECK(FindAgentCapability("decide_action")->error_codes == DecideErrorCodes());
  CHECK(FindAgentCapability("execute_action")->error_codes == ExecuteErrorCodes());
  CHECK(FindAgentCapability("decide_action")->body_error_code ==
        AgentErrorCode::kInvalidActionDecision);
  CHECK(FindAgentCapability("execute_action")->body_error_code ==
        AgentErrorCode::kInvalidActionExecution);
  const auto& transport = TransportErrorCodes();
  for (const AgentCapability& c : AgentCapabilities()) {
    INFO(c.name);
    CHECK(TakesBody(c) == c.body_error_code.has_value());
    for (AgentErrorCode code : c.error_codes) {
      CHECK(ParseAgentErrorCode(ToString(code)) == code);
      CHECK(std::find(transport.begin(), transport.end(), code) == transport.end());
    }
  }
}

TEST_CASE("the document has the top-level shape of the wire manifest", "[core][manifest]") {
  const rapidjson::Document doc = Parse(ManifestJson());
  REQUIRE(doc.IsObject());
  const std::set<std::string> keys = [&] {
    const std::vector<std::string> k = Keys(doc);
    return std::set<std::string>(k.begin(), k.end());
  }();
  CHECK(keys == std::set<std::string>{"version", "surfaceContract", "surfaceToolContracts",
                                      "mcpAdapter", "requiredScopes", "categories",
                                      "workflowPrompts", "capabilities"});
  CHECK(StringViewOf(doc["version"]) == "v1");
  CHECK(Strings(doc["requiredScopes"]) ==
        std::vector<std::string>{"monitoring:read", "monitoring:write", "settings:write",
                                 "ai:execute", "actions:plan", "actions:approve",
                                 "actions:execute"});
  std::vector<std::string> categories;
  for (const auto& c : doc["categories"].GetArray()) {
    categories.emplace_back(StringViewOf(c["id"]));
    CHECK(c.HasMember("label"));
  }
  CHECK(categories == std::vector<std::string>{"context", "operator-state", "finding", "patrol",
                                               "action", "security"});
  const auto& surfaces = doc["surfaceContract"]["operatorSurfaces"];
  REQUIRE(surfaces.Size() == 2);
  CHECK(StringViewOf(surfaces[0]["id"]) == "pulse_assistant");
  CHECK(surfaces[0]["native"].GetBool());
  CHECK(surfaces[0]["affordances"]["interactiveQuestions"].GetBool());
  CHECK_FALSE(surfaces[0]["affordances"].HasMember("resources"));
  CHECK(StringViewOf(surfaces[1]["id"]) == "pulse_mcp");
  CHECK(surfaces[1]["externalAdapter"].GetBool());
  CHECK(StringViewOf(doc["surfaceContract"]["core"]["id"]) == "pulse_intelligence_core");
  CHECK(StringViewOf(doc["surfaceContract"]["proactiveEngine"]["id"]) == "pulse_patrol");
}

TEST_CASE("the one MCP tool contract lists every request/response capability", "[core][manifest]") {
  const rapidjson::Document doc = Parse(ManifestJson());
  const auto& contracts = doc["surfaceToolContracts"];
  REQUIRE(contracts.Size() == 1);
  const auto& contract = contracts[0];
  CHECK(StringViewOf(contract["surfaceId"]) == "pulse_mcp");
  CHECK(StringViewOf(contract["surfaceLabel"]) == "Pulse MCP");
  CHECK(StringViewOf(contract["toolSource"]) == "capability_manifest");
  std::vector<std::string> expected = kManifestOrder;
  for (const char* not_a_tool :
       {"subscribe_events", "acknowledge_patrol_autopilot", "revoke_patrol_autopilot",
        "list_api_tokens", "create_api_token", "revoke_api_token"}) {
    expected.erase(std::find(expected.begin(), expected.end(), not_a_tool));
  }
  CHECK(Strings(contract["toolNames"]) == expected);
  CHECK(Strings(contract["capabilityNames"]) == expected);
  CHECK(McpToolCapabilityNames() == expected);
  const auto& affordances = contract["affordances"];
  for (const char* flag : {"tools", "resources", "prompts", "capabilityMetadata"}) {
    CHECK(affordances[flag].GetBool());
  }
  const auto& mcp = doc["mcpAdapter"];
  CHECK(StringViewOf(mcp["serverName"]) == "pulse");
  CHECK(StringViewOf(mcp["command"]) == "pulse-mcp");
  CHECK(StringViewOf(mcp["baseUrlFlag"]) == "--server");
  CHECK(StringViewOf(mcp["defaultBaseUrl"]) == "http://127.0.0.1:7655");
  CHECK(StringViewOf(mcp["tokenEnv"]) == "PULSE_API_TOKEN");
  CHECK(mcp["configFamilies"].Size() == 3);
}

TEST_CASE("every capability object carries the wire fields", "[core][manifest]") {
  const rapidjson::Document doc = Parse(ManifestJson());
  const auto& capabilities = doc["capabilities"];
  REQUIRE(capabilities.Size() == kManifestOrder.size());
  const std::set<std::string> allowed = {"name",
                                         "title",
                                         "description",
                                         "category",
                                         "method",
                                         "path",
                                         "scope",
                                         "actionMode",
                                         "approvalPolicy",
                                         "responseShape",
                                         "requestBodyShape",
                                         "inputSchema",
                                         "outputSchema",
                                         "errorCodes"};
  for (rapidjson::SizeType i = 0; i < capabilities.Size(); ++i) {
    const auto& c = capabilities[i];
    INFO(kManifestOrder[i]);
    CHECK(StringViewOf(c["name"]) == kManifestOrder[i]);
    for (const char* required : {"name", "title", "description", "category", "method", "path",
                                 "scope", "actionMode", "approvalPolicy", "inputSchema"}) {
      CHECK(c.HasMember(required));
    }
    for (const std::string& key : Keys(c)) {
      CHECK(allowed.count(key) == 1);
    }
    CHECK(StringViewOf(c["inputSchema"]["type"]) == "object");
    const AgentCapability* cap = FindAgentCapability(kManifestOrder[i]);
    CHECK(c.HasMember("errorCodes") == !cap->error_codes.empty());
    CHECK(c.HasMember("requestBodyShape") == TakesBody(*cap));
  }
}

TEST_CASE("the manifest bytes are canonical and identical on every call", "[core][manifest]") {
  const std::string& first = ManifestJson();
  const rapidjson::Document doc = Parse(first);
  CHECK(CanonicalJson(doc) == first);
  CHECK(ManifestJson() == first);
  CHECK(&ManifestJson() == &first);
}

TEST_CASE("explicit input schemas are closed, the fallback open with required path args",
          "[core][manifest]") {
  for (const AgentCapability& c : AgentCapabilities()) {
    INFO(c.name);
    const rapidjson::Document schema = Parse(InputSchemaJson(c));
    if (c.input_schema.empty()) {
      CHECK(schema["additionalProperties"].GetBool());
    } else if (c.open_members.empty()) {
      CHECK(ValidateToolSchema(schema).ok());
    }
  }
  const rapidjson::Document fallback =
      Parse(InputSchemaJson(*FindAgentCapability("get_resource_context")));
  CHECK(Strings(fallback["required"]) == std::vector<std::string>{"resourceId"});
  CHECK(StringViewOf(fallback["properties"]["resourceId"]["type"]) == "string");
  const rapidjson::Document empty =
      Parse(InputSchemaJson(*FindAgentCapability("get_patrol_control_status")));
  CHECK(empty["properties"].ObjectEmpty());
  CHECK_FALSE(empty.HasMember("required"));
  const rapidjson::Document plan = Parse(InputSchemaJson(*FindAgentCapability("plan_action")));
  CHECK_FALSE(plan["additionalProperties"].GetBool());
  CHECK(plan["properties"]["params"]["additionalProperties"].GetBool());
}

TEST_CASE("a body schema no longer requires the path placeholders", "[core][manifest]") {
  const rapidjson::Document decide = Parse(BodySchemaJson(*FindAgentCapability("decide_action")));
  CHECK(Strings(decide["required"]) == std::vector<std::string>{"outcome"});
  CHECK(decide["properties"].HasMember("actionId"));
  const rapidjson::Document execute = Parse(BodySchemaJson(*FindAgentCapability("execute_action")));
  CHECK_FALSE(execute.HasMember("required"));
  const rapidjson::Document state =
      Parse(BodySchemaJson(*FindAgentCapability("set_operator_state")));
  CHECK(Strings(state["required"]) ==
        std::vector<std::string>{"intentionallyOffline", "neverAutoRemediate"});
  CHECK(BodySchemaJson(*FindAgentCapability("get_fleet_context")).empty());
}

TEST_CASE("approval summaries follow mode and policy", "[core][manifest]") {
  CHECK(ApprovalSummary(*FindAgentCapability("get_fleet_context")) == "no approval required");
  CHECK(ApprovalSummary(*FindAgentCapability("snooze_finding")) ==
        "required scope is sufficient; no action-plan approval is required");
  CHECK(ApprovalSummary(*FindAgentCapability("execute_action")) ==
        "governed action-plan approval is required before execution");
}

TEST_CASE("validation refuses capabilities that would break the surface", "[core][manifest]") {
  const AgentCapability good = *FindAgentCapability("decide_action");
  REQUIRE(ValidateAgentCapability(good).ok());

  AgentCapability bad_path = good;
  bad_path.path = "/api/actions/{action-id}/decision";
  CHECK_FALSE(ValidateAgentCapability(bad_path).ok());

  AgentCapability unknown_code = good;
  unknown_code.error_codes.push_back(static_cast<AgentErrorCode>(9999));
  CHECK_FALSE(ValidateAgentCapability(unknown_code).ok());

  AgentCapability repeated_code = good;
  repeated_code.error_codes.push_back(repeated_code.error_codes.front());
  CHECK_FALSE(ValidateAgentCapability(repeated_code).ok());

  AgentCapability transport_code = good;
  transport_code.error_codes.push_back(AgentErrorCode::kUnauthorized);
  CHECK_FALSE(ValidateAgentCapability(transport_code).ok());

  AgentCapability no_body_code = good;
  no_body_code.body_error_code.reset();
  CHECK_FALSE(ValidateAgentCapability(no_body_code).ok());

  AgentCapability open_schema = good;
  open_schema.input_schema =
      R"({"type":"object","additionalProperties":true,"properties":{"actionId":{"type":"string"}},"required":["actionId"]})";
  CHECK_FALSE(ValidateAgentCapability(open_schema).ok());

  AgentCapability placeholder_not_declared = good;
  placeholder_not_declared.input_schema =
      R"({"type":"object","additionalProperties":false,"properties":{"outcome":{"type":"string"}}})";
  CHECK_FALSE(ValidateAgentCapability(placeholder_not_declared).ok());

  AgentCapability bad_pattern = good;
  bad_pattern.input_schema =
      R"({"type":"object","additionalProperties":false,"properties":{"actionId":{"type":"string","pattern":"(["}},"required":["actionId"]})";
  CHECK_FALSE(ValidateAgentCapability(bad_pattern).ok());

  AgentCapability bad_category = good;
  bad_category.category = "provisioning";
  CHECK_FALSE(ValidateAgentCapability(bad_category).ok());

  AgentCapability get_with_body = *FindAgentCapability("get_fleet_context");
  get_with_body.body_error_code = AgentErrorCode::kInvalidRequest;
  CHECK_FALSE(ValidateAgentCapability(get_with_body).ok());
}

}  // namespace
}  // namespace pulse::core
