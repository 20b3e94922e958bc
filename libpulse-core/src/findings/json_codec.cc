#include "json_codec.h"

#include <cmath>
#include <utility>

#include "absl/time/civil_time.h"
#include "fmt/format.h"

namespace pulse::core::findings_internal {
namespace {

// Length of the well-formed UTF-8 sequence starting at text[i], or 0 if ill-formed.
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) {
    return 1;
  }
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) {
      lo = 0xA0;  // no overlongs
    } else if (c == 0xED) {
      hi = 0x9F;  // no surrogates
    }
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) {
      lo = 0x90;
    } else if (c == 0xF4) {
      hi = 0x8F;  // <= U+10FFFF
    }
  } else {
    return 0;
  }
  if (i + len > text.size()) {
    return 0;
  }
  const unsigned char second = byte(i + 1);
  if (second < lo || second > hi) {
    return 0;
  }
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) {
      return 0;
    }
  }
  return len;
}

std::string_view ViewOf(const rapidjson::Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view text) {
  if (IsValidUtf8(text)) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string TruncateUtf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) {
    return std::string(text);
  }
  std::size_t cut = max_bytes;
  // Step back over continuation bytes so a code point is never split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return std::string(text.substr(0, cut));
}

std::string FormatTimestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

std::optional<absl::Time> ParseTimestamp(std::string_view text) {
  if (text.empty() || text.size() > 64) {
    return std::nullopt;
  }
  absl::Time t;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &error)) {
    return std::nullopt;
  }
  static const absl::Time kMin = absl::FromCivil(absl::CivilSecond(1, 1, 1, 0, 0, 0),
                                                 absl::UTCTimeZone());
  static const absl::Time kMax = absl::FromCivil(absl::CivilSecond(10000, 1, 1, 0, 0, 0),
                                                 absl::UTCTimeZone());
  if (t < kMin || t >= kMax) {
    return std::nullopt;
  }
  return t;
}

