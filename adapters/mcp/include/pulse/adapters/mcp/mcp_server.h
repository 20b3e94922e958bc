// The MCP server behind pulse-mcp: answers one JSON-RPC line at a time — initialize with
// protocol negotiation, ping, tools (the manifest capabilities of the pulse_mcp contract, each
// call one HTTP request to pulse-server), prompts (the shared workflow-prompt catalogue) and
// resources (pulse://resource/<id>). Every reply is one JSON-RPC line; notifications get none.
// Not thread-safe (one stdio loop drives it); borrows the caller, which must outlive it.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/mcp/json_rpc.h"
#include "pulse/adapters/mcp/pulse_caller.h"
#include "pulse/adapters/mcp/tool_allowlist.h"

namespace pulse::adapters::mcp {

// Protocol versions this server speaks, newest first. A client asking for one of them gets it;
// any other request is answered with the newest.
inline constexpr std::array<std::string_view, 4> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

inline constexpr std::string_view kServerName = "pulse-mcp";

// The version to answer an initialize that asked for `requested`.
std::string_view NegotiateProtocolVersion(std::string_view requested);

class McpServer {
 public:
  McpServer(PulseCaller& caller, McpSurface surface, std::string server_version);

  // Handles one line (without its newline). The reply line without a newline, or nullopt for
  // a notification, a response from the client and a blank line.
  std::optional<std::string> HandleLine(std::string_view line);

  // The reply to a line that was dropped for exceeding the line bound.
  std::string OversizedLineReply() const;

  // The protocol version agreed by the last initialize; empty before one.
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  // Each returns the result as compact JSON. Unimplemented maps to -32601, InvalidArgument and
  // NotFound to -32602, anything else to -32603.
  absl::StatusOr<std::string> Dispatch(const RpcRequest& request);
  absl::StatusOr<std::string> Initialize(const rapidjson::Value& params);
  absl::StatusOr<std::string> CallTool(const rapidjson::Value& params);
  absl::StatusOr<std::string> GetPrompt(const rapidjson::Value& params);
  std::string ListPrompts() const;
  bool PromptOffered(std::string_view name) const;
  bool ResourcesOffered() const;

  PulseCaller& caller_;
  McpSurface surface_;
  std::string server_version_;
  std::string tools_json_;  // the tools/list result, built once
  std::string protocol_version_;
};

}  // namespace pulse::adapters::mcp
