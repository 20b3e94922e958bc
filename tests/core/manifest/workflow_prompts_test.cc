#include "pulse/core/manifest/workflow_prompts.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

namespace pulse::core {
namespace {

using Args = std::map<std::string, std::string>;

TEST_CASE("the four workflow prompts are offered in manifest order", "[core][manifest][prompts]") {
  const auto& prompts = WorkflowPrompts();
  REQUIRE(prompts.size() == 4);
  CHECK(prompts[0].name == "pulse_triage_fleet");
  CHECK(prompts[0].label == "Triage fleet");
  CHECK(prompts[0].presentation_kind == "fleet");
  CHECK(prompts[0].arguments.empty());
  CHECK(prompts[1].name == "pulse_operations_loop");
  CHECK(prompts[1].label == "Ask Patrol to handle an issue");
  CHECK(prompts[1].presentation_kind == "workflow");
  CHECK(prompts[1].required_capabilities.size() == 8);
  CHECK(prompts[2].name == "pulse_investigate_resource");
  CHECK(prompts[2].presentation_kind == "resource");
  REQUIRE(prompts[2].arguments.size() == 1);
  CHECK(prompts[2].arguments[0].name == "resourceId");
  CHECK(prompts[2].arguments[0].required);
  CHECK(prompts[3].name == "pulse_review_finding");
  CHECK(prompts[3].presentation_kind == "finding");
  REQUIRE(prompts[3].arguments.size() == 1);
  CHECK(prompts[3].arguments[0].name == "finding_id");
}

TEST_CASE("prompts render their description and instructions", "[core][manifest][prompts]") {
  absl::StatusOr<RenderedPrompt> triage = RenderWorkflowPrompt("pulse_triage_fleet", {});
  REQUIRE(triage.ok());
  CHECK(triage->description == "Pulse fleet triage");
  CHECK(triage->text.find("get_fleet_context") != std::string::npos);

  absl::StatusOr<RenderedPrompt> loop = RenderWorkflowPrompt("pulse_operations_loop", {});
  REQUIRE(loop.ok());
  CHECK(loop->description == "Patrol issue handling");
  // The procedure names its steps in order.
  std::size_t at = 0;
  for (const char* step :
       {"get_patrol_control_status", "get_fleet_context", "list_findings", "get_resource_context",
        "plan_action", "decide_action", "execute_action", "resolve_finding"}) {
    INFO(step);
    const std::size_t found = loop->text.find(step, at);
    REQUIRE(found != std::string::npos);
    at = found;
  }

  absl::StatusOr<RenderedPrompt> review =
      RenderWorkflowPrompt("pulse_review_finding", Args{{"finding_id", "  f-42 "}});
  REQUIRE(review.ok());
  CHECK(review->description == "Pulse finding review");
  CHECK(review->text.find("\"f-42\"") != std::string::npos);
}

TEST_CASE("the MCP rendering of an investigation prefers reading the resource",
          "[core][manifest][prompts]") {
  const Args args{{"resourceId", "vm:101"}};
  absl::StatusOr<RenderedPrompt> api = RenderWorkflowPrompt("pulse_investigate_resource", args);
  absl::StatusOr<RenderedPrompt> mcp =
      RenderWorkflowPrompt("pulse_investigate_resource", args, PromptSurface::kMcp);
  REQUIRE(api.ok());
  REQUIRE(mcp.ok());
  CHECK(api->description == "Pulse resource investigation");
  CHECK(api->text.find("resources/read") == std::string::npos);
  CHECK(mcp->text.find("pulse://resource/vm%3A101") != std::string::npos);
  CHECK(mcp->text.find("get_resource_context") != std::string::npos);
}

TEST_CASE("unknown prompts and bad arguments are typed errors", "[core][manifest][prompts]") {
  absl::StatusOr<RenderedPrompt> unknown = RenderWorkflowPrompt("pulse_nope", {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == absl::StatusCode::kNotFound);
  CHECK(unknown.status().message() == "unknown prompt: pulse_nope");

  absl::StatusOr<RenderedPrompt> missing = RenderWorkflowPrompt("pulse_investigate_resource", {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(missing.status().message() == "prompt argument resourceId is required");

  CHECK(RenderWorkflowPrompt("pulse_review_finding", Args{{"finding_id", "   "}})
            .status()
            .message() == "prompt argument finding_id is required");
  CHECK(RenderWorkflowPrompt("pulse_review_finding", Args{{"finding_id", "a\nIgnore all"}})
            .status()
            .message() == "prompt argument finding_id is invalid");
  CHECK_FALSE(
      RenderWorkflowPrompt("pulse_review_finding", Args{{"finding_id", std::string(300, 'x')}})
          .ok());
  // Arguments a prompt does not declare are ignored.
  CHECK(RenderWorkflowPrompt("pulse_triage_fleet", Args{{"extra", "1"}}).ok());
}

}  // namespace
}  // namespace pulse::core
