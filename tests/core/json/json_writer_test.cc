#include "pulse/core/json/json_writer.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "rapidjson/document.h"

namespace pulse::core {
namespace {

// True when `json` is one JSON value and valid UTF-8 (RapidJSON checks the encoding).
bool IsStrictJson(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.data(), json.size());
  return !doc.HasParseError();
}

TEST_CASE("the writer emits valid UTF-8 whatever it is handed", "[core][json]") {
  JsonWriter w;
  w.StartObject();
  w.Member("k\xFE", "v\x80 and \xC3(");
  w.Key("list");
  w.StringArray(std::vector<std::string>{"ok", "\xED\xA0\x80"});
  w.EndObject();
  const std::string json = w.Take();
  CHECK(IsStrictJson(json));
  CHECK(json ==
        "{\"k\xEF\xBF\xBD\":\"v\xEF\xBF\xBD and \xEF\xBF\xBD(\","
        "\"list\":[\"ok\",\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"]}");
}

TEST_CASE("member helpers write typed values and omit what is unset", "[core][json]") {
  JsonWriter w;
  w.StartObject();
  w.Member("s", "literal");
  w.Member("b", true);
  w.Member("i", -7);
  w.Member("u", std::numeric_limits<std::uint64_t>::max());
  w.Member("n", std::int64_t{1} << 53);
  w.TimeMember("t", absl::UnixEpoch() + absl::Milliseconds(1500));
  w.MemberIfNotEmpty("empty", "");
  w.MemberIfNotEmpty("text", "x");
  w.TimeMemberIfSet("unset", std::nullopt);
  w.TimeMemberIfSet("set", absl::UnixEpoch());
  w.NumberMemberIfFinite("nan", std::numeric_limits<double>::quiet_NaN());
  w.NumberMemberIfFinite("inf", std::numeric_limits<double>::infinity());
  w.NumberMemberIfFinite("none", std::nullopt);
  w.NumberMemberIfFinite("pct", 86.0);
  w.EndObject();
  CHECK(w.Take() ==
        R"({"s":"literal","b":true,"i":-7,"u":18446744073709551615,"n":9007199254740992,)"
        R"("t":"1970-01-01T00:00:01.5Z","text":"x","set":"1970-01-01T00:00:00Z","pct":86.0})");
}

TEST_CASE("a non-finite number is written as null so the output stays JSON", "[core][json]") {
  JsonWriter w;
  w.StartArray();
  w.Double(1.25);
  w.Double(std::numeric_limits<double>::infinity());
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.EndArray();
  CHECK(w.Take() == "[1.25,null,null]");
}

TEST_CASE("values are copied with their strings sanitized and raw values verbatim",
          "[core][json]") {
  rapidjson::Document doc;
  doc.SetObject();
  doc.AddMember("a", rapidjson::Value("x\xFF", doc.GetAllocator()), doc.GetAllocator());
  rapidjson::Value list(rapidjson::kArrayType);
  list.PushBack(1, doc.GetAllocator())
      .PushBack(rapidjson::Value().SetUint64(1ULL << 63), doc.GetAllocator());
  list.PushBack(false, doc.GetAllocator()).PushBack(rapidjson::Value(), doc.GetAllocator());
  doc.AddMember("b", list, doc.GetAllocator());
  JsonWriter w;
  w.StartObject();
  w.Key("copy");
  w.Value(doc);
  w.Key("raw");
  w.RawValue(R"({"z":1,"a":[2]})");
  w.Key("raws");
  w.StartArray();
  w.RawValue("[]");
  w.RawValue(R"("s")");
  w.Int(3);
  w.EndArray();
  w.EndObject();
  const std::string json = w.Take();
  CHECK(json ==
        "{\"copy\":{\"a\":\"x\xEF\xBF\xBD\",\"b\":[1,9223372036854775808,false,null]},"
        "\"raw\":{\"z\":1,\"a\":[2]},\"raws\":[[],\"s\",3]}");
  CHECK(IsStrictJson(json));
}

}  // namespace
}  // namespace pulse::core
