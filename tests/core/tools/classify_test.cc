#include "pulse/core/tools/classify.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/core/tools/tool_catalog.h"
#include "pulse/core/tools/tool_names.h"
#include "tools_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;
using testing::kReadNone;
using testing::kResolveNone;
using testing::kUserInputNone;
using testing::kWriteInfrastructure;
using testing::kWritePulseState;

// Argument sets that would have looked "read-ish" to a name-or-argument heuristic.
const std::vector<std::string_view>& SuggestiveArgs() {
  static const std::vector<std::string_view> args = {
      R"({})",
      R"({"action":"get"})",
      R"({"action":"list"})",
      R"({"action":"status"})",
      R"({"operation":"inspect"})",
      R"({"operation":"read"})",
      R"({"action":"search","operation":"describe"})",
      R"({"action":"delete"})",
      R"({"type":"pods"})",
      R"({"action":42})",
      R"({"action":null})",
      "null",
      "[]",
      R"("get")",
  };
  return args;
}

TEST_CASE("every built-in classifies as its table class for any arguments", "[core][tools]") {
  const std::pair<std::string_view, InvocationClass> expected[] = {
      {kToolPulseQuery, kResolveNone},
      {kToolPulseRead, kReadNone},
      {kToolPulseMetrics, kReadNone},
      {kToolPulseControl, kWriteInfrastructure},
      {kToolPulseQuestion, kUserInputNone},
      {kToolPatrolGetFindings, kReadNone},
      {kToolPatrolReportFinding, kWritePulseState},
      {kToolPatrolAssessFinding, kWritePulseState},
      {kToolPatrolResolveFinding, kWritePulseState},
      {kToolPatrolActionCapabilities, kReadNone},
      {kToolPatrolProposeAction, kReadNone},
  };
  REQUIRE(std::size(expected) == kBuiltinToolNames.size());
  for (const auto& [name, cls] : expected) {
    for (std::string_view args : SuggestiveArgs()) {
      INFO(std::string(name) << " " << std::string(args));
      CHECK(ClassifyToolCall(name, Json(args)) == cls);
    }
  }
}

TEST_CASE("every action value of pulse_query and pulse_read keeps the static class",
          "[core][tools]") {
  for (std::string_view action : kQueryActions) {
    const std::string args = R"({"action":")" + std::string(action) + R"("})";
    CHECK(ClassifyToolCall(kToolPulseQuery, Json(args)) == kResolveNone);
  }
  for (std::string_view action : kReadActions) {
    const std::string args = R"({"action":")" + std::string(action) + R"(","resource_id":"a"})";
    CHECK(ClassifyToolCall(kToolPulseRead, Json(args)) == kReadNone);
  }
  CHECK(ClassifyToolCall(kToolPulseControl, Json(R"({"type":"resource"})")) ==
        kWriteInfrastructure);
}

TEST_CASE("unknown tools fail closed whatever their arguments suggest", "[core][tools]") {
  const std::vector<std::string_view> unknown = {
      "future_tool",
      "pulse_run_command",
      "run_command",
      "pulse_file_edit",
      "pulse_control_guest",
      "pulse_control_docker",
      "pulse_get_resource",
      "pulse_search_resources",
      "pulse_get_performance_metrics",
      "fetch_url",
      "set_resource_url",
      "pulse_discovery",
      "pulse_kubernetes",
      "pulse_docker",
      "get_status",
      "read_logs",
      "list_things",
      "pulse_query_v2",
  };
  for (std::string_view name : unknown) {
    for (std::string_view args : SuggestiveArgs()) {
      INFO(std::string(name) << " " << std::string(args));
      CHECK(ClassifyToolCall(name, Json(args)) == kFailClosedClass);
    }
  }
}

TEST_CASE("names are case-sensitive", "[core][tools]") {
  for (std::string_view name :
       {"PULSE_QUERY", "Pulse_Query", "pulse_Read", "PULSE_QUESTION", "Patrol_Get_Findings"}) {
    INFO(std::string(name));
    CHECK(ClassifyToolCall(name, Json(R"({"action":"get"})")) == kFailClosedClass);
  }
}

TEST_CASE("surrounding ASCII whitespace is trimmed, inner or other whitespace is not",
          "[core][tools]") {
  CHECK(ClassifyToolCall(" pulse_query ", Json("{}")) == kResolveNone);
  CHECK(ClassifyToolCall("\tpulse_read\r\n", Json("{}")) == kReadNone);
  CHECK(ClassifyToolCall("\n pulse_control", Json("{}")) == kWriteInfrastructure);
  const std::vector<std::string> names = {"pulse _query",
                                          "pulse_query\xC2\xA0",
                                          "\xC2\xA0pulse_read",
                                          "pulse\tread",
                                          std::string("pulse_read\0", 11),
                                          std::string("pulse_read\0x", 12),
                                          "",
                                          "   "};
  for (const std::string& name : names) {
    INFO("[" << name << "]");
    CHECK(ClassifyToolCall(name, Json(R"({"action":"status"})")) == kFailClosedClass);
  }
}

TEST_CASE("pulse_question is user input with no mutation", "[core][tools]") {
  CHECK(ClassifyToolCall(kToolPulseQuestion, Json(R"({"question":"which?"})")) == kUserInputNone);
}

