// The values a route handler sees and returns, independent of the transport: the decoded
// request (route, path parameters, query, body, authenticated principal) and the reply (a
// JSON or text body, an agent error envelope, or an event stream). Plain values; a handler is
// called on a server handler (or event-loop) thread and may run concurrently with itself.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pulse/core/auth/api_token.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/policy/scope.h"

namespace pulse::adapters::http {

class SseStream;
struct RouteSpec;

// Decoded query pairs; a repeated name keeps every value in order (same container as
// core::QueryParams).
using QueryParams = std::multimap<std::string, std::string>;
// Decoded path parameters by placeholder name.
using PathParams = std::map<std::string, std::string>;

// Who is calling. A public route sees an unauthenticated principal with no scopes.
struct Principal {
  bool authenticated = false;
  std::string token_id;    // "tok_..." (a public handle, never the token)
  std::string token_name;  // the operator-chosen name
  core::ScopeSet scopes;
  // Who holds the token, fixed when it was minted (never taken from the request).
  core::ApiTokenKind kind = core::ApiTokenKind::kHuman;
};

struct HttpRequest {
  std::string method;
  const RouteSpec* route = nullptr;  // the matched route; never null inside a handler
  PathParams path_params;            // checked by core::CheckPathParam
  QueryParams query;                 // strictly percent-decoded, '+' read as a space
  // The body as received (at most the server's limit). For a route with a body schema it has
  // passed the schema; an empty body then reads as "{}".
  std::string body;
  Principal principal;
  // Request headers with lower-case names. Credentials (X-API-Token, Authorization) are
  // removed before a handler sees them.
  std::vector<std::pair<std::string, std::string>> headers;

  // The first value of header `header_name` (compared without regard to case), or "".
  std::string_view Header(std::string_view header_name) const;
  // The first value of query parameter `name`, or nullopt.
  std::optional<std::string_view> Query(std::string_view name) const;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra response headers. A name outside the HTTP token characters or a value holding CR,
  // LF or NUL is dropped by the server, never written.
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the reply is this event stream (200, text/event-stream); body is ignored.
  std::shared_ptr<SseStream> stream;

  static HttpReply Json(std::string json, int status = 200);
  static HttpReply Text(std::string text, std::string content_type, int status = 200);
  static HttpReply NoContent();
  // The agent envelope with HttpStatusFor(error.code).
  static HttpReply Error(const core::AgentError& error);
  static HttpReply Error(core::AgentErrorCode code, std::string message);
  static HttpReply EventStream(std::shared_ptr<SseStream> stream);
};

using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

}  // namespace pulse::adapters::http
