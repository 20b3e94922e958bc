#include "pulse/core/json/json.h"

#include <catch2/catch.hpp>
#include <string>

namespace pulse::core {
namespace {

TEST_CASE("bounded parsing accepts one JSON value and rejects trailing text", "[core][json]") {
  auto ok = ParseJson(R"( {"a":[1,2,{"b":null}]} )");
  REQUIRE(ok.ok());
  CHECK(JsonDepth(*ok) == 3);
  CHECK_FALSE(ParseJson(R"({"a":1} {"b":2})").ok());
  CHECK_FALSE(ParseJson("").ok());
  CHECK_FALSE(ParseJson("{\"a\":").ok());
  CHECK_FALSE(ParseJson("{'a':1}").ok());
  CHECK_FALSE(ParseJson("\xff\xfe").ok());
}

TEST_CASE("bounded parsing refuses oversized and deeply nested input without crashing",
          "[core][json]") {
  std::string deep(500000, '[');
  deep += std::string(500000, ']');
  auto too_deep = ParseJson(deep, JsonLimits{1 << 21, 64});
  REQUIRE_FALSE(too_deep.ok());
  CHECK(std::string(too_deep.status().message()).find("nesting") != std::string::npos);

  auto big = ParseJson("\"" + std::string(2 << 20, 'x') + "\"");
  REQUIRE_FALSE(big.ok());
  CHECK(std::string(big.status().message()).find("limit") != std::string::npos);

  std::string at_limit(64, '[');
  at_limit += std::string(64, ']');
  CHECK(ParseJson(at_limit).ok());
  CHECK_FALSE(ParseJson("[" + at_limit + "]").ok());
}

TEST_CASE("canonical JSON sorts keys at every level", "[core][json]") {
  auto a = ParseJson(R"({"b":1,"a":{"y":[{"d":1,"c":2}],"x":"s"}})");
  auto b = ParseJson(R"({"a":{"x":"s","y":[{"c":2,"d":1}]},"b":1})");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(CanonicalJson(*a) == CanonicalJson(*b));
  CHECK(CanonicalJson(*a) == R"({"a":{"x":"s","y":[{"c":2,"d":1}]},"b":1})");
  CHECK(ToJsonString(*a) == R"({"b":1,"a":{"y":[{"d":1,"c":2}],"x":"s"}})");
}

TEST_CASE("member helpers never assert on wrong types", "[core][json]") {
  auto doc = ParseJson(R"({"s":"x","b":true,"i":7,"f":1.5,"n":null})");
  REQUIRE(doc.ok());
  CHECK(GetString(*doc, "s") == std::string_view("x"));
  CHECK_FALSE(GetString(*doc, "b").has_value());
  CHECK(GetBool(*doc, "b") == true);
  CHECK_FALSE(GetBool(*doc, "s").has_value());
  CHECK(GetInt64(*doc, "i") == 7);
  CHECK_FALSE(GetInt64(*doc, "f").has_value());
  CHECK(GetMember(*doc, "missing") == nullptr);
  auto arr = ParseJson("[1]");
  REQUIRE(arr.ok());
  CHECK(GetMember(*arr, "s") == nullptr);
  CHECK_FALSE(GetString(*arr, "s").has_value());
}

}  // namespace
}  // namespace pulse::core
