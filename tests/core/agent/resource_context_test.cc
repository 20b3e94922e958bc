#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agent_views_test_support.h"
#include "fmt/format.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/json/json_time.h"

namespace pulse::testing::agent {
namespace {

using core::Severity;

// A pending restart by the assistant, a snapshot alice ran to completion (independently
// verified), two active findings and a resolved one, a live status, attributes and a lock.
struct Scene {
  ViewsHarness h;
  core::ActionRecord pending;
  core::ActionRecord completed;
  core::OperatorState lock;

  Scene() {
    h.fleet.EditResource("vm:101", [](core::FleetResource& r) {
      r.attributes = {{"os", "debian 12"}};
    });
    core::FleetStatus status;
    status.resource_id = "vm:101";
    status.status = "running";
    status.summary = "web-01 is running";
    status.facts = {{"uptime", "3d"}};
    status.observed_at = h.clock.Now();
    h.fleet.SetStatus(status);
    h.PutFinding("f-warn", "vm:101", Severity::kWarning, absl::Hours(1));
    h.PutFinding("f-crit", "vm:101", Severity::kCritical, absl::Hours(2));
    h.PutFinding("f-gone", "vm:101", Severity::kCritical, absl::Hours(3));
    h.EditFinding("f-gone", [&](core::Finding& f) { f.resolved_at = h.clock.Now(); });
    h.PutFinding("f-other", "service:pve1/nginx", Severity::kCritical);
    pending = h.Plan("restart", R"({"mode":"graceful"})");
    completed = h.Execute(h.Plan("snapshot", "{}", "vm:101", "req-2", Human("alice")));
    lock = h.Lock("vm:101");
  }
};

TEST_CASE("the resource context has the AgentResourceContext shape", "[core][agent]") {
  Scene s;
  rapidjson::Document doc = Body(s.h.views.ResourceContext("vm:101", false));
  INFO(Text(doc));
  CHECK(Keys(doc) == std::set<std::string>{"canonicalId", "resourceType", "resourceName",
                                           "technology", "operatorState", "activeFindings",
                                           "pendingApprovals", "recentActions", "contextSections",
                                           "generatedAt"});
  CHECK(At(doc, "canonicalId") == Json(R"("vm:101")"));
  CHECK(At(doc, "resourceType") == Json(R"("vm")"));
  CHECK(At(doc, "resourceName") == Json(R"("web-01")"));
  CHECK(At(doc, "technology") == Json(R"("proxmox")"));
  CHECK(At(doc, "generatedAt") == Json(R"("2027-01-15T08:00:00Z")"));
  CHECK(At(doc, "operatorState") == Json(core::OperatorStateToJson(s.lock, s.h.clock.Now())));

  CHECK(At(doc, "activeFindings") == Json(R"([
    {"id": "f-crit", "title": "Finding f-crit", "severity": "critical",
     "category": "performance", "description": "What is wrong with vm:101",
     "recommendation": "What to do about it", "regressionCount": 0,
     "detectedAt": "2027-01-15T06:00:00Z", "lastSeenAt": "2027-01-15T07:59:00Z"},
    {"id": "f-warn", "title": "Finding f-warn", "severity": "warning",
     "category": "performance", "description": "What is wrong with vm:101",
     "recommendation": "What to do about it", "regressionCount": 0,
     "detectedAt": "2027-01-15T07:00:00Z", "lastSeenAt": "2027-01-15T07:59:00Z"}
  ])"));

  const std::string pending = fmt::format(R"([
    {{"id": "{}", "command": "restart {{\"mode\":\"graceful\"}}", "riskLevel": "medium",
     "requestedBy": "assistant", "requestedAt": "2027-01-15T08:00:00Z",
     "expiresAt": "2027-01-15T08:05:00Z"}}
  ])",
                                          s.pending.id());
  CHECK(At(doc, "pendingApprovals") == Json(pending));

  REQUIRE(s.completed.result.has_value());
  const core::ActionExecutionResult& result = *s.completed.result;
  const rapidjson::Value& recent = At(doc, "recentActions");
  REQUIRE(recent.Size() == 1);
  CHECK(Keys(recent[0]) == std::set<std::string>{"id", "capabilityName", "command", "state",
                                                 "success", "actionResultV2", "verification",
                                                 "requestedBy", "createdAt", "updatedAt"});
  CHECK(At(recent[0], "id") == Json(fmt::format(R"("{}")", s.completed.id())));
  CHECK(At(recent[0], "capabilityName") == Json(R"("snapshot")"));
  CHECK(At(recent[0], "command") == Json(R"("snapshot")"));
  CHECK(At(recent[0], "state") == Json(R"("completed")"));
  CHECK(At(recent[0], "success") == Json("true"));
  CHECK(At(recent[0], "requestedBy") == Json(R"("alice")"));
  CHECK(At(recent[0], "createdAt") == Json(R"("2027-01-15T08:00:00Z")"));
  CHECK(At(recent[0], "actionResultV2") == Json(core::ActionExecutionResultToJson(result)));
  const std::string ran_at =
      result.verification.observed_at.has_value()
          ? fmt::format(R"(, "ranAt": "{}")", core::FormatRfc3339(*result.verification.observed_at))
          : "";
  CHECK(At(recent[0], "verification") ==
        Json(fmt::format(
            R"({{"ran": true, "success": true, "note": "the intended state holds"{}}})", ran_at)));

