// RFC 3339 timestamps as the JSON codecs write and read them. Written in UTC with 'Z' and only
// the fractional digits needed ("2027-01-15T08:00:00Z", "2027-01-15T08:00:00.25Z"), so a
// round trip is exact to the nanosecond; read with any offset. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace pulse::core {

// What ParseRfc3339 accepts beyond the grammar. The latest accepted instant is always the
// last one of year 9999 (UTC).
struct Rfc3339Limits {
  // Earliest accepted year (UTC), inclusive.
  int min_year = 1;
  // Longer text is refused before it is parsed.
  std::size_t max_bytes = 64;
  // absl::ParseTime skips surrounding whitespace. When set, text holding any byte outside
  // visible ASCII (0x21..0x7E), surrounding whitespace included, is refused instead.
  bool visible_ascii_only = false;
};

// "2027-01-15T08:00:00Z", with fractional seconds only when present.
[[nodiscard]] std::string FormatRfc3339(absl::Time t);

// The instant `text` names (RFC 3339: 'T' or 't', 'Z', 'z' or a numeric offset), or nullopt
// when it is empty, malformed, or outside `limits`.
[[nodiscard]] std::optional<absl::Time> ParseRfc3339(std::string_view text,
                                                     const Rfc3339Limits& limits = {});

}  // namespace pulse::core
