#include "pulse/core/policy/projection.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "policy_test_support.h"
#include "pulse/core/json/json.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

using testing::ChatAndExecute;
using testing::Json;
using testing::Policy;
using testing::TestRegistry;

constexpr ExecutionProfile kInteractive = ExecutionProfile::kInteractive;

std::vector<std::string> Names(const std::vector<ProjectedTool>& tools) {
  std::vector<std::string> names;
  for (const ProjectedTool& tool : tools) {
    names.push_back(tool.name);
  }
  return names;
}

const ProjectedTool* Find(const std::vector<ProjectedTool>& tools, std::string_view name) {
  for (const ProjectedTool& tool : tools) {
    if (tool.name == name) {
      return &tool;
    }
  }
  return nullptr;
}

std::vector<std::string> SchemaEnum(const ProjectedTool& tool, const char* property) {
  const rapidjson::Document schema = Json(tool.input_schema_json);
  std::vector<std::string> values;
  for (const auto& v : schema["properties"][property]["enum"].GetArray()) {
    values.emplace_back(v.GetString());
  }
  return values;
}

TEST_CASE("read_only chat is offered reads and the question, nothing that writes",
          "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  for (const ScopeSet& scopes : {ScopeSet::Of({Scope::kAiChat}), ChatAndExecute()}) {
    const std::vector<ProjectedTool> tools =
        ProjectTools(Policy(scopes, ControlLevel::kReadOnly, kInteractive), registry);
    CHECK(Names(tools) == std::vector<std::string>{"pulse_query", "pulse_read", "pulse_metrics",
                                                   "pulse_question", "patrol_get_findings",
                                                   "fleet_ops"});
    for (const ProjectedTool& tool : tools) {
      INFO(tool.name);
      CHECK(tool.action_mode == ActionMode::kRead);
      CHECK(tool.approval_policy == ApprovalPolicy::kScopeOnly);
    }
    CHECK(SchemaEnum(*Find(tools, "fleet_ops"), "op") ==
          std::vector<std::string>{"status", "Inspect", "ask"});
    CHECK(Find(tools, "pulse_question")->runs_alone);
  }
}

TEST_CASE("controlled chat with ai:execute adds pulse_control under action-plan governance",
          "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  const std::vector<ProjectedTool> tools =
      ProjectTools(Policy(ChatAndExecute(), ControlLevel::kControlled, kInteractive), registry);
  CHECK(Names(tools) == std::vector<std::string>{"pulse_query", "pulse_read", "pulse_metrics",
                                                 "pulse_control", "pulse_question",
                                                 "patrol_get_findings", "fleet_ops"});
  const ProjectedTool* control = Find(tools, "pulse_control");
  REQUIRE(control != nullptr);
  CHECK(control->action_mode == ActionMode::kWrite);
  CHECK(control->approval_policy == ApprovalPolicy::kActionPlan);
  CHECK(control->input_schema_json ==
        ToJsonString(Json(FindBuiltinTool("pulse_control")->input_schema_json)));
  const ProjectedTool* ops = Find(tools, "fleet_ops");
  REQUIRE(ops != nullptr);
  CHECK(ops->offered_values == std::vector<std::string>{"status", "Inspect", "restart", "ask"});
  CHECK(SchemaEnum(*ops, "op") == ops->offered_values);
  CHECK(ops->action_mode == ActionMode::kMixed);
  CHECK(ops->approval_policy == ApprovalPolicy::kActionPlan);
  CHECK(std::string(Json(ops->input_schema_json)["properties"]["op"]["default"].GetString()) ==
        "restart");
}

TEST_CASE("a pruned discriminator drops a default naming a removed value", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  const std::vector<ProjectedTool> tools =
      ProjectTools(Policy(ChatAndExecute(), ControlLevel::kReadOnly, kInteractive), registry);
  const rapidjson::Document schema = Json(Find(tools, "fleet_ops")->input_schema_json);
  CHECK_FALSE(schema["properties"]["op"].HasMember("default"));
  CHECK(schema["properties"]["op"].HasMember("description"));
}

