// The Fleet contract suite (tests/contracts/fleet_contract.h) over a PveFleet against the
// loopback fake PVE, alone and inside a CompositeFleet after the demo fleet: the guarantees the
// demo, local, composite and docker fleets give.
#include <catch2/catch.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "contracts/fleet_contract.h"
#include "pulse/adapters/agents/composite_fleet.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pve_test_support.h"

namespace pulse::proxmox::testing {
namespace {

core::DispatchRequest StartDb() {
  core::DispatchRequest start;
  start.resource_id = "vm:102";
  start.capability_name = "start";
  start.params_json = "{}";
  return start;
}

// Catch2 runs a test case's body once per section, so each section gets a fresh fake cluster
// (the harness outlives the fleet the subject holds).
TEST_CASE("PveFleet honours the Fleet contract", "[adapters][proxmox][contract]") {
  PveHarness pve;
  pulse::testing::RunFleetContract([&pve] {
    pulse::testing::FleetContractSubject subject;
    subject.fleet = pve.Open();
    subject.metric_resource = "storage:pve1/local";
    subject.metric = "usage";
    subject.now = absl::Now();
    subject.dispatch = StartDb();
    return subject;
  });
}

TEST_CASE("a composite of the demo fleet and a proxmox-ve source honours the Fleet contract",
          "[adapters][proxmox][contract][composite]") {
  PveHarness pve;
  pulse::testing::RunFleetContract([&pve] {
    adapters::agents::DemoFleetOptions demo_options;
    demo_options.dispatch_delay = absl::ZeroDuration();
    absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> demo =
        adapters::agents::DemoFleet::OpenDefault(demo_options);
    REQUIRE(demo.ok());
    std::vector<adapters::agents::CompositeSource> sources;
    sources.push_back({"lab", "demo", *std::move(demo)});
    sources.push_back({"pve", "proxmox-ve", pve.Open()});
    absl::StatusOr<std::unique_ptr<adapters::agents::CompositeFleet>> composite =
        adapters::agents::CompositeFleet::Create(std::move(sources));
    REQUIRE(composite.ok());
    pulse::testing::FleetContractSubject subject;
    subject.fleet = *std::move(composite);
    // The demo fleet already has vm:102 (the proxmox one is namespaced), not storage:pve1/local.
    subject.metric_resource = "storage:pve1/local";
    subject.metric = "usage";
    subject.now = absl::Now();
    subject.dispatch = StartDb();
    subject.dispatch->resource_id = "vm:@pve/102";
    return subject;
  });
}

}  // namespace
}  // namespace pulse::proxmox::testing
