#include "pulse/core/tools/tool_registry.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pulse/core/tools/tool_names.h"
#include "tools_test_support.h"

namespace pulse::core {
namespace {

using testing::kReadNone;
using testing::kWriteInfrastructure;
using testing::kWritePulseState;

constexpr std::string_view kK8sLikeSchema = R"({
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ["clusters", "nodes", "pods", "logs"]},
    "namespace": {"type": "string", "maxLength": 63}
  },
  "required": ["type"],
  "additionalProperties": false
})";

ToolSpec K8sLike() {
  ToolSpec spec;
  spec.name = "k8s_like";
  spec.description = "Reads cluster state.";
  spec.input_schema_json = std::string(kK8sLikeSchema);
  spec.descriptor = DiscriminatorDescriptor(
      "type",
      {{"clusters", kReadNone}, {"nodes", kReadNone}, {"pods", kReadNone}, {"logs", kReadNone}});
  return spec;
}

ToolSpec StaticExtension(std::string name, std::string schema) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "An extension tool.";
  spec.input_schema_json = std::move(schema);
  spec.descriptor = StaticDescriptor(kReadNone);
  return spec;
}

ToolRegistry Builtins() {
  absl::StatusOr<ToolRegistry> registry = ToolRegistry::WithBuiltins();
  REQUIRE(registry.ok());
  return std::move(registry).value();
}

std::vector<std::string> BuiltinNames() {
  return std::vector<std::string>(kBuiltinToolNames.begin(), kBuiltinToolNames.end());
}

TEST_CASE("WithBuiltins registers the whole catalog in order", "[core][tools]") {
  const ToolRegistry registry = Builtins();
  CHECK(registry.Size() == BuiltinTools().size());
  CHECK(registry.Names() == BuiltinNames());
  for (const ToolSpec& spec : BuiltinTools()) {
    INFO(spec.name);
    REQUIRE(registry.Find(spec.name).has_value());
    CHECK(*registry.Find(spec.name) == spec);
    CHECK(registry.FindDescriptor(spec.name) == spec.descriptor);
    CHECK(registry.Contains(spec.name));
  }
}

TEST_CASE("registration is append-only: a name registers exactly once", "[core][tools]") {
  ToolRegistry registry = Builtins();
  for (const ToolSpec& spec : BuiltinTools()) {
    CHECK(registry.RegisterBuiltin(spec).code() == absl::StatusCode::kAlreadyExists);
  }
  REQUIRE(registry.RegisterExtension(K8sLike()).ok());
  ToolSpec again = K8sLike();
  again.descriptor = StaticDescriptor(kWriteInfrastructure);
  again.description = "A replacement.";
  CHECK(registry.RegisterExtension(again).code() == absl::StatusCode::kAlreadyExists);
  CHECK(registry.FindDescriptor("k8s_like") == K8sLike().descriptor);
  CHECK(registry.Size() == BuiltinTools().size() + 1);
}

TEST_CASE("a built-in registers only under its canonical descriptor", "[core][tools]") {
  ToolRegistry registry;
  ToolSpec read = *FindBuiltinTool(kToolPulseRead);
  read.descriptor = StaticDescriptor(kWritePulseState);
  CHECK(registry.RegisterBuiltin(read).code() == absl::StatusCode::kInvalidArgument);
  read.descriptor = DiscriminatorDescriptor(
      "action",
      {{"status", kReadNone}, {"logs", kReadNone}, {"config", kReadNone}, {"exec", kReadNone}});
  const absl::Status status = registry.RegisterBuiltin(read);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("canonical invocation descriptor"));

  ToolSpec control = *FindBuiltinTool(kToolPulseControl);
  control.descriptor = StaticDescriptor(kReadNone);
  CHECK(registry.RegisterBuiltin(control).code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.Size() == 0);
}

TEST_CASE("a built-in keeps its canonical placement hints", "[core][tools]") {
  ToolRegistry registry;
  ToolSpec question = *FindBuiltinTool(kToolPulseQuestion);
  question.interactive_only = false;
  CHECK(registry.RegisterBuiltin(question).code() == absl::StatusCode::kInvalidArgument);
  ToolSpec propose = *FindBuiltinTool(kToolPatrolProposeAction);
  propose.investigation_only = false;
  CHECK(registry.RegisterBuiltin(propose).code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.Size() == 0);
}

