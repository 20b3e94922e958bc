#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agent_views_test_support.h"
#include "fmt/format.h"

namespace pulse::testing::agent {
namespace {

using core::Severity;

core::FleetResource LocalStorage() {
  core::FleetResource r;
  r.id = "storage:local";
  r.type = "storage";
  r.name = "local";
  r.status = "available";
  r.parent_id = "node:pve1";
  return r;  // no technology: the member is omitted
}

// vm:101: critical, warning, watch and info active; a resolved and a snoozed one that are not.
// nginx: one warning. vm:101 is locked with an open maintenance window and has a pending plan;
// nginx is declared expected offline and retired.
void Populate(ViewsHarness& h) {
  h.fleet.PutResource(LocalStorage(), {});
  h.PutFinding("f-crit", "vm:101", Severity::kCritical);
  h.PutFinding("f-warn", "vm:101", Severity::kWarning);
  h.PutFinding("f-watch", "vm:101", Severity::kWatch);
  h.PutFinding("f-info", "vm:101", Severity::kInfo);
  h.PutFinding("f-old", "vm:101", Severity::kWarning);
  h.EditFinding("f-old", [&](core::Finding& f) { f.resolved_at = h.clock.Now(); });
  h.PutFinding("f-snoozed", "vm:101", Severity::kCritical);
  h.EditFinding("f-snoozed",
                [&](core::Finding& f) { f.snoozed_until = h.clock.Now() + absl::Hours(2); });
  h.PutFinding("f-nginx", "service:pve1/nginx", Severity::kWarning);

  h.Plan("restart", R"({"mode":"graceful"})");  // admin floor: pending_approval

  core::OperatorState vm = h.Lock("vm:101");
  vm.maintenance_start_at = h.clock.Now() - absl::Hours(1);
  vm.maintenance_end_at = h.clock.Now() + absl::Hours(1);
  REQUIRE(h.operator_state.Set(vm).ok());
  core::OperatorState nginx;
  nginx.resource_id = "service:pve1/nginx";
  nginx.monitoring_mode = core::MonitoringMode::kExpectedOffline;
  nginx.intentionally_offline = true;
  nginx.lifecycle = core::ResourceLifecycle::kRetired;
  nginx.set_at = h.clock.Now();
  nginx.set_by = "bob";
  REQUIRE(h.operator_state.Set(nginx).ok());
}

std::vector<std::string> Listed(ViewsHarness& h, const core::QueryParams& params) {
  rapidjson::Document doc = Body(h.views.FleetContext(core::ParseFleetContextQuery(params)));
  return Column(At(doc, "resources"), "canonicalId");
}

// The AgentFleetContext shape, plus each resource's observed `status` (what the fleet reports now,
// beside the operator's declared intent).
TEST_CASE("the fleet context has the AgentFleetContext shape with state, counts and approvals",
          "[core][agent]") {
  ViewsHarness h;
  Populate(h);
  rapidjson::Document doc = Body(h.views.FleetContext({}));
  const rapidjson::Document expected = Json(R"({
    "resources": [
      {"canonicalId": "node:pve1", "resourceType": "node", "resourceName": "pve1",
       "technology": "proxmox", "status": "online", "intentionallyOffline": false, "monitoringMode": "normal",
       "lifecycleState": "active", "neverAutoRemediate": false, "maintenanceWindowActive": false,
       "findings": {"total": 0, "critical": 0, "warning": 0, "info": 0},
       "pendingApprovalCount": 0},
      {"canonicalId": "service:pve1/nginx", "resourceType": "service", "resourceName": "nginx",
       "technology": "systemd", "status": "active", "intentionallyOffline": true,
       "monitoringMode": "expected_offline", "lifecycleState": "retired",
       "neverAutoRemediate": false, "maintenanceWindowActive": false,
       "findings": {"total": 1, "critical": 0, "warning": 1, "info": 0},
       "pendingApprovalCount": 0},
      {"canonicalId": "storage:local", "resourceType": "storage", "resourceName": "local",
       "status": "available", "intentionallyOffline": false, "monitoringMode": "normal", "lifecycleState": "active",
       "neverAutoRemediate": false, "maintenanceWindowActive": false,
       "findings": {"total": 0, "critical": 0, "warning": 0, "info": 0},
       "pendingApprovalCount": 0},
      {"canonicalId": "vm:101", "resourceType": "vm", "resourceName": "web-01",
       "technology": "proxmox", "status": "running", "intentionallyOffline": false, "monitoringMode": "normal",
       "lifecycleState": "active", "neverAutoRemediate": true, "maintenanceWindowActive": true,
       "findings": {"total": 4, "critical": 1, "warning": 1, "info": 2},
       "pendingApprovalCount": 1}
    ],
    "generatedAt": "2027-01-15T08:00:00Z"
  })");
  INFO(Text(doc));
  CHECK(doc == expected);
}

TEST_CASE("a fleet of several sources shows each source's state in the fleet context",
          "[core][agent]") {
  ViewsHarness h;
  core::FleetSourceStatus up;
  up.name = "lab";
  up.kind = "demo";
  up.up = true;
  up.resources = 2;
  up.last_ok_at = h.clock.Now();
  core::FleetSourceStatus down;
  down.name = "d1";
  down.kind = "docker";
  down.error = "connection refused";
  down.resources = 3;
  h.fleet.SetSourceStatuses({up, down});
  rapidjson::Document doc = Body(h.views.FleetContext({}));
  const rapidjson::Document expected = Json(R"([
    {"name": "lab", "kind": "demo", "state": "up", "resourceCount": 2,
     "lastSeenAt": "2027-01-15T08:00:00Z"},
    {"name": "d1", "kind": "docker", "state": "down", "error": "connection refused",
     "resourceCount": 3}
  ])");
  INFO(Text(doc));
  REQUIRE(doc.HasMember("sources"));
  CHECK(doc["sources"] == expected);
  // A fleet of one source has no sources member (the shape test above).
  h.fleet.SetSourceStatuses({});
  CHECK_FALSE(Body(h.views.FleetContext({})).HasMember("sources"));
}

