// The routes pulse-server serves outside the capability manifest (docs/server.md): the
// manifest itself, health, metrics, the Assistant's chat stream and sessions, model list,
// the action queue and detail, and the workflow-prompt renderer. They are the server rows of
// the core's surface table (core/manifest/surface.h), projected as RouteSpecs; read by
// Router::Handle and by the docs generator (so docs/api.md lists exactly these). Immutable;
// thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pulse/adapters/http/router.h"

namespace pulse::adapters::http {

struct ServerRoute {
  RouteSpec spec;
  std::string description;
  std::string response;  // informational response shape
};

// Every server route, in documentation order.
const std::vector<ServerRoute>& ServerRoutes();

// The entry called `name`, or nullptr.
const ServerRoute* FindServerRoute(std::string_view name);

}  // namespace pulse::adapters::http
