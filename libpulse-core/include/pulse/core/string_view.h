// The one bridge between std::string_view and absl::string_view. Debian's Abseil (20220623)
// is built without ABSL_USES_STD_STRING_VIEW, so the two are distinct types and absl::StrCat,
// StrSplit, SimpleAtoi and friends want absl::string_view. Header-only, no allocation; the
// result views the same bytes and lives no longer than they do.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace pulse::core {

// `text` as an absl::string_view over the same bytes.
[[nodiscard]] constexpr absl::string_view ToAbsl(std::string_view text) noexcept {
  return absl::string_view(text.data(), text.size());
}

// `text` as a std::string_view over the same bytes.
[[nodiscard]] constexpr std::string_view ToStd(absl::string_view text) noexcept {
  return std::string_view(text.data(), text.size());
}

}  // namespace pulse::core
