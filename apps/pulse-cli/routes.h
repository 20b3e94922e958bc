// The HTTP requests pulse-cli makes, derived from the tables that define them rather than from
// strings of its own: manifest capabilities (core::AgentCapabilities, projected exactly as the
// MCP bridge projects a tool call) and the server's own routes (the server rows of the surface
// table, core/manifest/surface.h).
// No path is spelled here. Pure; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace pulse::cli {

struct ApiCall {
  std::string method;
  std::string target;  // path and query, percent-encoded
  std::optional<std::string> body;
};

// Manifest capability `name` called with `args` (a JSON object: path placeholders, query
// parameters for GET/DELETE, body members otherwise). InvalidArgument for an unknown name or
// arguments that do not fit the route.
[[nodiscard]] absl::StatusOr<ApiCall> CapabilityCall(std::string_view name,
                                                     const rapidjson::Value& args);

// Server route `name` with its placeholders filled from `params` (each percent-encoded as one
// segment), the query pairs encoded after it, and `body` as the JSON body.
[[nodiscard]] absl::StatusOr<ApiCall> RouteCall(
    std::string_view name, const std::map<std::string, std::string>& params = {},
    const std::vector<std::pair<std::string, std::string>>& query = {},
    std::optional<std::string> body = std::nullopt);

}  // namespace pulse::cli
