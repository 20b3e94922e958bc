// patrol_action_capabilities and patrol_propose_action: the catalogue with the requester's
// effective approval, and a proposal checked exactly as planning would check it, with nothing
// stored, planned or dispatched.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "handlers_test_support.h"

namespace pulse::testing::handlers {
namespace {

using core::GetBool;
using core::kToolPatrolActionCapabilities;
using core::kToolPatrolProposeAction;
using core::ToJsonString;

std::vector<std::string> Names(const rapidjson::Value& capabilities) {
  std::vector<std::string> out;
  for (const auto& c : capabilities.GetArray()) {
    out.push_back(Str(c, "name"));
  }
  return out;
}

TEST_CASE("patrol_action_capabilities lists the catalogue with the agent's approval needs",
          "[core][handlers][capabilities]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPatrolActionCapabilities, R"({"resource_id":"service:pve1/nginx"})");
  CHECK(Str(r, "resource_id") == "service:pve1/nginx");
  const rapidjson::Value& caps = Member(r, "capabilities");
  CHECK(Names(caps) == std::vector<std::string>{"reload", "restart-elevated", "flush"});
  // reload: no floor and low-risk automation, within the default automatic ceiling.
  CHECK(ToJsonString(caps[0]) ==
        R"({"name":"reload","description":"Reload the service configuration","risk":"low",)"
        R"("requires_approval":false,"approval_floor":"none","auto_authorization":"low_risk",)"
        R"("supports_rollback":false,"params":[{"name":"unit","type":"string","required":true,)"
        R"("pattern":"^[a-z][a-z0-9-]*\\.service$","description":"unit"}]})");
  // Above the ceiling, or never automatic: an agent needs a human approval.
  CHECK(GetBool(caps[1], "requires_approval") == true);
  CHECK(Str(caps[1], "approval_floor") == "admin");
  CHECK(GetBool(caps[2], "requires_approval") == true);
  CHECK(core::GetMember(r, "unusable_capabilities") == nullptr);
  CHECK(GetBool(r, "truncated") == false);
}

TEST_CASE("patrol_action_capabilities names declarations planning would refuse",
          "[core][handlers][capabilities]") {
  Fixture f;
  core::Capability broken = actions::MakeCapability("resize", core::ApprovalLevel::kAdmin);
  broken.params = {{"size", core::ParamType::kString, true, {}, "\\d+", false, "GiB"}};
  f.fleet.SetCatalogue("vm:102",
                       {broken, actions::MakeCapability("start", core::ApprovalLevel::kAdmin)});
  rapidjson::Document r = f.Ok(kToolPatrolActionCapabilities, R"({"resource_id":"vm:102"})");
  CHECK(Names(Member(r, "capabilities")) == std::vector<std::string>{"start"});
  CHECK(Strings(Member(r, "unusable_capabilities")) == std::vector<std::string>{"resize"});

  CHECK(f.Refused(kToolPatrolActionCapabilities, R"({"resource_id":"vm:999"})") == "NOT_FOUND");
  CHECK(f.Refused(kToolPatrolActionCapabilities, R"({"resource_id":"web-01"})") == "INVALID_INPUT");
}

TEST_CASE("patrol_propose_action checks a proposal like planning but stores and runs nothing",
          "[core][handlers][capabilities]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPatrolProposeAction,
           R"({"resource_id":"vm:101","capability":"restart","params":{"mode":"graceful"},)"
           R"("rationale":"web-01 is hung: the health check has failed for 10 minutes"})");
  CHECK(Str(r, "status") == "proposed");
  CHECK(Str(r, "resource_id") == "vm:101");
  CHECK(Str(r, "capability") == "restart");
  CHECK(ToJsonString(Member(r, "params")) == R"({"mode":"graceful"})");
  CHECK(Str(r, "rationale") == "web-01 is hung: the health check has failed for 10 minutes");
  CHECK(Str(r, "risk") == "medium");
  CHECK(GetBool(r, "requires_approval") == true);
  CHECK(Str(r, "approval_floor") == "admin");
  CHECK(Strings(Member(r, "predicted_blast_radius")).front() == "vm:101");
  CHECK(Str(Member(r, "preflight"), "target") == "vm:101");
  CHECK(GetBool(r, "planned") == false);
  CHECK(GetBool(r, "executed") == false);
  CHECK(f.action_store.size() == 0);
  CHECK(f.fleet.dispatch_calls() == 0);
}

TEST_CASE("patrol_propose_action refuses proposals planning would refuse",
          "[core][handlers][capabilities]") {
  Fixture f;
  CHECK(f.Refused(kToolPatrolProposeAction,
                  R"({"resource_id":"vm:101","capability":"restart","params":{"mode":"explode"},)"
                  R"("rationale":"hung"})") == "INVALID_INPUT");
  CHECK(Contains(f.last_error, R"("field.mode")"));
  CHECK(f.Refused(kToolPatrolProposeAction,
                  R"({"resource_id":"vm:101","capability":"reboot","rationale":"hung"})") ==
        "NOT_FOUND");
  CHECK(Contains(f.last_error, R"("action_error":"capability_not_found")"));
  CHECK(f.Refused(kToolPatrolProposeAction,
                  R"({"resource_id":"vm:999","capability":"restart","rationale":"hung"})") ==
        "NOT_FOUND");
  CHECK(f.Refused(kToolPatrolProposeAction,
                  R"({"resource_id":"vm:101","capability":"restart","rationale":"   "})") ==
        "INVALID_INPUT");
  CHECK(f.action_store.size() == 0);
}

}  // namespace
}  // namespace pulse::testing::handlers
