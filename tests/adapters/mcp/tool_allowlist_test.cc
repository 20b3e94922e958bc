#include "pulse/adapters/mcp/tool_allowlist.h"

#include <catch2/catch.hpp>

#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::adapters::mcp {
namespace {

TEST_CASE("the served manifest yields the pulse_mcp tools without subscribe_events",
          "[adapters][mcp][tools]") {
  auto surface = McpSurfaceFromManifest(core::ManifestJson());
  REQUIRE(surface.ok());
  CHECK(surface->tools);
  CHECK(surface->resources);
  CHECK(surface->prompts);
  CHECK(surface->tool_names == core::McpToolCapabilityNames());
  CHECK_FALSE(surface->HasTool("subscribe_events"));
  CHECK(surface->HasTool("plan_action"));
}

TEST_CASE("the contract decides: unknown, streaming and repeated names never become tools",
          "[adapters][mcp][tools]") {
  auto surface = McpSurfaceFromManifest(R"({
    "surfaceToolContracts":[{"surfaceId":"pulse_mcp","toolSource":"capability_manifest",
      "toolNames":["get_fleet_context","subscribe_events","no_such_tool","get_fleet_context",
                   "list_findings"],
      "affordances":{"tools":true}}],
    "capabilities":[
      {"name":"get_fleet_context","inputSchema":{"type":"object","additionalProperties":false}},
      {"name":"subscribe_events"},{"name":"no_such_tool"}]})");
  REQUIRE(surface.ok());
  // list_findings is in the contract but not among the published capabilities.
  CHECK(surface->tool_names == std::vector<std::string>{"get_fleet_context"});
  CHECK(surface->input_schemas.at("get_fleet_context") ==
        R"({"type":"object","additionalProperties":false})");
  CHECK_FALSE(surface->resources);  // declared affordances narrow the defaults
  CHECK_FALSE(surface->prompts);
}

TEST_CASE("no pulse_mcp contract means no tools (fail closed)", "[adapters][mcp][tools]") {
  auto surface = McpSurfaceFromManifest(R"({"capabilities":[{"name":"get_fleet_context"}]})");
  REQUIRE(surface.ok());
  CHECK(surface->tool_names.empty());
  CHECK_FALSE(surface->tools);
  CHECK_FALSE(McpSurfaceFromManifest("[]").ok());
  CHECK_FALSE(McpSurfaceFromManifest("<html>").ok());
}

}  // namespace
}  // namespace pulse::adapters::mcp
