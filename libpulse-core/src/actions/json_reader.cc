#include "json_reader.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"

namespace pulse::core::action_internal {
namespace {

constexpr const char* kTimeFormat = "%Y-%m-%d%ET%H:%M:%E*SZ";
const absl::Time kMinTime = absl::FromUnixSeconds(0);
const absl::Time kMaxTime =
    absl::FromCivil(absl::CivilSecond(10000, 1, 1, 0, 0, 0), absl::UTCTimeZone());

// A member name fit for an error message: at most 64 bytes of printable ASCII.
std::string PrintableName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7F ? c : '?');
  }
  return out;
}

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Length of the valid UTF-8 sequence starting at text[i], 0 when invalid.
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) {
    return 1;
  }
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(text[i + k]);
    if ((cc & 0xC0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
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

std::string BoundedText(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = Utf8SequenceLength(text, i);
    std::string_view piece = text.substr(i, len == 0 ? 1 : len);
    const auto c = static_cast<unsigned char>(text[i]);
    const bool control = len == 1 && ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F);
    if (len == 0 || control) {
      piece = "?";
    }
    if (out.size() + piece.size() > max_bytes) {
      break;
    }
    out.append(piece);
    i += len == 0 ? 1 : len;
  }
  return out;
}

bool IsCleanText(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7F) {
      return false;
    }
  }
  return IsValidUtf8(text);
}

bool IsToken(std::string_view text, std::size_t max_bytes, std::string_view extra) {
  if (text.empty() || text.size() > max_bytes) {
    return false;
  }
  for (char c : text) {
    if (!IsAsciiAlnum(c) && extra.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string FormatWireTime(absl::Time t) {
  return absl::FormatTime(kTimeFormat, t, absl::UTCTimeZone());
}

std::optional<absl::Time> ParseWireTime(std::string_view text) {
  if (text.empty() || text.size() > 40) {
    return std::nullopt;
  }
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) {
      return std::nullopt;  // absl would skip surrounding whitespace; the wire form has none
    }
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return std::nullopt;
  }
  if (t < kMinTime || t >= kMaxTime) {
    return std::nullopt;
  }
  return t;
}

std::string_view StringOf(const rapidjson::Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

void WriteKey(JsonWriter& w, std::string_view key) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}

void WriteString(JsonWriter& w, std::string_view value) {
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteTime(JsonWriter& w, absl::Time t) { WriteString(w, FormatWireTime(t)); }

void WriteStringArray(JsonWriter& w, const std::vector<std::string>& values) {
  w.StartArray();
  for (const auto& v : values) {
    WriteString(w, v);
  }
  w.EndArray();
}

void WriteRawJson(JsonWriter& w, std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json);
  if (!doc.ok()) {
    w.StartObject();
    w.EndObject();
    return;
  }
  doc->Accept(w);
}

ObjectReader::ObjectReader(const rapidjson::Value& value, std::string what)
    : value_(&value), what_(std::move(what)) {
  if (!value.IsObject()) {
    error_ = absl::StrCat(what_, " must be a JSON object");
    return;
  }
  std::set<std::string_view> seen;
  for (const auto& m : value.GetObject()) {
    if (!seen.insert(StringOf(m.name)).second) {
      error_ = absl::StrCat(what_, ": member '", PrintableName(StringOf(m.name)),
                            "' appears more than once");
      return;
    }
  }
}

void ObjectReader::Fail(std::string_view key, std::string_view reason) {
  if (error_.empty()) {
    error_ = absl::StrCat(what_, ".", std::string(key), " ", std::string(reason));
  }
}

const rapidjson::Value* ObjectReader::Member(std::string_view key, bool required) {
  known_.insert(std::string(key));
  if (!value_->IsObject()) {
    return nullptr;
  }
  const rapidjson::Value* v = GetMember(*value_, key);
  if (v == nullptr || v->IsNull()) {
    if (required) {
      Fail(key, "is required");
    }
    return nullptr;
  }
  return v;
}

std::optional<std::string> ObjectReader::OptionalString(std::string_view key,
                                                        std::size_t max_bytes) {
  const rapidjson::Value* v = Member(key, false);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsString()) {
    Fail(key, "must be a string");
    return std::nullopt;
  }
  const std::string_view s = StringOf(*v);
  if (s.size() > max_bytes) {
    Fail(key, absl::StrCat("is longer than ", max_bytes, " bytes"));
    return std::nullopt;
  }
  if (!IsCleanText(s)) {
    Fail(key, "must be valid UTF-8 without control characters");
    return std::nullopt;
  }
  return std::string(s);
}

