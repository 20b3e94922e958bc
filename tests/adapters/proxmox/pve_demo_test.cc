// The demo fleet and the fake PVE agree on shapes (issue 24's acceptance): the demo fleet's
// nodes, VMs and storage served as a Proxmox VE cluster (PveScenarioFromFleet, as
// `pulse-fake-pve --demo` serves it) and read back through the proxmox-ve source give the same
// ids, names, statuses, parents and storage usage as the demo fleet itself.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/testing/fake_pve_scenario.h"
#include "pve_test_support.h"

namespace pulse::proxmox::testing {
namespace {

double Fact(const core::FleetStatus& s, const char* key) {
  const auto it = s.facts.find(key);
  double value = -1;
  return it != s.facts.end() && absl::SimpleAtod(it->second, &value) ? value : -1;
}

TEST_CASE("the demo fleet served as a PVE cluster reads back with the demo's ids and states",
          "[adapters][proxmox]") {
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> demo =
      adapters::agents::DemoFleet::OpenDefault();
  INFO(demo.status().ToString());
  REQUIRE(demo.ok());
  const absl::Time now = absl::Now();
  absl::StatusOr<std::string> scenario =
      pulse::testing::PveScenarioFromFleet(**demo, {{kTokenId, kSecret}}, now);
  INFO(scenario.status().ToString());
  REQUIRE(scenario.ok());
  PveHarness pve(scenario->c_str());
  std::unique_ptr<PveFleet> fleet = pve.Open();

  absl::StatusOr<std::vector<core::FleetResource>> demo_listed =
      (*demo)->ListResources(core::FleetResourceQuery{});
  absl::StatusOr<std::vector<core::FleetResource>> pve_listed =
      fleet->ListResources(core::FleetResourceQuery{});
  REQUIRE(demo_listed.ok());
  REQUIRE(pve_listed.ok());
  std::map<std::string, core::FleetResource> by_id;
  for (const core::FleetResource& r : *pve_listed) {
    by_id[r.id] = r;
  }
  std::set<std::string> expected;
  for (const core::FleetResource& d : *demo_listed) {
    if (d.type != "node" && d.type != "vm" && d.type != "storage") {
      continue;  // containers in VMs, services, backup jobs: not PVE resources
    }
    INFO(d.id);
    expected.insert(d.id);
    const auto found = by_id.find(d.id);
    REQUIRE(found != by_id.end());
    const core::FleetResource& p = found->second;
    CHECK(p.type == d.type);
    CHECK(p.name == d.name);
    CHECK(p.status == d.status);
    CHECK(p.parent_id == d.parent_id);
    if (d.type == "storage") {
      absl::StatusOr<core::FleetStatus> ps = fleet->GetStatus(d.id);
      REQUIRE(ps.ok());
      core::FleetMetricQuery q;
      q.metric = "usage";
      q.start = now - absl::Hours(24);
      q.end = now + absl::Minutes(1);
      q.max_points = core::kFleetMaxMetricPoints;
      absl::StatusOr<core::FleetMetricSeries> usage = (*demo)->ReadMetricHistory(d.id, q);
      REQUIRE(usage.ok());
      REQUIRE_FALSE(usage->points.empty());
      CHECK(std::abs(Fact(*ps, "usage_pct") - usage->points.back().value) < 0.1);
    }
  }
  CHECK(expected.size() == by_id.size());  // nothing the demo does not have
  CHECK(expected.size() >= 15);            // 3 nodes, 12 VMs, the storage
}

}  // namespace
}  // namespace pulse::proxmox::testing
