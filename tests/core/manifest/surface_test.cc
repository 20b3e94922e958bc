// The surface table (core/manifest/surface.h): one row per route, the capabilities' routes
// taken from it, the header names of the wire, and lookups that refuse what is not a row.
#include "pulse/core/manifest/surface.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <utility>

#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/path_template.h"

namespace pulse::core {
namespace {

TEST_CASE("every surface row is unique by name and by method and path", "[manifest][surface]") {
  REQUIRE(ValidateSurface().ok());
  REQUIRE(ValidateManifest().ok());
  std::set<std::string> names;
  std::set<std::pair<std::string, std::string>> routes;
  for (const SurfaceRoute& row : SurfaceRoutes()) {
    CHECK(names.insert(row.name).second);
    CHECK(routes.emplace(row.method, row.path).second);
    CHECK(ParsePathTemplate(row.path).ok());
    CHECK(FindSurfaceRoute(row.name) == &row);
    CHECK(FindSurfaceRoute(row.method, row.path) == &row);
  }
  CHECK(SurfaceRoutes().size() == AgentCapabilities().size() + ServerSurfaceRoutes().size());
}

TEST_CASE("every capability takes its route from a capability row of the same name",
          "[manifest][surface]") {
  for (const AgentCapability& capability : AgentCapabilities()) {
    const SurfaceRoute* row = FindSurfaceRoute(capability.name);
    REQUIRE(row != nullptr);
    CHECK(row->kind == SurfaceRouteKind::kCapability);
    CHECK(row->method == capability.method);
    CHECK(row->path == capability.path);
    CHECK(row->scope == capability.scope);
    CHECK(row->streaming == capability.streaming);
    // Documentation and request checks of a capability live in its manifest row only.
    CHECK(row->description.empty());
    CHECK(row->body_schema.empty());
    CHECK(row->query_schema.empty());
  }
  for (const SurfaceRoute& row : SurfaceRoutes()) {
    const bool is_capability = FindAgentCapability(row.name) != nullptr;
    CHECK(is_capability == (row.kind == SurfaceRouteKind::kCapability));
  }
}

TEST_CASE("the server rows keep their routes, scopes and order", "[manifest][surface]") {
  std::vector<std::string> names;
  for (const SurfaceRoute* row : ServerSurfaceRoutes()) {
    names.push_back(row->name);
    CHECK(!row->description.empty());
    CHECK(!row->response.empty());
  }
  CHECK(names == std::vector<std::string>{"get_capabilities",
                                          "healthz",
                                          "metrics",
                                          "chat",
                                          "list_sessions",
                                          "get_session",
                                          "get_session_messages",
                                          "delete_session",
                                          "resume_session",
                                          "abort_session",
                                          "answer_question",
                                          "list_models",
                                          "get_operations_loop_status",
                                          "list_actions",
                                          "get_action",
                                          "render_workflow_prompt",
                                          "patrol_stream",
                                          "unsnooze_finding",
                                          "reopen_finding",
                                          "report_host_agent",
                                          "host_agent_commands",
                                          "host_agent_result",
                                          "get_resource_metrics",
                                          "console_page",
                                          "console_asset",
                                          "sign_in_console",
                                          "get_console_session",
                                          "sign_out_console",
                                          "get_ai_settings",
                                          "update_ai_settings",
                                          "get_patrol_settings",
                                          "update_patrol_settings",
                                          "list_notes",
                                          "set_resource_note",
                                          "delete_resource_note",
                                          "investigate_alert",
                                          "list_patrol_triggers",
                                          "get_notification_settings",
                                          "update_notification_settings",
                                          "test_notification_channel"});
  // Public: the manifest itself, health and the console's page, assets and sign-in (whose
  // handlers read the session cookie themselves); everything else needs a scope.
  for (const SurfaceRoute* row : ServerSurfaceRoutes()) {
    const bool is_public = row->name == "get_capabilities" || row->name == "healthz" ||
                           row->name.find("console") != std::string::npos;
    INFO(row->name);
    CHECK(is_public == !row->scope.has_value());
  }
  CHECK(FindSurfaceRoute("console_page")->path == "/");
  CHECK(FindSurfaceRoute("get_ai_settings")->scope == Scope::kSettingsWrite);
  CHECK(FindSurfaceRoute("update_ai_settings")->scope == Scope::kSettingsWrite);
  CHECK(FindSurfaceRoute("get_patrol_settings")->scope == Scope::kMonitoringRead);
  CHECK(FindSurfaceRoute("update_patrol_settings")->scope == Scope::kSettingsWrite);
  CHECK(FindSurfaceRoute("get_capabilities")->scope == std::nullopt);
  CHECK(FindSurfaceRoute("get_capabilities")->path == "/api/agent/capabilities");
  CHECK(FindSurfaceRoute("healthz")->scope == std::nullopt);
  CHECK(FindSurfaceRoute("healthz")->path == "/healthz");
  CHECK(FindSurfaceRoute("metrics")->scope == Scope::kMonitoringRead);
  CHECK(FindSurfaceRoute("chat")->method == "POST");
  CHECK(FindSurfaceRoute("chat")->streaming);
  CHECK(FindSurfaceRoute("resume_session")->scope == Scope::kAiExecute);
  CHECK(FindSurfaceRoute("list_actions")->query_param_codes.at("view") ==
        AgentErrorCode::kInvalidActionListView);
  CHECK(FindSurfaceRoute("plan_action")->path == "/api/actions/plan");
  CHECK(FindSurfaceRoute("subscribe_events")->streaming);
  // Host agents (docs/agent.md): reports need agent:report, the command stream and its answers
  // agent:exec; the stream is the only streaming one of the three.
  CHECK(FindSurfaceRoute("report_host_agent")->scope == Scope::kAgentReport);
  CHECK(FindSurfaceRoute("host_agent_commands")->scope == Scope::kAgentExec);
  CHECK(FindSurfaceRoute("host_agent_commands")->streaming);
  CHECK(FindSurfaceRoute("host_agent_result")->scope == Scope::kAgentExec);
  CHECK(!FindSurfaceRoute("host_agent_result")->streaming);
}

TEST_CASE("the header names are the ones on the wire", "[manifest][surface]") {
  CHECK(kApiTokenHeader == "X-API-Token");
  CHECK(kAuthorizationHeader == "Authorization");
  CHECK(kAgentSurfaceHeader == "X-Pulse-Agent-Surface");
}

TEST_CASE("surface lookups find table rows only", "[manifest][surface]") {
  CHECK(FindSurfaceRoute("") == nullptr);
  CHECK(FindSurfaceRoute("no_such_route") == nullptr);
  CHECK(FindSurfaceRoute("HEALTHZ") == nullptr);
  CHECK(FindSurfaceRoute(std::string(100000, 'a')) == nullptr);
  CHECK(FindSurfaceRoute(std::string_view("healthz\0x", 9)) == nullptr);
  // By method and template: the template as written, never a request path.
  CHECK(FindSurfaceRoute("GET", "/healthz") != nullptr);
  CHECK(FindSurfaceRoute("POST", "/healthz") == nullptr);   // wrong method
  CHECK(FindSurfaceRoute("get", "/healthz") == nullptr);    // methods are upper case
  CHECK(FindSurfaceRoute("GET", "/healthz/") == nullptr);   // trailing slash
  CHECK(FindSurfaceRoute("GET", "/%68ealthz") == nullptr);  // percent-encoded
  CHECK(FindSurfaceRoute("GET", "/api/actions/act_1") == nullptr);
  CHECK(FindSurfaceRoute("GET", "/api/actions/{actionId}") == FindSurfaceRoute("get_action"));
  CHECK(FindSurfaceRoute("GET", "/api/actions/%7BactionId%7D") == nullptr);
  CHECK(FindSurfaceRoute("GET", "/" + std::string(100000, 'a')) == nullptr);
  CHECK(FindSurfaceRoute("", "") == nullptr);
}

}  // namespace
}  // namespace pulse::core
