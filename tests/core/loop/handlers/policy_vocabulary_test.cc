// Redaction must not eat the policy vocabulary a hosted model needs (issue 19, item 6): the
// outbound context policy of a metered route, run over the real capability manifest, the
// projected capability tools, the capability JSON and the patrol_action_capabilities results of
// every automation class, changes nothing in them, while real secrets planted beside the policy
// fields are still redacted.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "handlers_test_support.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/capability_projection.h"

namespace pulse::testing::handlers {
namespace {

using core::kToolPatrolActionCapabilities;

const core::OutboundContextPolicy& Metered() {
  static const core::OutboundContextPolicy policy(core::InferenceRoute::kMeteredApi);
  return policy;
}

// One capability per automation class, each with an admin floor.
std::vector<core::Capability> EveryAutomationClass() {
  std::vector<core::Capability> out;
  for (const core::AutoAuthorization auto_class :
       {core::AutoAuthorization::kNever, core::AutoAuthorization::kLowRisk,
        core::AutoAuthorization::kElevated}) {
    std::string name = "op-" + std::string(core::ToString(auto_class));
    std::replace(name.begin(), name.end(), '_', '-');
    core::Capability c = actions::MakeCapability(name, core::ApprovalLevel::kAdmin);
    c.auto_authorization = auto_class;
    c.description = "Restart the unit; automation class " + std::string(core::ToString(auto_class));
    out.push_back(std::move(c));
  }
  return out;
}

TEST_CASE("the capability manifest and its projections reach a hosted model unredacted",
          "[core][handlers][redact][vocabulary]") {
  const std::string& manifest = core::ManifestJson();
  REQUIRE(manifest.size() > 1000);
  const std::string sent = Metered().SanitizeToolResult(manifest);
  CHECK(sent.find(core::kRedactedSecret) == std::string::npos);
  CHECK(sent == manifest);
  const std::string tools = core::ProjectCapabilityToolsJson();
  CHECK(Metered().SanitizeToolResult(tools) == tools);
  CHECK(Metered().SanitizeText(tools) == tools);
}

TEST_CASE("capability payloads keep auto_authorization and every policy field",
          "[core][handlers][redact][vocabulary]") {
  Fixture f;
  f.fleet.SetCatalogue("vm:101", EveryAutomationClass());
  core::ToolCallOutcome outcome =
      f.Call(kToolPatrolActionCapabilities, R"({"resource_id":"vm:101"})");
  REQUIRE(outcome.result.Ok());
  const std::string& listed = outcome.result.content;
  INFO(listed);
  for (const char* value : {R"("auto_authorization":"never")", R"("auto_authorization":"low_risk")",
                            R"("auto_authorization":"elevated")"}) {
    CHECK(listed.find(value) != std::string::npos);
  }
  const std::string sent = Metered().SanitizeToolResult(listed);
  CHECK(sent == listed);
  // The agent-facing capability JSON (camelCase) too.
  for (const core::Capability& c : EveryAutomationClass()) {
    const std::string json = core::CapabilityToJson(c);
    INFO(json);
    REQUIRE(json.find("autoAuthorization") != std::string::npos);
    CHECK(Metered().SanitizeToolResult(json) == json);
    CHECK(core::RedactSecrets(json) == json);
  }
  for (const char* name : {"auto_authorization", "autoAuthorization", "AUTO_AUTHORIZATION",
                           "auto-authorization", "approval_floor", "requires_approval"}) {
    INFO(name);
    CHECK_FALSE(core::NamesSecret(name));
  }
}

TEST_CASE("secrets planted beside the policy fields are still redacted",
          "[core][handlers][redact][vocabulary]") {
  const std::string planted =
      R"({"name":"restart","auto_authorization":"low_risk","approval_floor":"admin",)"
      R"("password":"plantedPw-1","Authorization":"Bearer planted.bearer.2",)"
      R"("headers":{"Proxy-Authorization":"Basic cGxhbnRlZDMK","X-Authorization":"plantedXA4"},)"
      R"("HTTP_AUTHORIZATION":"plantedHA5","api_key":"plantedKey6"})";
  const std::string sent = Metered().SanitizeToolResult(planted);
  INFO(sent);
  for (const char* secret : {"plantedPw-1", "planted.bearer.2", "cGxhbnRlZDMK", "plantedXA4",
                             "plantedHA5", "plantedKey6"}) {
    INFO(secret);
    CHECK(sent.find(secret) == std::string::npos);
  }
  CHECK(sent.find(R"("auto_authorization":"low_risk")") != std::string::npos);
  CHECK(sent.find(R"("approval_floor":"admin")") != std::string::npos);
  for (const char* name : {"Authorization", "Proxy-Authorization", "HTTP_AUTHORIZATION",
                           "X-Authorization", "--authorization", "proxy_authorization"}) {
    INFO(name);
    CHECK(core::NamesSecret(name));
  }
}

}  // namespace
}  // namespace pulse::testing::handlers
