// The Fleet contract suite (tests/contracts/fleet_contract.h) over a DockerFleet against the
// real private daemon, alone and inside a CompositeFleet with the demo fleet: the same
// guarantees the demo, local and composite fleets give.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contracts/fleet_contract.h"
#include "docker_test_support.h"
#include "pulse/adapters/agents/composite_fleet.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/adapters/docker/docker_fleet.h"

namespace pulse::docker::testing {
namespace {

// The containers every subject sees: two running (one in a Compose project), one exited.
void EnsureContainers(PrivateDockerd& daemon) {
  static bool created = false;
  if (created) {
    return;
  }
  RunSpec web = Command({"sleep", "600"}, "contract-web");
  web.labels = {{"com.docker.compose.project", "contract"}, {"com.docker.compose.service", "web"}};
  REQUIRE(daemon.Run(web).ok());
  REQUIRE(daemon.Run(Command({"sleep", "600"}, "contract-db")).ok());
  REQUIRE(daemon.Run(Command({"sh", "-c", "exit 3"}, "contract-done")).ok());
  created = true;
}

std::unique_ptr<DockerFleet> OpenContractFleet(const PrivateDockerd& daemon) {
  DockerFleetOptions options;
  options.engine.endpoint = daemon.endpoint();
  options.allow_actions = true;
  options.stop_grace = absl::ZeroDuration();  // sleep ignores SIGTERM as PID 1: kill at once
  options.sample_interval = absl::Milliseconds(200);
  absl::StatusOr<std::unique_ptr<DockerFleet>> fleet = DockerFleet::Open(options);
  INFO(fleet.status().ToString());
  REQUIRE(fleet.ok());
  return *std::move(fleet);
}

core::DispatchRequest RestartOf(std::string id) {
  core::DispatchRequest restart;
  restart.resource_id = std::move(id);
  restart.capability_name = "restart";
  restart.params_json = "{}";
  return restart;
}

TEST_CASE("DockerFleet honours the Fleet contract", "[docker][fleet][contract]") {
  PULSE_NEED_DOCKERD(daemon);
  EnsureContainers(*daemon);
  pulse::testing::RunFleetContract([&] {
    pulse::testing::FleetContractSubject subject;
    subject.fleet = OpenContractFleet(*daemon);
    subject.metric_resource = "app-container:contract-db";
    subject.metric = "memory";
    subject.now = absl::Now();
    subject.dispatch = RestartOf("app-container:contract-web");
    return subject;
  });
}

TEST_CASE("a composite of the demo fleet and a docker source honours the Fleet contract",
          "[docker][fleet][contract][composite]") {
  PULSE_NEED_DOCKERD(daemon);
  EnsureContainers(*daemon);
  pulse::testing::RunFleetContract([&] {
    adapters::agents::DemoFleetOptions demo_options;
    demo_options.dispatch_delay = absl::ZeroDuration();
    absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> demo =
        adapters::agents::DemoFleet::OpenDefault(demo_options);
    REQUIRE(demo.ok());
    std::vector<adapters::agents::CompositeSource> sources;
    sources.push_back({"lab", "demo", *std::move(demo)});
    sources.push_back({"docker1", "docker", OpenContractFleet(*daemon)});
    absl::StatusOr<std::unique_ptr<adapters::agents::CompositeFleet>> composite =
        adapters::agents::CompositeFleet::Create(std::move(sources));
    REQUIRE(composite.ok());
    pulse::testing::FleetContractSubject subject;
    subject.fleet = *std::move(composite);
    subject.metric_resource = "app-container:contract-db";
    subject.metric = "cpu";
    subject.now = absl::Now();
    subject.dispatch = RestartOf("app-container:contract-web");
    return subject;
  });
}

}  // namespace
}  // namespace pulse::docker::testing