  CHECK(At(doc, "contextSections") == Json(R"([
    {"id": "status", "title": "Live status", "source": "fleet.status",
     "summary": "web-01 is running", "observedAt": "2027-01-15T08:00:00Z",
     "facts": {"status": "running", "uptime": "3d"}},
    {"id": "topology", "title": "Neighbourhood", "source": "fleet.topology",
     "summary": "1 related resource",
     "facts": {"outbound.runs_on": "node:pve1", "parent": "node:pve1"}},
    {"id": "attributes", "title": "Descriptive facts", "source": "fleet.resource",
     "facts": {"os": "debian 12"}}
  ])"));
}

TEST_CASE("a caller without ai:execute sees commandRedacted instead of any command",
          "[core][agent]") {
  Scene s;
  const std::string shown = *s.h.views.ResourceContext("vm:101", false);
  const std::string redacted = *s.h.views.ResourceContext("vm:101", true);
  CHECK(shown.find("\"command\"") != std::string::npos);
  CHECK(shown.find("commandRedacted") == std::string::npos);
  CHECK(redacted.find("\"command\"") == std::string::npos);
  CHECK(redacted.find("graceful") == std::string::npos);

  rapidjson::Document doc = Body(redacted);
  for (std::string_view list : {"pendingApprovals", "recentActions"}) {
    const rapidjson::Value& entries = At(doc, list);
    REQUIRE(entries.Size() == 1);
    CHECK(At(entries[0], "commandRedacted") == Json("true"));
  }
  // nothing else changes
  rapidjson::Document full = Body(shown);
  CHECK(At(doc, "activeFindings") == At(full, "activeFindings"));
  CHECK(At(At(doc, "recentActions")[0], "actionResultV2") ==
        At(At(full, "recentActions")[0], "actionResultV2"));
}

