#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agent_views_test_support.h"
#include "fmt/format.h"
#include "pulse/core/actions/action_json.h"

namespace pulse::testing::agent {
namespace {

core::ActionListQuery View(core::ActionListView view, std::size_t limit = 100) {
  core::ActionListQuery query;
  query.view = view;
  query.limit = limit;
  return query;
}

std::vector<std::string> ActionIds(const rapidjson::Document& doc) {
  std::vector<std::string> out;
  for (const auto& a : At(doc, "actions").GetArray()) {
    out.emplace_back(*core::GetString(a, "id"));
  }
  return out;
}

core::ActionRecord Stored(ViewsHarness& h, const core::ActionRecord& r) {
  absl::StatusOr<core::ActionRecord> got = h.actions.Get(r.id());
  REQUIRE(got.ok());
  return *got;
}

TEST_CASE("the pending view lists in-flight actions oldest first as audit records",
          "[core][agent]") {
  ViewsHarness h;
  const core::ActionRecord pending = h.Plan("restart", "{}");  // pending_approval
  h.clock.Advance(absl::Seconds(10));
  const core::ActionRecord planned =
      h.Plan("snapshot", "{}", "vm:101", "req-2", Human("alice"));  // planned
  h.clock.Advance(absl::Seconds(10));
  const core::ActionRecord approved =
      h.Decide(h.Plan("restart", R"({"mode":"force"})", "vm:101", "req-3"),
               core::DecisionOutcome::kApproved);
  const core::ActionRecord done =
      h.Execute(h.Plan("snapshot", "{}", "vm:101", "req-4", Human("alice")));

  rapidjson::Document doc = Body(h.views.ActionList(View(core::ActionListView::kPending)));
  CHECK(Keys(doc) == std::set<std::string>{"view", "actions", "count", "readOnly"});
  CHECK(At(doc, "view") == Json(R"("pending")"));
  CHECK(At(doc, "readOnly") == Json("false"));
  CHECK(ActionIds(doc) == std::vector<std::string>{pending.id(), planned.id(), approved.id()});
  CHECK(At(doc, "count").GetInt64() == 3);
  // each entry is exactly the stored audit record
  CHECK(At(doc, "actions")[0] == Json(core::ActionRecordToJson(Stored(h, pending))));
  CHECK(At(doc, "actions")[2] == Json(core::ActionRecordToJson(Stored(h, approved))));

  rapidjson::Document settled = Body(h.views.ActionList(View(core::ActionListView::kSettled)));
  CHECK(At(settled, "view") == Json(R"("settled")"));
  CHECK(ActionIds(settled) == std::vector<std::string>{done.id()});
}

TEST_CASE("the settled view lists final actions newest first within the limit", "[core][agent]") {
  ViewsHarness h;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(
        h.Execute(h.Plan("snapshot", "{}", "vm:101", fmt::format("req-{}", i), Human("alice")))
            .id());
    h.clock.Advance(absl::Seconds(1));
  }
  const core::ActionRecord rejected =
      h.Decide(h.Plan("restart", "{}", "vm:101", "req-r"), core::DecisionOutcome::kRejected);

