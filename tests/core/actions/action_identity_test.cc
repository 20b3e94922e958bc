#include "pulse/core/actions/action_identity.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "action_test_support.h"
#include "pulse/core/actions/action_planner.h"

namespace pulse::core {
namespace {

using namespace testing::actions;  // NOLINT: test fixtures

PlanInputs Inputs() {
  PlanInputs in;
  in.resource = Vm101();
  in.catalogue = VmCatalogue();
  in.relationships = {{"vm:101", "node:pve1", "runs_on"}};
  return in;
}

PlannedAction Build(const ActionRequest& request, const PlanInputs& inputs,
                    absl::Time at = absl::FromUnixSeconds(1'800'000'000)) {
  Refusable<PlannedAction> built = BuildActionPlan(request, inputs, at, {});
  REQUIRE_FALSE(built.refused());
  return built.value();
}

TEST_CASE("sha256 matches the standard test vectors", "[core][actions]") {
  CHECK(ActionSha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(ActionSha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("identity envelopes follow the documented canonical encoding", "[core][actions]") {
  Capability c;
  c.name = "reload";
  c.minimum_approval = ApprovalLevel::kNone;
  c.auto_authorization = AutoAuthorization::kLowRisk;
  c.risk = ActionRisk::kLow;
  c.params = {{"unit", ParamType::kString, true, {}, "^x$", false, ""}};
  CHECK(PolicyVersionEnvelope(c) ==
        R"({"autoAuthorization":"low_risk","description":"","kind":"pulse.capability.policy",)"
        R"("minimumApprovalLevel":"none","name":"reload","params":[{"description":"","enum":[],)"
        R"("name":"unit","pattern":"^x$","required":true,"sensitive":false,"type":"string"}],)"
        R"("risk":"low","supportsRollback":false,"v":1})");
  CHECK(ComputePolicyVersion(c) ==
        "policy:sha256:" + ActionSha256Hex(PolicyVersionEnvelope(c)).substr(0, 24));

  FleetResource r = Vm101();
  CHECK(ResourceVersionEnvelope(r, {MakeCapability("b", ApprovalLevel::kNone),
                                    MakeCapability("a", ApprovalLevel::kNone)}) ==
        R"({"capabilities":["a","b"],"id":"vm:101","kind":"pulse.resource.version",)"
        R"("name":"web-01","parentId":"node:pve1","revision":"r1","status":"running",)"
        R"("technology":"proxmox","type":"vm","v":1})");
}

TEST_CASE("identical inputs give identical identities", "[core][actions]") {
  const ActionRequest request = Request("restart", R"({"timeout":5,"mode":"force"})", Human("a"));
  const PlannedAction one = Build(request, Inputs());
  ActionRequest reordered = request;
  reordered.params_json = R"({"mode":"force","timeout":5})";
  const PlannedAction two = Build(reordered, Inputs(), absl::FromUnixSeconds(1'900'000'000));
  CHECK(one.plan.action_id == two.plan.action_id);
  CHECK(one.plan.plan_hash == two.plan.plan_hash);  // times are not bound
  CHECK(one.plan.planned_at != two.plan.planned_at);
  // Attributes are descriptive and not bound.
  PlanInputs described = Inputs();
  described.resource.attributes["ip"] = "10.0.0.5";
  CHECK(Build(request, described).plan.plan_hash == one.plan.plan_hash);
  // The capability order in the catalogue does not matter.
  PlanInputs shuffled = Inputs();
  std::reverse(shuffled.catalogue.begin(), shuffled.catalogue.end());
  CHECK(Build(request, shuffled).plan.plan_hash == one.plan.plan_hash);
}

TEST_CASE("every bound field changes both the action id and the plan hash", "[core][actions]") {
  const ActionRequest base = Request("restart", R"({"mode":"force"})", Human("alice"));
  const PlannedAction reference = Build(base, Inputs());
  struct Variant {
    const char* what;
    std::function<void(ActionRequest&, PlanInputs&)> change;
  };
  const std::vector<Variant> variants = {
      {"request id", [](ActionRequest& r, PlanInputs&) { r.request_id = "req-2"; }},
      {"params", [](ActionRequest& r, PlanInputs&) { r.params_json = R"({"mode":"graceful"})"; }},
      {"reason", [](ActionRequest& r, PlanInputs&) { r.reason += "!"; }},
      {"actor id", [](ActionRequest& r, PlanInputs&) { r.actor.id = "bob"; }},
      {"actor kind", [](ActionRequest& r, PlanInputs&) { r.actor.kind = ActorKind::kAgent; }},
      {"resource status", [](ActionRequest&, PlanInputs& in) { in.resource.status = "paused"; }},
      {"resource name", [](ActionRequest&, PlanInputs& in) { in.resource.name = "web-02"; }},
      {"resource revision", [](ActionRequest&, PlanInputs& in) { in.resource.revision = "r9"; }},
      {"resource technology", [](ActionRequest&, PlanInputs& in) { in.resource.technology = ""; }},
      {"capability description",
       [](ActionRequest&, PlanInputs& in) { in.catalogue[0].description = "x"; }},
      {"capability risk",
       [](ActionRequest&, PlanInputs& in) { in.catalogue[0].risk = ActionRisk::kHigh; }},
      {"capability rollback",
       [](ActionRequest&, PlanInputs& in) { in.catalogue[0].supports_rollback = true; }},
      {"param declaration",
       [](ActionRequest&, PlanInputs& in) { in.catalogue[0].params[1].description = "changed"; }},
      {"catalogue", [](ActionRequest&, PlanInputs& in) { in.catalogue.pop_back(); }},
      {"neighbours",
       [](ActionRequest&, PlanInputs& in) {
         in.relationships.push_back({"x:1", "vm:101", "uses"});
       }},
  };
  for (const Variant& v : variants) {
    INFO(v.what);
    ActionRequest request = base;
    PlanInputs inputs = Inputs();
    v.change(request, inputs);
    const PlannedAction changed = Build(request, inputs);
    CHECK(changed.plan.plan_hash != reference.plan.plan_hash);
    CHECK(changed.plan.action_id != reference.plan.action_id);
  }
}

TEST_CASE("plan identities are hex digests with their documented prefixes", "[core][actions]") {
  const PlannedAction p = Build(Request("restart", "{}", Human("alice")), Inputs());
  auto hex = [](std::string_view s) {
    return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  };
  CHECK(p.plan.resource_version.rfind("resource:sha256:", 0) == 0);
  CHECK(p.plan.resource_version.size() == 16 + 24);
  CHECK(hex(std::string_view(p.plan.resource_version).substr(16)));
  CHECK(p.plan.policy_version.size() == 14 + 24);
  CHECK(hex(std::string_view(p.plan.policy_version).substr(14)));
  CHECK(hex(std::string_view(p.plan.action_id).substr(4)));
  CHECK(hex(std::string_view(p.plan.plan_hash).substr(7)));
  CHECK(p.plan.plan_hash == ComputePlanHash(p.plan, p.request));
  CHECK(p.plan.action_id == ComputeActionId(p.plan, p.request));
}

TEST_CASE("drift descriptions name what changed", "[core][actions]") {
  const PlannedAction p = Build(Request("restart", R"({"mode":"force"})", Human("a")), Inputs());
  ActionRecord record;
  record.request = p.request;
  record.plan = p.plan;
  CHECK_FALSE(DescribePlanDrift(record, Inputs(), {}).has_value());
  PlanInputs moved = Inputs();
  moved.resource.status = "stopped";
  const std::optional<std::string> resource = DescribePlanDrift(record, moved, {});
  REQUIRE(resource.has_value());
  CHECK(resource->rfind("plan_drift: resource vm:101 changed", 0) == 0);
  PlanInputs narrowed = Inputs();
  narrowed.catalogue[0].params[0].enum_values = {"graceful"};
  const std::optional<std::string> params = DescribePlanDrift(record, narrowed, {});
  REQUIRE(params.has_value());
  CHECK(params->find("no longer validates") != std::string::npos);
  ActionPolicyOptions stricter;
  stricter.approval_quorum = 2;
  CHECK(DescribePlanDrift(record, Inputs(), stricter).has_value());
}

}  // namespace
}  // namespace pulse::core
