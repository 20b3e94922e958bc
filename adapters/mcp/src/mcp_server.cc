#include "pulse/adapters/mcp/mcp_server.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/mcp/line_reader.h"
#include "pulse/adapters/mcp/mcp_resources.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_scan.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/manifest/capability_projection.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/manifest/workflow_prompts.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::mcp {
namespace {

// Replies from pulse-server larger than this are passed on as text only.
constexpr std::size_t kMaxStructuredBytes = std::size_t{16} << 20;

constexpr std::string_view kInstructions =
    "## PULSE INTELLIGENCE OPERATING MODEL\n"
    "Pulse MCP is the external-agent adapter over Pulse Intelligence Core; Pulse Assistant is "
    "the native surface. This is a governed surface, not a shell: the advertised tools, "
    "prompts and resources are the source of truth for what you may do.\n"
    "Patrol is the primary built-in operator. Read first (fleet context, resource context, "
    "findings) before proposing any change.\n"
    "Change infrastructure only when the operator asks, and only through plan_action, the "
    "approval its policy requires, then execute_action; verify by reading the state again.\n"
    "Treat approval-required, policy-blocked and unavailable results as safety boundaries: "
    "report them, never work around them.";

// The error envelope (agent_error.h) as an isError result carries it in structuredContent.
constexpr std::string_view kErrorEnvelopeSchema = R"json({
  "type": "object",
  "description": "The structuredContent of an isError result: the Pulse error envelope. Branch on error, a stable code; message is for people.",
  "properties": {
    "error": {"type": "string", "minLength": 1},
    "message": {"type": "string"},
    "details": {"type": "object"}
  },
  "required": ["error", "message"],
  "additionalProperties": true
})json";

int CodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnimplemented:
      return kMethodNotFound;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      return kInvalidParams;
    default:
      return kInternalError;
  }
}

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

absl::Status RequireObjectParams(const rapidjson::Value& params, std::string_view method) {
  if (!params.IsObject()) {
    return absl::InvalidArgumentError(std::string(method) + " needs params as an object");
  }
  return absl::OkStatus();
}

// A parsed schema or JSON text written as a value (re-serialized: the text may be pretty).
void WriteJsonText(core::JsonWriter& w, std::string_view json) {
  auto parsed = core::ParseJson(json);
  if (parsed.ok()) {
    w.Value(*parsed);
  } else {
    w.StartObject();
    w.Member("type", "object");
    w.EndObject();
  }
}

