#include "pulse/adapters/http/router.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::adapters::http {
namespace {

bool KnownMethod(std::string_view method) {
  return method == "GET" || method == "POST" || method == "PUT" || method == "PATCH" ||
         method == "DELETE";
}

// Splits "/a/b%2Fc" into decoded segments {"a", "b/c"}; nullopt when a segment does not decode.
std::optional<std::vector<std::string>> DecodeSegments(std::string_view raw_path) {
  std::vector<std::string> segments;
  if (raw_path.empty() || raw_path.front() != '/') {
    return std::nullopt;
  }
  if (raw_path == "/") {
    return segments;  // the root: no segment, as its template "/"
  }
  std::size_t start = 1;
  while (true) {
    const std::size_t end = raw_path.find('/', start);
    const std::string_view raw = raw_path.substr(
        start, end == std::string_view::npos ? std::string_view::npos : end - start);
    absl::StatusOr<std::string> decoded = core::PercentDecode(raw);
    if (!decoded.ok()) {
      return std::nullopt;
    }
    segments.push_back(*std::move(decoded));
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return segments;
}

// Literal segments earlier in the path win over placeholders: "/api/actions/plan" beats
// "/api/actions/{actionId}" for "/api/actions/plan".
bool MoreSpecific(const BoundRoute& a, const BoundRoute& b) {
  for (std::size_t i = 0; i < a.segments.size() && i < b.segments.size(); ++i) {
    if (a.segments[i].placeholder != b.segments[i].placeholder) {
      return !a.segments[i].placeholder;
    }
  }
  return false;
}

// Two templates of the same shape would match exactly the same paths, whatever their
// placeholders are called.
bool SameShape(const BoundRoute& a, const std::vector<core::PathSegment>& b) {
  if (a.segments.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    const core::PathSegment& x = a.segments[i];
    if (x.placeholder != b[i].placeholder || (!x.placeholder && x.text != b[i].text)) {
      return false;
    }
  }
  return true;
}

// The query parameters of a capability: for GET and DELETE, its input schema's properties
// other than the path placeholders (the call projection sends the other arguments in the
// query); "" (none) for body methods or when nothing remains.
std::string QuerySchemaFor(const core::AgentCapability& capability) {
  if (capability.method != "GET" && capability.method != "DELETE") {
    return "";
  }
  absl::StatusOr<rapidjson::Document> schema = core::ParseJson(core::InputSchemaJson(capability));
  if (!schema.ok() || !schema->IsObject() || !schema->HasMember("properties") ||
      !(*schema)["properties"].IsObject()) {
    return "";
  }
  rapidjson::Value& properties = (*schema)["properties"];
  for (const std::string& name : core::PathPlaceholders(capability.path)) {
    properties.RemoveMember(name);
  }
  if (properties.MemberCount() == 0) {
    return "";
  }
  schema->RemoveMember("required");
  if (schema->HasMember("additionalProperties")) {
    (*schema)["additionalProperties"].SetBool(false);
  } else {
    schema->AddMember("additionalProperties", false, schema->GetAllocator());
  }
  return core::ToJsonString(*schema);
}

}  // namespace

RouteSpec RouteSpecFor(const core::AgentCapability& capability) {
  RouteSpec spec;
  spec.name = capability.name;
  spec.method = capability.method;
  spec.path = capability.path;
  spec.scope = capability.scope;
  spec.body_schema = core::BodySchemaJson(capability);
  spec.body_error_code = capability.body_error_code.value_or(core::AgentErrorCode::kInvalidRequest);
  spec.streaming = capability.streaming;
  // The manifest's streams are the agent event subscriptions; runs are server routes.
  spec.stream_budget = StreamBudget::kSubscription;
  spec.capability = &capability;
  spec.query_schema = QuerySchemaFor(capability);
  spec.query_error_code =
      capability.query_error_code.value_or(core::AgentErrorCode::kInvalidRequest);
  return spec;
}

absl::Status Router::Handle(std::string_view name, HttpHandler handler) {
  if (const core::AgentCapability* capability = core::FindAgentCapability(name)) {
    return HandleRoute(RouteSpecFor(*capability), std::move(handler));
  }
  if (const ServerRoute* route = FindServerRoute(name)) {
    return HandleRoute(route->spec, std::move(handler));
  }
  return absl::NotFoundError(absl::StrCat("no capability or server route is called \"",
                                          core::QuoteForMessage(name), "\""));
}

absl::Status Router::HandleRoute(RouteSpec spec, HttpHandler handler) {
  if (spec.name.empty() || !handler) {
    return absl::InvalidArgumentError("a route needs a name and a handler");
  }
  if (!KnownMethod(spec.method)) {
    return absl::InvalidArgumentError(
        absl::StrCat("route ", spec.name, " has an unsupported method"));
  }
  absl::StatusOr<std::vector<core::PathSegment>> segments = core::ParsePathTemplate(spec.path);
  if (!segments.ok()) {
    return segments.status();
  }
  for (const auto& bound : routes_) {
    if (bound->spec.name == spec.name) {
      return absl::AlreadyExistsError(absl::StrCat("route ", spec.name, " is bound already"));
    }
    if (bound->spec.method == spec.method && SameShape(*bound, *segments)) {
      return absl::AlreadyExistsError(absl::StrCat("route ", spec.name, " repeats ", spec.method,
                                                   " ", spec.path, " of ", bound->spec.name));
    }
  }
  auto route = std::make_unique<BoundRoute>();
  if (!spec.body_schema.empty()) {
    absl::StatusOr<std::unique_ptr<BodyValidator>> validator =
        BodyValidator::Compile(spec.body_schema);
    if (!validator.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("route ", spec.name, ": ", validator.status().message()));
    }
    route->body_validator = *std::move(validator);
  }
  absl::StatusOr<std::unique_ptr<QueryValidator>> query =
      QueryValidator::Compile(spec.query_schema);
  if (!query.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("route ", spec.name, ": ", query.status().message()));
  }
  route->query_validator = *std::move(query);
  route->spec = std::move(spec);
  route->segments = *std::move(segments);
  route->handler = std::move(handler);
  routes_.push_back(std::move(route));
  return absl::OkStatus();
}

