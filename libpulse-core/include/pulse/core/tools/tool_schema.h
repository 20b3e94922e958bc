// The shape rules for tool schemas and tool arguments, independent of any one tool: what
// makes an input schema "closed", and the structural bounds every argument object must meet
// before RapidJSON's (recursive) schema validator may see it. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace pulse::core {

// Structural bounds on arguments. They keep hostile input (deep nesting, huge strings, key
// floods) away from recursive code and make every later check linear in the input size.
inline constexpr std::size_t kMaxArgumentDepth = 32;     // nested objects/arrays, root = 1
inline constexpr std::size_t kMaxArgumentValues = 4096;  // values of any kind, in total
inline constexpr std::size_t kMaxArgumentStringBytes = 65536;
inline constexpr std::size_t kMaxArgumentKeyBytes = 256;

// Bounds on a tool's own schema text.
inline constexpr std::size_t kMaxToolSchemaBytes = 65536;
inline constexpr std::size_t kMaxToolSchemaDepth = 24;

// Checks that a parsed tool input schema is closed: the root is {"type":"object",
// "additionalProperties":false} (so every argument name is declared); below it, every
// level that can hold an object either sets "additionalProperties": false or is a bounded
// scalar map ("maxProperties" plus an "additionalProperties" schema of scalar types only, so
// nothing nests below it); every subschema declares a type (or an enum, or a combinator whose
// branches do); arrays declare their items (tuple arrays forbid additional items); every
// `required` name is a declared property; every pattern compiles in RapidJSON's regex
// dialect (the validator silently ignores one that does not). "$ref" and
// "patternProperties" are refused: RapidJSON 1.1.0 validates a value matched only by
// patternProperties against the wrong schema. InvalidArgument names the location.
[[nodiscard]] absl::Status ValidateToolSchema(const rapidjson::Value& schema);

// Checks an argument value without recursion: it is an object; nesting stays within
// kMaxArgumentDepth; it holds at most kMaxArgumentValues values; every string and key is
// valid UTF-8 without NUL and within its byte bound; every number is finite; no object
// repeats a key. InvalidArgument otherwise.
[[nodiscard]] absl::Status CheckArgumentStructure(const rapidjson::Value& args);

// Renders untrusted text for an error message: printable ASCII kept, anything else as
// \xNN, cut to `max_bytes` input bytes with "..." appended.
std::string QuoteForMessage(std::string_view text, std::size_t max_bytes = 64);

}  // namespace pulse::core
