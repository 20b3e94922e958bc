// Internal to the findings codecs: a thin writer over RapidJSON that always emits valid UTF-8
// and RFC 3339 UTC times, and a strict object reader that rejects unknown and duplicate
// members, wrong types, oversized strings, invalid UTF-8 and out-of-range times. Not part of
// the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core::findings_internal {

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool IsValidUtf8(std::string_view text);
// `text` with every ill-formed sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);
// At most `max_bytes` bytes of `text`, cut on a code point boundary.
std::string TruncateUtf8(std::string_view text, std::size_t max_bytes);

// "2027-01-15T08:00:00Z", with fractional seconds only when present.
std::string FormatTimestamp(absl::Time t);
// Accepts RFC 3339 with any offset; years 1..9999 only.
std::optional<absl::Time> ParseTimestamp(std::string_view text);

class JsonOut {
 public:
  JsonOut() : writer_(buffer_) {}

  void StartObject() { writer_.StartObject(); }
  void EndObject() { writer_.EndObject(); }
  void StartArray() { writer_.StartArray(); }
  void EndArray() { writer_.EndArray(); }
  void Key(std::string_view key);
  void String(std::string_view value);
  void Int(std::int64_t value) { writer_.Int64(value); }
  void Bool(bool value) { writer_.Bool(value); }
  // Non-finite doubles cannot be written as JSON; callers skip them (see Field helpers).
  void Double(double value) { writer_.Double(value); }
  void Time(absl::Time value) { String(FormatTimestamp(value)); }
  // Writes already-serialized JSON text verbatim (it must be one complete valid value).
  void Raw(std::string_view json);

  // Field helpers: the *IfSet variants omit empty strings and nullopt.
  void Field(std::string_view key, std::string_view value);
  void FieldIfSet(std::string_view key, std::string_view value);
  void Field(std::string_view key, std::int64_t value);
  void Field(std::string_view key, bool value);
  void FieldIfSet(std::string_view key, const std::optional<absl::Time>& value);
  void FieldTime(std::string_view key, absl::Time value);
  void FieldIfFinite(std::string_view key, const std::optional<double>& value);

  std::string Take() const { return std::string(buffer_.GetString(), buffer_.GetSize()); }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

// Reads one JSON object whose member names must all be in `allowed` and appear once.
class ObjectIn {
 public:
  // `what` names the object in error messages ("finding", "lifecycle[3]").
  ObjectIn(const rapidjson::Value& value, std::string what);

  // InvalidArgument unless the value is an object with only allowed, unique member names.
  [[nodiscard]] absl::Status Check(std::initializer_list<std::string_view> allowed) const;

  const rapidjson::Value* Find(std::string_view key) const;

  [[nodiscard]] absl::Status String(std::string_view key, std::size_t max_bytes, bool required,
                                    std::string& out) const;
  [[nodiscard]] absl::Status Time(std::string_view key, std::optional<absl::Time>& out) const;
  [[nodiscard]] absl::Status RequiredTime(std::string_view key, absl::Time& out) const;
  // Integers only (no fractions), within [min, max].
  [[nodiscard]] absl::Status Int(std::string_view key, std::int64_t min, std::int64_t max,
                                 std::int64_t& out) const;
  [[nodiscard]] absl::Status OptionalInt(std::string_view key, std::int64_t min,
                                         std::int64_t max,
                                         std::optional<std::int64_t>& out) const;
  [[nodiscard]] absl::Status Bool(std::string_view key, bool& out) const;
  [[nodiscard]] absl::Status Double(std::string_view key, std::optional<double>& out) const;

  // A member that must be one of an enum's wire strings.
  template <typename E, typename ParseFn>
  [[nodiscard]] absl::Status Enum(std::string_view key, ParseFn parse, bool required,
                                  std::optional<E>& out) const {
    std::string text;
    absl::Status status = String(key, 64, required, text);
    if (!status.ok() || text.empty()) {
      return status;
    }
    std::optional<E> parsed = parse(text);
    if (!parsed.has_value()) {
      return Invalid(key, "is not a known value");
    }
    out = parsed;
    return absl::OkStatus();
  }

  absl::Status Invalid(std::string_view key, std::string_view problem) const;

 private:
  const rapidjson::Value& value_;
  std::string what_;
};

}  // namespace pulse::core::findings_internal