TEST_CASE("RegisterBuiltin refuses names outside the catalog", "[core][tools]") {
  ToolRegistry registry;
  for (std::string name : {"k8s_like", "PULSE_QUERY", " pulse_query", "pulse_run_command", ""}) {
    ToolSpec spec = *FindBuiltinTool(kToolPulseQuery);
    spec.name = name;
    INFO("[" << name << "]");
    CHECK(registry.RegisterBuiltin(spec).code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(registry.Size() == 0);
}

TEST_CASE("an extension can never take a built-in name", "[core][tools]") {
  ToolRegistry empty;
  ToolRegistry full = Builtins();
  for (const ToolSpec& builtin : BuiltinTools()) {
    INFO(builtin.name);
    ToolSpec spec = builtin;  // even the exact canonical spec is refused on this path
    CHECK(empty.RegisterExtension(spec).code() == absl::StatusCode::kInvalidArgument);
    const absl::Status status = full.RegisterExtension(spec);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::Contains("built-in"));
  }
  CHECK(empty.Size() == 0);
}

TEST_CASE("an extension can never take a retired or reserved name", "[core][tools]") {
  ToolRegistry registry;
  std::vector<std::string> names(kRetiredToolNames.begin(), kRetiredToolNames.end());
  names.insert(names.end(), {"pulse_exec", "patrol_anything", "pulse_", "patrol_"});
  for (const std::string& name : names) {
    INFO(name);
    ToolSpec spec = K8sLike();
    spec.name = name;
    CHECK(registry.RegisterExtension(spec).code() == absl::StatusCode::kInvalidArgument);
  }
  for (std::string_view retired : {"run_command", "pulse_run_command", "pulse_file_edit",
                                   "pulse_control_guest", "pulse_control_docker"}) {
    ToolSpec spec = K8sLike();
    spec.name = std::string(retired);
    CHECK_THAT(std::string(registry.RegisterExtension(spec).message()), Catch::Contains("retired"));
  }
  CHECK(registry.Size() == 0);
}

TEST_CASE("extension names must be provider-safe identifiers", "[core][tools]") {
  ToolRegistry registry;
  const std::vector<std::string> names = {"",
                                          " k8s",
                                          "k8s ",
                                          "k8s like",
                                          "k8s.like",
                                          "k8s/like",
                                          "k8s\nx",
                                          std::string(65, 'a'),
                                          "\xC3\xA9t\xC3\xA9",
                                          std::string("k8s\0x", 5)};
  for (const std::string& name : names) {
    ToolSpec spec = K8sLike();
    spec.name = name;
    CHECK(registry.RegisterExtension(spec).code() == absl::StatusCode::kInvalidArgument);
  }
  ToolSpec longest = K8sLike();
  longest.name = std::string(64, 'a');
  CHECK(registry.RegisterExtension(longest).ok());
  CHECK(registry.Names() == std::vector<std::string>{std::string(64, 'a')});
}

TEST_CASE("an extension must bring a valid descriptor of its own", "[core][tools]") {
  ToolRegistry registry;
  ToolSpec missing = K8sLike();
  missing.descriptor = InvocationDescriptor{};
  CHECK(registry.RegisterExtension(missing).code() == absl::StatusCode::kInvalidArgument);

  ToolSpec both = K8sLike();
  both.descriptor.static_class = kReadNone;
  CHECK(registry.RegisterExtension(both).code() == absl::StatusCode::kInvalidArgument);

  ToolSpec missing_case = K8sLike();
  missing_case.descriptor.cases.erase("pods");
  missing_case.descriptor.cases.erase("logs");
  absl::Status status = registry.RegisterExtension(missing_case);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()) ==
        "tool \"k8s_like\": discriminator \"type\" cases do not match the schema enum: "
        "missing cases [logs, pods]");

  ToolSpec extra_case = K8sLike();
  extra_case.descriptor.cases["scale"] = kWriteInfrastructure;
  extra_case.descriptor.cases["drain_node"] = kWriteInfrastructure;
  status = registry.RegisterExtension(extra_case);
  CHECK(std::string(status.message()) ==
        "tool \"k8s_like\": discriminator \"type\" cases do not match the schema enum: "
        "extra cases [drain_node, scale]");

  ToolSpec wrong_key = K8sLike();
  wrong_key.descriptor.discriminator = "action";
  CHECK(registry.RegisterExtension(wrong_key).code() == absl::StatusCode::kInvalidArgument);
  CHECK(registry.Size() == 0);
  CHECK_FALSE(registry.Find("k8s_like").has_value());
  CHECK(registry.RegisterExtension(K8sLike()).ok());
}

TEST_CASE("an extension needs a description", "[core][tools]") {
  ToolRegistry registry;
  ToolSpec spec = K8sLike();
  spec.description.clear();
  CHECK(registry.RegisterExtension(spec).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("schemas that are not closed objects are refused at registration", "[core][tools]") {
  const std::string_view schemas[] = {
      "",
      "{",
      "not json",
      R"({"type":"object","additionalProperties":false} trailing)",
      "[]",
      "null",
      R"("object")",
      R"({})",
      R"({"type":"object"})",
      R"({"type":"object","additionalProperties":true})",
      R"({"type":"object","additionalProperties":{"type":"string"},"maxProperties":4})",
      R"({"type":"array","items":{"type":"string"},"additionalProperties":false})",
      R"({"type":["object","null"],"additionalProperties":false})",
      R"({"type":"object","additionalProperties":false,
          "properties":{"nested":{"type":"object","properties":{"a":{"type":"string"}}}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"anything":{}}})",
      R"({"type":"object","additionalProperties":false,
          "properties":{"list":{"type":"array"}}})",
      R"({"type":"object","additionalProperties":false,
          "properties":{"list":{"type":"array","items":{"type":"object"}}}})",
      R"({"type":"object","additionalProperties":false,
          "patternProperties":{"^x":{"type":"string"}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#"}}})",
      R"({"type":"object","additionalProperties":false,"required":["ghost"]})",
      R"({"type":"object","additionalProperties":false,
          "properties":{"a":{"type":"string","pattern":"[a-"}}})",
  };
  ToolRegistry registry;
  for (std::string_view schema : schemas) {
    INFO(std::string(schema));
    const absl::Status status =
        registry.RegisterExtension(StaticExtension("ext", std::string(schema)));
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()), Catch::StartsWith("tool \"ext\": "));
  }
  CHECK(registry.Size() == 0);
}

