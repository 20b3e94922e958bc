// Bounded JSON parsing and small helpers shared by every codec in the core.
// Untrusted text is parsed iteratively (constant native stack) and then checked against
// size and depth limits before any recursive RapidJSON routine (writer, comparison, schema
// validation) may touch it. Functions are pure and thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace pulse::core {

struct JsonLimits {
  std::size_t max_bytes = 1 << 20;  // 1 MiB of text
  std::size_t max_depth = 64;       // nesting of arrays/objects
};

// Parses `text` as exactly one JSON value (trailing non-whitespace is an error).
// Errors: InvalidArgument with the byte offset and reason for malformed text, for text
// over `limits.max_bytes`, or for nesting deeper than `limits.max_depth`.
[[nodiscard]] absl::StatusOr<rapidjson::Document> ParseJson(std::string_view text,
                                                            const JsonLimits& limits = {});

// Maximum nesting depth of a value (a scalar is 0, [] is 1), computed without recursion.
std::size_t JsonDepth(const rapidjson::Value& value);

// Compact serialization. The value must be within the depth limits above (Writer recurses).
std::string ToJsonString(const rapidjson::Value& value);

// Canonical serialization: object members sorted by key at every level, compact. Two
// values that differ only in member order serialize identically (used for repeat-call
// detection and deterministic digests).
std::string CanonicalJson(const rapidjson::Value& value);

// Member lookup helpers that never assert: nullopt when missing or of another type.
std::optional<std::string_view> GetString(const rapidjson::Value& object, std::string_view key);
std::optional<bool> GetBool(const rapidjson::Value& object, std::string_view key);
std::optional<std::int64_t> GetInt64(const rapidjson::Value& object, std::string_view key);
const rapidjson::Value* GetMember(const rapidjson::Value& object, std::string_view key);

// The text of a string value or member name, embedded NULs included. Requires IsString().
inline std::string_view StringViewOf(const rapidjson::Value& string_value) {
  return std::string_view(string_value.GetString(), string_value.GetStringLength());
}

}  // namespace pulse::core