void JsonOut::Key(std::string_view key) {
  if (IsValidUtf8(key)) {
    writer_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    return;
  }
  const std::string clean = SanitizeUtf8(key);
  writer_.Key(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void JsonOut::String(std::string_view value) {
  if (IsValidUtf8(value)) {
    writer_.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    return;
  }
  const std::string clean = SanitizeUtf8(value);
  writer_.String(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void JsonOut::Raw(std::string_view json) {
  writer_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

void JsonOut::Field(std::string_view key, std::string_view value) {
  Key(key);
  String(value);
}

void JsonOut::FieldIfSet(std::string_view key, std::string_view value) {
  if (!value.empty()) {
    Field(key, value);
  }
}

void JsonOut::Field(std::string_view key, std::int64_t value) {
  Key(key);
  Int(value);
}

void JsonOut::Field(std::string_view key, bool value) {
  Key(key);
  Bool(value);
}

void JsonOut::FieldIfSet(std::string_view key, const std::optional<absl::Time>& value) {
  if (value.has_value()) {
    FieldTime(key, *value);
  }
}

void JsonOut::FieldTime(std::string_view key, absl::Time value) {
  Key(key);
  Time(value);
}

void JsonOut::FieldIfFinite(std::string_view key, const std::optional<double>& value) {
  if (value.has_value() && std::isfinite(*value)) {
    Key(key);
    Double(*value);
  }
}

ObjectIn::ObjectIn(const rapidjson::Value& value, std::string what)
    : value_(value), what_(std::move(what)) {}

absl::Status ObjectIn::Invalid(std::string_view key, std::string_view problem) const {
  return absl::InvalidArgumentError(fmt::format("{}.{} {}", what_, key, problem));
}

absl::Status ObjectIn::Check(std::initializer_list<std::string_view> allowed) const {
  if (!value_.IsObject()) {
    return absl::InvalidArgumentError(fmt::format("{} must be a JSON object", what_));
  }
  std::vector<bool> seen(allowed.size(), false);
  for (const auto& member : value_.GetObject()) {
    const std::string_view name = ViewOf(member.name);
    std::size_t index = 0;
    bool known = false;
    for (std::string_view candidate : allowed) {
      if (candidate == name) {
        known = true;
        break;
      }
      ++index;
    }
    if (!known) {
      return absl::InvalidArgumentError(fmt::format(
          "{} has an unknown member \"{}\"", what_, SanitizeUtf8(TruncateUtf8(name, 64))));
    }
    if (seen[index]) {
      return absl::InvalidArgumentError(
          fmt::format("{} has a duplicate member \"{}\"", what_, name));
    }
    seen[index] = true;
  }
  return absl::OkStatus();
}

const rapidjson::Value* ObjectIn::Find(std::string_view key) const {
  auto it = value_.FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
  return it == value_.MemberEnd() ? nullptr : &it->value;
}

absl::Status ObjectIn::String(std::string_view key, std::size_t max_bytes, bool required,
                              std::string& out) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr || v->IsNull()) {
    return required ? Invalid(key, "is required") : absl::OkStatus();
  }
  if (!v->IsString()) {
    return Invalid(key, "must be a string");
  }
  const std::string_view text = ViewOf(*v);
  if (text.size() > max_bytes) {
    return Invalid(key, fmt::format("is longer than {} bytes", max_bytes));
  }
  if (!IsValidUtf8(text)) {
    return Invalid(key, "is not valid UTF-8");
  }
  if (required && text.empty()) {
    return Invalid(key, "must not be empty");
  }
  out = std::string(text);
  return absl::OkStatus();
}

absl::Status ObjectIn::Time(std::string_view key, std::optional<absl::Time>& out) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr || v->IsNull()) {
    return absl::OkStatus();
  }
  if (!v->IsString()) {
    return Invalid(key, "must be an RFC 3339 string");
  }
  std::optional<absl::Time> t = ParseTimestamp(ViewOf(*v));
  if (!t.has_value()) {
    return Invalid(key, "is not an RFC 3339 time in years 1..9999");
  }
  out = t;
  return absl::OkStatus();
}

absl::Status ObjectIn::RequiredTime(std::string_view key, absl::Time& out) const {
  std::optional<absl::Time> t;
  absl::Status status = Time(key, t);
  if (!status.ok()) {
    return status;
  }
  if (!t.has_value()) {
    return Invalid(key, "is required");
  }
  out = *t;
  return absl::OkStatus();
}

absl::Status ObjectIn::Int(std::string_view key, std::int64_t min, std::int64_t max,
                           std::int64_t& out) const {
  std::optional<std::int64_t> value;
  absl::Status status = OptionalInt(key, min, max, value);
  if (status.ok() && value.has_value()) {
    out = *value;
  }
  return status;
}

absl::Status ObjectIn::OptionalInt(std::string_view key, std::int64_t min, std::int64_t max,
                                   std::optional<std::int64_t>& out) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr || v->IsNull()) {
    return absl::OkStatus();
  }
  if (!v->IsInt64()) {
    return Invalid(key, "must be an integer");
  }
  const std::int64_t value = v->GetInt64();
  if (value < min || value > max) {
    return Invalid(key, fmt::format("must be between {} and {}", min, max));
  }
  out = value;
  return absl::OkStatus();
}

absl::Status ObjectIn::Bool(std::string_view key, bool& out) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr || v->IsNull()) {
    return absl::OkStatus();
  }
  if (!v->IsBool()) {
    return Invalid(key, "must be a boolean");
  }
  out = v->GetBool();
  return absl::OkStatus();
}

absl::Status ObjectIn::Double(std::string_view key, std::optional<double>& out) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr || v->IsNull()) {
    return absl::OkStatus();
  }
  if (!v->IsNumber()) {
    return Invalid(key, "must be a number");
  }
  const double value = v->GetDouble();
  if (!std::isfinite(value)) {
    return Invalid(key, "must be finite");
  }
  out = value;
  return absl::OkStatus();
}

}  // namespace pulse::core::findings_internal