TEST_CASE("an oversized or deeply nested schema is refused without recursing", "[core][tools]") {
  ToolRegistry registry;
  std::string deep = R"({"type":"object","additionalProperties":false,"properties":{"a":)";
  std::string tail = "}}";
  for (int i = 0; i < 5000; ++i) {
    deep += R"({"type":"object","additionalProperties":false,"properties":{"a":)";
    tail += "}}";
  }
  deep += R"({"type":"string"})" + tail;
  CHECK(registry.RegisterExtension(StaticExtension("deep", deep)).code() ==
        absl::StatusCode::kInvalidArgument);
  std::string huge = R"({"type":"object","additionalProperties":false,"description":")" +
                     std::string(kMaxToolSchemaBytes, 'x') + "\"}";
  CHECK(registry.RegisterExtension(StaticExtension("huge", huge)).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("lookups return deep copies that never alias the registry", "[core][tools]") {
  ToolRegistry registry = Builtins();
  REQUIRE(registry.RegisterExtension(K8sLike()).ok());

  std::optional<ToolSpec> copy = registry.Find("k8s_like");
  REQUIRE(copy.has_value());
  copy->descriptor.cases["pods"] = kWriteInfrastructure;
  copy->descriptor.cases["scale"] = kReadNone;
  copy->input_schema_json.clear();
  copy->name = "renamed";
  CHECK(*registry.Find("k8s_like") == K8sLike());

  std::optional<InvocationDescriptor> descriptor = registry.FindDescriptor("k8s_like");
  REQUIRE(descriptor.has_value());
  descriptor->cases.clear();
  CHECK(registry.FindDescriptor("k8s_like") == K8sLike().descriptor);

  std::optional<ToolSpec> control = registry.Find(kToolPulseControl);
  control->descriptor = StaticDescriptor(kReadNone);
  CHECK(registry.FindDescriptor(kToolPulseControl) ==
        FindBuiltinTool(kToolPulseControl)->descriptor);
}

TEST_CASE("lookups are exact: no trimming and no case folding", "[core][tools]") {
  const ToolRegistry registry = Builtins();
  for (std::string_view name : {"PULSE_QUERY", " pulse_query", "pulse_query ", "pulse_quer",
                                "pulse_query\n", "", "pulse_run_command"}) {
    CHECK_FALSE(registry.Find(name).has_value());
    CHECK_FALSE(registry.FindDescriptor(name).has_value());
    CHECK_FALSE(registry.Contains(name));
  }
}

TEST_CASE("extensions append after built-ins in registration order", "[core][tools]") {
  ToolRegistry registry = Builtins();
  REQUIRE(registry
              .RegisterExtension(
                  StaticExtension("zeta", R"({"type":"object","additionalProperties":false})"))
              .ok());
  REQUIRE(registry.RegisterExtension(K8sLike()).ok());
  REQUIRE(registry
              .RegisterExtension(
                  StaticExtension("alpha", R"({"type":"object","additionalProperties":false})"))
              .ok());
  std::vector<std::string> expected = BuiltinNames();
  expected.insert(expected.end(), {"zeta", "k8s_like", "alpha"});
  CHECK(registry.Names() == expected);
}

TEST_CASE("a moved registry keeps its tools and compiled schemas", "[core][tools]") {
  ToolRegistry original = Builtins();
  REQUIRE(original.RegisterExtension(K8sLike()).ok());
  ToolRegistry moved = std::move(original);
  CHECK(moved.Size() == BuiltinTools().size() + 1);
  CHECK(moved.ValidateArguments("k8s_like", testing::Json(R"({"type":"pods"})")).ok());
  CHECK(moved.ValidateArguments("k8s_like", testing::Json(R"({"type":"scale"})")).code() ==
        absl::StatusCode::kInvalidArgument);
  ToolRegistry assigned;
  assigned = std::move(moved);
  CHECK(assigned.ValidateArguments(kToolPulseQuery, testing::Json(R"({"action":"list"})")).ok());
}

}  // namespace
}  // namespace pulse::core
