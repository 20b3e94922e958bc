#include "pulse/core/json/json_writer.h"

#include <cmath>
#include <cstring>

#include "pulse/core/json/json_time.h"
#include "pulse/core/json/utf8.h"

namespace pulse::core {
namespace {

// A RapidJSON handler that replays a value into a JsonWriter, so its keys and strings pass
// through the same sanitizing as everything else.
class Replay {
 public:
  explicit Replay(JsonWriter& out) : out_(out) {}
  // clang-format off
  bool Null() { out_.Null(); return true; }
  bool Bool(bool b) { out_.Bool(b); return true; }
  bool Int(int i) { out_.Int(i); return true; }
  bool Uint(unsigned u) { out_.Uint(u); return true; }
  bool Int64(std::int64_t i) { out_.Int(i); return true; }
  bool Uint64(std::uint64_t u) { out_.Uint(u); return true; }
  bool Double(double d) { out_.Double(d); return true; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { out_.RawValue({s, n}); return true; }
  bool String(const char* s, rapidjson::SizeType n, bool) { out_.String({s, n}); return true; }
  bool Key(const char* s, rapidjson::SizeType n, bool) { out_.Key({s, n}); return true; }
  bool StartObject() { out_.StartObject(); return true; }
  bool EndObject(rapidjson::SizeType) { out_.EndObject(); return true; }
  bool StartArray() { out_.StartArray(); return true; }
  bool EndArray(rapidjson::SizeType) { out_.EndArray(); return true; }
  // clang-format on

 private:
  JsonWriter& out_;
};

}  // namespace

void JsonWriter::Key(std::string_view key) {
  if (IsValidUtf8(key)) {
    writer_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    return;
  }
  const std::string clean = SanitizeUtf8(key);
  writer_.Key(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void JsonWriter::String(std::string_view value) {
  if (IsValidUtf8(value)) {
    writer_.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    return;
  }
  const std::string clean = SanitizeUtf8(value);
  writer_.String(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void JsonWriter::Double(double value) {
  if (std::isfinite(value)) {
    writer_.Double(value);
  } else {
    writer_.Null();
  }
}

void JsonWriter::Time(absl::Time value) { String(FormatRfc3339(value)); }

void JsonWriter::StringArray(std::span<const std::string> values) {
  StartArray();
  for (const std::string& value : values) {
    String(value);
  }
  EndArray();
}

void JsonWriter::Value(const rapidjson::Value& value) {
  Replay replay(*this);
  value.Accept(replay);
}

void JsonWriter::RawValue(std::string_view json) {
  // The writer's bookkeeping (the comma or colon before the value) without bytes, then the bytes
  // in one copy: RapidJSON's RawValue puts them one at a time, which showed in pulse-mcp's
  // profile for a 15 KB fleet context (issue 29).
  writer_.RawValue("", 0, rapidjson::kObjectType);
  if (!json.empty()) {
    std::memcpy(buffer_.Push(json.size()), json.data(), json.size());
  }
}

void JsonWriter::Member(std::string_view key, std::string_view value) {
  Key(key);
  String(value);
}

void JsonWriter::Member(std::string_view key, bool value) {
  Key(key);
  Bool(value);
}

void JsonWriter::TimeMember(std::string_view key, absl::Time value) {
  Key(key);
  Time(value);
}

void JsonWriter::MemberIfNotEmpty(std::string_view key, std::string_view value) {
  if (!value.empty()) {
    Member(key, value);
  }
}

void JsonWriter::TimeMemberIfSet(std::string_view key, const std::optional<absl::Time>& value) {
  if (value.has_value()) {
    TimeMember(key, *value);
  }
}

void JsonWriter::NumberMemberIfFinite(std::string_view key, const std::optional<double>& value) {
  if (value.has_value() && std::isfinite(*value)) {
    Key(key);
    Double(*value);
  }
}

}  // namespace pulse::core
