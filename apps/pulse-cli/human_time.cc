#include "human_time.h"

#include <cstdint>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"

namespace pulse::cli {
namespace {

struct Unit {
  const char* name;
  std::int64_t seconds;
};
constexpr Unit kUnits[] = {{"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}};

}  // namespace

std::string HumanDuration(absl::Duration d) {
  if (d < absl::ZeroDuration()) {
    d = -d;
  }
  const std::int64_t total = absl::ToInt64Seconds(d);
  for (std::size_t i = 0; i < std::size(kUnits); ++i) {
    const Unit& unit = kUnits[i];
    if (total < unit.seconds && unit.seconds > 1) {
      continue;
    }
    const std::int64_t whole = total / unit.seconds;
    std::string out = absl::StrCat(whole, " ", unit.name);
    if (i + 1 < std::size(kUnits)) {
      const Unit& next = kUnits[i + 1];
      const std::int64_t rest = (total % unit.seconds) / next.seconds;
      if (rest > 0) {
        absl::StrAppend(&out, " ", rest, " ", next.name);
      }
    }
    return out;
  }
  return "0 s";
}

std::string RelativeTime(absl::Time t, absl::Time now) {
  const absl::Duration d = now - t;
  if (absl::AbsDuration(d) < absl::Seconds(10)) {
    return "just now";
  }
  // Whole minutes are enough past a minute, whole hours past a day.
  absl::Duration shown = absl::AbsDuration(d);
  if (shown >= absl::Hours(24)) {
    shown = absl::Trunc(shown, absl::Hours(1));
  } else if (shown >= absl::Minutes(1)) {
    shown = absl::Trunc(shown, absl::Minutes(1));
  }
  const std::string amount = HumanDuration(shown);
  return d > absl::ZeroDuration() ? amount + " ago" : "in " + amount;
}

std::string HumanTime(std::string_view rfc3339, absl::Time now, bool with_absolute) {
  absl::Time t;
  std::string error;
  if (rfc3339.empty() || rfc3339.size() > 64 ||
      !absl::ParseTime(absl::RFC3339_full, std::string(rfc3339), &t, &error)) {
    return std::string(rfc3339);
  }
  std::string relative = RelativeTime(t, now);
  if (!with_absolute) {
    return relative;
  }
  return absl::StrCat(absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone()), " (",
                      relative, ")");
}

}  // namespace pulse::cli
