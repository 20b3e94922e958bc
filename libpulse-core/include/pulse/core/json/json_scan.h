// Checking a JSON text without building a document (a scan of its own for the common subset of
// JSON, RapidJSON's SAX reader for the rest): for a reply that is passed on as it is once it is
// known to be one JSON value (pulse-mcp's structuredContent).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/json/json.h"
#include "rapidjson/document.h"

namespace pulse::core {

// What ScanJson finds out about a JSON text: the type of its value and, for an object or array,
// how many members or elements it has at the top level.
struct JsonShape {
  rapidjson::Type type = rapidjson::kNullType;
  std::size_t size = 0;  // top-level members (object) or elements (array); 0 for a scalar
};

// Checks `text` exactly as ParseJson would (the same texts accepted; InvalidArgument for the
// same ones: malformed, over `limits.max_bytes`, nesting deeper than `limits.max_depth`) and
// returns its shape. No document is built.
[[nodiscard]] absl::StatusOr<JsonShape> ScanJson(std::string_view text,
                                                 const JsonLimits& limits = {});

}  // namespace pulse::core
