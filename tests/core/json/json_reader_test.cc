#include "pulse/core/json/json_reader.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

enum class Color { kRed, kGreen, kUnset };
constexpr std::array<WireName<Color>, 3> kColors = {{
    {Color::kRed, "red"},
    {Color::kGreen, "green"},
    {Color::kUnset, ""},
}};
std::optional<Color> ParseColor(std::string_view text) { return WireValueOf(kColors, text); }

constexpr JsonPresence kRequired = JsonPresence::kRequired;

rapidjson::Document Doc(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(text);
  REQUIRE(doc.ok());
  return std::move(doc).value();
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST_CASE("a strict object reads its members and accepts nothing else", "[core][json]") {
  const rapidjson::Document doc =
      Doc(R"({"name":"web","count":3,"on":true,"ratio":0.5,"at":"2027-01-15T08:00:00Z",)"
          R"("tags":["a","b"],"color":"green","blob":{"k":1},"gone":null})");
  JsonObjectReader in(doc, "thing");
  CHECK(in.String("name", {16, kRequired}) == "web");
  CHECK(in.Int("count", 0, 10, kRequired) == 3);
  CHECK(in.Bool("on") == true);
  CHECK(in.Number("ratio") == 0.5);
  CHECK(in.Time("at", kRequired).has_value());
  CHECK(in.StringArray("tags", 4, 8) == std::vector<std::string>{"a", "b"});
  CHECK(in.Enum("color", ParseColor, kRequired) == Color::kGreen);
  const rapidjson::Value* blob = in.Member("blob");
  REQUIRE(blob != nullptr);
  CHECK(blob->IsObject());
  CHECK_FALSE(in.String("gone", {16}).has_value());  // null is absent
  CHECK_FALSE(in.Int("absent", 0, 1).has_value());
  CHECK(in.Finish().ok());
}

TEST_CASE("unknown members are refused, as read or as declared", "[core][json]") {
  const rapidjson::Document doc = Doc(R"({"a":1,"extra":2})");
  JsonObjectReader as_read(doc, "thing");
  CHECK(as_read.Int("a", 0, 9).has_value());
  CHECK(as_read.ok());
  CHECK(Message(as_read.Finish()) == "thing has an unknown member \"extra\"");

  JsonObjectReader declared(doc, "thing");
  const absl::Status status = declared.ExpectMembers({"a"});
  CHECK(absl::IsInvalidArgument(status));
  CHECK(Message(status) == "thing has an unknown member \"extra\"");

  // An untrusted name is cut and made printable UTF-8 before it is echoed.
  const rapidjson::Document hostile = Doc("{\"" + std::string(100, 'x') + "\\u00ff\":1}");
  JsonObjectReader cut(hostile, "thing");
  CHECK(Message(cut.Finish()) == "thing has an unknown member \"" + std::string(64, 'x') + "\"");
}

TEST_CASE("a repeated member is refused before any member is read", "[core][json]") {
  const rapidjson::Document doc = Doc(R"({"a":1,"b":"x","a":2})");
  JsonObjectReader in(doc, "thing");
  CHECK_FALSE(in.ok());
  CHECK(in.Int("a", 0, 9) == 1);  // still readable; the first error stands
  CHECK(Message(in.Finish()) == "thing has a duplicate member \"a\"");

  // Declared: the first offending member in document order is the one reported.
  const rapidjson::Document both = Doc(R"({"x":0,"a":1,"a":2})");
  JsonObjectReader declared(both, "thing");
  CHECK(Message(declared.ExpectMembers({"a"})) == "thing has an unknown member \"x\"");
  const rapidjson::Document dup_first = Doc(R"({"a":1,"a":2,"x":0})");
  JsonObjectReader declared2(dup_first, "thing");
  CHECK(Message(declared2.ExpectMembers({"a"})) == "thing has a duplicate member \"a\"");
}

TEST_CASE("wrong types are refused with the member's path", "[core][json]") {
  const rapidjson::Document doc =
      Doc(R"({"s":1,"i":"1","f":1.5,"e":1e3,"big":9223372036854775808,"b":"true","n":"1",)"
          R"("t":1800000000,"l":"a","o":[]})");
  struct Case {
    const char* key;
    std::string want;
  };
  const Case cases[] = {
      {"s", "x.s must be a string"},           {"i", "x.i must be an integer"},
      {"f", "x.f must be an integer"},         {"e", "x.e must be an integer"},
      {"big", "x.big must be an integer"},     {"b", "x.b must be a boolean"},
      {"n", "x.n must be a number"},           {"t", "x.t must be an RFC 3339 string"},
      {"l", "x.l must be an array of strings"}};
  for (const Case& c : cases) {
    JsonObjectReader in(doc, "x");
    const std::string_view key = c.key;
    if (key == "s") {
      CHECK_FALSE(in.String(key, {8}).has_value());
    } else if (key == "b") {
      CHECK_FALSE(in.Bool(key).has_value());
    } else if (key == "n") {
      CHECK_FALSE(in.Number(key).has_value());
    } else if (key == "t") {
      CHECK_FALSE(in.Time(key).has_value());
    } else if (key == "l") {
      CHECK(in.StringArray(key, 4, 8).empty());
    } else {
      CHECK_FALSE(in.Int(key, 0, 10).has_value());
    }
    CHECK(Message(in.status()) == c.want);
  }
}

TEST_CASE("oversized strings, arrays and out-of-range numbers are refused", "[core][json]") {
  const rapidjson::Document doc =
      Doc(R"({"s":"12345","ok":"1234","n":11,"l":["a","b","c"],"w":["toolong"]})");
  JsonObjectReader in(doc, "x");
  CHECK(in.String("ok", {4}) == "1234");
  CHECK(in.ok());
  CHECK_FALSE(in.String("s", {4}).has_value());
  CHECK(Message(in.status()) == "x.s is longer than 4 bytes");
  CHECK(in.error()->problem == JsonReadProblem::kTooLong);
  CHECK(in.error()->high == 4);

  JsonObjectReader range(doc, "x");
  CHECK_FALSE(range.Int("n", -1, 10).has_value());
  CHECK(Message(range.status()) == "x.n must be between -1 and 10");
  JsonObjectReader items(doc, "x");
  CHECK(items.StringArray("l", 2, 8).empty());
  CHECK(Message(items.status()) == "x.l has more than 2 items");
  JsonObjectReader item(doc, "x");
  CHECK(item.StringArray("w", 2, 4).empty());
  CHECK(Message(item.status()) == "x.w must hold bounded, valid UTF-8 strings");
}

TEST_CASE("text must meet the reader's rule", "[core][json]") {
  const rapidjson::Document doc =
      Doc("{\"bad\":\"\xC3(\",\"ctl\":\"a\\u0001b\",\"nul\":\"a\\u0000b\"}");
  JsonObjectReader utf8(doc, "x");
  CHECK_FALSE(utf8.String("bad", {8}).has_value());
  CHECK(Message(utf8.status()) == "x.bad is not valid UTF-8");
  JsonObjectReader lenient(doc, "x");
  CHECK(lenient.String("ctl", {8}) ==
        "a\x01"
        "b");
  CHECK(lenient.String("nul", {8}) == std::string("a\0b", 3));
  CHECK(lenient.ok());

  JsonObjectReader clean(doc, "x", JsonReaderOptions{.text = JsonTextRule::kCleanText});
  CHECK_FALSE(clean.String("ctl", {8}).has_value());
  CHECK(clean.error()->problem == JsonReadProblem::kBadText);
}

TEST_CASE("required members must be present, non-null and non-empty", "[core][json]") {
  const rapidjson::Document doc = Doc(R"({"empty":"","blank":"  ","nil":null})");
  for (const char* key : {"missing", "nil"}) {
    JsonObjectReader in(doc, "x");
    CHECK_FALSE(in.String(key, {8, kRequired}).has_value());
    CHECK(Message(in.status()) == std::string("x.") + key + " is required");
  }
  JsonObjectReader empty(doc, "x");
  CHECK_FALSE(empty.String("empty", {8, kRequired}).has_value());
  CHECK(Message(empty.status()) == "x.empty must not be empty");
  JsonObjectReader blank(doc, "x");
  CHECK(blank.String("blank", {8, kRequired}) == "  ");
  CHECK_FALSE(blank.String("blank", {8, kRequired, /*trim=*/true}).has_value());
  CHECK(blank.error()->problem == JsonReadProblem::kEmpty);
}

TEST_CASE("enums read the exact string, or a bounded text first", "[core][json]") {
  const rapidjson::Document doc = Doc(R"({"a":"RED","b":"","c":" red "})");
  JsonObjectReader exact(doc, "x");
  CHECK(exact.Enum("b", ParseColor) == Color::kUnset);  // "" is a spelling here
  CHECK_FALSE(exact.Enum("a", ParseColor).has_value());
  CHECK(Message(exact.status()) == "x.a is not a known value");

  JsonObjectReader text(doc, "x");
  CHECK_FALSE(text.Enum("b", ParseColor, JsonStringRule{8}).has_value());  // empty: absent
  CHECK(text.Enum("c", ParseColor, JsonStringRule{8, kRequired, true}) == Color::kRed);
  CHECK(text.ok());
  CHECK_FALSE(text.Enum("b", ParseColor, JsonStringRule{8, kRequired}).has_value());
  CHECK(Message(text.status()) == "x.b must not be empty");
}

TEST_CASE("the first problem wins and a caller's renderer words it", "[core][json]") {
  const rapidjson::Document doc = Doc(R"({"a":"x","b":2,"z":0})");
  JsonObjectReader in(doc, "x", JsonReaderOptions{.render = [](const JsonReadError& e) {
                        return absl::OutOfRangeError(e.member + "/" + JsonMemberProblemText(e));
                      }});
  CHECK_FALSE(in.Int("a", 0, 1).has_value());
  CHECK_FALSE(in.Int("b", 0, 1).has_value());
  in.Fail("c", "is wrong in a way only the caller knows");
  const absl::Status status = in.Finish();
  CHECK(absl::IsOutOfRange(status));
  CHECK(Message(status) == "a/must be an integer");

  JsonObjectReader custom(doc, "x");
  custom.Fail("a", "is wrong in a way only the caller knows");
  CHECK(Message(custom.status()) == "x.a is wrong in a way only the caller knows");
  CHECK(custom.error()->problem == JsonReadProblem::kInvalid);
}

TEST_CASE("a value that is not an object is refused up front", "[core][json]") {
  const rapidjson::Document doc = Doc("[1]");
  JsonObjectReader in(doc, "thing");
  CHECK_FALSE(in.String("a", {8, kRequired}).has_value());
  CHECK(Message(in.ExpectMembers({"a"})) == "thing must be a JSON object");
  CHECK(Message(in.Finish()) == "thing must be a JSON object");
}

}  // namespace
}  // namespace pulse::core
