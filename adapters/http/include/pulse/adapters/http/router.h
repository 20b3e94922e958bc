// Router: the route table of pulse-server, keyed by name. Every route is a row of the core's
// surface table (core/manifest/surface.h) bound by its name alone. A manifest capability's
// body schema and body error code come from the manifest (core/manifest/capability_manifest.h),
// so the table cannot drift from what GET /api/agent/capabilities advertises; CheckComplete()
// fails while any capability is unbound, CheckCoversSurface() while any row is unbound or a
// bound route is not a row. Routes outside the manifest (chat, sessions, health, metrics, ...)
// are the table's server rows (ServerRoutes(), server_routes.h); tests may bind an explicit
// RouteSpec.
// Lookup decodes each path segment on its own (core::PercentDecode), prefers literal segments
// over placeholders, and tells "no such path" (404) from "not for this method" (405 + Allow).
// Built single-threaded at wiring time; after that, lookups are const and thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "pulse/adapters/http/body_validator.h"
#include "pulse/adapters/http/http_types.h"
#include "pulse/adapters/http/query_validator.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/policy/scope.h"

namespace pulse::adapters::http {

// Which budget of open streams a streaming route draws from (HttpServerOptions): the agent
// event subscriptions, or the runs (chat, resume, answer) that do work while they stream.
// Which budget an open event stream draws from (http_server.h): agent event subscriptions, runs
// (chat, resume, answer) and host agents' command streams (/api/agents/commands).
enum class StreamBudget { kSubscription, kRun, kHostAgent };

struct RouteSpec {
  std::string name;                  // capability or route name; also the "route" metrics label
  std::string method;                // GET, POST, PUT, PATCH or DELETE
  std::string path;                  // template (core::ParsePathTemplate)
  std::optional<core::Scope> scope;  // required scope; nullopt: a public route (no auth)
  // JSON schema the body must pass; empty: the body is only size-limited.
  std::string body_schema;
  // The code a refused body is answered with.
  core::AgentErrorCode body_error_code = core::AgentErrorCode::kInvalidRequest;
  bool streaming = false;                             // answers with an event stream
  StreamBudget stream_budget = StreamBudget::kRun;    // for a streaming route
  const core::AgentCapability* capability = nullptr;  // set for manifest routes
  // The query parameters the route takes: an object schema whose properties are the
  // parameters (QueryValidator). Empty: the route takes no query parameter at all.
  std::string query_schema;
  // The code a refused query is answered with, and per-parameter exceptions.
  core::AgentErrorCode query_error_code = core::AgentErrorCode::kInvalidRequest;
  std::map<std::string, core::AgentErrorCode> query_param_codes;
};

// The RouteSpec of a manifest capability. Its query parameters are the input schema's
// properties other than the path placeholders, for GET and DELETE (the methods whose tool
// arguments travel in the query, capability_projection.h); a body method takes none. Refused
// queries get the capability's query_error_code (invalid_request when it has none).
RouteSpec RouteSpecFor(const core::AgentCapability& capability);

struct BoundRoute {
  RouteSpec spec;
  std::vector<core::PathSegment> segments;
  HttpHandler handler;
  std::unique_ptr<BodyValidator> body_validator;    // null when spec.body_schema is empty
  std::unique_ptr<QueryValidator> query_validator;  // never null once bound
};

struct RouteLookup {
  enum class Kind {
    kFound,
    kBadPath,           // a segment does not decode (bad escape, %00): 400 invalid_request
    kNotFound,          // no template has this shape: 404 route_not_found
    kMethodNotAllowed,  // templates match, none for this method: 405 with `allowed`
  };
  Kind kind = Kind::kNotFound;
  const BoundRoute* route = nullptr;  // kFound
  PathParams params;                  // kFound: decoded, not yet checked
  std::vector<std::string> allowed;   // kMethodNotAllowed: sorted methods
};

class Router {
 public:
  Router() = default;
  Router(Router&&) = default;
  Router& operator=(Router&&) = default;

  // Binds the manifest capability or ServerRoutes() entry called `name`. NotFound for any
  // other name; AlreadyExists when it is bound already.
  [[nodiscard]] absl::Status Handle(std::string_view name, HttpHandler handler);

  // Binds a route of one's own. InvalidArgument for an empty name or handler, an unknown
  // method, a bad template or a body or query schema that does not compile; AlreadyExists when the
  // name or the (method, template) is bound already.
  [[nodiscard]] absl::Status HandleRoute(RouteSpec spec, HttpHandler handler);

  // Manifest capabilities with no handler, in manifest order.
  std::vector<std::string> UnboundCapabilities() const;
  // FailedPrecondition naming every unbound capability; OK when there is none.
  [[nodiscard]] absl::Status CheckComplete() const;
  // The whole surface table (core/manifest/surface.h) and nothing else: FailedPrecondition
  // naming the rows without a handler, or the first bound route that is not a row (by name,
  // with the row's method, path, scope and streaming). pulse-server checks it at startup.
  [[nodiscard]] absl::Status CheckCoversSurface() const;

  // Resolves a request. `raw_path` is the target's path as received (before "?"), still
  // percent-encoded.
  RouteLookup Lookup(std::string_view method, std::string_view raw_path) const;

  const std::vector<std::unique_ptr<BoundRoute>>& routes() const { return routes_; }

 private:
  std::vector<std::unique_ptr<BoundRoute>> routes_;
};

}  // namespace pulse::adapters::http
