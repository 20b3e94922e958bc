#include "pulse/core/tools/invocation_descriptor.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "tools_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;
using testing::kReadNone;
using testing::kResolveNone;
using testing::kUserInputNone;
using testing::kWriteInfrastructure;
using testing::kWritePulseState;

// A Kubernetes-like read tool that discriminates on `type`, and an alerts-like mixed tool
// that discriminates on `action` (reads and pulse-state writes).
constexpr std::string_view kK8sSchema = R"({
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ["clusters", "nodes", "pods", "deployments", "logs"]},
    "cluster": {"type": "string", "maxLength": 64}
  },
  "required": ["type"],
  "additionalProperties": false
})";

constexpr std::string_view kAlertsSchema = R"({
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "findings", "resolved", "resolve", "dismiss"]}
  },
  "additionalProperties": false
})";

InvocationDescriptor K8sDescriptor() {
  return DiscriminatorDescriptor("type", {{"clusters", kReadNone},
                                          {"nodes", kReadNone},
                                          {"pods", kReadNone},
                                          {"deployments", kReadNone},
                                          {"logs", kReadNone}});
}

InvocationDescriptor AlertsDescriptor() {
  return DiscriminatorDescriptor("action", {{"list", kReadNone},
                                            {"findings", kReadNone},
                                            {"resolved", kReadNone},
                                            {"resolve", kWritePulseState},
                                            {"dismiss", kWritePulseState}});
}

TEST_CASE("a static descriptor with a valid class validates", "[core][tools]") {
  const auto schema = Json(kK8sSchema);
  for (InvocationClass c :
       {kResolveNone, kReadNone, kUserInputNone, kWritePulseState, kWriteInfrastructure}) {
    CHECK(ValidateDescriptor(StaticDescriptor(c), schema).ok());
  }
}

TEST_CASE("a descriptor that is neither static nor discriminator-based is refused",
          "[core][tools]") {
  const absl::Status status = ValidateDescriptor(InvocationDescriptor{}, Json(kK8sSchema));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("neither"));
}

TEST_CASE("a descriptor that is both static and discriminator-based is refused", "[core][tools]") {
  InvocationDescriptor both = K8sDescriptor();
  both.static_class = kReadNone;
  const absl::Status status = ValidateDescriptor(both, Json(kK8sSchema));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("both"));

  InvocationDescriptor static_with_name = StaticDescriptor(kReadNone);
  static_with_name.discriminator = "type";
  CHECK(ValidateDescriptor(static_with_name, Json(kK8sSchema)).code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("cases without a discriminator name are refused", "[core][tools]") {
  InvocationDescriptor d = K8sDescriptor();
  d.discriminator.clear();
  CHECK(ValidateDescriptor(d, Json(kK8sSchema)).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("classes outside the closed vocabulary or incoherent pairs are refused",
          "[core][tools]") {
  const auto schema = Json(kK8sSchema);
  const InvocationClass invalid[] = {
      {static_cast<ToolKind>(9), MutationTarget::kNone},
      {ToolKind::kRead, static_cast<MutationTarget>(9)},
      {ToolKind::kRead, MutationTarget::kInfrastructure},
      {ToolKind::kResolve, MutationTarget::kPulseState},
      {ToolKind::kUserInput, MutationTarget::kInfrastructure},
      {ToolKind::kWrite, MutationTarget::kNone},
  };
  for (InvocationClass c : invalid) {
    CAPTURE(c);
    CHECK_FALSE(IsValidInvocationClass(c));
    CHECK(ValidateDescriptor(StaticDescriptor(c), schema).code() ==
          absl::StatusCode::kInvalidArgument);
    InvocationDescriptor d = K8sDescriptor();
    d.cases["pods"] = c;
    CHECK(ValidateDescriptor(d, schema).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a discriminator descriptor covering the enum exactly validates", "[core][tools]") {
  CHECK(ValidateDescriptor(K8sDescriptor(), Json(kK8sSchema)).ok());
  CHECK(ValidateDescriptor(AlertsDescriptor(), Json(kAlertsSchema)).ok());
}

TEST_CASE("missing and extra cases are both reported, each sorted", "[core][tools]") {
  InvocationDescriptor d = K8sDescriptor();
  d.cases.erase("pods");
  d.cases.erase("logs");
  d.cases.erase("clusters");
  d.cases["scale"] = kWriteInfrastructure;
  d.cases["delete_pod"] = kWriteInfrastructure;
  const absl::Status status = ValidateDescriptor(d, Json(kK8sSchema));
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()) ==
        "discriminator \"type\" cases do not match the schema enum: missing cases "
        "[clusters, logs, pods]; extra cases [delete_pod, scale]");
}

TEST_CASE("a single missing case is refused", "[core][tools]") {
  InvocationDescriptor d = K8sDescriptor();
  d.cases.erase("logs");
  const absl::Status status = ValidateDescriptor(d, Json(kK8sSchema));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()) ==
        "discriminator \"type\" cases do not match the schema enum: missing cases [logs]");
}

TEST_CASE("a single extra case is refused", "[core][tools]") {
  InvocationDescriptor d = K8sDescriptor();
  d.cases["scale"] = kWriteInfrastructure;
  const absl::Status status = ValidateDescriptor(d, Json(kK8sSchema));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()) ==
        "discriminator \"type\" cases do not match the schema enum: extra cases [scale]");
}

