// Private to libpulse-core's JSON code: the byte test JsonWriter's quoting and ScanJson's string
// scan share.
#pragma once

#include <cstdint>

namespace pulse::core::json_internal {

// True when one of the eight bytes in `word` is one a JSON string cannot hold as it is: a
// control character (below 0x20), '"' or '\\'. Bytes from 0x80 never match. Exact for "any"
// (the borrows of the subtractions can only mark bytes above one that matches), in either
// byte order.
constexpr bool AnyEscaped(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  const auto any_below = [](std::uint64_t v, std::uint64_t n) {
    return (v - kOnes * n) & ~v & kHigh;
  };
  return (any_below(word, 0x20) | any_below(word ^ (kOnes * '"'), 1) |
          any_below(word ^ (kOnes * '\\'), 1)) != 0;
}

}  // namespace pulse::core::json_internal
