#include "pulse/adapters/http/router.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "http_test_support.h"
#include "pulse/adapters/http/server_routes.h"

namespace pulse::adapters::http {
namespace {

HttpReply Ok(const HttpRequest&) { return HttpReply::Json("{}"); }

TEST_CASE("every manifest capability binds by name to its manifest route", "[adapters][http]") {
  Router router;
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    INFO(c.name);
    REQUIRE(router.Handle(c.name, Ok).ok());
  }
  CHECK(router.CheckComplete().ok());
  for (const auto& route : router.routes()) {
    const core::AgentCapability* c = core::FindAgentCapability(route->spec.name);
    REQUIRE(c != nullptr);
    CHECK(route->spec.capability == c);
    CHECK(route->spec.method == c->method);
    CHECK(route->spec.path == c->path);
    CHECK(route->spec.scope == c->scope);
    CHECK((route->body_validator != nullptr) == core::TakesBody(*c));
  }
}

TEST_CASE("an unknown name or a second binding is refused", "[adapters][http]") {
  Router router;
  CHECK(router.Handle("get_nodes", Ok).code() == absl::StatusCode::kNotFound);
  CHECK(router.Handle("", Ok).code() == absl::StatusCode::kNotFound);
  REQUIRE(router.Handle("plan_action", Ok).ok());
  CHECK(router.Handle("plan_action", Ok).code() == absl::StatusCode::kAlreadyExists);
  RouteSpec clash;
  clash.name = "my_plan";
  clash.method = "POST";
  clash.path = "/api/actions/plan";
  CHECK(router.HandleRoute(clash, Ok).code() == absl::StatusCode::kAlreadyExists);
  RouteSpec bad;
  bad.name = "bad";
  bad.method = "GET";
  bad.path = "/api/{x";
  CHECK(router.HandleRoute(bad, Ok).code() == absl::StatusCode::kInvalidArgument);
  bad.path = "/api/ok";
  bad.method = "BREW";
  CHECK(router.HandleRoute(bad, Ok).code() == absl::StatusCode::kInvalidArgument);
  bad.method = "GET";
  CHECK(router.HandleRoute(bad, nullptr).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("an incomplete router names the unbound capabilities", "[adapters][http]") {
  Router router;
  REQUIRE(router.Handle("get_fleet_context", Ok).ok());
  const absl::Status status = router.CheckComplete();
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(status.message()).find("plan_action") != std::string::npos);
  CHECK(std::string(status.message()).find("get_fleet_context") == std::string::npos);
  CHECK(router.UnboundCapabilities().size() == core::AgentCapabilities().size() - 1);
}

TEST_CASE("an incomplete router cannot open a server by default", "[adapters][http]") {
  testing::FakeClock clock;
  testing::InMemoryTokenStore store;
  TokenAuthenticator auth(store, clock);
  Router router;
  REQUIRE(router.Handle("get_fleet_context", Ok).ok());
  auto server = HttpServer::Open(testing::TestOptions(), std::move(router), auth);
  CHECK(server.status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("server routes and capabilities never share a method and path", "[adapters][http]") {
  std::set<std::string> seen;
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    CHECK(seen.insert(c.method + " " + c.path).second);
  }
  for (const ServerRoute& r : ServerRoutes()) {
    INFO(r.spec.name);
    CHECK(seen.insert(r.spec.method + " " + r.spec.path).second);
    CHECK(core::FindAgentCapability(r.spec.name) == nullptr);
    CHECK(FindServerRoute(r.spec.name) == &r);
  }
  CHECK(FindServerRoute("get_capabilities")->spec.scope == std::nullopt);
  CHECK(FindServerRoute("healthz")->spec.scope == std::nullopt);
  CHECK(FindServerRoute("chat")->spec.scope == core::Scope::kAiChat);
  CHECK(FindServerRoute("chat")->spec.streaming);
  // The full router binds them all together without a clash.
  Router full = testing::FullRouter();
  CHECK(full.CheckComplete().ok());
}

TEST_CASE("lookup decodes each segment and prefers literals", "[adapters][http]") {
  const Router router = testing::FullRouter();
  RouteLookup plan = router.Lookup("POST", "/api/actions/plan");
  REQUIRE(plan.kind == RouteLookup::Kind::kFound);
  CHECK(plan.route->spec.name == "plan_action");

  RouteLookup detail = router.Lookup("GET", "/api/actions/plan");
  REQUIRE(detail.kind == RouteLookup::Kind::kFound);
  CHECK(detail.route->spec.name == "get_action");
  CHECK(detail.params.at("actionId") == "plan");

  RouteLookup encoded = router.Lookup("GET", "/api/agent/resource-context/vm%3A101%2Fx");
  REQUIRE(encoded.kind == RouteLookup::Kind::kFound);
  CHECK(encoded.params.at("resourceId") == "vm:101/x");

  RouteLookup literal_encoded = router.Lookup("GET", "/api/agent/fleet%2Dcontext");
  REQUIRE(literal_encoded.kind == RouteLookup::Kind::kFound);
  CHECK(literal_encoded.route->spec.name == "get_fleet_context");
}

TEST_CASE("lookup tells 404 from 405 and flags undecodable paths", "[adapters][http]") {
  const Router router = testing::FullRouter();
  CHECK(router.Lookup("GET", "/api/nothing").kind == RouteLookup::Kind::kNotFound);
  CHECK(router.Lookup("GET", "/api/agent/fleet-context/").kind == RouteLookup::Kind::kNotFound);
  CHECK(router.Lookup("GET", "/api/agent//fleet-context").kind == RouteLookup::Kind::kNotFound);
  CHECK(router.Lookup("GET", "/api/agent/resource-context/").kind == RouteLookup::Kind::kNotFound);
  RouteLookup wrong = router.Lookup("PATCH", "/api/resources/vm%3A1/operator-state");
  REQUIRE(wrong.kind == RouteLookup::Kind::kMethodNotAllowed);
  CHECK(wrong.allowed == std::vector<std::string>{"DELETE", "GET", "PUT"});
  CHECK(router.Lookup("GET", "/api/agent/resource-context/%zz").kind ==
        RouteLookup::Kind::kBadPath);
  CHECK(router.Lookup("GET", "/api/agent/resource-context/a%00b").kind ==
        RouteLookup::Kind::kBadPath);
  CHECK(router.Lookup("GET", "relative").kind == RouteLookup::Kind::kBadPath);
}

}  // namespace
}  // namespace pulse::adapters::http
