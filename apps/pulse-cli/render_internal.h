// Helpers shared by the render_*.cc files: bounded, sanitized cells from JSON members.
// Internal to pulse-cli's rendering; pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "rapidjson/document.h"

namespace pulse::cli::render_internal {

// SafeCell of the string member `key` ("" when absent).
std::string Cut(const rapidjson::Value& v, std::string_view key, std::size_t width = 60);
// `text`, or "-" when empty.
std::string Dash(const std::string& text);
// The RFC 3339 time member `key` in words for a person: "3 min ago", or with `absolute`
// "2026-12-02 04:00:12 UTC (3 min ago)"; "-" when absent; other text made safe and cut.
std::string When(const rapidjson::Value& v, std::string_view key, bool absolute = false);
// The integer member as text, or "-".
std::string IntText(const rapidjson::Value& v, std::string_view key);
// The object member, or a null value when absent or not an object.
const rapidjson::Value& Obj(const rapidjson::Value& v, std::string_view key);
// The items of a list reply: the array itself, or its `key` member; nullptr otherwise.
const rapidjson::Value* Items(const rapidjson::Value& reply, std::string_view key);
// "1 finding", "2 findings".
std::string Plural(std::size_t n, std::string_view one, std::string_view many);
// The string items of array member `key`, made safe and joined with `sep`.
std::string StringList(const rapidjson::Value& v, std::string_view key, std::string_view sep);

}  // namespace pulse::cli::render_internal
