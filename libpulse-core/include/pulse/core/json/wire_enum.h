// Wire-string tables for enums. Each vocabulary spells its JSON strings once, in a constexpr
// std::array of WireName rows; these lookups read the table both ways. A table may list
// aliases after a value's canonical row: lookups by value return the first row. Header-only;
// pure and thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace pulse::core {

template <class E>
struct WireName {
  E value;
  std::string_view name;
};

// The wire string of `value` (its first row), or `fallback` when no row holds it (only a
// value cast from outside the enum has none; a vocabulary may name what such a value reads as).
template <class E, std::size_t N>
[[nodiscard]] constexpr std::string_view WireNameOf(const std::array<WireName<E>, N>& table,
                                                    E value,
                                                    std::string_view fallback = "unknown") {
  for (const WireName<E>& row : table) {
    if (row.value == value) {
      return row.name;
    }
  }
  return fallback;
}

// The value spelled exactly `text` (case-sensitive), or nullopt.
template <class E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> WireValueOf(const std::array<WireName<E>, N>& table,
                                                     std::string_view text) {
  for (const WireName<E>& row : table) {
    if (row.name == text) {
      return row.value;
    }
  }
  return std::nullopt;
}

// Every row's value, in table order.
template <class E, std::size_t N>
[[nodiscard]] std::vector<E> WireValues(const std::array<WireName<E>, N>& table) {
  std::vector<E> out;
  out.reserve(N);
  for (const WireName<E>& row : table) {
    out.push_back(row.value);
  }
  return out;
}

}  // namespace pulse::core
