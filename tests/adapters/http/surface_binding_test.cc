// The router over the core's surface table (core/manifest/surface.h): a router that binds
// every row by name covers the table; a missing row or a route that is not a row is refused;
// lookups of hostile paths answer as they always have.
#include <catch2/catch.hpp>
#include <string>

#include "http_test_support.h"
#include "pulse/adapters/http/router.h"
#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/manifest/surface.h"

namespace pulse::adapters::http {
namespace {

HttpReply Ok(const HttpRequest&) { return HttpReply::Json("{}"); }

TEST_CASE("binding every surface row by name covers the table", "[adapters][http][surface]") {
  Router router;
  for (const core::SurfaceRoute& row : core::SurfaceRoutes()) {
    INFO(row.name);
    REQUIRE(router.Handle(row.name, Ok).ok());
  }
  CHECK(router.CheckComplete().ok());
  CHECK(router.CheckCoversSurface().ok());
  REQUIRE(router.routes().size() == core::SurfaceRoutes().size());
  for (const auto& route : router.routes()) {
    const core::SurfaceRoute* row = core::FindSurfaceRoute(route->spec.name);
    REQUIRE(row != nullptr);
    CHECK(route->spec.method == row->method);
    CHECK(route->spec.path == row->path);
    CHECK(route->spec.scope == row->scope);
    CHECK(route->spec.streaming == row->streaming);
  }
  // The test support's full router is the same table.
  CHECK(testing::FullRouter().CheckCoversSurface().ok());
}

TEST_CASE("the server routes are the surface table's server rows", "[adapters][http][surface]") {
  const std::vector<const core::SurfaceRoute*> rows = core::ServerSurfaceRoutes();
  REQUIRE(ServerRoutes().size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ServerRoute& route = ServerRoutes()[i];
    CHECK(route.spec.name == rows[i]->name);
    CHECK(route.spec.method == rows[i]->method);
    CHECK(route.spec.path == rows[i]->path);
    CHECK(route.spec.scope == rows[i]->scope);
    CHECK(route.spec.body_schema == rows[i]->body_schema);
    CHECK(route.spec.query_schema == rows[i]->query_schema);
    CHECK(route.spec.query_param_codes == rows[i]->query_param_codes);
    // A host agent's command stream has a budget of its own, a GET stream (the Patrol stream)
    // is a subscription; every other stream is a run.
    const bool host_agent = rows[i]->path.rfind("/api/agents/", 0) == 0;
    const bool listens = rows[i]->streaming && rows[i]->method == "GET";
    CHECK(route.spec.stream_budget == (host_agent ? StreamBudget::kHostAgent
                                       : listens  ? StreamBudget::kSubscription
                                                  : StreamBudget::kRun));
    CHECK(route.description == rows[i]->description);
    CHECK(route.response == rows[i]->response);
  }
}

TEST_CASE("a surface row without a handler fails the coverage check", "[adapters][http][surface]") {
  Router router;
  for (const core::SurfaceRoute& row : core::SurfaceRoutes()) {
    if (row.name != "healthz" && row.name != "plan_action") {
      REQUIRE(router.Handle(row.name, Ok).ok());
    }
  }
  const absl::Status status = router.CheckCoversSurface();
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  const std::string message(status.message());
  CHECK(message.find("healthz") != std::string::npos);
  CHECK(message.find("plan_action") != std::string::npos);
  CHECK(message.find("chat") == std::string::npos);
  CHECK(Router().CheckCoversSurface().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a handler on a path outside the table fails the coverage check",
          "[adapters][http][surface]") {
  SECTION("a route of its own") {
    Router router = testing::FullRouter();
    RouteSpec extra;
    extra.name = "debug_dump";
    extra.method = "GET";
    extra.path = "/api/debug/dump";
    REQUIRE(router.HandleRoute(extra, Ok).ok());
    const absl::Status status = router.CheckCoversSurface();
    CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(status.message()).find("/api/debug/dump") != std::string::npos);
  }
  SECTION("a row's name on another path, method or scope") {
    for (int variant = 0; variant < 3; ++variant) {
      Router router;
      for (const core::SurfaceRoute& row : core::SurfaceRoutes()) {
        if (row.name == "healthz") {
          continue;
        }
        REQUIRE(router.Handle(row.name, Ok).ok());
      }
      RouteSpec moved = FindServerRoute("healthz")->spec;
      if (variant == 0) {
        moved.path = "/health";
      } else if (variant == 1) {
        moved.method = "POST";
      } else {
        moved.scope = core::Scope::kMonitoringRead;
      }
      REQUIRE(router.HandleRoute(moved, Ok).ok());
      INFO(variant);
      CHECK(router.CheckCoversSurface().code() == absl::StatusCode::kFailedPrecondition);
    }
  }
}

TEST_CASE("hostile paths meet the table-bound router as before", "[adapters][http][surface]") {
  const Router router = testing::FullRouter();
  CHECK(router.Lookup("GET", "/api/no-such-route").kind == RouteLookup::Kind::kNotFound);
  CHECK(router.Lookup("GET", "/healthz/").kind == RouteLookup::Kind::kNotFound);
  CHECK(router.Lookup("GET", "").kind == RouteLookup::Kind::kBadPath);
  CHECK(router.Lookup("GET", "healthz").kind == RouteLookup::Kind::kBadPath);
  CHECK(router.Lookup("GET", "/api/actions/%zz").kind == RouteLookup::Kind::kBadPath);
  CHECK(router.Lookup("GET", "/api/actions/a%00b").kind == RouteLookup::Kind::kBadPath);
  CHECK(router.Lookup("GET", "/" + std::string(70000, 'a')).kind == RouteLookup::Kind::kNotFound);
  CHECK(router.Lookup("GET", "/api/actions/" + std::string(70000, 'a')).kind ==
        RouteLookup::Kind::kFound);  // the length limit is the dispatcher's, not the table's
  // Wrong method: 405 with every method the path has.
  RouteLookup wrong = router.Lookup("PATCH", "/api/resources/vm%3A101/operator-state");
  CHECK(wrong.kind == RouteLookup::Kind::kMethodNotAllowed);
  CHECK(wrong.allowed == std::vector<std::string>{"DELETE", "GET", "PUT"});
  // Percent-encoded literals decode to the row; an encoded "/" stays inside one segment.
  RouteLookup encoded = router.Lookup("GET", "/%68ealthz");
  REQUIRE(encoded.kind == RouteLookup::Kind::kFound);
  CHECK(encoded.route->spec.name == "healthz");
  RouteLookup slash = router.Lookup("GET", "/api/actions/a%2Fb");
  REQUIRE(slash.kind == RouteLookup::Kind::kFound);
  CHECK(slash.route->spec.name == "get_action");
  CHECK(slash.params.at("actionId") == "a/b");
  CHECK(router.Lookup("GET", "/api%2Factions/x").kind == RouteLookup::Kind::kNotFound);
}

}  // namespace
}  // namespace pulse::adapters::http
