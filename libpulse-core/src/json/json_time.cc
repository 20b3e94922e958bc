#include "pulse/core/json/json_time.h"

#include "absl/time/civil_time.h"

namespace pulse::core {
namespace {

absl::Time StartOfYear(int year) {
  return absl::FromCivil(absl::CivilSecond(year, 1, 1, 0, 0, 0), absl::UTCTimeZone());
}

}  // namespace

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

std::optional<absl::Time> ParseRfc3339(std::string_view text, const Rfc3339Limits& limits) {
  if (text.empty() || text.size() > limits.max_bytes) {
    return std::nullopt;
  }
  if (limits.visible_ascii_only) {
    for (char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (u <= 0x20 || u >= 0x7F) {
        return std::nullopt;
      }
    }
  }
  absl::Time t;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &error)) {
    return std::nullopt;
  }
  static const absl::Time kEnd = StartOfYear(10000);
  if (t < StartOfYear(limits.min_year) || t >= kEnd) {
    return std::nullopt;
  }
  return t;
}

}  // namespace pulse::core
