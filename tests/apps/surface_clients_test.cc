// pulse-cli and pulse-mcp speak the surface table (core/manifest/surface.h): the header names
// they send are the table's, and their requests go to the table's routes. Driven against a
// loopback server that records what arrives.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "client.h"
#include "http_pulse_caller.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/testing/fake_provider_server.h"
#include "rapidjson/document.h"
#include "routes.h"

namespace pulse {
namespace {

TEST_CASE("the clients' header names are the surface table's", "[apps][surface]") {
  CHECK(cli::kTokenHeader == core::kApiTokenHeader);
  CHECK(apps::mcp::kTokenHeader == core::kApiTokenHeader);
  CHECK(apps::mcp::kAgentSurfaceHeader == core::kAgentSurfaceHeader);
}

TEST_CASE("pulse-cli sends the table's token header and no agent marker", "[apps][surface]") {
  auto server = testing::FakeProviderServer::Start();
  REQUIRE(server.ok());
  (*server)->Enqueue(testing::JsonResponse(200, R"({"status":"ok"})"));
  auto client = cli::PulseClient::Open({.base_url = (*server)->base_url(), .token = "tok-cli-1"});
  REQUIRE(client.ok());
  absl::StatusOr<cli::ApiCall> call = cli::RouteCall("healthz");
  REQUIRE(call.ok());
  CHECK(call->method == core::FindSurfaceRoute("healthz")->method);
  CHECK(call->target == core::FindSurfaceRoute("healthz")->path);
  auto result = (*client)->Send(call->method, call->target, call->body);
  REQUIRE(result.ok());
  CHECK(result->status == 200);
  const auto requests = (*server)->Requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/healthz");
  CHECK(requests[0].Header(core::kApiTokenHeader) == "tok-cli-1");
  CHECK(requests[0].Header(core::kAgentSurfaceHeader).empty());
  CHECK(requests[0].Header(core::kAuthorizationHeader).empty());
}

TEST_CASE("pulse-cli builds its calls from the table's rows only", "[apps][surface]") {
  absl::StatusOr<cli::ApiCall> session = cli::RouteCall("get_session", {{"sessionId", "a/b c"}});
  REQUIRE(session.ok());
  CHECK(session->method == "GET");
  CHECK(session->target == "/api/ai/sessions/a%2Fb%20c");
  // Unknown names, capability rows (they go through CapabilityCall) and missing placeholders.
  CHECK(cli::RouteCall("no_such_route").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(cli::RouteCall("").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(cli::RouteCall("plan_action").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(cli::RouteCall("get_session").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(cli::RouteCall("get_session", {{"sessionId", ""}}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  rapidjson::Document args(rapidjson::kObjectType);
  args.AddMember("actionId", "act 1", args.GetAllocator());
  absl::StatusOr<cli::ApiCall> action = cli::CapabilityCall("execute_action", args);
  REQUIRE(action.ok());
  CHECK(action->method == core::FindSurfaceRoute("execute_action")->method);
  CHECK(action->target == "/api/actions/act%201/execute");
}

TEST_CASE("pulse-mcp sends the table's token and agent-surface headers", "[apps][surface]") {
  auto server = testing::FakeProviderServer::Start();
  REQUIRE(server.ok());
  (*server)->Enqueue(testing::JsonResponse(200, "{}"));
  auto caller =
      apps::mcp::HttpPulseCaller::Open((*server)->base_url(), "tok-mcp-1", absl::Seconds(10));
  REQUIRE(caller.ok());
  const core::SurfaceRoute* manifest = core::FindSurfaceRoute("get_capabilities");
  REQUIRE(manifest != nullptr);
  auto reply = (*caller)->Send({manifest->method, manifest->path, std::nullopt});
  REQUIRE(reply.ok());
  CHECK(reply->status == 200);
  const auto requests = (*server)->Requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/api/agent/capabilities");
  CHECK(requests[0].Header(core::kApiTokenHeader) == "tok-mcp-1");
  CHECK(requests[0].Header(core::kAgentSurfaceHeader) == core::kMcpSurfaceId);
}

}  // namespace
}  // namespace pulse
