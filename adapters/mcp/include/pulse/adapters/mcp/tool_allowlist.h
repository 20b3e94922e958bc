// The MCP surface as the running pulse-server publishes it: the pulse_mcp entry of the fetched
// manifest's surfaceToolContracts decides which tools exist (fail closed: no contract, no
// tools), and the fetched capabilities supply the input schemas. A name survives only when it is
// also a request/response capability this build knows how to call, so the streaming
// subscribe_events can never become a tool. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::adapters::mcp {

struct McpSurface {
  std::vector<std::string> tool_names;  // in contract order, each once
  // Tool name -> the fetched capability's inputSchema as compact JSON (absent: the core's).
  std::map<std::string, std::string> input_schemas;
  bool tools = true;  // affordances of the pulse_mcp contract
  bool resources = true;
  bool prompts = true;

  bool HasTool(std::string_view name) const;
};

// Reads the manifest document (GET /api/agent/capabilities). InvalidArgument when it is not a
// JSON object; a missing or malformed pulse_mcp contract yields a surface without tools.
[[nodiscard]] absl::StatusOr<McpSurface> McpSurfaceFromManifest(std::string_view manifest_json);

}  // namespace pulse::adapters::mcp
