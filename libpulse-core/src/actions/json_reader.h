// Private helpers of the action codecs: a strict object reader (unknown, duplicate and
// mistyped members are errors; the first error is reported), a UTF-8 validator, RFC 3339 time
// text and a few writer shorthands. Not part of the public API.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core::action_internal {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Debian's Abseil has its own string_view type; StrCat needs this conversion.
inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// One row of an enum's wire table.
template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// Wire string of `value` ("unknown" for a value outside the table; the first row wins, so
// canonical spellings come before aliases).
template <class E, std::size_t N>
std::string_view NameOf(const std::array<EnumName<E>, N>& table, E value) {
  for (const auto& entry : table) {
    if (entry.value == value) {
      return entry.name;
    }
  }
  return "unknown";
}

// Exact-match parse against the table.
template <class E, std::size_t N>
std::optional<E> ValueOf(const std::array<EnumName<E>, N>& table, std::string_view text) {
  for (const auto& entry : table) {
    if (entry.name == text) {
      return entry.value;
    }
  }
  return std::nullopt;
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(std::string_view text);

// Printable text for free-form fields: valid UTF-8, no NUL, no ASCII control characters other
// than tab and newline.
bool IsCleanText(std::string_view text);

// At most `max_bytes` of clean text: invalid UTF-8 and control characters other than tab and
// newline become '?', and truncation never splits a character.
std::string BoundedText(std::string_view text, std::size_t max_bytes);

// Ids and tokens: 1..max_bytes of [A-Za-z0-9] plus the characters in `extra`.
bool IsToken(std::string_view text, std::size_t max_bytes, std::string_view extra);

// RFC 3339 in UTC with only the fractional digits needed: 2027-01-15T08:00:00.25Z. Exact for
// every absl::Time in years 1970..9999 (nanosecond resolution).
std::string FormatWireTime(absl::Time t);
// Parses RFC 3339 (any offset, 'Z' or 'z'); no surrounding whitespace; years 1970..9999.
std::optional<absl::Time> ParseWireTime(std::string_view text);

std::string_view StringOf(const rapidjson::Value& v);

void WriteKey(JsonWriter& w, std::string_view key);
void WriteString(JsonWriter& w, std::string_view value);
void WriteTime(JsonWriter& w, absl::Time t);
void WriteStringArray(JsonWriter& w, const std::vector<std::string>& values);
// Writes `json` (already valid JSON text) as a nested value. Falls back to {} if it does not
// parse, which cannot happen for canonical params produced by ValidateParams.
void WriteRawJson(JsonWriter& w, std::string_view json);

// Reads members of one JSON object. Every accessor marks its key as known; Finish() fails on
// the first recorded error, or on any member no accessor asked for. Optional accessors treat
// a JSON null like an absent member.
class ObjectReader {
 public:
  ObjectReader(const rapidjson::Value& value, std::string what);

  std::string String(std::string_view key, std::size_t max_bytes);  // required, non-empty
  std::optional<std::string> OptionalString(std::string_view key, std::size_t max_bytes);
  // Required token (see IsToken).
  std::string Token(std::string_view key, std::size_t max_bytes, std::string_view extra);
  bool Bool(std::string_view key);
  std::optional<bool> OptionalBool(std::string_view key);
  std::optional<std::int64_t> OptionalInt(std::string_view key, std::int64_t min, std::int64_t max);
  std::int64_t Int(std::string_view key, std::int64_t min, std::int64_t max);
  absl::Time Time(std::string_view key);
  std::optional<absl::Time> OptionalTime(std::string_view key);
  std::vector<std::string> StringArray(std::string_view key, std::size_t max_items,
                                       std::size_t max_bytes, bool required);
  // The raw member (nullptr when absent/null); the caller validates it.
  const rapidjson::Value* Member(std::string_view key, bool required);

  template <class E, class Parse>
  E Enum(std::string_view key, Parse parse, E fallback) {
    const rapidjson::Value* v = Member(key, true);
    if (v == nullptr) {
      return fallback;
    }
    if (!v->IsString()) {
      Fail(key, "must be a string");
      return fallback;
    }
    auto parsed = parse(StringOf(*v));
    if (!parsed.has_value()) {
      Fail(key, "is not a known value");
      return fallback;
    }
    return *parsed;
  }

  template <class E, class Parse>
  std::optional<E> OptionalEnum(std::string_view key, Parse parse) {
    const rapidjson::Value* v = Member(key, false);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->IsString()) {
      Fail(key, "must be a string");
      return std::nullopt;
    }
    auto parsed = parse(StringOf(*v));
    if (!parsed.has_value()) {
      Fail(key, "is not a known value");
    }
    return parsed;
  }

  // Records an error about `key` (the first one wins).
  void Fail(std::string_view key, std::string_view reason);
  bool ok() const { return error_.empty(); }
  [[nodiscard]] absl::Status Finish();

 private:
  const rapidjson::Value* value_;
  std::string what_;
  std::set<std::string, std::less<>> known_;
  std::string error_;
};

}  // namespace pulse::core::action_internal
