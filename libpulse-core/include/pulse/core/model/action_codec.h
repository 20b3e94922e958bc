// Helpers shared by the action codecs in model/ and the action services in actions/: the token
// check for ids and how the action codecs read JSON.
// Internal to libpulse-core (namespace action_internal); not a stable API for embedders.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "pulse/core/json/json_reader.h"

namespace pulse::core::action_internal {

// Ids and tokens: 1..max_bytes of [A-Za-z0-9] plus the characters in `extra`.
inline bool IsToken(std::string_view text, std::size_t max_bytes, std::string_view extra) {
  if (text.empty() || text.size() > max_bytes) {
    return false;
  }
  for (char c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && extra.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The action codecs' wording of JSON read errors: "<path>: unknown member 'x'", "<path>:
// member 'x' appears more than once" (names as at most 64 bytes of printable ASCII, '?' for
// the rest), "<path>.<member> must be valid UTF-8 without control characters", "... must be
// an RFC 3339 time string", "... must be an RFC 3339 time between 1970 and 9999"; otherwise
// RenderJsonReadError's.
[[nodiscard]] absl::Status RenderActionJsonError(const JsonReadError& error);

// Every action codec reads clean text only, and times in 1970..9999 of at most 40 visible
// ASCII bytes.
inline constexpr JsonReaderOptions kActionReader{
    JsonTextRule::kCleanText, Rfc3339Limits{1970, 40, true}, &RenderActionJsonError};

}  // namespace pulse::core::action_internal
