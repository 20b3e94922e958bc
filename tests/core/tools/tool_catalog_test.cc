#include "pulse/core/tools/tool_catalog.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_schema.h"
#include "tools_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;

std::string_view View(const rapidjson::Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

bool TypeIncludes(const rapidjson::Value& node, std::string_view type) {
  auto it = node.FindMember("type");
  if (it == node.MemberEnd()) {
    return false;
  }
  if (it->value.IsString()) {
    return View(it->value) == type;
  }
  for (const auto& t : it->value.GetArray()) {
    if (View(t) == type) {
      return true;
    }
  }
  return false;
}

// An independent closedness walk (it does not reuse ValidateToolSchema): every object level
// sets additionalProperties:false, or is a map whose values are scalars with maxProperties.
void ExpectClosed(const rapidjson::Value& node, const std::string& path) {
  INFO("schema node " << path);
  REQUIRE(node.IsObject());
  CHECK_FALSE(node.HasMember("patternProperties"));
  CHECK_FALSE(node.HasMember("$ref"));
  CHECK((node.HasMember("type") || node.HasMember("enum")));
  if (TypeIncludes(node, "object")) {
    REQUIRE(node.HasMember("additionalProperties"));
    const rapidjson::Value& additional = node["additionalProperties"];
    if (additional.IsObject()) {
      CHECK(node.HasMember("maxProperties"));
      CHECK_FALSE(TypeIncludes(additional, "object"));
      CHECK_FALSE(TypeIncludes(additional, "array"));
      CHECK(additional.HasMember("type"));
    } else {
      CHECK(additional.IsFalse());
    }
    if (node.HasMember("properties")) {
      for (const auto& p : node["properties"].GetObject()) {
        ExpectClosed(p.value, path + "/properties/" + std::string(View(p.name)));
      }
    }
  }
  if (TypeIncludes(node, "array")) {
    REQUIRE(node.HasMember("items"));
    REQUIRE(node["items"].IsObject());
    ExpectClosed(node["items"], path + "/items");
  }
}

// Every string/number/array at any level carries an upper bound.
void ExpectBounded(const rapidjson::Value& node, const std::string& path) {
  INFO("schema node " << path);
  if (TypeIncludes(node, "string") && !node.HasMember("enum")) {
    CHECK((node.HasMember("maxLength") || node.HasMember("pattern")));
  }
  if (TypeIncludes(node, "integer") || TypeIncludes(node, "number")) {
    CHECK(node.HasMember("maximum"));
    CHECK(node.HasMember("minimum"));
  }
  if (TypeIncludes(node, "array")) {
    CHECK(node.HasMember("maxItems"));
    ExpectBounded(node["items"], path + "/items");
  }
  if (node.HasMember("properties")) {
    for (const auto& p : node["properties"].GetObject()) {
      ExpectBounded(p.value, path + "/properties/" + std::string(View(p.name)));
    }
  }
  if (node.HasMember("additionalProperties") && node["additionalProperties"].IsObject()) {
    ExpectBounded(node["additionalProperties"], path + "/additionalProperties");
  }
}

const rapidjson::Value& Property(const rapidjson::Document& schema, std::string_view name) {
  const std::string key(name);
  REQUIRE(schema["properties"].HasMember(key.c_str()));
  return schema["properties"][key.c_str()];
}

template <std::size_t N>
void ExpectEnum(std::string_view tool, std::string_view property,
                const std::array<std::string_view, N>& expected) {
  INFO(std::string(tool) << "." << std::string(property));
  const std::optional<ToolSpec> spec = FindBuiltinTool(tool);
  REQUIRE(spec.has_value());
  const auto schema = Json(spec->input_schema_json);
  const rapidjson::Value& node = Property(schema, property);
  REQUIRE(node.HasMember("enum"));
  std::vector<std::string_view> actual;
  for (const auto& v : node["enum"].GetArray()) {
    actual.push_back(View(v));
  }
  CHECK(actual == std::vector<std::string_view>(expected.begin(), expected.end()));
}

TEST_CASE("the catalog holds exactly the built-in tools in name-table order", "[core][tools]") {
  const std::vector<ToolSpec>& tools = BuiltinTools();
  REQUIRE(tools.size() == kBuiltinToolNames.size());
  for (std::size_t i = 0; i < tools.size(); ++i) {
    CHECK(tools[i].name == kBuiltinToolNames[i]);
    CHECK(IsBuiltinToolName(tools[i].name));
  }
  std::set<std::string> unique;
  for (const ToolSpec& t : tools) {
    unique.insert(t.name);
  }
  CHECK(unique.size() == tools.size());
}

TEST_CASE("every built-in schema parses, is closed at every level and is bounded",
          "[core][tools]") {
  for (const ToolSpec& tool : BuiltinTools()) {
    INFO(tool.name);
    const auto schema = Json(tool.input_schema_json);
    REQUIRE(schema.IsObject());
    CHECK(View(schema["type"]) == "object");
    REQUIRE(schema.HasMember("additionalProperties"));
    CHECK(schema["additionalProperties"].IsFalse());
    ExpectClosed(schema, "#");
    ExpectBounded(schema, "#");
    CHECK(ValidateToolSchema(schema).ok());
  }
}

TEST_CASE("every built-in descriptor is static and validates against its schema", "[core][tools]") {
  for (const ToolSpec& tool : BuiltinTools()) {
    INFO(tool.name);
    CHECK(tool.descriptor.static_class.has_value());
    CHECK(tool.descriptor.discriminator.empty());
    CHECK(tool.descriptor.cases.empty());
    CHECK(ValidateDescriptor(tool.descriptor, Json(tool.input_schema_json)).ok());
  }
}

TEST_CASE("built-in classes follow the architecture table", "[core][tools]") {
  const std::pair<std::string_view, InvocationClass> expected[] = {
      {kToolPulseQuery, testing::kResolveNone},
      {kToolPulseRead, testing::kReadNone},
      {kToolPulseMetrics, testing::kReadNone},
      {kToolPulseControl, testing::kWriteInfrastructure},
      {kToolPulseQuestion, testing::kUserInputNone},
      {kToolPatrolGetFindings, testing::kReadNone},
      {kToolPatrolReportFinding, testing::kWritePulseState},
      {kToolPatrolAssessFinding, testing::kWritePulseState},
      {kToolPatrolResolveFinding, testing::kWritePulseState},
      {kToolPatrolActionCapabilities, testing::kReadNone},
      {kToolPatrolProposeAction, testing::kReadNone},
  };
  REQUIRE(std::size(expected) == BuiltinTools().size());
  for (const auto& [name, cls] : expected) {
    INFO(std::string(name));
    const std::optional<ToolSpec> spec = FindBuiltinTool(name);
    REQUIRE(spec.has_value());
    REQUIRE(spec->descriptor.static_class.has_value());
    CHECK(*spec->descriptor.static_class == cls);
  }
}

TEST_CASE("schema enums equal the value lists in tool_names.h", "[core][tools]") {
  ExpectEnum(kToolPulseQuery, kArgAction, kQueryActions);
  ExpectEnum(kToolPulseRead, kArgAction, kReadActions);
  ExpectEnum(kToolPulseMetrics, kArgMetric, kMetricNames);
  ExpectEnum(kToolPulseMetrics, kArgRange, kMetricRanges);
  ExpectEnum(kToolPulseControl, kArgType, kControlTypes);
  ExpectEnum(kToolPatrolGetFindings, kArgCategory, kFindingCategories);
  ExpectEnum(kToolPatrolReportFinding, kArgCategory, kFindingCategories);
  ExpectEnum(kToolPatrolReportFinding, kArgSeverity, kFindingSeverities);
  ExpectEnum(kToolPatrolAssessFinding, kArgVerdict, kAssessVerdicts);
}

TEST_CASE("required arguments follow the contract", "[core][tools]") {
  const std::pair<std::string_view, std::vector<std::string_view>> expected[] = {
      {kToolPulseQuery, {kArgAction}},
      {kToolPulseRead, {kArgAction, kArgResourceId}},
      {kToolPulseMetrics, {kArgResourceId}},
      {kToolPulseControl, {kArgType, kArgResourceId, kArgCapability, kArgReason}},
      {kToolPulseQuestion, {kArgQuestion}},
      {kToolPatrolGetFindings, {}},
      {kToolPatrolReportFinding,
       {kArgResourceId, kArgCategory, kArgSeverity, kArgTitle, kArgDescription, kArgEvidence,
        kArgRecommendation}},
      {kToolPatrolAssessFinding, {kArgFindingId, kArgVerdict, kArgEvidence}},
      {kToolPatrolResolveFinding, {kArgFindingId, kArgResolutionNote, kArgEvidence}},
      {kToolPatrolActionCapabilities, {kArgResourceId}},
      {kToolPatrolProposeAction, {kArgResourceId, kArgCapability, kArgRationale}},
  };
  for (const auto& [name, required] : expected) {
    INFO(std::string(name));
    const auto schema = Json(FindBuiltinTool(name)->input_schema_json);
    std::vector<std::string_view> actual;
    if (schema.HasMember("required")) {
      for (const auto& r : schema["required"].GetArray()) {
        actual.push_back(View(r));
      }
    }
    CHECK(actual == required);
  }
}

TEST_CASE("bounds on ids, free text and counts match the published limits", "[core][tools]") {
  for (const ToolSpec& tool : BuiltinTools()) {
    INFO(tool.name);
    const auto schema = Json(tool.input_schema_json);
    for (const auto& p : schema["properties"].GetObject()) {
      const std::string_view name = View(p.name);
      if (name == kArgResourceId) {
        CHECK(p.value["maxLength"].GetInt() == kMaxResourceIdLength);
      }
      if (name == kArgEvidence || name == kArgDescription || name == kArgRecommendation) {
        CHECK(p.value["maxLength"].GetInt() == kMaxFreeTextLength);
      }
      if (name == kArgReason || name == kArgRationale || name == kArgResolutionNote) {
        CHECK(p.value["maxLength"].GetInt() == kMaxReasonLength);
      }
      if (name == kArgFindingId || name == kArgKey) {
        CHECK(p.value["maxLength"].GetInt() == kMaxIdLength);
      }
      if (name == kArgParams) {
        CHECK(p.value["maxProperties"].GetInt() == kMaxParams);
        CHECK(p.value["additionalProperties"]["maxLength"].GetInt() == kMaxParamValueLength);
      }
    }
  }
  const auto query = Json(FindBuiltinTool(kToolPulseQuery)->input_schema_json);
  CHECK(query["properties"]["limit"]["minimum"].GetInt() == 1);
  CHECK(query["properties"]["limit"]["maximum"].GetInt() == 200);
  CHECK(query["properties"]["action_id"]["maxLength"].GetInt() == kMaxActionIdLength);
  const auto read = Json(FindBuiltinTool(kToolPulseRead)->input_schema_json);
  CHECK(read["properties"]["lines"]["maximum"].GetInt() == 1000);
  CHECK(read["properties"]["command"]["maxLength"].GetInt() == kMaxCommandLength);
  const auto question = Json(FindBuiltinTool(kToolPulseQuestion)->input_schema_json);
  CHECK(question["properties"]["options"]["maxItems"].GetInt() == kMaxQuestionOptions);
}

TEST_CASE("pulse_control offers only typed resource capability requests", "[core][tools]") {
  const auto schema = Json(FindBuiltinTool(kToolPulseControl)->input_schema_json);
  const auto& props = schema["properties"];
  CHECK(props.MemberCount() == 5);
  for (const char* name : {"type", "resource_id", "capability", "params", "reason"}) {
    CHECK(props.HasMember(name));
  }
  CHECK(props["type"]["enum"].Size() == 1);
  CHECK(View(props["type"]["enum"][0]) == kControlTypeResource);
  CHECK(View(props["capability"]["pattern"]) == "^[a-z][a-z0-9_.-]{0,63}$");
  // No free-form command, action verb or shell text can reach the lifecycle.
  for (const char* forbidden : {"command", "action", "script", "shell", "exec"}) {
    CHECK_FALSE(props.HasMember(forbidden));
  }
}

TEST_CASE("descriptions tell the model what each tool never does", "[core][tools]") {
  for (const ToolSpec& tool : BuiltinTools()) {
    INFO(tool.name);
    CHECK(tool.description.size() > 80);
    CHECK(tool.description.size() < 1024);
  }
  CHECK_THAT(FindBuiltinTool(kToolPulseControl)->description,
             Catch::Contains("never touches infrastructure itself") && Catch::Contains("approval"));
  CHECK_THAT(FindBuiltinTool(kToolPulseRead)->description,
             Catch::Contains("read-only") && Catch::Contains("refused"));
  CHECK_THAT(FindBuiltinTool(kToolPatrolProposeAction)->description,
             Catch::Contains("executes nothing"));
  for (std::string_view name :
       {kToolPatrolReportFinding, kToolPatrolAssessFinding, kToolPatrolResolveFinding}) {
    CHECK_THAT(FindBuiltinTool(name)->description, Catch::Contains("never infrastructure"));
  }
}

TEST_CASE("placement hints mark the question and the investigation tools", "[core][tools]") {
  for (const ToolSpec& tool : BuiltinTools()) {
    INFO(tool.name);
    const bool question = tool.name == kToolPulseQuestion;
    const bool investigation =
        tool.name == kToolPatrolActionCapabilities || tool.name == kToolPatrolProposeAction;
    CHECK(tool.interactive_only == question);
    CHECK(tool.runs_alone == question);
    CHECK(tool.investigation_only == investigation);
  }
}

TEST_CASE("no built-in uses a retired name and every retired name is unknown", "[core][tools]") {
  for (std::string_view retired : kRetiredToolNames) {
    INFO(std::string(retired));
    CHECK(IsRetiredToolName(retired));
    CHECK_FALSE(IsBuiltinToolName(retired));
    CHECK_FALSE(FindBuiltinTool(retired).has_value());
  }
  for (std::string_view name : kBuiltinToolNames) {
    CHECK_FALSE(IsRetiredToolName(name));
  }
}

TEST_CASE("catalog lookups are exact and return copies", "[core][tools]") {
  CHECK_FALSE(FindBuiltinTool("PULSE_QUERY").has_value());
  CHECK_FALSE(FindBuiltinTool(" pulse_query").has_value());
  CHECK_FALSE(FindBuiltinTool("").has_value());
  std::optional<ToolSpec> copy = FindBuiltinTool(kToolPulseQuery);
  REQUIRE(copy.has_value());
  copy->descriptor = StaticDescriptor(testing::kWriteInfrastructure);
  copy->input_schema_json = "{}";
  CHECK(*BuiltinTools()[0].descriptor.static_class == testing::kResolveNone);
  CHECK(FindBuiltinTool(kToolPulseQuery)->input_schema_json != "{}");
}

}  // namespace
}  // namespace pulse::core