TEST_CASE("patrol projections follow their profiles", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  const std::vector<ProjectedTool> detection = ProjectTools(
      Policy(ChatAndExecute(), ControlLevel::kAutonomous, ExecutionProfile::kPatrolDetection),
      registry);
  CHECK(Names(detection) == std::vector<std::string>{"pulse_query", "pulse_read", "pulse_metrics",
                                                     "patrol_get_findings", "patrol_report_finding",
                                                     "patrol_assess_finding", "fleet_ops"});
  CHECK(Find(detection, "patrol_resolve_finding") == nullptr);
  CHECK(Find(detection, "patrol_report_finding")->action_mode == ActionMode::kWrite);
  CHECK(Find(detection, "patrol_report_finding")->approval_policy == ApprovalPolicy::kScopeOnly);
  CHECK(Find(detection, "fleet_ops")->offered_values ==
        std::vector<std::string>{"status", "Inspect"});

  const std::vector<ProjectedTool> investigation = ProjectTools(
      Policy(ChatAndExecute(), ControlLevel::kAutonomous, ExecutionProfile::kPatrolInvestigation),
      registry);
  CHECK(Names(investigation) ==
        std::vector<std::string>{"pulse_query", "pulse_read", "pulse_metrics",
                                 "patrol_get_findings", "patrol_action_capabilities",
                                 "patrol_propose_action", "fleet_ops", "ext_probe"});
  for (const ProjectedTool& tool : investigation) {
    INFO(tool.name);
    CHECK(tool.action_mode == ActionMode::kRead);
  }
}

TEST_CASE("nothing is projected without ai:chat or ai:execute", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  for (ExecutionProfile profile :
       {kInteractive, ExecutionProfile::kPatrolDetection, ExecutionProfile::kPatrolInvestigation}) {
    CHECK(ProjectTools(Policy(ScopeSet::Of({Scope::kMonitoringRead, Scope::kActionsExecute}),
                              ControlLevel::kAutonomous, profile),
                       registry)
              .empty());
  }
}

TEST_CASE("every projected schema is still a valid closed tool schema", "[core][policy]") {
  const ToolRegistry registry = TestRegistry();
  for (const InvocationPolicy& policy :
       {Policy(ScopeSet::All(), ControlLevel::kAutonomous, kInteractive),
        Policy(ScopeSet::Of({Scope::kAiChat}), ControlLevel::kReadOnly, kInteractive),
        Policy(ScopeSet::All(), ControlLevel::kReadOnly, ExecutionProfile::kPatrolDetection)}) {
    for (const ProjectedTool& tool : ProjectTools(policy, registry)) {
      INFO(tool.name);
      CHECK(ValidateToolSchema(Json(tool.input_schema_json)).ok());
      CHECK(tool.description == registry.Find(tool.name)->description);
    }
  }
}

TEST_CASE("a tool whose schema does not parse is never offered", "[core][policy]") {
  ToolSpec spec = testing::FleetOpsSpec();
  spec.input_schema_json = "{not json";
  CHECK_FALSE(ProjectTool(Policy(ScopeSet::All(), ControlLevel::kAutonomous, kInteractive), spec)
                  .has_value());
  spec = testing::FleetOpsSpec();
  spec.input_schema_json = R"({"type":"object","properties":{},"additionalProperties":false})";
  CHECK_FALSE(ProjectTool(Policy(ScopeSet::All(), ControlLevel::kAutonomous, kInteractive), spec)
                  .has_value());
}

TEST_CASE("governance wire strings", "[core][policy]") {
  CHECK(ToString(ActionMode::kRead) == "read");
  CHECK(ToString(ActionMode::kMixed) == "mixed");
  CHECK(ToString(ActionMode::kWrite) == "write");
  CHECK(ToString(ApprovalPolicy::kScopeOnly) == "scope_only");
  CHECK(ToString(ApprovalPolicy::kActionPlan) == "action_plan");
}

}  // namespace
}  // namespace pulse::core