TEST_CASE("TrimToolName trims only ASCII whitespace at both ends", "[core][tools]") {
  CHECK(TrimToolName("  a b \t") == "a b");
  CHECK(TrimToolName("") == "");
  CHECK(TrimToolName(" \n ") == "");
  CHECK(TrimToolName("\xC2\xA0x") == "\xC2\xA0x");
}

// --- ClassifyRegistered: extensions with discriminators ---

constexpr std::string_view kK8sLikeSchema = R"({
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ["clusters", "nodes", "pods", "deployments", "logs"]}
  },
  "additionalProperties": false
})";

constexpr std::string_view kKnowledgeLikeSchema = R"({
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["remember", "recall", "incidents", "correlate"]},
    "note": {"type": "string", "maxLength": 256}
  },
  "additionalProperties": false
})";

ToolRegistry RegistryWithExtensions() {
  absl::StatusOr<ToolRegistry> registry = ToolRegistry::WithBuiltins();
  REQUIRE(registry.ok());
  ToolSpec k8s;
  k8s.name = "k8s_like";
  k8s.description = "Kubernetes-like reads.";
  k8s.input_schema_json = std::string(kK8sLikeSchema);
  k8s.descriptor = DiscriminatorDescriptor("type", {{"clusters", kReadNone},
                                                    {"nodes", kReadNone},
                                                    {"pods", kReadNone},
                                                    {"deployments", kReadNone},
                                                    {"logs", kReadNone}});
  REQUIRE(registry->RegisterExtension(k8s).ok());
  ToolSpec knowledge;
  knowledge.name = "knowledge_like";
  knowledge.description = "Notes about the fleet.";
  knowledge.input_schema_json = std::string(kKnowledgeLikeSchema);
  knowledge.descriptor = DiscriminatorDescriptor("action", {{"remember", kWritePulseState},
                                                            {"recall", kReadNone},
                                                            {"incidents", kReadNone},
                                                            {"correlate", kReadNone}});
  REQUIRE(registry->RegisterExtension(knowledge).ok());
  return std::move(registry).value();
}

TEST_CASE("registered discriminator tools classify every enum value", "[core][tools]") {
  const ToolRegistry registry = RegistryWithExtensions();
  for (std::string_view type : {"clusters", "nodes", "pods", "deployments", "logs"}) {
    const std::string args = R"({"type":")" + std::string(type) + R"("})";
    CHECK(ClassifyRegistered(registry, "k8s_like", Json(args)) == kReadNone);
  }
  CHECK(ClassifyRegistered(registry, "knowledge_like", Json(R"({"action":"remember"})")) ==
        kWritePulseState);
  for (std::string_view action : {"recall", "incidents", "correlate"}) {
    const std::string args = R"({"action":")" + std::string(action) + R"("})";
    CHECK(ClassifyRegistered(registry, "knowledge_like", Json(args)) == kReadNone);
  }
  CHECK(ClassifyRegistered(registry, " k8s_like\t", Json(R"({"type":" PODS "})")) == kReadNone);
}

TEST_CASE("registered discriminator tools fail closed on bad discriminators", "[core][tools]") {
  const ToolRegistry registry = RegistryWithExtensions();
  for (std::string_view args :
       {R"({})", R"({"action":"pods"})", R"({"type":"scale"})", R"({"type":"exec"})",
        R"({"type":"restart"})", R"({"type":"delete_pod"})", R"({"type":"drain_node"})",
        R"({"type":42})", R"({"type":null})", R"({"type":false})", R"({"type":["pods"]})",
        R"({"type":"pods","type":"scale"})", "null", "[]", R"("pods")"}) {
    INFO(std::string(args));
    CHECK(ClassifyRegistered(registry, "k8s_like", Json(args)) == kFailClosedClass);
  }
}

TEST_CASE("ClassifyRegistered fails closed on unknown names", "[core][tools]") {
  const ToolRegistry registry = RegistryWithExtensions();
  for (std::string_view name : {"K8S_LIKE", "k8s like", "future_tool", "pulse_run_command", ""}) {
    INFO(std::string(name));
    CHECK(ClassifyRegistered(registry, name, Json(R"({"type":"pods","action":"get"})")) ==
          kFailClosedClass);
  }
  const ToolRegistry empty;
  CHECK(ClassifyRegistered(empty, kToolPulseQuery, Json("{}")) == kFailClosedClass);
}

TEST_CASE("both classifiers agree on every built-in", "[core][tools]") {
  const ToolRegistry registry = RegistryWithExtensions();
  for (std::string_view name : kBuiltinToolNames) {
    for (std::string_view args : SuggestiveArgs()) {
      INFO(std::string(name) << " " << std::string(args));
      CHECK(ClassifyRegistered(registry, name, Json(args)) == ClassifyToolCall(name, Json(args)));
    }
  }
}

TEST_CASE("ClassifyToolCall sees only the catalog, never registry extensions", "[core][tools]") {
  const ToolRegistry registry = RegistryWithExtensions();
  REQUIRE(registry.Contains("k8s_like"));
  CHECK(ClassifyToolCall("k8s_like", Json(R"({"type":"pods"})")) == kFailClosedClass);
}

}  // namespace
}  // namespace pulse::core