std::string ObjectReader::String(std::string_view key, std::size_t max_bytes) {
  if (Member(key, true) == nullptr) {
    return {};
  }
  std::optional<std::string> s = OptionalString(key, max_bytes);
  if (!s.has_value()) {
    return {};
  }
  if (s->empty()) {
    Fail(key, "must not be empty");
  }
  return std::move(*s);
}

std::string ObjectReader::Token(std::string_view key, std::size_t max_bytes,
                                std::string_view extra) {
  std::string s = String(key, max_bytes);
  if (!s.empty() && !IsToken(s, max_bytes, extra)) {
    Fail(key, "contains characters outside its allowed set");
  }
  return s;
}

std::optional<bool> ObjectReader::OptionalBool(std::string_view key) {
  const rapidjson::Value* v = Member(key, false);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsBool()) {
    Fail(key, "must be a boolean");
    return std::nullopt;
  }
  return v->GetBool();
}

bool ObjectReader::Bool(std::string_view key) {
  const rapidjson::Value* v = Member(key, true);
  if (v == nullptr) {
    return false;
  }
  if (!v->IsBool()) {
    Fail(key, "must be a boolean");
    return false;
  }
  return v->GetBool();
}

std::optional<std::int64_t> ObjectReader::OptionalInt(std::string_view key, std::int64_t min,
                                                      std::int64_t max) {
  const rapidjson::Value* v = Member(key, false);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsInt64()) {
    Fail(key, "must be an integer");
    return std::nullopt;
  }
  const std::int64_t n = v->GetInt64();
  if (n < min || n > max) {
    Fail(key, absl::StrCat("must be between ", min, " and ", max));
    return std::nullopt;
  }
  return n;
}

std::int64_t ObjectReader::Int(std::string_view key, std::int64_t min, std::int64_t max) {
  if (Member(key, true) == nullptr) {
    return min;
  }
  return OptionalInt(key, min, max).value_or(min);
}

std::optional<absl::Time> ObjectReader::OptionalTime(std::string_view key) {
  const rapidjson::Value* v = Member(key, false);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsString()) {
    Fail(key, "must be an RFC 3339 time string");
    return std::nullopt;
  }
  std::optional<absl::Time> t = ParseWireTime(StringOf(*v));
  if (!t.has_value()) {
    Fail(key, "must be an RFC 3339 time between 1970 and 9999");
  }
  return t;
}

absl::Time ObjectReader::Time(std::string_view key) {
  if (Member(key, true) == nullptr) {
    return absl::UnixEpoch();
  }
  return OptionalTime(key).value_or(absl::UnixEpoch());
}

std::vector<std::string> ObjectReader::StringArray(std::string_view key, std::size_t max_items,
                                                   std::size_t max_bytes, bool required) {
  std::vector<std::string> out;
  const rapidjson::Value* v = Member(key, required);
  if (v == nullptr) {
    return out;
  }
  if (!v->IsArray()) {
    Fail(key, "must be an array of strings");
    return out;
  }
  if (v->Size() > max_items) {
    Fail(key, absl::StrCat("has more than ", max_items, " items"));
    return out;
  }
  for (const auto& item : v->GetArray()) {
    if (!item.IsString() || item.GetStringLength() > max_bytes || !IsCleanText(StringOf(item))) {
      Fail(key, "must hold bounded, valid UTF-8 strings");
      return {};
    }
    out.emplace_back(StringOf(item));
  }
  return out;
}

absl::Status ObjectReader::Finish() {
  if (!error_.empty()) {
    return absl::InvalidArgumentError(error_);
  }
  for (const auto& m : value_->GetObject()) {
    if (known_.find(StringOf(m.name)) == known_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what_, ": unknown member '", PrintableName(StringOf(m.name)), "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace pulse::core::action_internal
