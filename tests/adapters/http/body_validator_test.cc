#include "pulse/adapters/http/body_validator.h"

#include <catch2/catch.hpp>
#include <string>

#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::adapters::http {
namespace {

using core::AgentErrorCode;

std::unique_ptr<BodyValidator> ForCapability(const char* name) {
  absl::StatusOr<std::unique_ptr<BodyValidator>> v =
      BodyValidator::Compile(core::BodySchemaJson(*core::FindAgentCapability(name)));
  REQUIRE(v.ok());
  return *std::move(v);
}

TEST_CASE("the body validator accepts what the schema allows", "[adapters][http][body]") {
  const auto snooze = ForCapability("snooze_finding");
  CHECK_FALSE(snooze
                  ->Validate(R"({"finding_id":"f","duration_hours":168})",
                             AgentErrorCode::kInvalidFindingRequest, {})
                  .has_value());
  const auto execute = ForCapability("execute_action");
  CHECK_FALSE(execute->Validate("", AgentErrorCode::kInvalidActionExecution, {}).has_value());
  CHECK_FALSE(execute->Validate("  \n", AgentErrorCode::kInvalidActionExecution, {}).has_value());
  // Blank is JSON whitespace only, as every core decoder reads it: a form feed is malformed JSON
  // (run_patrol's decoder, which gets the raw body, would refuse it after this accepted it).
  const auto run_patrol = ForCapability("run_patrol");
  CHECK_FALSE(run_patrol->Validate(" \t\r\n", AgentErrorCode::kInvalidPatrolScope, {}).has_value());
  CHECK(run_patrol->Validate(" \f ", AgentErrorCode::kInvalidPatrolScope, {}).has_value());
  CHECK(BodyWithPathParams("\v", {{"actionId", "a"}}, PathParamsInBody::kRemove) == "\v");
  // Open members stay open: params is checked later against the capability's declaration.
  const auto plan = ForCapability("plan_action");
  CHECK_FALSE(plan->Validate(R"({"requestId":"r","resourceId":"vm:1","capabilityName":"c",)"
                             R"("reason":"x","requestedBy":"a","params":{"deep":{"x":[1]}}})",
                             AgentErrorCode::kInvalidActionRequest, {})
                  .has_value());
}

TEST_CASE("refusals carry the route's code and name the member", "[adapters][http][body]") {
  const auto dismiss = ForCapability("dismiss_finding");
  auto refused = dismiss->Validate(R"({"finding_id":"f","reason":"nope"})",
                                   AgentErrorCode::kInvalidFindingRequest, {});
  REQUIRE(refused.has_value());
  CHECK(refused->code == AgentErrorCode::kInvalidFindingRequest);
  CHECK(refused->details.count("reason") == 1);
  CHECK(refused->message.find("nope") == std::string::npos);  // values are never echoed

  const auto state = ForCapability("set_operator_state");
  auto window = state->Validate(
      R"({"intentionallyOffline":true,"neverAutoRemediate":false,"maintenanceStartAt":"2030-01-01T00:00:00Z"})",
      AgentErrorCode::kOperatorStateInvalid, {});
  REQUIRE(window.has_value());  // the schema's dependencies: a window needs both ends
  CHECK(window->code == AgentErrorCode::kOperatorStateInvalid);
}

TEST_CASE("path parameters in a body must match and can be added or removed",
          "[adapters][http][body]") {
  const PathParams params = {{"actionId", "act_1"}};
  const auto decide = ForCapability("decide_action");
  CHECK_FALSE(decide
                  ->Validate(R"({"actionId":"act_1","outcome":"approved"})",
                             AgentErrorCode::kInvalidActionDecision, params)
                  .has_value());
  auto mismatch = decide->Validate(R"({"actionId":"act_2","outcome":"approved"})",
                                   AgentErrorCode::kInvalidActionDecision, params);
  REQUIRE(mismatch.has_value());
  CHECK(mismatch->details.at("actionId") == "must match the path");

  CHECK(BodyWithPathParams(R"({"actionId":"act_1","outcome":"approved","reason":"ok"})", params,
                           PathParamsInBody::kRemove) == R"({"outcome":"approved","reason":"ok"})");
  CHECK(BodyWithPathParams("", {{"resourceId", "vm:1"}}, PathParamsInBody::kAdd) ==
        R"({"resourceId":"vm:1"})");
  CHECK(BodyWithPathParams(R"({"a":1,"resourceId":"vm:1"})", {{"resourceId", "vm:1"}},
                           PathParamsInBody::kAdd) == R"({"a":1,"resourceId":"vm:1"})");
  CHECK(BodyWithPathParams("[1]", params, PathParamsInBody::kRemove) == "[1]");
}

TEST_CASE("a schema that is not an object schema does not compile", "[adapters][http][body]") {
  CHECK_FALSE(BodyValidator::Compile("{").ok());
  CHECK_FALSE(BodyValidator::Compile(R"({"type":"array"})").ok());
}

}  // namespace
}  // namespace pulse::adapters::http
