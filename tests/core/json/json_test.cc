#include "pulse/core/json/json.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "pulse/core/json/json_scan.h"

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

// ScanJson must accept exactly what ParseJson accepts, and see the same shape.
void CheckScanAgreesWithParse(const std::string& text, const JsonLimits& limits) {
  INFO("text: " << text.substr(0, 200));
  const auto parsed = ParseJson(text, limits);
  const auto scanned = ScanJson(text, limits);
  REQUIRE(scanned.ok() == parsed.ok());
  if (!parsed.ok()) {
    CHECK(scanned.status().code() == parsed.status().code());
    return;
  }
  CHECK(scanned->type == parsed->GetType());
  const std::size_t size =
      parsed->IsObject() ? parsed->MemberCount() : (parsed->IsArray() ? parsed->Size() : 0);
  CHECK(scanned->size == size);
}

TEST_CASE("scanning a JSON text accepts exactly what parsing accepts, and sees its shape",
          "[core][json]") {
  const JsonLimits limits{1 << 16, 8};
  const std::vector<std::string> texts = {
      R"({"a":[1,2,{"b":null}],"c":"x","d":{}})",
      R"([1,"two",[3],{"four":4},null,true,false,-5.5e3])",
      R"( [] )",
      "{}",
      "\"a string\"",
      "42",
      "-0.0",
      "null",
      "true",
      std::string("\"nul \0 inside\"", 14),
      "\"\xff not UTF-8\"",
      R"({"a":1} {"b":2})",
      "",
      " ",
      "{\"a\":",
      "{'a':1}",
      "[1,]",
      "[1 2]",
      "01",
      "\"\\x\"",
      std::string(8, '[') + std::string(8, ']'),
      std::string(9, '[') + std::string(9, ']'),
      std::string(1 << 16, ' ') + "1",
  };
  for (const std::string& text : texts) {
    CheckScanAgreesWithParse(text, limits);
  }
  // Every prefix and many one-byte changes of a document with every kind of value.
  const std::string doc =
      R"({"items":[{"id":"a1","n":1,"x":1.5e-3,"ok":true,"no":false,"none":null,)"
      R"("s":"q\"\\\u00e9\u00e9"},)"
      R"([[[[1]]]],{"deep":{"er":{"est":[]}}}],"count":3,"next":"c=="})";
  for (std::size_t n = 0; n <= doc.size(); ++n) {
    CheckScanAgreesWithParse(doc.substr(0, n), limits);
  }
  std::mt19937 rng(29);
  const std::string alphabet = "{}[]\",:0123456789.eE+-tfnul \\xa";
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = doc;
    for (int k = 0; k < 1 + round % 3; ++k) {
      mutated[rng() % mutated.size()] = alphabet[rng() % alphabet.size()];
    }
    CheckScanAgreesWithParse(mutated, limits);
  }
}

TEST_CASE("scanning agrees with parsing on texts like pulse-server's replies, changed at random",
          "[core][json]") {
  // ScanJson scans the common subset itself (strings 16 or 8 bytes at a time, plain numbers,
  // escapes other than surrogates) and leaves the rest to RapidJSON: held to ParseJson over a
  // reply-like text with long strings, every escape, UTF-8, whitespace and nesting up to the
  // limit, with bytes replaced, inserted and removed.
  const JsonLimits limits{1 << 16, 8};  // the text nests 7 deep
  const std::string doc =
      "{\"resources\":[{\"canonical_id\":\"vm:101\",\"name\":\"web server \\u00e9 \xc3\xa9\","
      "\"status\":\"running\",\"findings\":{\"total\":12,\"critical\":0,\"ratio\":-0.25},"
      "\"note\":\"tab\\there \\\"quoted\\\" back\\\\slash \\/ \\b\\f\\n\\r\","
      "\"flags\":[true,false,null],\"deep\":[[[[]]]]},\n {\"canonical_id\":\"node:pve1\", "
      "\"empty\":{},\"list\":[],\"long\":\"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH\"}],"
      "\t\"generated_at\":\"2026-12-04T15:00:00Z\",\"count\":2}\r\n";
  CheckScanAgreesWithParse(doc, limits);
  // UTF-16 surrogates, which the scan leaves to RapidJSON: a pair, a lone high or low one, a
  // high one before something else.
  for (const std::string text :
       {R"("\ud83d\ude00")", R"("\ud83d")", R"("\ude00")", R"("\ud83d\u0041")", R"("\ud83dx")"}) {
    CheckScanAgreesWithParse(text, limits);
  }
  for (std::size_t n = 0; n <= doc.size(); ++n) {
    CheckScanAgreesWithParse(doc.substr(0, n), limits);
  }
  std::mt19937 rng(2912);
  std::string alphabet = "{}[]\",:0123456789.eE+-tfnul \t\n\\/ubdDaA";
  alphabet += std::string("\0\x01\x1f\x7f\x80\xc3\xff", 7);
  for (int round = 0; round < 20000; ++round) {
    std::string mutated = doc;
    for (int k = 0; k < 1 + round % 3; ++k) {
      const std::size_t at = rng() % mutated.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          mutated[at] = c;
          break;
        case 1:
          mutated.insert(mutated.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          mutated.erase(at, 1);
          break;
      }
    }
    CheckScanAgreesWithParse(mutated, limits);
  }
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
