// ToolRegistry::ValidateArguments against the built-in schemas, including hostile input.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_registry.h"
#include "tools_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;

const ToolRegistry& Registry() {
  static const ToolRegistry registry = [] {
    absl::StatusOr<ToolRegistry> r = ToolRegistry::WithBuiltins();
    REQUIRE(r.ok());
    return std::move(r).value();
  }();
  return registry;
}

absl::Status Validate(std::string_view tool, std::string_view args) {
  return Registry().ValidateArguments(tool, Json(args));
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST_CASE("well-formed calls to every built-in validate", "[core][tools]") {
  const std::pair<std::string_view, std::string_view> calls[] = {
      {kToolPulseQuery, R"({"action":"search","query":"web","limit":200})"},
      {kToolPulseQuery, R"({"action":"list","resource_type":"system-container","limit":1})"},
      {kToolPulseQuery, R"({"action":"action","action_id":"act_0123abcd"})"},
      {kToolPulseRead, R"({"action":"logs","resource_id":"vm/101","lines":1000})"},
      {kToolPulseRead, R"({"action":"exec","resource_id":"node/pve1","command":"df -h"})"},
      {kToolPulseMetrics, R"({"resource_id":"vm/101","metric":"cpu","range":"7d","summary":true})"},
      {kToolPulseControl,
       R"({"type":"resource","resource_id":"svc/nginx","capability":"service.restart",
           "params":{"grace_seconds":30,"force":false,"signal":"TERM"},"reason":"stuck"})"},
      {kToolPulseControl,
       R"({"type":"resource","resource_id":"vm/1","capability":"vm.reboot","reason":"x"})"},
      {kToolPulseQuestion, R"({"question":"Which one?","options":["web-1","web-2"]})"},
      {kToolPatrolGetFindings, R"({})"},
      {kToolPatrolGetFindings,
       R"({"resource_id":"vm/1","category":"backup","include_resolved":true})"},
      {kToolPatrolReportFinding,
       R"({"resource_id":"vm/1","category":"capacity","severity":"watch","title":"Disk filling",
           "description":"d","evidence":"e","recommendation":"r","key":"disk-high"})"},
      {kToolPatrolAssessFinding, R"({"finding_id":"ab12","verdict":"uncertain","evidence":"e"})"},
      {kToolPatrolResolveFinding, R"({"finding_id":"ab12","resolution_note":"n","evidence":"e"})"},
      {kToolPatrolActionCapabilities, R"({"resource_id":"vm/1"})"},
      {kToolPatrolProposeAction,
       R"({"resource_id":"vm/1","capability":"vm.reboot","rationale":"hung","params":{}})"},
  };
  for (const auto& [tool, args] : calls) {
    INFO(std::string(tool) << " " << std::string(args));
    const absl::Status status = Validate(tool, args);
    INFO(status.ToString());
    CHECK(status.ok());
  }
}

TEST_CASE("an unknown tool is NotFound", "[core][tools]") {
  for (std::string_view name : {"pulse_run_command", "PULSE_QUERY", " pulse_query", ""}) {
    CHECK(Registry().ValidateArguments(name, Json("{}")).code() == absl::StatusCode::kNotFound);
  }
}

TEST_CASE("an undeclared argument is named in the refusal", "[core][tools]") {
  absl::Status status = Validate(kToolPulseQuery, R"({"action":"get","operation":"inspect"})");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(status) == "undeclared tool argument \"operation\"");
  status = Validate(kToolPulseControl,
                    R"({"type":"resource","resource_id":"a","capability":"b","reason":"r",
                        "command":"rm -rf /"})");
  CHECK(Message(status) == "undeclared tool argument \"command\"");
  status = Validate(kToolPulseRead, R"({"_approval_id":"x","action":"status","resource_id":"a"})");
  CHECK(Message(status) == "undeclared tool argument \"_approval_id\"");
}

TEST_CASE("a missing required argument is named in the refusal", "[core][tools]") {
  CHECK(Message(Validate(kToolPulseQuery, "{}")) == "required tool argument \"action\" is missing");
  CHECK(Message(Validate(kToolPulseRead, R"({"action":"status"})")) ==
        "required tool argument \"resource_id\" is missing");
  CHECK(Message(Validate(kToolPulseControl,
                         R"({"type":"resource","resource_id":"a","capability":"b"})")) ==
        "required tool argument \"reason\" is missing");
}