TEST_CASE("fleet context filters are case-insensitive exact matches and invalid ones are ignored",
          "[core][agent]") {
  ViewsHarness h;
  Populate(h);
  const std::vector<std::string> all = {"node:pve1", "service:pve1/nginx", "storage:local",
                                        "vm:101"};
  CHECK(Listed(h, {}) == all);
  CHECK(Listed(h, {{"hasFindings", "true"}}) ==
        std::vector<std::string>{"service:pve1/nginx", "vm:101"});
  CHECK(Listed(h, {{"hasFindings", "1"}}) ==
        std::vector<std::string>{"service:pve1/nginx", "vm:101"});
  CHECK(Listed(h, {{"severity", "CRITICAL"}}) == std::vector<std::string>{"vm:101"});
  CHECK(Listed(h, {{"severity", "warning"}}) ==
        std::vector<std::string>{"service:pve1/nginx", "vm:101"});
  // watch findings count in the info bucket
  CHECK(Listed(h, {{"severity", "Info"}}) == std::vector<std::string>{"vm:101"});
  CHECK(Listed(h, {{"technology", "PROXMOX"}}) == std::vector<std::string>{"node:pve1", "vm:101"});
  CHECK(Listed(h, {{"resourceType", "Service"}}) == std::vector<std::string>{"service:pve1/nginx"});
  CHECK(Listed(h, {{"technology", "proxmox"}, {"hasFindings", "true"}}) ==
        std::vector<std::string>{"vm:101"});
  CHECK(Listed(h, {{"technology", "docker"}}).empty());
  // invalid values are ignored, not errors
  CHECK(Listed(h, {{"severity", "bogus"}}) == all);
  CHECK(Listed(h, {{"severity", "watch"}}) == all);
  CHECK(Listed(h, {{"hasFindings", "yes"}}) == all);
  CHECK(Listed(h, {{"technology", std::string(200, 'p')}}) == all);
}

TEST_CASE("an empty fleet has an empty resource list", "[core][agent]") {
  ViewsHarness h;
  h.fleet.RemoveResource("node:pve1");
  h.fleet.RemoveResource("vm:101");
  h.fleet.RemoveResource("service:pve1/nginx");
  rapidjson::Document doc = Body(h.views.FleetContext({}));
  CHECK(doc == Json(R"({"resources": [], "generatedAt": "2027-01-15T08:00:00Z"})"));
}

TEST_CASE("a plan past its TTL is no longer a pending approval in the fleet context",
          "[core][agent]") {
  ViewsHarness h;
  const core::ActionRecord planned = h.Plan("restart", "{}");
  rapidjson::Document before = Body(h.views.FleetContext({}));
  CHECK(At(At(before, "resources")[2], "pendingApprovalCount").GetInt64() == 1);

  h.clock.Advance(core::kDefaultPlanTtl);
  rapidjson::Document after = Body(h.views.FleetContext({}));
  CHECK(At(At(after, "resources")[2], "pendingApprovalCount").GetInt64() == 0);
  // the view materialized the expiry, as a read of the action would
  absl::StatusOr<core::ActionRecord> stored = h.actions.Get(planned.id());
  REQUIRE(stored.ok());
  CHECK(stored->state == core::ActionState::kExpired);
}

TEST_CASE("an unreadable operator state fails the fleet context instead of showing no lock",
          "[core][agent]") {
  ViewsHarness h;
  h.Lock("vm:101");
  h.operator_state.FailGets(absl::UnavailableError("state store down"));
  absl::StatusOr<std::string> body = h.views.FleetContext({});
  CHECK(absl::IsUnavailable(body.status()));
}

