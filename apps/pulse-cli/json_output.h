// JSON in and out of pulse-cli. Replies are parsed within fixed bounds (a hostile server cannot
// make the client build an unbounded tree). Output JSON is one compact line per document whose
// bytes are pure ASCII: strings are repaired to valid UTF-8, then every control and non-ASCII
// character is written as a \uXXXX escape, so --json output can be shown on a terminal without
// letting the server's text drive it, and any JSON parser reads back the exact text.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace pulse::cli {

inline constexpr std::size_t kMaxReplyBytes = 32u << 20;

// The reply body as JSON. InvalidArgument when it is not one JSON value within the bounds.
[[nodiscard]] absl::StatusOr<rapidjson::Document> ParseReplyJson(std::string_view body);

// `value` as one line of ASCII JSON (no trailing newline).
std::string OutputJson(const rapidjson::Value& value);

// Member readers that never assert. Str: the string member or "" (also for other types).
std::string Str(const rapidjson::Value& object, std::string_view key);
// A number member as an integer (a double is truncated); nullopt when absent or not a number.
std::optional<std::int64_t> Int(const rapidjson::Value& object, std::string_view key);
// A boolean member; nullopt when absent or not a boolean.
std::optional<bool> Bool(const rapidjson::Value& object, std::string_view key);
// The member when present (any type), else nullptr. Requires nothing of `object`.
const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view key);
// A scalar as display text: strings as they are, numbers and booleans in JSON form, null as
// "-"; objects and arrays as compact JSON.
std::string ScalarText(const rapidjson::Value& value);

}  // namespace pulse::cli
