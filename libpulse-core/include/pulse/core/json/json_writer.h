// A small compact JSON writer over RapidJSON for the core's encoders. Whatever it is handed, it
// emits valid UTF-8: an ill-formed byte in a key or string becomes U+FFFD, and a non-finite
// number becomes null. Times are written as FormatRfc3339 text. The member helpers write a key
// and its value; the *IfNotEmpty/*IfSet/*IfFinite variants omit the member instead. Not
// thread-safe (one writer per encoding); never fails.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/time/time.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {

class JsonWriter {
 public:
  JsonWriter() : writer_(buffer_) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void StartObject() { writer_.StartObject(); }
  void EndObject() { writer_.EndObject(); }
  void StartArray() { writer_.StartArray(); }
  void EndArray() { writer_.EndArray(); }
  void Key(std::string_view key);
  void String(std::string_view value);
  void Int(std::int64_t value) { writer_.Int64(value); }
  void Uint(std::uint64_t value) { writer_.Uint64(value); }
  void Bool(bool value) { writer_.Bool(value); }
  void Null() { writer_.Null(); }
  void Double(double value);
  void Time(absl::Time value);
  void StringArray(std::span<const std::string> values);
  // A copy of `value` (strings sanitized like any other). Its depth must be bounded (ParseJson's
  // limits): RapidJSON walks it recursively.
  void Value(const rapidjson::Value& value);
  // `json` verbatim. It must be one complete, valid JSON value (e.g. CanonicalJson output).
  void RawValue(std::string_view json);

  void Member(std::string_view key, std::string_view value);
  void Member(std::string_view key, const char* value) { Member(key, std::string_view(value)); }
  void Member(std::string_view key, bool value);
  template <std::integral I>
  void Member(std::string_view key, I value) {
    Key(key);
    if constexpr (std::is_unsigned_v<I>) {
      Uint(value);
    } else {
      Int(value);
    }
  }
  void TimeMember(std::string_view key, absl::Time value);
  void MemberIfNotEmpty(std::string_view key, std::string_view value);
  void TimeMemberIfSet(std::string_view key, const std::optional<absl::Time>& value);
  void NumberMemberIfFinite(std::string_view key, const std::optional<double>& value);

  // The text written so far.
  [[nodiscard]] std::string Take() const {
    return std::string(buffer_.GetString(), buffer_.GetSize());
  }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

}  // namespace pulse::core