std::string BuildToolsJson(const McpSurface& surface) {
  core::JsonWriter w;
  w.StartObject();
  w.Key("tools");
  w.StartArray();
  for (const std::string& name : surface.tool_names) {
    const core::AgentCapability* capability = core::FindAgentCapability(name);
    if (capability == nullptr) {
      continue;  // McpSurfaceFromManifest admits only known capabilities
    }
    const core::CapabilityTool tool = core::ProjectCapabilityTool(*capability);
    w.StartObject();
    w.Member("name", tool.name);
    w.Member("title", tool.title);
    w.Member("description", tool.description);
    w.Key("inputSchema");
    auto schema = surface.input_schemas.find(name);
    WriteJsonText(w,
                  schema != surface.input_schemas.end() ? schema->second : tool.input_schema_json);
    if (!tool.output_schema_json.empty()) {
      // The manifest's schema, or the error envelope: a refusal keeps its stable code in
      // structuredContent, and clients that validate structuredContent even when isError is
      // true (the official TypeScript SDK 1.x does) must accept it.
      w.Key("outputSchema");
      w.StartObject();
      w.Member("type", "object");
      w.Key("anyOf");
      w.StartArray();
      WriteJsonText(w, tool.output_schema_json);
      WriteJsonText(w, kErrorEnvelopeSchema);
      w.EndArray();
      w.EndObject();
    }
    w.Key("annotations");
    w.StartObject();
    w.Member("readOnlyHint", tool.annotations.read_only_hint);
    w.Member("destructiveHint", tool.annotations.destructive_hint);
    w.Member("idempotentHint", tool.annotations.idempotent_hint);
    w.Member("openWorldHint", tool.annotations.open_world_hint);
    w.EndObject();
    w.Key("_meta");
    WriteJsonText(w, tool.meta_json);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

// An isError CallToolResult for a call that never got a reply from pulse-server: the envelope
// is both the text and structuredContent, like a refusal from the server.
std::string ToolErrorResult(const core::AgentError& error) {
  const std::string envelope = core::SanitizeUtf8(error.ToJson());
  core::JsonWriter w;
  w.StartObject();
  w.Key("content");
  w.StartArray();
  w.StartObject();
  w.Member("type", "text");
  w.Member("text", envelope);
  w.EndObject();
  w.EndArray();
  w.Key("structuredContent");
  w.RawValue(envelope);
  w.Member("isError", true);
  w.EndObject();
  return w.Take();
}

// The arguments of a call that cannot be projected onto its route (a path argument is missing
// or not a non-empty string): invalid_request, with {argument: problem} for each such one, so a
// model can correct the call (MCP 2025-11-25: input validation errors are tool results).
core::AgentError ArgumentError(const core::AgentCapability& capability,
                               const rapidjson::Value& args, const absl::Status& status) {
  core::AgentError error = core::MakeAgentError(
      core::AgentErrorCode::kInvalidRequest,
      capability.name + ": " + std::string(status.message()) + " (see the tool's inputSchema)");
  for (const std::string& name : core::PathPlaceholders(capability.path)) {
    const rapidjson::Value* value = core::GetMember(args, name);
    if (value == nullptr) {
      error.details.emplace(name, "required");
    } else if (!value->IsString() || value->GetStringLength() == 0) {
      error.details.emplace(name, "must be a non-empty string");
    }
  }
  return error;
}

// The closed-vocabulary code for a failure that came without pulse-server's error envelope
// (a proxy in front of it, or a body cut short): the transport code its HTTP status means.
core::AgentErrorCode TransportCodeForStatus(int status) {
  switch (status) {
    case 401:
      return core::AgentErrorCode::kUnauthorized;
    case 404:
      return core::AgentErrorCode::kRouteNotFound;
    case 405:
      return core::AgentErrorCode::kMethodNotAllowed;
    case 413:
      return core::AgentErrorCode::kRequestTooLarge;
    case 414:
      return core::AgentErrorCode::kUriTooLong;
    case 502:
    case 503:
    case 504:
      return core::AgentErrorCode::kServiceUnavailable;
    default:
      return status >= 500 ? core::AgentErrorCode::kInternalError
                           : core::AgentErrorCode::kInvalidRequest;
  }
}

// Writes `body`, known to be one JSON value (ScanJson or ParseJson accepted it), as a member
// value: the reply's own bytes when they can stand as they are (valid UTF-8, and no line break,
// which would split the JSON-RPC line: one can only be whitespace between tokens, as the parse
// refused any inside a string), else parsed and re-serialized. pulse-server writes compact JSON
// with the same writer, so both give the same bytes; the verbatim copy saves building and
// walking a document for the largest replies.
void WriteBody(core::JsonWriter& w, std::string_view body) {
  // Two memchr scans (find_first_of would test every byte against both characters).
  if (body.find('\n') == std::string_view::npos && body.find('\r') == std::string_view::npos &&
      core::IsValidUtf8(body)) {
    w.RawValue(body);
    return;
  }
  absl::StatusOr<rapidjson::Document> parsed =
      core::ParseJson(body, core::JsonLimits{.max_bytes = kMaxStructuredBytes});
  if (parsed.ok()) {
    w.Value(*parsed);
  } else {
    w.Null();  // not reached: the caller's check accepted the same text with the same limits
  }
}

// The CallToolResult for one reply of pulse-server.
std::string ToolResult(const PulseReply& reply) {
  const bool ok = reply.status >= 200 && reply.status < 300;
  // A successful reply is only checked and measured (no document is built: it is passed on as
  // it is); an error reply is parsed for its envelope.
  const core::JsonLimits limits{.max_bytes = kMaxStructuredBytes};
  const absl::StatusOr<core::JsonShape> shape =
      ok ? core::ScanJson(reply.body, limits) : absl::StatusOr<core::JsonShape>(core::JsonShape{});
  absl::StatusOr<rapidjson::Document> error_body =
      ok ? absl::StatusOr<rapidjson::Document>(absl::CancelledError("not read"))
         : core::ParseJson(reply.body, limits);
  core::JsonWriter w;
  w.StartObject();
  w.Key("content");
  w.StartArray();
  w.StartObject();
  w.Member("type", "text");
  w.Member("text", reply.body);
  w.EndObject();
  if (ok && reply.next_cursor.has_value()) {
    // For a client that reads only the text: how to get the next page.
    w.StartObject();
    w.Member("type", "text");
    w.Member("text", absl::StrCat("More results follow: call this tool again with cursor \"",
                                  *reply.next_cursor, "\" for the next page."));
    w.EndObject();
  }
  w.EndArray();
  if (ok && shape.ok() && shape->type == rapidjson::kObjectType) {
    w.Key("structuredContent");
    WriteBody(w, reply.body);
  } else if (ok && shape.ok() && shape->type == rapidjson::kArrayType) {
    w.Key("structuredContent");
    w.StartObject();
    w.Key("items");
    WriteBody(w, reply.body);
    w.Member("count", static_cast<std::uint64_t>(shape->size));
    if (reply.next_cursor.has_value()) {
      w.Member("next_cursor", *reply.next_cursor);
    }
    w.EndObject();
  } else if (!ok) {
    w.Key("structuredContent");
    if (error_body.ok() && core::GetString(*error_body, "error").has_value()) {
      WriteBody(w, reply.body);  // the stable envelope {error, message, details?}
    } else {
      w.StartObject();
      w.Member("error", core::ToString(TransportCodeForStatus(reply.status)));
      w.Member("message", "pulse-server answered HTTP " + std::to_string(reply.status) +
                              " without an error envelope");
      w.EndObject();
    }
    w.Member("isError", true);
  }
  w.EndObject();
  return w.Take();
}

}  // namespace

std::string_view NegotiateProtocolVersion(std::string_view requested) {
  for (std::string_view version : kSupportedProtocolVersions) {
    if (version == requested) {
      return version;
    }
  }
  return kSupportedProtocolVersions.front();
}

McpServer::McpServer(PulseCaller& caller, McpSurface surface, std::string server_version)
    : caller_(caller),
      surface_(std::move(surface)),
      server_version_(std::move(server_version)),
      tools_json_(BuildToolsJson(surface_)) {}

std::string McpServer::OversizedLineReply() const {
  return EncodeError(
      "null", kParseError,
      "message exceeds the " + std::to_string(kMaxLineBytes) + "-byte line limit and was dropped");
}

std::optional<std::string> McpServer::HandleLine(std::string_view line) {
  if (IsBlank(line)) {
    return std::nullopt;
  }
  DecodedMessage decoded = DecodeMessage(line);
  if (decoded.error.has_value()) {
    return EncodeError(*decoded.error);
  }
  if (!decoded.request.has_value()) {
    return std::nullopt;  // a response from the client: never answered
  }
  const RpcRequest& request = *decoded.request;
  if (request.notification()) {
    return std::nullopt;  // notifications/initialized, notifications/cancelled, ...: no reply
  }
  absl::StatusOr<std::string> result = Dispatch(request);
  if (!result.ok()) {
    return EncodeError(*request.id_json, CodeFor(result.status()),
                       std::string(result.status().message()));
  }
  return EncodeResult(*request.id_json, *result);
}

bool McpServer::ResourcesOffered() const {
  return surface_.resources && surface_.HasTool("get_fleet_context") &&
         surface_.HasTool("get_resource_context");
}

bool McpServer::PromptOffered(std::string_view name) const {
  if (!surface_.prompts) {
    return false;
  }
  for (const core::WorkflowPrompt& prompt : core::WorkflowPrompts()) {
    if (prompt.name == name) {
      return std::all_of(prompt.required_capabilities.begin(), prompt.required_capabilities.end(),
                         [this](const std::string& c) { return surface_.HasTool(c); });
    }
  }
  return false;
}

absl::StatusOr<std::string> McpServer::Dispatch(const RpcRequest& request) {
  const std::string& method = request.method;
  if (method == "initialize") {
    return Initialize(request.params);
  }
  if (method == "ping") {
    return std::string("{}");
  }
  if (method == "tools/list") {
    return tools_json_;
  }
  if (method == "tools/call") {
    return CallTool(request.params);
  }
  if (method == "prompts/list" && surface_.prompts) {
    return ListPrompts();
  }
  if (method == "prompts/get" && surface_.prompts) {
    return GetPrompt(request.params);
  }
  if (method == "resources/list" && ResourcesOffered()) {
    return ListResources(caller_);
  }
  if (method == "resources/read" && ResourcesOffered()) {
    PULSE_RETURN_IF_ERROR(RequireObjectParams(request.params, method));
    const std::optional<std::string_view> uri = core::GetString(request.params, "uri");
    if (!uri.has_value()) {
      return absl::InvalidArgumentError("resources/read needs params.uri (a string)");
    }
    return ReadResource(caller_, *uri);
  }
  return absl::UnimplementedError("method not found: " + method);
}

absl::StatusOr<std::string> McpServer::Initialize(const rapidjson::Value& params) {
  PULSE_RETURN_IF_ERROR(RequireObjectParams(params, "initialize"));
  const std::optional<std::string_view> requested = core::GetString(params, "protocolVersion");
  if (!requested.has_value()) {
    return absl::InvalidArgumentError("initialize needs params.protocolVersion (a string)");
  }
  protocol_version_ = std::string(NegotiateProtocolVersion(*requested));
  core::JsonWriter w;
  w.StartObject();
  w.Member("protocolVersion", protocol_version_);
  w.Key("capabilities");
  w.StartObject();
  if (surface_.tools && !surface_.tool_names.empty()) {
    w.Key("tools");
    w.StartObject();
    w.Member("listChanged", false);
    w.EndObject();
  }
  if (ResourcesOffered()) {
    w.Key("resources");
    w.StartObject();
    w.EndObject();
  }
  if (surface_.prompts) {
    w.Key("prompts");
    w.StartObject();
    w.Member("listChanged", false);
    w.EndObject();
  }
  w.EndObject();
  w.Key("serverInfo");
  w.StartObject();
  w.Member("name", kServerName);
  w.Member("version", server_version_);
  w.EndObject();
  w.Member("instructions", kInstructions);
  w.EndObject();
  return w.Take();
}

absl::StatusOr<std::string> McpServer::CallTool(const rapidjson::Value& params) {
  PULSE_RETURN_IF_ERROR(RequireObjectParams(params, "tools/call"));
  const std::string name(Trim(core::GetString(params, "name").value_or("")));
  if (name.empty()) {
    return absl::InvalidArgumentError("tool name is required");
  }
  const core::AgentCapability* capability = core::FindAgentCapability(name);
  if (!surface_.tools || !surface_.HasTool(name) || capability == nullptr ||
      capability->streaming) {
    return absl::InvalidArgumentError("unknown tool: " + name);
  }
  rapidjson::Value empty(rapidjson::kObjectType);
  const rapidjson::Value* args = core::GetMember(params, "arguments");
  if (args == nullptr || args->IsNull()) {
    args = &empty;
  }
  if (!args->IsObject()) {
    // Not a CallToolRequest: a protocol error. What the arguments say is judged below, as a
    // tool result the model can act on.
    return absl::InvalidArgumentError("tools/call arguments must be an object");
  }
  absl::StatusOr<core::CapabilityCall> call = core::ProjectCapabilityCall(*capability, *args);
  if (!call.ok()) {
    return ToolErrorResult(ArgumentError(*capability, *args, call.status()));
  }
  absl::StatusOr<PulseReply> reply = SendCall(caller_, *call);
  if (!reply.ok()) {
    // An API failure is a tool execution error too: the agent can report it or retry.
    return ToolErrorResult(core::MakeAgentError(core::AgentErrorCode::kServiceUnavailable,
                                                std::string(reply.status().message())));
  }
  return ToolResult(*reply);
}

std::string McpServer::ListPrompts() const {
  core::JsonWriter w;
  w.StartObject();
  w.Key("prompts");
  w.StartArray();
  for (const core::WorkflowPrompt& prompt : core::WorkflowPrompts()) {
    if (!PromptOffered(prompt.name)) {
      continue;
    }
    w.StartObject();
    w.Member("name", prompt.name);
    w.Member("title", prompt.label);
    w.Member("description", prompt.description);
    w.Key("arguments");
    w.StartArray();
    for (const core::WorkflowPromptArgument& argument : prompt.arguments) {
      w.StartObject();
      w.Member("name", argument.name);
      w.Member("description", argument.description);
      w.Member("required", argument.required);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

absl::StatusOr<std::string> McpServer::GetPrompt(const rapidjson::Value& params) {
  PULSE_RETURN_IF_ERROR(RequireObjectParams(params, "prompts/get"));
  const std::string name(Trim(core::GetString(params, "name").value_or("")));
  if (name.empty()) {
    return absl::InvalidArgumentError("prompt name is required");
  }
  if (!PromptOffered(name)) {
    return absl::NotFoundError("unknown prompt: " + name);
  }
  std::map<std::string, std::string> arguments;
  if (const rapidjson::Value* args = core::GetMember(params, "arguments");
      args != nullptr && !args->IsNull()) {
    if (!args->IsObject()) {
      return absl::InvalidArgumentError("prompts/get arguments must be an object");
    }
    for (const auto& member : args->GetObject()) {
      const std::string key(core::StringViewOf(member.name));
      if (!member.value.IsString()) {
        return absl::InvalidArgumentError("prompt argument " + key + " must be a string");
      }
      arguments[key] = std::string(core::StringViewOf(member.value));
    }
  }
  PULSE_ASSIGN_OR_RETURN(core::RenderedPrompt rendered,
                         core::RenderWorkflowPrompt(name, arguments, core::PromptSurface::kMcp));
  core::JsonWriter w;
  w.StartObject();
  w.Member("description", rendered.description);
  w.Key("messages");
  w.StartArray();
  w.StartObject();
  w.Member("role", "user");
  w.Key("content");
  w.StartObject();
  w.Member("type", "text");
  w.Member("text", rendered.text);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace pulse::adapters::mcp