TEST_CASE("other violations name the keyword, the argument and the constraint", "[core][tools]") {
  const std::tuple<std::string_view, std::string_view, std::string_view> cases[] = {
      {kToolPulseQuery, R"({"action":"delete"})",
       R"(tool argument /action violates "enum" (enum: ["search","get","list","topology","action"]))"},
      {kToolPulseQuery, R"({"action":"list","limit":0})",
       R"(tool argument /limit violates "minimum" (minimum: 1))"},
      {kToolPulseQuery, R"({"action":"list","limit":201})",
       R"(tool argument /limit violates "maximum" (maximum: 200))"},
      {kToolPulseQuery, R"({"action":"list","limit":1.5})",
       R"(tool argument /limit violates "type" (type: "integer"))"},
      {kToolPulseQuery, R"({"action":"list","limit":"5"})",
       R"(tool argument /limit violates "type" (type: "integer"))"},
      {kToolPulseQuery, R"({"action":"list","resource_type":"VM"})",
       R"(tool argument /resource_type violates "pattern" (pattern: "^[a-z][a-z0-9_-]{0,63}$"))"},
      {kToolPulseRead, R"({"action":"status","resource_id":""})",
       R"(tool argument /resource_id violates "minLength" (minLength: 1))"},
      {kToolPulseControl, R"({"type":"guest","resource_id":"a","capability":"b","reason":"r"})",
       R"(tool argument /type violates "enum" (enum: ["resource"]))"},
      {kToolPulseQuestion, R"({"question":"q","options":["a","a"]})",
       R"(tool argument /options/1 violates "uniqueItems" (uniqueItems: true))"},
      {kToolPulseQuestion, R"({"question":"q","options":["1","2","3","4","5","6","7","8","9"]})",
       R"(tool argument /options violates "maxItems" (maxItems: 8))"},
      {kToolPulseQuestion, R"({"question":"q","options":["a",1]})",
       R"(tool argument /options/1 violates "type" (type: "string"))"},
  };
  for (const auto& [tool, args, message] : cases) {
    INFO(std::string(tool) << " " << std::string(args));
    const absl::Status status = Validate(tool, args);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(status) == message);
  }
}

TEST_CASE("capability names must match the typed capability pattern", "[core][tools]") {
  auto call = [](std::string_view capability) {
    return Registry().ValidateArguments(
        kToolPulseControl,
        Json(R"({"type":"resource","resource_id":"a","reason":"r","capability":")" +
             std::string(capability) + "\"}"));
  };
  for (std::string_view ok : {"a", "service.restart", "vm_reboot", "docker-update", "a1"}) {
    INFO(std::string(ok));
    CHECK(call(ok).ok());
  }
  CHECK(call(std::string(64, 'a')).ok());
  for (std::string_view bad : {"Restart", "1restart", "restart service", "rm -rf /", "a;b", "a*",
                               "a/b", "", "$(reboot)", "a\\nb"}) {
    INFO(std::string(bad));
    CHECK(call(bad).code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(call(std::string(65, 'a')).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("capability params are a bounded flat map of scalars", "[core][tools]") {
  auto call = [](std::string_view params) {
    return Registry().ValidateArguments(
        kToolPulseControl,
        Json(R"({"type":"resource","resource_id":"a","capability":"c","reason":"r","params":)" +
             std::string(params) + "}"));
  };
  CHECK(call(R"({"a":"x","b":1,"c":-2.5,"d":true})").ok());
  CHECK(Message(call(R"({"a":{"b":1}})")) ==
        R"(tool argument /params/a violates "type" (type: ["string","number","boolean"]))");
  CHECK(call(R"({"a":[1]})").code() == absl::StatusCode::kInvalidArgument);
  CHECK(call(R"({"a":null})").code() == absl::StatusCode::kInvalidArgument);
  CHECK(call(R"([["a",1]])").code() == absl::StatusCode::kInvalidArgument);
  CHECK(call(R"("a=1")").code() == absl::StatusCode::kInvalidArgument);
  CHECK(call(R"({"a":1e16})").code() == absl::StatusCode::kInvalidArgument);
  CHECK(call(R"({"a":")" + std::string(kMaxParamValueLength + 1, 'x') + "\"}").code() ==
        absl::StatusCode::kInvalidArgument);
  std::string many = "{";
  for (int i = 0; i <= kMaxParams; ++i) {
    many += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":1";
  }
  many += "}";
  CHECK(Message(call(many)) ==
        R"(tool argument /params violates "maxProperties" (maxProperties: 32))");
}

TEST_CASE("arguments that are not an object are refused", "[core][tools]") {
  for (std::string_view args : {"null", "[]", R"([{"action":"get"}])", R"("get")", "42", "true"}) {
    INFO(std::string(args));
    const absl::Status status = Validate(kToolPulseQuery, args);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(status) == "tool arguments must be a JSON object");
  }
}

TEST_CASE("wrong types for every argument are refused", "[core][tools]") {
  for (std::string_view value : {"null", "1", "true", "[]", "{}", "\"x\""}) {
    const std::string v(value);
    INFO(v);
    if (value != "\"x\"") {
      CHECK_FALSE(Validate(kToolPulseRead, R"({"action":)" + v + R"(,"resource_id":"a"})").ok());
      CHECK_FALSE(Validate(kToolPulseRead, R"({"action":"status","resource_id":)" + v + "}").ok());
    }
    if (value != "true") {
      CHECK_FALSE(Validate(kToolPulseMetrics, R"({"resource_id":"a","summary":)" + v + "}").ok());
    }
    if (value != "1") {
      CHECK_FALSE(
          Validate(kToolPulseRead, R"({"action":"logs","resource_id":"a","lines":)" + v + "}")
              .ok());
    }
  }
}

TEST_CASE("repeated argument names are refused", "[core][tools]") {
  const absl::Status status =
      Validate(kToolPulseRead, R"({"action":"status","action":"exec","resource_id":"a"})");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(status) == "duplicate tool argument \"action\"");
}

