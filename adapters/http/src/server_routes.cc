#include "pulse/adapters/http/server_routes.h"

#include "pulse/core/manifest/surface.h"

namespace pulse::adapters::http {
namespace {

// The RouteSpec of a server row of the surface table: its route, and the body and query checks
// the row declares. A streaming server route is a run (chat, resume, answer: POST), except a
// host agent's command stream (every server route under /api/agents/), which has a budget of its
// own so a thousand connected agents never starve the Assistant's runs, and a GET stream that
// only listens (the Patrol stream), which is a subscription like the agent event stream.
ServerRoute FromSurface(const core::SurfaceRoute& row) {
  ServerRoute route;
  route.spec.name = row.name;
  route.spec.method = row.method;
  route.spec.path = row.path;
  route.spec.scope = row.scope;
  route.spec.body_schema = row.body_schema;
  route.spec.streaming = row.streaming;
  if (row.path.rfind("/api/agents/", 0) == 0) {
    route.spec.stream_budget = StreamBudget::kHostAgent;
  } else if (row.streaming && row.method == "GET") {
    route.spec.stream_budget = StreamBudget::kSubscription;
  } else {
    route.spec.stream_budget = StreamBudget::kRun;
  }
  route.spec.query_schema = row.query_schema;
  route.spec.query_param_codes = row.query_param_codes;
  route.description = row.description;
  route.response = row.response;
  return route;
}

std::vector<ServerRoute> BuildRoutes() {
  std::vector<ServerRoute> routes;
  for (const core::SurfaceRoute* row : core::ServerSurfaceRoutes()) {
    routes.push_back(FromSurface(*row));
  }
  return routes;
}

}  // namespace

const std::vector<ServerRoute>& ServerRoutes() {
  static const std::vector<ServerRoute> routes = BuildRoutes();
  return routes;
}

const ServerRoute* FindServerRoute(std::string_view name) {
  for (const ServerRoute& route : ServerRoutes()) {
    if (route.spec.name == name) {
      return &route;
    }
  }
  return nullptr;
}

}  // namespace pulse::adapters::http
