// LocalHostFleet's two agent-facing options: a host name override and a stand-in systemctl
// (tests/e2e/agent/fake-systemctl, a POSIX sh script keeping unit states in files), which
// must be used for every unit probe and action even where /run/systemd/system is absent.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/time/clock.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::adapters::agents {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// A private copy of the stand-in with units `nginx` (active) and `pulse-demo-web` (inactive).
struct StandIn {
  testing::TempDir dir{"pulse-fake-systemctl"};
  std::string program = dir.File("fake-systemctl");
  StandIn() {
    fs::copy_file(PULSE_FAKE_SYSTEMCTL, program);
    fs::permissions(program, fs::perms::owner_all);
    fs::create_directory(dir.File("units"));
    WriteFile(dir.File("units/nginx.service.state"), "active\n");
    WriteFile(dir.File("units/pulse-demo-web.service.state"), "inactive\n");
  }
  std::string Unit(const std::string& file) const { return ReadFile(dir.File("units/" + file)); }
};

std::unique_ptr<LocalHostFleet> Open(LocalHostFleetOptions options) {
  absl::StatusOr<std::unique_ptr<LocalHostFleet>> fleet = LocalHostFleet::Open(std::move(options));
  REQUIRE(fleet.ok());
  return std::move(*fleet);
}

TEST_CASE("a host name override names the node and every resource id",
          "[adapters][agents][local]") {
  LocalHostFleetOptions options;
  options.host_name = "web1";
  auto fleet = Open(options);
  CHECK(fleet->node_id() == "node:web1");
  absl::StatusOr<core::FleetResource> node = fleet->GetResource("node:web1");
  REQUIRE(node.ok());
  CHECK(node->name == "web1");
  core::FleetResourceQuery all;
  all.limit = core::kFleetMaxResults;
  absl::StatusOr<std::vector<core::FleetResource>> list = fleet->ListResources(all);
  REQUIRE(list.ok());
  for (const core::FleetResource& r : *list) {
    INFO(r.id);
    CHECK((r.id == "node:web1" || r.id.find(":web1/") != std::string::npos));
  }
  const std::string longest(64, 'w');
  LocalHostFleetOptions edge;
  edge.host_name = longest;
  CHECK(LocalHostFleet::Open(edge).ok());
  for (const std::string& bad : {std::string("-web"), std::string("web 1"), std::string("a/b"),
                                 std::string(".web"), std::string("web;id"), longest + "w"}) {
    INFO(bad);
    LocalHostFleetOptions refused;
    refused.host_name = bad;
    CHECK(absl::IsInvalidArgument(LocalHostFleet::Open(refused).status()));
  }
}

TEST_CASE("a stand-in systemctl serves units and actions and observation without systemd",
          "[adapters][agents][local]") {
  StandIn standin;
  LocalHostFleetOptions options;
  options.host_name = "web1";
  options.systemctl_path = standin.program;
  options.allow_local_actions = true;
  options.action_allowlist = {"nginx"};
  auto fleet = Open(options);

  absl::StatusOr<core::FleetResource> nginx = fleet->GetResource("service:web1/nginx");
  REQUIRE(nginx.ok());
  CHECK(nginx->status == "active");
  CHECK(nginx->attributes.at("unit") == "nginx.service");
  absl::StatusOr<core::FleetResource> demo = fleet->GetResource("service:web1/pulse-demo-web");
  REQUIRE(demo.ok());
  CHECK(demo->status == "inactive");
  // Only the allowlisted unit offers actions.
  absl::StatusOr<std::vector<core::Capability>> caps =
      fleet->ListCapabilities("service:web1/pulse-demo-web");
  REQUIRE(caps.ok());
  CHECK(caps->empty());

  core::DispatchRequest restart;
  restart.attempt_id = "act_1.dispatch.1";
  restart.resource_id = "service:web1/nginx";
  restart.capability_name = "restart";
  const absl::Time dispatched_at = absl::Now();
  absl::StatusOr<core::DispatchReceipt> receipt = fleet->Dispatch(restart);
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  CHECK(standin.Unit("nginx.service.restarts") == "restart\n");
  // The same attempt again is answered from the receipt, not run a second time.
  receipt = fleet->Dispatch(restart);
  REQUIRE(receipt.ok());
  CHECK(standin.Unit("nginx.service.restarts") == "restart\n");

  core::PostconditionQuery query;
  query.resource_id = "service:web1/nginx";
  query.capability_name = "restart";
  query.dispatched_at = dispatched_at;
  absl::StatusOr<core::PostconditionObservation> observed = fleet->ObservePostcondition(query);
  REQUIRE(observed.ok());
  CHECK(observed->status == core::VerificationStatus::kConfirmed);

  core::DispatchRequest stop = restart;
  stop.attempt_id = "act_2.dispatch.1";
  stop.capability_name = "stop";
  receipt = fleet->Dispatch(stop);
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  CHECK(standin.Unit("nginx.service.state") == "inactive\n");
  nginx = fleet->GetResource("service:web1/nginx");
  REQUIRE(nginx.ok());
  CHECK(nginx->status == "inactive");

  absl::StatusOr<core::FleetConfig> config = fleet->ReadConfig("service:web1/nginx");
  REQUIRE(config.ok());
  CHECK(config->content.find("Description=fake nginx.service") != std::string::npos);
}

TEST_CASE("a stand-in systemctl must be an absolute path to an executable file",
          "[adapters][agents][local]") {
  StandIn standin;
  const std::string not_executable = standin.dir.File("plain");
  WriteFile(not_executable, "#!/bin/sh\n");
  for (const std::string& bad :
       {std::string("fake-systemctl"), standin.dir.File("missing"), not_executable}) {
    INFO(bad);
    LocalHostFleetOptions options;
    options.systemctl_path = bad;
    absl::Status status = LocalHostFleet::Open(options).status();
    CHECK(absl::IsInvalidArgument(status));
    CHECK(std::string(status.message()).find("systemctl_path") != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::adapters::agents