  rapidjson::Document doc = Body(h.views.ActionList(View(core::ActionListView::kSettled, 3)));
  CHECK(ActionIds(doc) == std::vector<std::string>{rejected.id(), ids[4], ids[3]});
  CHECK(At(doc, "count").GetInt64() == 3);
}

TEST_CASE("listing actions first moves plans past their TTL to expired", "[core][agent]") {
  ViewsHarness h;
  const core::ActionRecord planned = h.Plan("restart", "{}");
  h.clock.Advance(core::kDefaultPlanTtl);
  rapidjson::Document pending = Body(h.views.ActionList(View(core::ActionListView::kPending)));
  CHECK(ActionIds(pending).empty());
  rapidjson::Document settled = Body(h.views.ActionList(View(core::ActionListView::kSettled)));
  CHECK(ActionIds(settled) == std::vector<std::string>{planned.id()});
  CHECK(At(At(settled, "actions")[0], "state") == Json(R"("expired")"));
}

TEST_CASE("a store failure fails the action list", "[core][agent]") {
  ViewsHarness h;
  h.Plan("restart", "{}");
  h.actions.FailNext(absl::UnavailableError("disk gone"));
  CHECK(absl::IsUnavailable(h.views.ActionList(View(core::ActionListView::kPending)).status()));
}

rapidjson::Document Detail(ViewsHarness& h, const std::string& id) {
  absl::StatusOr<core::Refusable<std::string>> out = h.views.ActionDetail(id);
  REQUIRE(out.ok());
  if (out->refused()) {
    FAIL("detail refused: " << out->refusal().message);
  }
  return Body(out->value());
}

TEST_CASE("the action detail carries the audit record, its events and readiness", "[core][agent]") {
  ViewsHarness h;
  const core::ActionRecord pending = h.Plan("restart", R"({"mode":"graceful"})");
  rapidjson::Document doc = Detail(h, pending.id());
  CHECK(Keys(doc) == std::set<std::string>{"audit", "events", "readiness", "readOnly"});
  CHECK(At(doc, "audit") == Json(core::ActionRecordToJson(Stored(h, pending))));
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events =
      h.actions.ListEvents(pending.id());
  REQUIRE(events.ok());
  REQUIRE(At(doc, "events").Size() == events->size());
  CHECK(At(doc, "events")[1] == Json(core::LifecycleEventToJson((*events)[1])));
  CHECK(At(doc, "readiness") == Json(R"({"ready": true, "code": "ready",
      "message": "the plan is current and awaits a decision", "refreshable": false,
      "checkedAt": "2027-01-15T08:00:00Z"})"));
  CHECK(At(doc, "readOnly") == Json("false"));

  const core::ActionRecord approved = h.Decide(pending, core::DecisionOutcome::kApproved);
  CHECK(At(At(Detail(h, approved.id()), "readiness"), "message") ==
        Json(R"("the plan is current and can be executed")"));
}

// The readiness block of one action.
core::ActionReadiness ReadinessOf(ViewsHarness& h, const core::ActionRecord& record) {
  return h.views.CheckReadiness(Stored(h, record));
}

TEST_CASE("readiness names why a plan cannot be acted on", "[core][agent]") {
  ViewsHarness h;
  using Code = core::ActionReadinessCode;

  SECTION("drift is refreshable") {
    const core::ActionRecord pending = h.Plan("restart", "{}");
    h.fleet.EditResource("vm:101", [](core::FleetResource& r) { r.revision = "r2"; });
    const core::ActionReadiness r = ReadinessOf(h, pending);
    CHECK_FALSE(r.ready);
    CHECK(r.code == Code::kPlanDrift);
    CHECK(r.refreshable);
    CHECK(StartsWith(r.message, core::kPlanDriftPrefix));
  }
  SECTION("a resource that is gone is drift") {
    const core::ActionRecord pending = h.Plan("restart", "{}");
    h.fleet.RemoveResource("vm:101");
    CHECK(ReadinessOf(h, pending).code == Code::kPlanDrift);
  }
  SECTION("the remediation lock") {
    const core::ActionRecord pending = h.Plan("restart", "{}");
    h.Lock("vm:101");
    const core::ActionReadiness r = ReadinessOf(h, pending);
    CHECK(r.code == Code::kRemediationLocked);
    CHECK_FALSE(r.refreshable);
  }
  SECTION("dry-run-only plans are never ready") {
    const core::ActionRecord plan = h.Plan("migrate", "{}");
    CHECK(ReadinessOf(h, plan).code == Code::kDryRunOnly);
  }
  SECTION("expiry is refreshable") {
    const core::ActionRecord pending = h.Plan("restart", "{}");
    h.clock.Advance(core::kDefaultPlanTtl);
    const core::ActionReadiness r = ReadinessOf(h, pending);
    CHECK(r.code == Code::kPlanExpired);
    CHECK(r.refreshable);
    // the detail materializes the expiry and says the same
    rapidjson::Document doc = Detail(h, pending.id());
    CHECK(At(At(doc, "audit"), "state") == Json(R"("expired")"));
    CHECK(At(At(doc, "readiness"), "code") == Json(R"("action_plan_expired")"));
    CHECK(At(At(doc, "readiness"), "refreshable") == Json("true"));
  }
  SECTION("final and executing actions are not actionable") {
    const core::ActionRecord done =
        h.Execute(h.Plan("snapshot", "{}", "vm:101", "req-2", Human("alice")));
    const core::ActionReadiness r = ReadinessOf(h, done);
    CHECK(r.code == Code::kNotActionable);
    CHECK_FALSE(r.ready);
    CHECK_FALSE(r.refreshable);
  }
  SECTION("an unreadable fleet or lock is a failed check, never ready") {
    const core::ActionRecord pending = h.Plan("restart", "{}");
    h.fleet.SetError(FakeFleet::Method::kGetTopology, absl::UnavailableError("agent away"));
    CHECK(ReadinessOf(h, pending).code == Code::kReadinessCheckFailed);
    h.fleet.ClearError(FakeFleet::Method::kGetTopology);
    h.operator_state.FailGets(absl::UnavailableError("state store down"));
    CHECK(ReadinessOf(h, pending).code == Code::kReadinessCheckFailed);
  }
}

TEST_CASE("readiness codes have their wire names", "[core][agent]") {
  using Code = core::ActionReadinessCode;
  CHECK(core::ToString(Code::kReady) == "ready");
  CHECK(core::ToString(Code::kReadinessCheckFailed) == "readiness_check_failed");
  CHECK(core::ToString(Code::kPlanExpired) == "action_plan_expired");
  CHECK(core::ToString(Code::kPlanDrift) == "action_plan_drift");
  CHECK(core::ToString(Code::kDryRunOnly) == "action_dry_run_only");
  CHECK(core::ToString(Code::kRemediationLocked) == "resource_remediation_locked");
  CHECK(core::ToString(Code::kNotActionable) == "action_not_actionable");
}

TEST_CASE("the action detail refuses bad and unknown ids like the action service",
          "[core][agent]") {
  ViewsHarness h;
  const auto code = [&](std::string_view id) {
    absl::StatusOr<core::Refusable<std::string>> out = h.views.ActionDetail(id);
    REQUIRE(out.ok());
    REQUIRE(out->refused());
    return out->refusal().code;
  };
  CHECK(code("") == core::AgentErrorCode::kMissingId);
  CHECK(code("bad id!") == core::AgentErrorCode::kInvalidId);
  CHECK(code("act_0000") == core::AgentErrorCode::kActionNotFound);
}

TEST_CASE("resource capabilities list the valid catalogue entries in their wire form",
          "[core][agent]") {
  ViewsHarness h;
  core::Capability broken = MakeCapability("Bad Name", core::ApprovalLevel::kAdmin);
  h.fleet.SetCatalogue("service:pve1/nginx", {ReloadCapability(), broken});
  rapidjson::Document doc = Body(h.views.ResourceCapabilities("service:pve1/nginx"));
  CHECK(doc == Json(fmt::format(R"({{"resourceId": "service:pve1/nginx", "capabilities": [{}],
                                    "generatedAt": "2027-01-15T08:00:00Z"}})",
                                core::CapabilityToJson(ReloadCapability()))));

  rapidjson::Document node = Body(h.views.ResourceCapabilities("node:pve1"));
  CHECK(At(node, "capabilities") == Json("[]"));
  h.fleet.SetError(FakeFleet::Method::kListCapabilities, absl::UnavailableError("agent away"));
  CHECK(absl::IsUnavailable(h.views.ResourceCapabilities("vm:101").status()));
}

}  // namespace
}  // namespace pulse::testing::agent