TEST_CASE("commands mask params the catalogue declares sensitive, and every param when unsure",
          "[core][agent]") {
  ViewsHarness h;
  core::Capability set_password = MakeCapability("set-password", core::ApprovalLevel::kAdmin);
  set_password.params = {
      {"user", core::ParamType::kString, true, {}, "", false, "account"},
      {"password", core::ParamType::kString, true, {}, "", true, "new password"},
  };
  h.fleet.SetCatalogue("vm:101", {set_password});
  h.Plan("set-password", R"({"user":"admin","password":"hunter2"})");

  const std::string body = *h.views.ResourceContext("vm:101", false);
  CHECK(body.find("hunter2") == std::string::npos);
  rapidjson::Document doc = Body(body);
  CHECK(At(At(doc, "pendingApprovals")[0], "command") ==
        Json(R"("set-password {\"password\":\"[redacted]\",\"user\":\"admin\"}")"));

  h.fleet.SetError(FakeFleet::Method::kListCapabilities, absl::UnavailableError("agent away"));
  rapidjson::Document unsure = Body(h.views.ResourceContext("vm:101", false));
  CHECK(At(At(unsure, "pendingApprovals")[0], "command") ==
        Json(R"("set-password {\"password\":\"[redacted]\",\"user\":\"[redacted]\"}")"));
}

TEST_CASE("resource context lists are ordered by urgency and recency", "[core][agent]") {
  ViewsHarness h;
  h.PutFinding("f-a", "vm:101", Severity::kWarning, absl::Hours(3));
  h.PutFinding("f-b", "vm:101", Severity::kCritical, absl::Hours(1));
  h.PutFinding("f-c", "vm:101", Severity::kCritical, absl::Hours(2));
  h.PutFinding("f-d", "vm:101", Severity::kInfo, absl::Minutes(10));
  h.PutFinding("f-e", "vm:101", Severity::kWarning, absl::Minutes(30));

  core::Capability stop = MakeCapability("stop", core::ApprovalLevel::kAdmin);
  stop.risk = core::ActionRisk::kHigh;
  h.fleet.SetCatalogue("vm:101", {RestartCapability(), stop,
                                  MakeCapability("snapshot", core::ApprovalLevel::kNone)});
  const core::ActionRecord a = h.Plan("restart", "{}", "vm:101", "req-a");
  const core::ActionRecord b = h.Plan("stop", "{}", "vm:101", "req-b");
  const core::ActionRecord s1 =
      h.Execute(h.Plan("snapshot", "{}", "vm:101", "req-s1", Human("alice")));
  h.clock.Advance(absl::Minutes(1));
  const core::ActionRecord c = h.Plan("stop", "{}", "vm:101", "req-c");
  const core::ActionRecord d = h.Plan("restart", R"({"mode":"force"})", "vm:101", "req-d");
  const core::ActionRecord s2 =
      h.Execute(h.Plan("snapshot", "{}", "vm:101", "req-s2", Human("alice")));
  h.clock.Advance(absl::Minutes(1));
  const core::ActionRecord rejected = h.Decide(d, core::DecisionOutcome::kRejected);

  rapidjson::Document doc = Body(h.views.ResourceContext("vm:101", false));
  CHECK(Column(At(doc, "activeFindings"), "id") ==
        std::vector<std::string>{"f-b", "f-c", "f-e", "f-a", "f-d"});
  // soonest expiry first; at equal expiry the higher risk first
  CHECK(Column(At(doc, "pendingApprovals"), "id") ==
        std::vector<std::string>{b.id(), a.id(), c.id()});
  CHECK(Column(At(doc, "pendingApprovals"), "riskLevel") ==
        std::vector<std::string>{"high", "medium", "high"});
  // newest update first: the rejection, then the snapshots
  CHECK(Column(At(doc, "recentActions"), "id") ==
        std::vector<std::string>{rejected.id(), s2.id(), s1.id()});
  CHECK(Column(At(doc, "recentActions"), "state") ==
        std::vector<std::string>{"rejected", "completed", "completed"});
  CHECK(At(At(doc, "recentActions")[0], "success") == Json("false"));
  CHECK(Keys(At(doc, "recentActions")[0]).count("actionResultV2") == 0);
}

TEST_CASE("a pending approval ahead of a higher-risk one when it expires sooner", "[core][agent]") {
  ViewsHarness h;
  core::Capability stop = MakeCapability("stop", core::ApprovalLevel::kAdmin);
  stop.risk = core::ActionRisk::kHigh;
  h.fleet.SetCatalogue("vm:101", {RestartCapability(), stop});
  const core::ActionRecord medium = h.Plan("restart", "{}", "vm:101", "req-m");
  h.clock.Advance(absl::Seconds(30));
  const core::ActionRecord high = h.Plan("stop", "{}", "vm:101", "req-h");
  rapidjson::Document doc = Body(h.views.ResourceContext("vm:101", false));
  CHECK(Column(At(doc, "pendingApprovals"), "id") ==
        std::vector<std::string>{medium.id(), high.id()});
}

TEST_CASE("resource context lists are capped", "[core][agent]") {
  ViewsHarness h;
  for (int i = 0; i < 60; ++i) {
    h.PutFinding(fmt::format("f-{:02}", i), "vm:101", Severity::kWarning, absl::Minutes(60 - i));
  }
  for (int i = 0; i < 25; ++i) {
    h.Execute(h.Plan("snapshot", "{}", "vm:101", fmt::format("req-{}", i), Human("alice")));
    h.clock.Advance(absl::Seconds(1));
  }
  rapidjson::Document doc = Body(h.views.ResourceContext("vm:101", true));
  const rapidjson::Value& findings = At(doc, "activeFindings");
  REQUIRE(findings.Size() == core::kMaxContextFindings);
  CHECK(Column(findings, "id").front() == "f-59");  // the newest detected
  CHECK(At(doc, "recentActions").Size() == core::kMaxContextRecentActions);
}

TEST_CASE("an unknown or malformed resource id is NotFound", "[core][agent]") {
  ViewsHarness h;
  CHECK(absl::IsNotFound(h.views.ResourceContext("vm:999", false).status()));
  CHECK(absl::IsNotFound(h.views.ResourceCapabilities("vm:999").status()));
  // a malformed id never reaches the fleet
  h.fleet.SetError(FakeFleet::Method::kGetResource, absl::InternalError("must not be called"));
  h.fleet.SetError(FakeFleet::Method::kListCapabilities, absl::InternalError("must not be called"));
  for (std::string_view bad : {"", "not an id", "VM:101", "vm:", "vm:101 "}) {
    CHECK(absl::IsNotFound(h.views.ResourceContext(bad, false).status()));
    CHECK(absl::IsNotFound(h.views.ResourceCapabilities(bad).status()));
  }
}

TEST_CASE("context sections the fleet cannot read are left out", "[core][agent]") {
  ViewsHarness h;
  h.fleet.SetError(FakeFleet::Method::kGetStatus, absl::UnavailableError("agent away"));
  rapidjson::Document doc = Body(h.views.ResourceContext("vm:101", false));
  CHECK(Column(At(doc, "contextSections"), "id") == std::vector<std::string>{"topology"});
  CHECK(Keys(doc).count("operatorState") == 0);
  CHECK(Keys(doc).count("technology") == 1);
}

TEST_CASE("an unreadable operator state fails the resource context", "[core][agent]") {
  ViewsHarness h;
  h.operator_state.FailGets(absl::UnavailableError("state store down"));
  CHECK(absl::IsUnavailable(h.views.ResourceContext("vm:101", false).status()));
}

}  // namespace
}  // namespace pulse::testing::agent