TEST_CASE("a 1 MB string is refused before any schema keyword", "[core][tools]") {
  const std::string big(1 << 20, 'a');
  const absl::Status status =
      Validate(kToolPulseQuery, R"({"action":"search","query":")" + big + "\"}");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(Message(status), Catch::Contains("longer than 65536 bytes"));
  // Just over a field's own bound, the schema's maxLength speaks.
  const std::string text(kMaxFreeTextLength + 1, 'e');
  CHECK(Message(Validate(kToolPatrolAssessFinding,
                         R"({"finding_id":"f","verdict":"present","evidence":")" + text + "\"}")) ==
        R"(tool argument /evidence violates "maxLength" (maxLength: 4096))");
}

TEST_CASE("ten thousand keys are refused by the first undeclared one", "[core][tools]") {
  std::string args = R"({"action":"list")";
  for (int i = 0; i < 10000; ++i) {
    args += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
  }
  args += "}";
  CHECK(Message(Validate(kToolPulseQuery, args)) == "undeclared tool argument \"k0\"");
}

TEST_CASE("ten thousand values inside one argument are refused by the value bound",
          "[core][tools]") {
  std::string options = "[";
  for (int i = 0; i < 10000; ++i) {
    options += (i ? ",\"o" : "\"o") + std::to_string(i) + "\"";
  }
  options += "]";
  const absl::Status status =
      Validate(kToolPulseQuestion, R"({"question":"q","options":)" + options + "}");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(Message(status), Catch::Contains("more than 4096 values"));
  // Ten thousand repeats of a declared key are refused as duplicates or by the bound.
  std::string repeated = "{";
  for (int i = 0; i < 10000; ++i) {
    repeated += i ? R"(,"action":"list")" : R"("action":"list")";
  }
  repeated += "}";
  CHECK(Validate(kToolPulseQuery, repeated).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("nesting 1000 levels deep is refused without recursion", "[core][tools]") {
  const std::string deep_array = testing::NestedArrays(1000);
  std::string deep_object;
  for (int i = 0; i < 1000; ++i) {
    deep_object += "{\"a\":";
  }
  deep_object += "1" + std::string(1000, '}');
  for (const std::string& inner : {deep_array, deep_object}) {
    const absl::Status status = Validate(
        kToolPulseControl,
        R"({"type":"resource","resource_id":"a","capability":"c","reason":"r","params":{"p":)" +
            inner + "}}");
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(Message(status), Catch::Contains("nest deeper than 32 levels"));
  }
  // Just inside the bound, the schema (not the bound) refuses the nested value.
  const absl::Status shallow = Validate(
      kToolPulseControl,
      R"({"type":"resource","resource_id":"a","capability":"c","reason":"r","params":{"p":)" +
          testing::NestedArrays(static_cast<int>(kMaxArgumentDepth) - 2) + "}}");
  CHECK_THAT(Message(shallow), Catch::Contains("violates \"type\""));
}

TEST_CASE("invalid UTF-8 cannot slip past a length bound", "[core][tools]") {
  // RapidJSON skips maxLength on strings it cannot decode; the structural check refuses them.
  std::string invalid(kMaxFreeTextLength + 100, 'a');
  invalid[10] = '\xff';
  rapidjson::Document args(rapidjson::kObjectType);
  auto& alloc = args.GetAllocator();
  args.AddMember("finding_id", "f", alloc);
  args.AddMember("verdict", "present", alloc);
  args.AddMember(
      "evidence",
      rapidjson::Value(invalid.c_str(), static_cast<rapidjson::SizeType>(invalid.size()), alloc),
      alloc);
  const absl::Status status = Registry().ValidateArguments(kToolPatrolAssessFinding, args);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(Message(status), Catch::Contains("not valid UTF-8"));
  for (std::string bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    rapidjson::Document small(rapidjson::kObjectType);
    small.AddMember("resource_id",
                    rapidjson::Value(bad.c_str(), static_cast<rapidjson::SizeType>(bad.size()),
                                     small.GetAllocator()),
                    small.GetAllocator());
    CHECK(Registry().ValidateArguments(kToolPatrolActionCapabilities, small).code() ==
          absl::StatusCode::kInvalidArgument);
  }
  CHECK(
      Validate(kToolPatrolActionCapabilities, "{\"resource_id\":\"\xe2\x82\xac-\xf0\x9f\x98\x80\"}")
          .ok());
}

TEST_CASE("a NUL character in a value or key is refused", "[core][tools]") {
  // The pattern matcher reads C strings: without this check "c\0; reboot" would match.
  rapidjson::Document args(rapidjson::kObjectType);
  auto& alloc = args.GetAllocator();
  args.AddMember("type", "resource", alloc);
  args.AddMember("resource_id", "a", alloc);
  args.AddMember("reason", "r", alloc);
  const std::string smuggled("c\0; reboot", 10);
  args.AddMember("capability", rapidjson::Value(smuggled.c_str(), 10, alloc), alloc);
  const absl::Status status = Registry().ValidateArguments(kToolPulseControl, args);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(Message(status), Catch::Contains("NUL"));
  CHECK(Validate(kToolPulseRead, "{\"action\":\"status\",\"resource_id\":\"a\\u0000b\"}").code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("hostile keys are bounded and quoted safely in messages", "[core][tools]") {
  const std::string long_key(100000, 'k');
  const absl::Status status = Validate(kToolPulseQuery, "{\"" + long_key + "\":1}");
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(status).size() < 200);
  const absl::Status control = Validate(kToolPulseQuery, R"({"a\"b\n\u001b[31m":1})");
  CHECK(Message(control) == R"(undeclared tool argument "a\x22b\x0a\x1b[31m")");
}

TEST_CASE("non-finite numbers are refused", "[core][tools]") {
  for (double value :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    rapidjson::Document args(rapidjson::kObjectType);
    auto& alloc = args.GetAllocator();
    args.AddMember("type", "resource", alloc);
    args.AddMember("resource_id", "a", alloc);
    args.AddMember("capability", "c", alloc);
    args.AddMember("reason", "r", alloc);
    rapidjson::Value params(rapidjson::kObjectType);
    params.AddMember("n", rapidjson::Value(value), alloc);
    args.AddMember("params", params, alloc);
    const absl::Status status = Registry().ValidateArguments(kToolPulseControl, args);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(Message(status), Catch::Contains("not finite"));
  }
}

TEST_CASE("concurrent validation against one schema stays correct", "[core][tools]") {
  // The pattern matcher of RapidJSON 1.1.0 keeps scratch state; the registry serializes it.
  const ToolRegistry& registry = Registry();
  const auto good =
      Json(R"({"type":"resource","resource_id":"a","capability":"svc.restart","reason":"r"})");
  const auto bad =
      Json(R"({"type":"resource","resource_id":"a","capability":"Svc Restart","reason":"r"})");
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const bool use_good = (i + t) % 2 == 0;
        const bool ok = registry.ValidateArguments(kToolPulseControl, use_good ? good : bad).ok();
        wrong[t] += ok != use_good ? 1 : 0;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  CHECK(wrong == std::vector<int>(4, 0));
}

}  // namespace
}  // namespace pulse::core