TEST_CASE("the enum is compared after trim and lowercase", "[core][tools]") {
  const auto schema = Json(R"({"type":"object","additionalProperties":false,
      "properties":{"op":{"type":"string","enum":["Get", " LIST "]}}})");
  CHECK(ValidateDescriptor(DiscriminatorDescriptor("op", {{"get", kReadNone}, {"list", kReadNone}}),
                           schema)
            .ok());
}

TEST_CASE("case keys must be non-empty and normalized", "[core][tools]") {
  const auto schema = Json(kK8sSchema);
  for (std::string key : {"Pods", " pods", "pods ", ""}) {
    InvocationDescriptor d = K8sDescriptor();
    d.cases.erase("pods");
    d.cases[key] = kReadNone;
    INFO("key [" << key << "]");
    CHECK(ValidateDescriptor(d, schema).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("the discriminator must be a declared property with a non-empty string enum",
          "[core][tools]") {
  const InvocationDescriptor d = DiscriminatorDescriptor("op", {{"get", kReadNone}});
  const std::string_view schemas[] = {
      R"({"type":"object","additionalProperties":false})",
      R"({"type":"object","additionalProperties":false,"properties":{"other":{"type":"string"}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":{"type":"string"}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":{"type":"string","enum":[]}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":{"enum":["get",1]}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":{"enum":["get",null]}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":{"enum":["get","  "]}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":{"enum":"get"}}})",
      R"({"type":"object","additionalProperties":false,"properties":{"op":true}})",
      R"({"type":"object","additionalProperties":false,"properties":[]})",
      R"([])",
      R"("get")",
  };
  for (std::string_view text : schemas) {
    INFO(std::string(text));
    CHECK(ValidateDescriptor(d, Json(text)).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a discriminator with no cases is refused", "[core][tools]") {
  const absl::Status status =
      ValidateDescriptor(DiscriminatorDescriptor("type", {}), Json(kK8sSchema));
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a static descriptor classifies every argument set alike", "[core][tools]") {
  const InvocationDescriptor d = StaticDescriptor(kResolveNone);
  for (std::string_view args :
       {R"({})", R"({"action":"delete"})", R"({"action":42})", "null", "[]", R"("x")"}) {
    INFO(std::string(args));
    CHECK(Classify(d, Json(args)) == kResolveNone);
  }
}

TEST_CASE("a discriminator selects the class of each case", "[core][tools]") {
  const InvocationDescriptor d = AlertsDescriptor();
  CHECK(Classify(d, Json(R"({"action":"list"})")) == kReadNone);
  CHECK(Classify(d, Json(R"({"action":"findings"})")) == kReadNone);
  CHECK(Classify(d, Json(R"({"action":"resolved"})")) == kReadNone);
  CHECK(Classify(d, Json(R"({"action":"resolve"})")) == kWritePulseState);
  CHECK(Classify(d, Json(R"({"action":"dismiss"})")) == kWritePulseState);
  for (const auto& [value, expected] : K8sDescriptor().cases) {
    const std::string args = R"({"type":")" + value + R"("})";
    CHECK(Classify(K8sDescriptor(), Json(args)) == expected);
  }
}

TEST_CASE("discriminator values are trimmed and lowercased before lookup", "[core][tools]") {
  const InvocationDescriptor d = AlertsDescriptor();
  CHECK(Classify(d, Json(R"({"action":"  LIST\t"})")) == kReadNone);
  CHECK(Classify(d, Json(R"({"action":"Resolve"})")) == kWritePulseState);
}

TEST_CASE("missing, malformed and unknown discriminators fail closed", "[core][tools]") {
  const InvocationDescriptor d = K8sDescriptor();
  const std::string_view args[] = {
      R"({})",
      R"({"action":"pods"})",  // wrong key
      R"({"Type":"pods"})",    // keys are case-sensitive
      R"({"type":"scale"})",   // not a case
      R"({"type":"exec"})",
      R"({"type":"delete_pod"})",
      R"({"type":"drain_node"})",
      R"({"type":42})",
      R"({"type":null})",
      R"({"type":true})",
      R"({"type":["pods"]})",
      R"({"type":{"pods":true}})",
      R"({"type":""})",
      R"({"type":"   "})",
      R"({"type":"pods;scale"})",
      R"({"type":"pods","type":"scale"})",  // a repeated key smuggles a second value
      R"({"type":"pods","type":"pods"})",
      "null",
      "[]",
      R"(["pods"])",
      R"("pods")",
      "42",
  };
  for (std::string_view text : args) {
    INFO(std::string(text));
    CHECK(Classify(d, Json(text)) == kFailClosedClass);
  }
}

TEST_CASE("a discriminator value with an embedded NUL fails closed", "[core][tools]") {
  rapidjson::Document args(rapidjson::kObjectType);
  args.AddMember("type",
                 rapidjson::Value(std::string("pods\0x", 6).c_str(), 6, args.GetAllocator()),
                 args.GetAllocator());
  CHECK(Classify(K8sDescriptor(), args) == kFailClosedClass);
}

TEST_CASE("malformed descriptors classify fail-closed", "[core][tools]") {
  const auto args = Json(R"({"type":"pods"})");
  CHECK(Classify(InvocationDescriptor{}, args) == kFailClosedClass);
  InvocationDescriptor both = K8sDescriptor();
  both.static_class = kReadNone;
  CHECK(Classify(both, args) == kFailClosedClass);
  InvocationDescriptor unnamed = K8sDescriptor();
  unnamed.discriminator.clear();
  CHECK(Classify(unnamed, args) == kFailClosedClass);
  CHECK(Classify(StaticDescriptor({ToolKind::kRead, MutationTarget::kInfrastructure}), args) ==
        kFailClosedClass);
  InvocationDescriptor bad_case = K8sDescriptor();
  bad_case.cases["pods"] = {ToolKind::kWrite, MutationTarget::kNone};
  CHECK(Classify(bad_case, args) == kFailClosedClass);
}

TEST_CASE("descriptors are values: copies never share case tables", "[core][tools]") {
  const InvocationDescriptor original = AlertsDescriptor();
  InvocationDescriptor copy = original;
  copy.cases["list"] = kWriteInfrastructure;
  copy.cases.erase("dismiss");
  CHECK(original == AlertsDescriptor());
  CHECK_FALSE(copy == original);
  CHECK(Classify(original, Json(R"({"action":"list"})")) == kReadNone);
}

TEST_CASE("normalization trims ASCII whitespace and lowercases ASCII only", "[core][tools]") {
  CHECK(NormalizeDiscriminatorValue("  GeT \r\n") == "get");
  CHECK(NormalizeDiscriminatorValue("") == "");
  CHECK(NormalizeDiscriminatorValue("\xC3\x89tat") == "\xC3\x89tat");
  CHECK(NormalizeDiscriminatorValue("a b") == "a b");
}

}  // namespace
}  // namespace pulse::core
