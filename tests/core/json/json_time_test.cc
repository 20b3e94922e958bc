#include "pulse/core/json/json_time.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/time/civil_time.h"

namespace pulse::core {
namespace {

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

TEST_CASE("times are written in UTC with only the fractional digits needed", "[core][json]") {
  CHECK(FormatRfc3339(Utc(2027, 1, 15, 8)) == "2027-01-15T08:00:00Z");
  CHECK(FormatRfc3339(Utc(2027, 1, 15, 8) + absl::Milliseconds(250)) == "2027-01-15T08:00:00.25Z");
  CHECK(FormatRfc3339(Utc(2027, 1, 15, 8) + absl::Nanoseconds(5)) ==
        "2027-01-15T08:00:00.000000005Z");
  CHECK(FormatRfc3339(absl::UnixEpoch()) == "1970-01-01T00:00:00Z");
}

TEST_CASE("times round trip exactly across the accepted range", "[core][json]") {
  for (absl::Time t : {Utc(1, 1, 1), Utc(1969, 12, 31, 23, 59, 59), absl::UnixEpoch(),
                       Utc(2027, 1, 15, 8) + absl::Nanoseconds(123456789),
                       Utc(9999, 12, 31, 23, 59, 59) + absl::Nanoseconds(999999999)}) {
    const std::string text = FormatRfc3339(t);
    INFO(text);
    CHECK(ParseRfc3339(text) == t);
  }
}

TEST_CASE("any offset is read, and the letters may be lower case", "[core][json]") {
  CHECK(ParseRfc3339("2027-01-15T10:00:00+02:00") == Utc(2027, 1, 15, 8));
  CHECK(ParseRfc3339("2027-01-15T03:30:00-04:30") == Utc(2027, 1, 15, 8));
  CHECK(ParseRfc3339("2027-01-15t08:00:00z") == Utc(2027, 1, 15, 8));
}

TEST_CASE("malformed and out-of-range times are refused", "[core][json]") {
  for (const char* bad :
       {"", "yesterday", "2027-13-45T99:00:00Z", "2027-02-30T00:00:00Z", "2027-01-15T08:00:00",
        "2027-01-15 08:00:00Z", "1800000000", "10000-01-01T00:00:00Z", "infinite-future"}) {
    INFO(bad);
    CHECK_FALSE(ParseRfc3339(bad).has_value());
  }
  const std::string long_fraction = "2027-01-15T08:00:00." + std::string(50, '1') + "Z";
  CHECK_FALSE(ParseRfc3339(long_fraction).has_value());
  CHECK(ParseRfc3339(long_fraction, Rfc3339Limits{.max_bytes = 128}).has_value());
}

TEST_CASE("limits set the earliest year and how strict the text is", "[core][json]") {
  const Rfc3339Limits wire{.min_year = 1970, .max_bytes = 40, .visible_ascii_only = true};
  CHECK(ParseRfc3339("1970-01-01T00:00:00Z", wire) == absl::UnixEpoch());
  CHECK_FALSE(ParseRfc3339("1969-12-31T23:59:59Z", wire).has_value());
  CHECK(ParseRfc3339("1969-12-31T23:59:59Z").has_value());
  // absl skips surrounding whitespace; only visible_ascii_only refuses it.
  CHECK(ParseRfc3339(" 2027-01-15T08:00:00Z ") == Utc(2027, 1, 15, 8));
  CHECK_FALSE(ParseRfc3339(" 2027-01-15T08:00:00Z", wire).has_value());
  CHECK_FALSE(ParseRfc3339("2027-01-15T08:00:00Z\t", wire).has_value());
}

}  // namespace
}  // namespace pulse::core
