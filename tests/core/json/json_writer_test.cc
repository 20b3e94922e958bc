#include "pulse/core/json/json_writer.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

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

// What RapidJSON's own writer makes of the same object: the reference the writer's quoting is
// held to, byte for byte.
std::string RapidJsonObject(const std::vector<std::pair<std::string, std::string>>& members) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  for (const auto& [key, value] : members) {
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string OursObject(const std::vector<std::pair<std::string, std::string>>& members) {
  JsonWriter w;
  w.StartObject();
  for (const auto& [key, value] : members) {
    w.Member(key, value);
  }
  w.EndObject();
  return w.Take();
}

TEST_CASE("keys and strings are quoted and escaped byte for byte as RapidJSON's writer does",
          "[core][json]") {
  // Every ASCII byte, alone and between others, as a key and as a value.
  std::vector<std::pair<std::string, std::string>> members;
  for (int c = 0; c < 0x80; ++c) {
    const std::string one(1, static_cast<char>(c));
    members.emplace_back("k" + one, one);
    members.emplace_back(one + "k", "a" + one + "b" + one + one);
  }
  // Multi-byte UTF-8 (2, 3 and 4 bytes), empty strings, and a long run with escapes spread
  // over the writer's 4096-byte chunks.
  members.emplace_back("", "");
  members.emplace_back("\xc3\xa9t\xc3\xa9", "\xe2\x82\xac \xf0\x9f\x98\x80 \"q\" \\ /");
  std::string long_value;
  for (int i = 0; i < 20000; ++i) {
    long_value += (i % 997 == 0) ? '\n' : (i % 331 == 0 ? '"' : static_cast<char>('a' + i % 26));
  }
  members.emplace_back("long", long_value);
  // Every ASCII byte at every place of the eight-byte words and sixteen-byte blocks the writer
  // tests at once, with UTF-8 around it (bytes from 0x80, which neither a borrow nor a signed
  // comparison may mistake for an escape).
  for (int c = 0; c < 0x80; ++c) {
    for (std::size_t at = 0; at < 40; ++at) {
      std::string value =
          "\xc3\xa9"
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN\xe2\x82\xac";
      value[2 + at] = static_cast<char>(c);
      members.emplace_back("w" + std::to_string(c) + "." + std::to_string(at), value);
    }
  }
  members.emplace_back("all escapes", std::string(9000, '\x01'));
  CHECK(OursObject(members) == RapidJsonObject(members));

  // Random valid UTF-8 with many control characters.
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> pick(0, 40);
  for (int round = 0; round < 200; ++round) {
    std::string value;
    const int n = pick(rng) * 50;
    for (int i = 0; i < n; ++i) {
      const int r = pick(rng);
      if (r < 10) {
        value += static_cast<char>(r * 3);  // control characters
      } else if (r < 12) {
        value += r == 10 ? '"' : '\\';
      } else if (r == 12) {
        value += "\xe2\x82\xac";
      } else {
        value += static_cast<char>(' ' + r * 2);
      }
    }
    const std::vector<std::pair<std::string, std::string>> one = {{value, value}};
    REQUIRE(OursObject(one) == RapidJsonObject(one));
    REQUIRE(IsStrictJson(OursObject(one)));
  }

  // JSON text as a string (what pulse-mcp writes as a tool result's text): quotes and
  // backslashes every few bytes, every pattern of them in a block, control characters rare.
  std::uniform_int_distribution<int> byte(0, 99);
  for (int round = 0; round < 2000; ++round) {
    std::string value;
    const int n = round % 200;
    for (int i = 0; i < n; ++i) {
      const int r = byte(rng);
      if (r < 25) {
        value += '"';
      } else if (r < 35) {
        value += '\\';
      } else if (r == 35) {
        value += static_cast<char>(round % 32);
      } else if (r < 40) {
        value += "\xc3\xa9";
      } else {
        value += static_cast<char>(' ' + r % 90);
      }
    }
    const std::vector<std::pair<std::string, std::string>> one = {{"json", value}};
    REQUIRE(OursObject(one) == RapidJsonObject(one));
  }
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
