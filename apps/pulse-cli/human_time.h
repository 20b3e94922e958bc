// Times and durations in words for pulse-cli's human output ("3 min ago", "every 15 min");
// --json keeps the server's exact values. Pure functions: the caller passes "now".
#pragma once

#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace pulse::cli {

// "45 s", "15 min", "1 min 30 s", "2 h", "1 h 5 min", "3 d", "1 d 2 h". Negative durations are
// shown as their magnitude; under a second is "0 s".
std::string HumanDuration(absl::Duration d);

// "just now" (within 10 s), "3 min ago", "in 12 min", "2 h ago", "3 d ago", from the larger
// unit down to one smaller unit at most.
std::string RelativeTime(absl::Time t, absl::Time now);

// An RFC 3339 time from the server as "2026-12-02 04:00:12 UTC (3 min ago)" (with_absolute) or
// "3 min ago"; text that is not an RFC 3339 time is returned as it came (the caller makes it
// safe), "" as "".
std::string HumanTime(std::string_view rfc3339, absl::Time now, bool with_absolute);

}  // namespace pulse::cli
