// The API surface of pulse-server, declared once: every route (name, method, path template,
// required scope, whether it streams) and the header names server and clients share. The
// error codes are the closed vocabulary of errors/agent_error.h (included here), declared
// nowhere else.
//
// A route row is either a manifest capability's route (capability rows of
// capability_manifest.h carry the same name and take method, path, scope and streaming from
// this row) or a route outside the manifest (health, metrics, the manifest itself, the
// Assistant's chat stream and sessions, models, the action queue, the workflow-prompt renderer),
// which also carries its documentation and request checks here. adapters/http binds handlers to
// the rows by name (Router::Handle) and refuses to serve a table it does not cover
// (Router::CheckCoversSurface); pulse-cli and pulse-mcp build their requests from the same
// rows. Pure data built once on first use; every function is thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/policy/scope.h"

namespace pulse::core {

// Header names of the wire. HTTP header names are case-insensitive; these are the spellings
// clients send.
// The API token, as a bare value.
inline constexpr std::string_view kApiTokenHeader = "X-API-Token";
// The API token as "Bearer <token>" (the alternative to kApiTokenHeader).
inline constexpr std::string_view kAuthorizationHeader = "Authorization";
// Marks the caller as an agent surface (pulse-mcp sends its surface id, kMcpSurfaceId): a
// human token then acts as an agent (model/api_token.h).
inline constexpr std::string_view kAgentSurfaceHeader = "X-Pulse-Agent-Surface";

// Is the row a manifest capability's route, or a route of the server outside the manifest?
enum class SurfaceRouteKind { kCapability, kServer };

struct SurfaceRoute {
  std::string name;            // unique; the capability name or the route's own; the metrics label
  std::string method;          // GET, POST, PUT, PATCH or DELETE
  std::string path;            // template (path_template.h); placeholders are whole segments
  std::optional<Scope> scope;  // the scope a caller needs; nullopt: public (no token)
  bool streaming = false;      // answers with an event stream
  SurfaceRouteKind kind = SurfaceRouteKind::kCapability;
  // kServer rows only (a capability's own row in capability_manifest.h says these):
  std::string description;  // for docs/api.md
  std::string response;     // informational response shape
  std::string body_schema;  // JSON schema the body must pass; empty: size-limited only
  // The query parameters the route takes (an object schema whose properties are the
  // parameters); empty: none. Refused queries answer invalid_request unless the parameter is
  // listed in query_param_codes.
  std::string query_schema;
  std::map<std::string, AgentErrorCode> query_param_codes;
};

// Every route: the capability rows in manifest order, then the server rows in documentation
// order.
const std::vector<SurfaceRoute>& SurfaceRoutes();

// The kServer rows, in documentation order.
std::vector<const SurfaceRoute*> ServerSurfaceRoutes();

// The row called `name`, or nullptr.
const SurfaceRoute* FindSurfaceRoute(std::string_view name);

// The row with exactly this method and path template (as written in the table, not a request
// path), or nullptr.
const SurfaceRoute* FindSurfaceRoute(std::string_view method, std::string_view path_template);

// Checks the table: names non-empty and unique; methods known; path templates well formed;
// no two rows with the same method and template shape (they would match the same requests);
// every schema of a server row parses as a JSON object. OK, or InvalidArgument naming the
// first problem. ValidateManifest runs it.
[[nodiscard]] absl::Status ValidateSurface();

}  // namespace pulse::core
