// Authentication and scope checks, driven from the manifest and the server route table: every
// route a token can reach is tried with a token that lacks its scope and with one that holds
// only that scope.
#include <catch2/catch.hpp>
#include <string>

#include "http_test_support.h"
#include "pulse/adapters/http/standard_handlers.h"

namespace pulse::adapters::http {
namespace {

using testing::Reply;
using testing::Send;
using testing::TestServer;
using testing::TokenHeader;

struct Target {
  std::string name;
  std::string method;
  std::string path;
  core::Scope scope;
  bool streaming;
};

// Every route that needs a scope: the capabilities, then the scoped server routes.
std::vector<Target> ScopedTargets() {
  std::vector<Target> out;
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    out.push_back({c.name, c.method, testing::PathFor(c.path, "vm%3A101"), c.scope, c.streaming});
  }
  for (const ServerRoute& r : ServerRoutes()) {
    if (r.spec.scope.has_value()) {
      // A resource id must be a canonical one; any other id is an opaque token.
      const bool of_resource = r.spec.path.find("{resourceId}") != std::string::npos;
      out.push_back({r.spec.name, r.spec.method,
                     testing::PathFor(r.spec.path, of_resource ? "vm%3A101" : "s-1"), *r.spec.scope,
                     r.spec.streaming});
    }
  }
  return out;
}

TEST_CASE("every capability refuses a token that lacks its scope", "[adapters][http][auth]") {
  TestServer server;
  for (const Target& t : ScopedTargets()) {
    INFO(t.name);
    const std::string token = server.Token(testing::AllScopesExcept(t.scope));
    const Reply reply =
        Send(server, t.method, t.path, testing::ValidBody(t.name), TokenHeader(token));
    CHECK(reply.status == 403);
    CHECK(reply.body == core::MissingScopeError(core::ToString(t.scope)).ToJson());
    const rapidjson::Document body = testing::ParseBody(reply.body);
    CHECK(core::StringViewOf(body["error"]) == "missing_scope");
    CHECK(core::StringViewOf(body["requiredScope"]) == core::ToString(t.scope));
  }
}

TEST_CASE("the required scope alone reaches every handler", "[adapters][http][auth]") {
  TestServer server;
  for (const Target& t : ScopedTargets()) {
    INFO(t.name);
    const std::string token = server.Token({std::string(core::ToString(t.scope))});
    const Reply reply =
        Send(server, t.method, t.path, testing::ValidBody(t.name), TokenHeader(token), t.streaming);
    CHECK(reply.status == 200);
    if (t.streaming) {
      CHECK(reply.body.rfind("event: stream.connected\n", 0) == 0);
    } else {
      const rapidjson::Document body = testing::ParseBody(reply.body);
      CHECK(core::StringViewOf(body["route"]) == t.name);
      CHECK(core::StringViewOf(body["token"]).substr(0, 4) == "tok_");
    }
  }
}

TEST_CASE("a missing or refused credential is 401 unauthorized", "[adapters][http][auth]") {
  TestServer server;
  const std::string valid = server.Token({"monitoring:read"});
  const std::string unknown = "pulse_" + std::string(43, 'A');
  const std::vector<httplib::Headers> cases = {
      {},
      {{"X-API-Token", ""}},
      {{"X-API-Token", "garbage"}},
      {{"X-API-Token", unknown}},
      {{"Authorization", "Bearer"}},
      {{"Authorization", "Bearer " + unknown}},
      {{"Authorization", "Basic " + valid}},
      {{"Authorization", "Bearer " + valid + " extra"}},
      {{"X-API-Token", valid}, {"X-API-Token", valid}},
      {{"X-API-Token", valid}, {"Authorization", "Bearer " + unknown}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const Reply reply = Send(server, "GET", "/api/agent/fleet-context", "", cases[i]);
    CHECK(reply.status == 401);
    CHECK(testing::ErrorCode(reply.body) == "unauthorized");
    CHECK(reply.body.find(valid) == std::string::npos);
    CHECK(reply.body.find(unknown) == std::string::npos);
    auto www = reply.headers.find("WWW-Authenticate");
    REQUIRE(www != reply.headers.end());
    CHECK(www->second.rfind("Bearer", 0) == 0);
    for (const auto& [name, value] : reply.headers) {
      CHECK(value.find(valid) == std::string::npos);
    }
  }
}

TEST_CASE("X-API-Token and Authorization Bearer both authenticate", "[adapters][http][auth]") {
  TestServer server;
  const std::string token = server.Token({"monitoring:read"});
  for (const httplib::Headers& headers :
       {httplib::Headers{{"X-API-Token", token}},
        httplib::Headers{{"Authorization", "Bearer " + token}},
        httplib::Headers{{"Authorization", "bearer   " + token}},
        httplib::Headers{{"X-API-Token", token}, {"Authorization", "Bearer " + token}}}) {
    const Reply reply = Send(server, "GET", "/api/agent/fleet-context", "", headers);
    CHECK(reply.status == 200);
    CHECK(reply.body.find(token) == std::string::npos);
  }
}

TEST_CASE("the wildcard scope reaches scoped routes", "[adapters][http][auth]") {
  TestServer server;
  const std::string token = server.Token({"*"});
  CHECK(Send(server, "GET", "/api/ai/patrol/findings", "", TokenHeader(token)).status == 200);
  CHECK(Send(server, "POST", "/api/actions/plan", testing::ValidBody("plan_action"),
             TokenHeader(token))
            .status == 200);
}

TEST_CASE("public routes need no token", "[adapters][http][auth]") {
  TestServer server(
      testing::TestOptions(),
      testing::FullRouter({{"get_capabilities", ManifestHandler()}, {"healthz", HealthHandler()}}));
  const Reply manifest = Send(server, "GET", "/api/agent/capabilities");
  CHECK(manifest.status == 200);
  CHECK(manifest.body == core::ManifestJson());
  CHECK(manifest.headers.find("Cache-Control")->second == "public, max-age=300");
  const Reply health = Send(server, "GET", "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == R"({"status":"ok"})");
  CHECK(Send(server, "POST", "/api/agent/capabilities", "{}").status == 405);
}

TEST_CASE("an unavailable token store fails closed with 503", "[adapters][http][auth]") {
  TestServer server;
  const std::string token = server.Token({"monitoring:read"});
  server.store().FailNext(absl::UnavailableError("disk gone"));
  const Reply reply = Send(server, "GET", "/api/agent/fleet-context", "", TokenHeader(token));
  CHECK(reply.status == 503);
  CHECK(testing::ErrorCode(reply.body) == "service_unavailable");
  CHECK(reply.body.find("disk gone") == std::string::npos);
}

TEST_CASE("handlers see the principal but never the credential headers", "[adapters][http][auth]") {
  std::string seen_token_header = "unset";
  std::string seen_authorization = "unset";
  std::string seen_name;
  TestServer server(
      testing::TestOptions(),
      testing::FullRouter({{"get_fleet_context", [&](const HttpRequest& r) {
                              seen_token_header = std::string(r.Header("x-api-token"));
                              seen_authorization = std::string(r.Header("authorization"));
                              seen_name = r.principal.token_name;
                              CHECK(r.principal.authenticated);
                              CHECK(r.principal.scopes.Has(core::Scope::kMonitoringRead));
                              CHECK_FALSE(r.principal.scopes.Has(core::Scope::kAiChat));
                              return HttpReply::Json("{}");
                            }}}));
  const std::string token = server.Token({"monitoring:read"});
  const Reply reply = Send(server, "GET", "/api/agent/fleet-context", "",
                           {{"X-API-Token", token}, {"Authorization", "Bearer " + token}});
  CHECK(reply.status == 200);
  CHECK(seen_token_header.empty());
  CHECK(seen_authorization.empty());
  CHECK(seen_name == "test");
}

}  // namespace
}  // namespace pulse::adapters::http