// A Fleet that forwards to a FakeFleet and counts the calls the views make.
class CountingFleet final : public core::Fleet {
 public:
  explicit CountingFleet(core::Fleet& inner) : inner_(inner) {}

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override {
    ++list_resources;
    return inner_.ListResources(query);
  }
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override {
    ++per_resource;
    return inner_.GetResource(id);
  }
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& q) override {
    ++per_resource;
    return inner_.GetTopology(q);
  }
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override {
    ++per_resource;
    return inner_.GetStatus(id);
  }
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& q) override {
    ++per_resource;
    return inner_.ReadLogs(id, q);
  }
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override {
    ++per_resource;
    return inner_.ReadConfig(id);
  }
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& q) override {
    ++per_resource;
    return inner_.ReadMetricHistory(id, q);
  }
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override {
    ++per_resource;
    return inner_.ListCapabilities(id);
  }
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& r) override {
    ++per_resource;
    return inner_.Dispatch(r);
  }
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& q) override {
    ++per_resource;
    return inner_.ObservePostcondition(q);
  }

  int list_resources = 0;
  int per_resource = 0;

 private:
  core::Fleet& inner_;
};

TEST_CASE("a 1000-resource fleet is listed with one fleet read and a bounded body",
          "[core][agent]") {
  ViewsHarness h;
  CountingFleet fleet(h.fleet);
  core::AgentViews views(fleet, h.findings, h.actions, h.action_service, h.operator_state, h.clock);
  for (int i = 0; i < 1001; ++i) {
    core::FleetResource r;
    r.id = fmt::format("app-container:c{:04}", i);  // sorts before the fixture's resources
    r.type = "app-container";
    r.name = fmt::format("guest-{}", i);
    r.status = "running";
    r.technology = "proxmox";
    h.fleet.PutResource(r, {});
    if (i % 2 == 0) {
      h.PutFinding(fmt::format("f-{}", i), r.id,
                   i % 4 == 0 ? Severity::kCritical : Severity::kWarning);
    }
  }
  absl::StatusOr<std::string> body = views.FleetContext({});
  rapidjson::Document doc = Body(body);
  const rapidjson::Value& resources = At(doc, "resources");
  // 1004 resources exist; the fleet port lists at most kFleetMaxResults, in id order
  CHECK(resources.Size() == core::kFleetMaxResults);
  CHECK(Column(resources, "canonicalId").front() == "app-container:c0000");
  CHECK(Column(resources, "canonicalId").back() == "app-container:c0999");
  CHECK(fleet.list_resources == 1);
  CHECK(fleet.per_resource == 0);
  CHECK(body->size() < core::kFleetMaxResults * 400);
  std::int64_t total = 0;
  for (const auto& r : resources.GetArray()) {
    total += At(At(r, "findings"), "total").GetInt64();
  }
  CHECK(total == 500);  // every even guest of the 1000 listed has one

  rapidjson::Document critical =
      Body(views.FleetContext(core::ParseFleetContextQuery({{"severity", "critical"}})));
  CHECK(At(critical, "resources").Size() == 250);
  CHECK(fleet.list_resources == 2);
  CHECK(fleet.per_resource == 0);
}

// An OperatorStateStore that forwards to the fake and counts the reads the views make.
class CountingOperatorState final : public core::OperatorStateStore {
 public:
  explicit CountingOperatorState(core::OperatorStateStore& inner) : inner_(inner) {}
  absl::StatusOr<core::OperatorState> Get(std::string_view id) override {
    ++gets;
    return inner_.Get(id);
  }
  absl::StatusOr<std::vector<core::OperatorState>> GetMany(
      const std::vector<std::string>& ids) override {
    asked.push_back(ids);
    return inner_.GetMany(ids);
  }
  absl::Status Set(const core::OperatorState& state) override { return inner_.Set(state); }
  absl::Status Clear(std::string_view id) override { return inner_.Clear(id); }
  absl::StatusOr<std::vector<std::string>> LocalOnlyResourceIds() override {
    return inner_.LocalOnlyResourceIds();
  }
  absl::StatusOr<std::vector<core::OperatorState>> WithNotes() override {
    return inner_.WithNotes();
  }

  int gets = 0;
  std::vector<std::vector<std::string>> asked;  // one entry per GetMany

 private:
  core::OperatorStateStore& inner_;
};

// Issue 29: the operator states come in one store read for the whole page (one SQLite
// transaction), not one read per resource, and only for the resources the filters keep.
TEST_CASE("the fleet context reads the operator states of the listed resources in one call",
          "[core][agent]") {
  ViewsHarness h;
  Populate(h);
  CountingOperatorState states(h.operator_state);
  core::AgentViews views(h.fleet, h.findings, h.actions, h.action_service, states, h.clock);
  rapidjson::Document all = Body(views.FleetContext({}));
  CHECK(all == Body(h.views.FleetContext({})));  // the counting wrapper changes nothing
  CHECK(states.gets == 0);
  REQUIRE(states.asked.size() == 1);
  CHECK(states.asked[0] == Column(At(all, "resources"), "canonicalId"));

  rapidjson::Document with_findings =
      Body(views.FleetContext(core::ParseFleetContextQuery({{"hasFindings", "true"}})));
  CHECK(Column(At(with_findings, "resources"), "canonicalId") ==
        std::vector<std::string>{"service:pve1/nginx", "vm:101"});
  CHECK(states.gets == 0);
  REQUIRE(states.asked.size() == 2);
  CHECK(states.asked[1] == std::vector<std::string>{"service:pve1/nginx", "vm:101"});
}

}  // namespace
}  // namespace pulse::testing::agent
