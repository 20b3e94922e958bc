#include "pulse/core/tools/tool_schema.h"

#include <catch2/catch.hpp>
#include <string>

#include "tools_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST_CASE("closed schemas of every supported shape are accepted", "[core][tools]") {
  const std::string_view schemas[] = {
      R"({"type":"object","additionalProperties":false})",
      R"({"type":"object","additionalProperties":false,"properties":{
          "e":{"enum":["a","b"]},
          "m":{"type":"object","maxProperties":4,"additionalProperties":{"type":["string","null"]}},
          "t":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false},
          "u":{"anyOf":[{"type":"string"},{"type":"object","additionalProperties":false}]},
          "n":{"type":"object","additionalProperties":false,"properties":{
                "deep":{"type":"array","items":{"type":"object","additionalProperties":false}}}}
      },"required":["e"]})",
  };
  for (std::string_view schema : schemas) {
    INFO(std::string(schema));
    const absl::Status status = ValidateToolSchema(Json(schema));
    INFO(status.ToString());
    CHECK(status.ok());
  }
}

TEST_CASE("open or ambiguous schemas are refused with their location", "[core][tools]") {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"([])", "input schema is not a JSON object"},
      {R"({"additionalProperties":false})", "input schema root must declare \"type\": \"object\""},
      {R"({"type":"object"})", "input schema root must set \"additionalProperties\": false"},
      {R"({"type":"object","additionalProperties":false,"properties":{"o":{"type":"object"}}})",
       "input schema at \"/properties/o\" must set \"additionalProperties\": false (or be a "
       "scalar map with \"maxProperties\")"},
      {R"({"type":"object","additionalProperties":false,"properties":{
          "m":{"type":"object","additionalProperties":{"type":"string"}}}})",
       "input schema at \"/properties/m\" must set \"additionalProperties\": false (or be a "
       "scalar map with \"maxProperties\")"},
      {R"({"type":"object","additionalProperties":false,"properties":{
          "m":{"type":"object","maxProperties":2,"additionalProperties":{"type":"object"}}}})",
       "input schema at \"/properties/m/additionalProperties\" must declare only scalar types"},
      {R"({"type":"object","additionalProperties":false,"properties":{
          "m":{"type":"object","maxProperties":2,"additionalProperties":{}}}})",
       "input schema at \"/properties/m/additionalProperties\" must declare only scalar types"},
      {R"({"type":"object","additionalProperties":false,"properties":{"x":{}}})",
       "input schema at \"/properties/x\" declares no type, so it would accept any value"},
      {R"({"type":"object","additionalProperties":false,"properties":{"x":{"type":"thing"}}})",
       "input schema at \"/properties/x\" names an unknown type"},
      {R"({"type":"object","additionalProperties":false,"properties":{"x":{"type":[]}}})",
       "input schema at \"/properties/x\" has a malformed \"type\""},
      {R"({"type":"object","additionalProperties":false,"properties":{"a":{"type":"array"}}})",
       "input schema at \"/properties/a\" is an array without \"items\""},
      {R"({"type":"object","additionalProperties":false,"properties":{
          "a":{"type":"array","items":[{"type":"string"}]}}})",
       "input schema at \"/properties/a\" is a tuple array without \"additionalItems\": false"},
      {R"({"type":"object","additionalProperties":false,"properties":{
          "u":{"anyOf":[{"type":"string"},{"type":"object"}]}}})",
       "input schema at \"/properties/u/anyOf/1\" must set \"additionalProperties\": false (or "
       "be a scalar map with \"maxProperties\")"},
      {R"({"type":"object","additionalProperties":false,"properties":{"u":{"oneOf":[]}}})",
       "input schema at \"/properties/u\" has a malformed \"oneOf\""},
      {R"({"type":"object","additionalProperties":false,"patternProperties":{"^a":{"type":"string"}}})",
       "input schema at \"#\" uses \"patternProperties\", which tool schemas may not"},
      {R"({"type":"object","additionalProperties":false,"properties":{"r":{"$ref":"#"}}})",
       "input schema at \"/properties/r\" uses \"$ref\", which tool schemas may not"},
      {R"({"type":"object","additionalProperties":false,"required":["x"]})",
       "input schema at \"#\" requires a property it does not declare"},
      {R"({"type":"object","additionalProperties":false,"required":"x","properties":{"x":{"type":"string"}}})",
       "input schema at \"#\" has a malformed \"required\""},
      {R"({"type":"object","additionalProperties":false,"properties":{"e":{"enum":[]}}})",
       "input schema at \"/properties/e\" has a malformed \"enum\""},
      {R"({"type":"object","additionalProperties":false,"properties":{"p":{"type":"string","pattern":7}}})",
       "input schema at \"/properties/p\" has a non-string pattern"},
      {R"({"type":"object","additionalProperties":false,"properties":[]})",
       "input schema at \"#\" has a malformed \"properties\""},
      {R"({"type":"object","additionalProperties":false,"properties":{"x":"string"}})",
       "input schema at \"/properties/x\" is not a JSON object"},
  };
  for (const auto& [schema, message] : cases) {
    INFO(std::string(schema));
    const absl::Status status = ValidateToolSchema(Json(schema));
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Message(status) == message);
  }
}

