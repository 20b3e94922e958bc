// Projection of manifest capabilities to external tools (docs/mcp.md): what pulse-mcp
// lists in tools/list, and how a tools/call's arguments become one HTTP request to
// pulse-server. Only the capabilities of the pulse_mcp surface tool contract are projected;
// the streaming subscribe_events never is. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "rapidjson/document.h"

namespace pulse::core {

// The internal runtime argument key that never reaches HTTP (an approval handle).
inline constexpr std::string_view kApprovalIdArgument = "_approval_id";

// Behaviour hints for a client; they are not authorization.
struct ToolAnnotations {
  bool read_only_hint = true;
  bool destructive_hint = false;
  bool idempotent_hint = true;
  bool open_world_hint = true;

  friend bool operator==(const ToolAnnotations&, const ToolAnnotations&) = default;
};

// read -> {true, false, true, true}; mixed -> {false, false, false, true};
// write -> {false, true, false, true}. A value outside the enum is treated as read.
ToolAnnotations AnnotationsFor(ActionMode mode);

struct CapabilityTool {
  std::string name;
  std::string title;               // the capability title, else the sentence-cased name
  std::string description;         // the description, a blank line, then the metadata block
  std::string input_schema_json;   // InputSchemaJson
  std::string output_schema_json;  // the manifest's; empty when it publishes none
  ToolAnnotations annotations;
  // {"pulse.capability":{name, category, scope, requestBodyShape?, responseShape?,
  //  errorCodes?, route:{method, path}, governance:{actionMode, approvalPolicy,
  //  approvalSummary}}}, compact.
  std::string meta_json;
};

// The tool description: the capability's description, a blank line, "Pulse capability
// metadata:" and one "- key: value" line per non-empty item, in this order: category, route
// (METHOD PATH), required scope, action mode, approval policy, request body, response, stable
// error codes (comma-separated).
std::string CapabilityToolDescription(const AgentCapability& capability);

CapabilityTool ProjectCapabilityTool(const AgentCapability& capability);

// The tools of the pulse_mcp contract (McpToolCapabilityNames), in manifest order.
std::vector<CapabilityTool> ProjectCapabilityTools();

// ProjectCapabilityTools as a JSON array of tools/list entries: {name, title, description,
// inputSchema, outputSchema?, annotations:{readOnlyHint, destructiveHint, idempotentHint,
// openWorldHint}, _meta}. Deterministic bytes.
std::string ProjectCapabilityToolsJson();

// One HTTP request, ready for a client.
struct CapabilityCall {
  std::string method;
  std::string path;  // the template with every placeholder percent-encoded (PercentEncode)
  // Decoded query parameters, sorted by name; Target() encodes them.
  std::vector<std::pair<std::string, std::string>> query;
  // The JSON body (sent with Content-Type: application/json); nullopt for GET and DELETE.
  std::optional<std::string> body_json;

  // path, then "?name=value&..." with names and values percent-encoded, when there is a
  // query.
  std::string Target() const;
};

// Maps tool arguments (a JSON object) onto the capability's route:
//  1. each {p} is replaced by PercentEncode(args[p]); it must be a non-empty string, else
//     InvalidArgument "missing path argument(s): p, q (not a string)" listing every missing
//     one, those present with another type marked "(not a string)";
//  2. GET and DELETE send the remaining arguments as query parameters: strings as they are,
//     booleans as true/false and integers in decimal (so hasFindings=true reaches the
//     server; Pulse's reference adapter dropped non-strings), other values are left out;
//  3. other methods send args["body"] verbatim when present, else an object of the remaining
//     arguments;
//  4. path arguments and _approval_id are never sent in a query or a constructed body.
// InvalidArgument also when `args` is not an object or the capability is a stream.
[[nodiscard]] absl::StatusOr<CapabilityCall> ProjectCapabilityCall(
    const AgentCapability& capability, const rapidjson::Value& args);

}  // namespace pulse::core