std::vector<std::string> Router::UnboundCapabilities() const {
  std::vector<std::string> unbound;
  for (const core::AgentCapability& capability : core::AgentCapabilities()) {
    const bool bound = std::any_of(routes_.begin(), routes_.end(), [&](const auto& r) {
      return r->spec.capability == &capability;
    });
    if (!bound) {
      unbound.push_back(capability.name);
    }
  }
  return unbound;
}

absl::Status Router::CheckComplete() const {
  const std::vector<std::string> unbound = UnboundCapabilities();
  if (unbound.empty()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "manifest capabilities without a route handler: ", absl::StrJoin(unbound, ", ")));
}

absl::Status Router::CheckCoversSurface() const {
  std::vector<std::string> unbound;
  for (const core::SurfaceRoute& row : core::SurfaceRoutes()) {
    const bool bound = std::any_of(routes_.begin(), routes_.end(),
                                   [&](const auto& r) { return r->spec.name == row.name; });
    if (!bound) {
      unbound.push_back(row.name);
    }
  }
  if (!unbound.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("surface routes without a handler: ", absl::StrJoin(unbound, ", ")));
  }
  for (const auto& route : routes_) {
    const core::SurfaceRoute* row = core::FindSurfaceRoute(route->spec.name);
    if (row == nullptr || row->method != route->spec.method || row->path != route->spec.path ||
        row->scope != route->spec.scope || row->streaming != route->spec.streaming) {
      return absl::FailedPreconditionError(absl::StrCat("route ", route->spec.name, " (",
                                                        route->spec.method, " ", route->spec.path,
                                                        ") is not a row of the surface table"));
    }
  }
  return absl::OkStatus();
}

RouteLookup Router::Lookup(std::string_view method, std::string_view raw_path) const {
  RouteLookup out;
  const std::optional<std::vector<std::string>> segments = DecodeSegments(raw_path);
  if (!segments.has_value()) {
    out.kind = RouteLookup::Kind::kBadPath;
    return out;
  }
  const BoundRoute* best = nullptr;
  bool shape_matched = false;
  for (const auto& route : routes_) {
    if (route->segments.size() != segments->size()) {
      continue;
    }
    bool match = true;
    for (std::size_t i = 0; i < segments->size() && match; ++i) {
      const core::PathSegment& t = route->segments[i];
      match = t.placeholder ? !(*segments)[i].empty() : t.text == (*segments)[i];
    }
    if (!match) {
      continue;
    }
    shape_matched = true;
    if (route->spec.method != method) {
      if (std::find(out.allowed.begin(), out.allowed.end(), route->spec.method) ==
          out.allowed.end()) {
        out.allowed.push_back(route->spec.method);
      }
      continue;
    }
    if (best == nullptr || MoreSpecific(*route, *best)) {
      best = route.get();
    }
  }
  if (best == nullptr) {
    out.kind = shape_matched ? RouteLookup::Kind::kMethodNotAllowed : RouteLookup::Kind::kNotFound;
    std::sort(out.allowed.begin(), out.allowed.end());
    return out;
  }
  out.kind = RouteLookup::Kind::kFound;
  out.route = best;
  out.allowed.clear();
  for (std::size_t i = 0; i < best->segments.size(); ++i) {
    if (best->segments[i].placeholder) {
      out.params.emplace(best->segments[i].text, (*segments)[i]);
    }
  }
  return out;
}

}  // namespace pulse::adapters::http