TEST_CASE("patterns must compile in the validator's regex dialect", "[core][tools]") {
  for (std::string_view pattern : {"[a-", "a{2", "*a", "a|*", "[]"}) {
    const std::string schema =
        R"({"type":"object","additionalProperties":false,"properties":{"p":{"type":"string","pattern":")" +
        std::string(pattern) + "\"}}}";
    INFO(schema);
    CHECK(ValidateToolSchema(Json(schema)).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("schema nesting beyond the bound is refused", "[core][tools]") {
  std::string schema;
  std::string tail;
  for (std::size_t i = 0; i < kMaxToolSchemaDepth + 2; ++i) {
    schema += R"({"type":"object","additionalProperties":false,"properties":{"a":)";
    tail += "}}";
  }
  schema += R"({"type":"string"})" + tail;
  CHECK_THAT(Message(ValidateToolSchema(Json(schema))), Catch::Contains("nests deeper than"));
}

TEST_CASE("argument structure bounds are exact", "[core][tools]") {
  // Depth: the root object is level 1.
  const std::string at_bound =
      "{\"a\":" + testing::NestedArrays(static_cast<int>(kMaxArgumentDepth) - 1) + "}";
  const std::string over_bound =
      "{\"a\":" + testing::NestedArrays(static_cast<int>(kMaxArgumentDepth)) + "}";
  CHECK(CheckArgumentStructure(Json(at_bound)).ok());
  CHECK(Message(CheckArgumentStructure(Json(over_bound))) ==
        "tool arguments nest deeper than 32 levels");

  // Values: the root object counts as one.
  auto array_of = [](std::size_t n) {
    std::string s = "{\"a\":[";
    for (std::size_t i = 0; i < n; ++i) {
      s += i ? ",1" : "1";
    }
    return s + "]}";
  };
  CHECK(CheckArgumentStructure(Json(array_of(kMaxArgumentValues - 2))).ok());
  CHECK(Message(CheckArgumentStructure(Json(array_of(kMaxArgumentValues - 1)))) ==
        "tool arguments hold more than 4096 values");

  const std::string longest(kMaxArgumentStringBytes, 's');
  CHECK(CheckArgumentStructure(Json("{\"a\":\"" + longest + "\"}")).ok());
  CHECK(Message(CheckArgumentStructure(Json("{\"a\":\"" + longest + "s\"}"))) ==
        "a tool argument string is longer than 65536 bytes");

  const std::string key(kMaxArgumentKeyBytes, 'k');
  CHECK(CheckArgumentStructure(Json("{\"" + key + "\":1}")).ok());
  CHECK(Message(CheckArgumentStructure(Json("{\"" + key + "k\":1}"))) ==
        "a tool argument name is longer than 256 bytes");
  CHECK(Message(CheckArgumentStructure(Json(R"({"a":{"b":1,"b":2}})"))) ==
        "duplicate tool argument \"b\"");
  CHECK(Message(CheckArgumentStructure(Json("[]"))) == "tool arguments must be a JSON object");
}

TEST_CASE("messages quote untrusted text safely and briefly", "[core][tools]") {
  CHECK(QuoteForMessage("plain_name") == "plain_name");
  CHECK(QuoteForMessage("a\"b\\c\n\x01\xff") == "a\\x22b\\x5cc\\x0a\\x01\\xff");
  CHECK(QuoteForMessage(std::string(100, 'x')) == std::string(64, 'x') + "...");
  CHECK(QuoteForMessage("abcdef", 3) == "abc...");
}

}  // namespace
}  // namespace pulse::core
