// The agent capability manifest (docs/api.md): the one catalogue of
// the operations pulse-server offers agents — context, operator state, the event stream,
// findings and governed actions. The HTTP route table, the MCP tool projection
// (capability_projection.h), the workflow prompts (workflow_prompts.h), docs/api.md and
// GET /api/agent/capabilities are all derived from it, so none can drift from another.
// The catalogue is immutable data built once on first use; every function is thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/policy/governance.h"
#include "pulse/core/policy/scope.h"

namespace pulse::core {

// Wire names of the manifest document (top-level constants of docs/api.md).
inline constexpr std::string_view kManifestVersion = "v1";
inline constexpr std::string_view kMcpSurfaceId = "pulse_mcp";
inline constexpr std::string_view kMcpSurfaceLabel = "Pulse MCP";
inline constexpr std::string_view kMcpToolSource = "capability_manifest";
inline constexpr std::string_view kMcpServerName = "pulse";
inline constexpr std::string_view kMcpCommand = "pulse-mcp";
// Our pulse-mcp takes the server URL as --server (docs/server.md), not Pulse's --base-url.
inline constexpr std::string_view kMcpBaseUrlFlag = "--server";
inline constexpr std::string_view kMcpDefaultBaseUrl = "http://127.0.0.1:7655";
inline constexpr std::string_view kMcpTokenEnv = "PULSE_API_TOKEN";

// Capability categories, in presentation order (only the ones this catalogue uses).
inline constexpr std::string_view kCategoryContext = "context";
inline constexpr std::string_view kCategoryOperatorState = "operator-state";
inline constexpr std::string_view kCategoryFinding = "finding";
inline constexpr std::string_view kCategoryPatrol = "patrol";
inline constexpr std::string_view kCategoryAction = "action";
inline constexpr std::string_view kCategorySecurity = "security";

struct ManifestCategory {
  std::string id;
  std::string label;
  std::string description;
};

// One capability: an HTTP operation with its governance. Field names follow the wire
// capability object (docs/api.md); strings that are empty are absent from the wire.
struct AgentCapability {
  std::string name{};         // snake_case, unique; also the MCP tool name
  std::string title{};        // human title
  std::string description{};  // what it does and when to use it
  std::string category{};     // a ManifestCategory id
  // method, path, scope and streaming come from the capability's route row in the surface
  // table (surface.h, the row of the same name); the catalogue does not repeat them.
  std::string method{};  // GET, POST, PUT or DELETE
  std::string path{};    // template; placeholders are whole segments ("{resourceId}")
  Scope scope = Scope::kMonitoringRead;
  ActionMode action_mode = ActionMode::kRead;
  ApprovalPolicy approval_policy = ApprovalPolicy::kScopeOnly;
  std::string response_shape{};      // informational type name, e.g. "AgentFleetContext"
  std::string request_body_shape{};  // informational; only for methods with a body
  // Explicit input schema (JSON text, closed at the root). Empty: the fallback rule (docs/api.md)
  // (InputSchemaJson below).
  std::string input_schema{};
  std::string output_schema{};  // JSON text; empty when none is published
  // The stable codes its handler may answer with, in advertised order. The transport codes
  // (TransportErrorCodes) can meet any call and are not repeated here.
  std::vector<AgentErrorCode> error_codes{};
  // The code for a body that is malformed, mistyped or breaks the input schema. Set exactly
  // when the method takes a body, and always one of error_codes.
  std::optional<AgentErrorCode> body_error_code{};
  // Body members whose object value the schema deliberately leaves open because a later,
  // stricter check owns them (plan_action "params": the capability's own declaration,
  // ValidateParams in actions/capability.h).
  std::vector<std::string> open_members{};
  bool streaming = false;  // an event stream: never a tool, never in a tool contract
  // Only a human caller may use it (the handler refuses a caller marked as an agent), so it is
  // never projected as an agent tool either (McpToolCapabilityNames).
  bool human_only = false;
  // The code a query is refused with when it breaks the input schema (pulse-server checks
  // GET and DELETE queries against the input schema's non-path properties before the
  // handler). Unset: invalid_request, a transport code. When set, one of error_codes.
  std::optional<AgentErrorCode> query_error_code{};
};

// Every capability, in manifest order.
const std::vector<AgentCapability>& AgentCapabilities();

// The capability named `name`, or nullptr. (Not FindCapability: that name belongs to the
// governed resource capabilities of actions/capability.h.)
const AgentCapability* FindAgentCapability(std::string_view name);

// The categories the catalogue uses, in presentation order.
const std::vector<ManifestCategory>& ManifestCategories();

// The scopes the capabilities require, each once, in canonical scope order (docs/security.md).
std::vector<Scope> ManifestRequiredScopes();

// The capability names the pulse_mcp surface contract lists as tools: every request/response
// capability in manifest order (the streaming subscribe_events is excluded).
std::vector<std::string> McpToolCapabilityNames();

// True for methods that carry a JSON body (POST, PUT, PATCH).
bool TakesBody(const AgentCapability& capability);

// The input schema as compact JSON: the explicit one, else the fallback — one required string
// property per path placeholder, plus an open "body" object for methods with a body, with
// "additionalProperties": true.
std::string InputSchemaJson(const AgentCapability& capability);

// The schema an HTTP request body is validated against: the input schema with the path
// placeholders no longer required (the call projection sends them in the path; a client that
// repeats one in the body must repeat it exactly, which the HTTP layer checks). Empty for
// methods without a body.
std::string BodySchemaJson(const AgentCapability& capability);

// The approval summary (docs/security.md): "no approval required" for read capabilities, else the
// sentence for the approval policy.
std::string_view ApprovalSummary(const AgentCapability& capability);

// The manifest document (GET /api/agent/capabilities): {version, surfaceContract,
// surfaceToolContracts, mcpAdapter, requiredScopes, categories, workflowPrompts,
// capabilities}. Canonical JSON (CanonicalJson: members sorted by key at every level, arrays
// in manifest order), so the bytes are identical on every call and every build.
const std::string& ManifestJson();

// Checks one capability as ValidateManifest does (everything but uniqueness across the
// catalogue). OK, or InvalidArgument naming the capability and the first problem.
[[nodiscard]] absl::Status ValidateAgentCapability(const AgentCapability& capability);

// Checks the whole catalogue: the surface table (ValidateSurface), every capability taking its
// route from a capability row of that table and every capability row naming a capability; unique
// names and (method, path) pairs; known categories and methods; well-formed path templates; every
// error code in the closed vocabulary, listed once, with body_error_code among them exactly when
// the method takes a body; explicit input schemas closed (tools/tool_schema.h ValidateToolSchema,
// with open_members checked to be plain objects), every path placeholder a required string property
// of the input schema; output schemas parse as objects; every schema compiles for RapidJSON's
// validator; workflow prompts name only capabilities that exist. OK, or InvalidArgument naming the
// first problem. The server runs it at startup and a test runs it on every build.
[[nodiscard]] absl::Status ValidateManifest();

}  // namespace pulse::core
