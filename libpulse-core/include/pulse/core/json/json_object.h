// JsonObject: the small one-object JSON writer the agentic loop (loop/) and the built-in tool
// handlers (builtins/) build their event payloads and model-facing results with, and the
// UTF-8 repair it applies to every string it writes (ill-formed sequences and NUL become
// U+FFFD, so what the loop emits is always valid text whatever a tool or provider returned).
// Internal to libpulse-core: adapters use json_writer.h. Header-only; thread-compatible.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core::json_internal {

// The length of the well-formed UTF-8 sequence (no NUL, no overlong form, no surrogate, at
// most U+10FFFF) starting at text[i], or 0 when the bytes there are ill-formed.
inline std::size_t Utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c >= 0x01 && c < 0x80) {
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
  const bool bad = (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                   (cp >= 0xD800 && cp <= 0xDFFF);
  return bad ? 0 : len;
}

inline bool IsValidUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {
      return false;
    }
    i += len;
  }
  return true;
}

// `text` with every ill-formed UTF-8 sequence (and NUL) replaced by U+FFFD, so what the loop
// emits is always valid text whatever a tool or provider returned.
inline std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
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

// Builds one JSON object; members are written in call order.
class JsonObject {
 public:
  JsonObject() : writer_(buffer_) { writer_.StartObject(); }

  JsonObject& Str(std::string_view key, std::string_view value) {
    Key(key);
    if (IsValidUtf8(value)) {
      writer_.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    } else {
      const std::string valid = ValidUtf8(value);
      writer_.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
    }
    return *this;
  }
  JsonObject& Int(std::string_view key, std::int64_t value) {
    Key(key);
    writer_.Int64(value);
    return *this;
  }
  JsonObject& Bool(std::string_view key, bool value) {
    Key(key);
    writer_.Bool(value);
    return *this;
  }
  // A non-finite value is written as null.
  JsonObject& Double(std::string_view key, double value) {
    Key(key);
    if (std::isfinite(value)) {
      writer_.Double(value);
    } else {
      writer_.Null();
    }
    return *this;
  }
  JsonObject& Null(std::string_view key) {
    Key(key);
    writer_.Null();
    return *this;
  }
  // `json` must be one complete JSON value (it is embedded verbatim).
  JsonObject& Raw(std::string_view key, std::string_view json) {
    Key(key);
    writer_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
    return *this;
  }
  std::string Finish() {
    writer_.EndObject();
    return std::string(buffer_.GetString(), buffer_.GetSize());
  }

 private:
  void Key(std::string_view key) {
    writer_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  }

  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

}  // namespace pulse::core::json_internal
