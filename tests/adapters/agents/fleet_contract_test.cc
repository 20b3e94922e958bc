// The Fleet contract suite (tests/contracts/fleet_contract.h) over the agents' fleets: the
// shipped demo fleet and this host.
#include "contracts/fleet_contract.h"

#include <catch2/catch.hpp>
#include <memory>

#include "agents_test_support.h"
#include "pulse/adapters/agents/local_host_fleet.h"

namespace pulse::testing::agents {
namespace {

TEST_CASE("DemoFleet honours the Fleet contract", "[adapters][agents][demo][contract]") {
  FakeClock clock;
  RunFleetContract([&clock] {
    FleetContractSubject subject;
    subject.fleet = OpenDemo(clock);
    subject.metric_resource = "vm:101";
    subject.metric = "memory";
    subject.now = clock.Now();
    core::DispatchRequest restart;
    restart.resource_id = "app-container:web";
    restart.capability_name = "restart";
    restart.params_json = "{}";
    subject.dispatch = restart;
    return subject;
  });
}

TEST_CASE("LocalHostFleet honours the Fleet contract", "[adapters][agents][local][contract]") {
  RunFleetContract([] {
    adapters::agents::LocalHostFleetOptions options;
    options.sample_interval = absl::ZeroDuration();
    absl::StatusOr<std::unique_ptr<adapters::agents::LocalHostFleet>> local =
        adapters::agents::LocalHostFleet::Open(options);
    REQUIRE(local.ok());
    FleetContractSubject subject;
    subject.metric_resource = (*local)->node_id();
    subject.metric = "memory";
    subject.now = absl::Now();
    subject.fleet = *std::move(local);
    return subject;
  });
}

}  // namespace
}  // namespace pulse::testing::agents
