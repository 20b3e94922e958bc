// DockerFleet against the real private daemon: the resource mapping (node, containers with
// state, health, restarts, exit code and labels, Compose projects and services), a crash-loop
// under --restart on-failure, governed restart / stop / start with the postcondition read by
// an independent inspect, a container removed between plan and execute, and a daemon that dies
// in the middle of a dispatch (inconclusive, not retried).
#include "pulse/adapters/docker/docker_fleet.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "docker_test_support.h"

namespace pulse::docker::testing {
namespace {

std::unique_ptr<DockerFleet> OpenFleet(const PrivateDockerd& daemon, bool allow_actions = true) {
  DockerFleetOptions options;
  options.engine.endpoint = daemon.endpoint();
  options.allow_actions = allow_actions;
  options.stop_grace = absl::Seconds(1);
  options.action_deadline = absl::Seconds(20);
  options.observe_timeout = absl::Seconds(10);
  auto fleet = DockerFleet::Open(options);
  REQUIRE(fleet.ok());
  return *std::move(fleet);
}

core::DispatchRequest Request(std::string resource, std::string capability, std::string attempt) {
  core::DispatchRequest r;
  r.action_id = attempt;
  r.attempt_id = attempt + ".dispatch.1";
  r.resource_id = std::move(resource);
  r.capability_name = std::move(capability);
  r.params_json = "{}";
  return r;
}

bool HasEdge(const core::FleetTopology& t, std::string_view from, std::string_view to,
             std::string_view kind) {
  return std::any_of(t.relationships.begin(), t.relationships.end(),
                     [&](const core::FleetRelationship& r) {
                       return r.from_id == from && r.to_id == to && r.kind == kind;
                     });
}

TEST_CASE("the docker fleet maps the host, containers and compose projects", "[docker][fleet]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec web;
  web.name = "shop-web";
  web.cmd = {"sleep", "600"};
  web.labels = {{"com.docker.compose.project", "shop"},
                {"com.docker.compose.service", "web"},
                {"api_token", "hunter2"}};
  web.healthcheck = {"true"};
  REQUIRE(daemon->Run(web).ok());
  RunSpec crash;
  crash.name = "crashy";
  crash.cmd = {"sh", "-c", "exit 1"};
  crash.restart_policy = "on-failure";
  crash.max_retries = 2;
  auto crash_id = daemon->Run(crash);
  REQUIRE(crash_id.ok());
  auto fleet = OpenFleet(*daemon);
  CHECK(fleet->node_id().rfind("node:", 0) == 0);

  core::FleetTopologyQuery whole;
  whole.root_id = "";
  auto topology = fleet->GetTopology(whole);
  REQUIRE(topology.ok());
  CHECK(HasEdge(*topology, "app-container:shop-web", fleet->node_id(), "runs_on"));
  CHECK(HasEdge(*topology, "app-container:shop-web", "compose-project:shop", "member_of"));
  CHECK(HasEdge(*topology, "app-container:shop-web", "compose-service:shop/web", "member_of"));
  CHECK(HasEdge(*topology, "compose-service:shop/web", "compose-project:shop", "member_of"));

  // Healthy after its first check (interval 1 s).
  core::FleetResource r;
  for (int i = 0; i < 60; ++i) {
    auto got = fleet->GetResource("app-container:shop-web");
    REQUIRE(got.ok());
    r = *got;
    if (r.attributes["health"] == "healthy") {
      break;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  CHECK(r.type == "app-container");
  CHECK(r.status == "running");
  CHECK(r.technology == "docker");
  CHECK(r.parent_id == fleet->node_id());
  CHECK(r.attributes["health"] == "healthy");
  CHECK(r.attributes["image"] == kImage);
  CHECK(r.attributes["label.com.docker.compose.service"] == "web");
  CHECK(r.attributes["label.api_token"] == "[redacted]");
  CHECK_FALSE(r.attributes["started_at"].empty());

  // The crash-looping container: exit code 1, restarts counted, then exited.
  core::FleetResource c;
  for (int i = 0; i < 150; ++i) {
    auto got = fleet->GetResource("app-container:crashy");
    REQUIRE(got.ok());
    c = *got;
    if (c.attributes["restart_count"] == "2" && c.status == "exited") {
      break;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  CHECK(c.status == "exited");
  CHECK(c.attributes["exit_code"] == "1");
  CHECK(c.attributes["restart_count"] == "2");
  CHECK(c.attributes["restart_policy"] == "on-failure");

  core::FleetResourceQuery exited;
  exited.status = "exited";
  auto list = fleet->ListResources(exited);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 1);
  CHECK((*list)[0].id == "app-container:crashy");
  CHECK(fleet->GetResource("app-container:nope").status().code() == absl::StatusCode::kNotFound);
  CHECK(fleet->GetResource("app-container:../x").status().code() == absl::StatusCode::kNotFound);

  auto logs = fleet->ReadLogs("app-container:crashy", core::FleetLogQuery{});
  REQUIRE(logs.ok());
  auto status = fleet->GetStatus("app-container:shop-web");
  REQUIRE(status.ok());
  CHECK(status->facts.count("memory_bytes") == 1);
  core::FleetMetricQuery metric;
  metric.metric = "memory";
  metric.start = absl::Now() - absl::Minutes(5);
  metric.end = absl::Now() + absl::Minutes(1);
  auto series = fleet->ReadMetricHistory("app-container:shop-web", metric);
  REQUIRE(series.ok());
  CHECK_FALSE(series->points.empty());
  CHECK(series->unit == "bytes");
  auto config = fleet->ReadConfig("app-container:shop-web");
  REQUIRE(config.ok());
  CHECK(config->redacted);
  CHECK(config->content.find("hunter2") == std::string::npos);
  REQUIRE(daemon->Remove("shop-web").ok());
  REQUIRE(daemon->Remove(*crash_id).ok());
}

TEST_CASE("a governed restart is confirmed by an independent inspect with a new StartedAt",
          "[docker][fleet]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec;
  spec.name = "api";
  spec.cmd = {"sleep", "600"};
  REQUIRE(daemon->Run(spec).ok());
  auto fleet = OpenFleet(*daemon);
  auto catalogue = fleet->ListCapabilities("app-container:api");
  REQUIRE(catalogue.ok());
  REQUIRE(catalogue->size() == 2);
  CHECK((*catalogue)[0].name == "restart");
  CHECK((*catalogue)[1].name == "stop");
  auto before = fleet->GetResource("app-container:api");
  REQUIRE(before.ok());

  const absl::Time dispatched_at = absl::Now();
  const core::DispatchRequest restart = Request("app-container:api", "restart", "act_r1");
  auto receipt = fleet->Dispatch(restart);
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  core::PostconditionQuery query;
  query.action_id = "act_r1";
  query.resource_id = "app-container:api";
  query.capability_name = "restart";
  query.dispatched_at = dispatched_at;
  auto observed = fleet->ObservePostcondition(query);
  REQUIRE(observed.ok());
  CHECK(observed->status == core::VerificationStatus::kConfirmed);
  CHECK(observed->observer_trust_domain != receipt->executor_trust_domain);
  auto after = fleet->GetResource("app-container:api");
  REQUIRE(after.ok());
  CHECK(after->attributes["started_at"] > before->attributes["started_at"]);
  CHECK(after->revision != before->revision);
  // The same attempt again is the first receipt, not a second restart.
  auto again = fleet->Dispatch(restart);
  REQUIRE(again.ok());
  auto unchanged = fleet->GetResource("app-container:api");
  REQUIRE(unchanged.ok());
  CHECK(unchanged->attributes["started_at"] == after->attributes["started_at"]);

  // Stop, then the catalogue offers start; a restart observed against a stopped container is
  // contradicted.
  auto stop = fleet->Dispatch(Request("app-container:api", "stop", "act_s1"));
  REQUIRE(stop.ok());
  CHECK(stop->status == core::ExecutionStatus::kSucceeded);
  query.capability_name = "restart";
  query.dispatched_at = absl::Now();
  observed = fleet->ObservePostcondition(query);
  REQUIRE(observed.ok());
  CHECK(observed->status == core::VerificationStatus::kContradicted);
  catalogue = fleet->ListCapabilities("app-container:api");
  REQUIRE(catalogue.ok());
  REQUIRE(catalogue->size() == 1);
  CHECK((*catalogue)[0].name == "start");
  CHECK(fleet->Dispatch(Request("app-container:api", "restart", "act_x")).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  auto start = fleet->Dispatch(Request("app-container:api", "start", "act_st"));
  REQUIRE(start.ok());
  CHECK(start->status == core::ExecutionStatus::kSucceeded);
  query.capability_name = "start";
  observed = fleet->ObservePostcondition(query);
  REQUIRE(observed.ok());
  CHECK(observed->status == core::VerificationStatus::kConfirmed);

  // Read-only by default: no catalogue, no dispatch.
  auto read_only = OpenFleet(*daemon, false);
  catalogue = read_only->ListCapabilities("app-container:api");
  REQUIRE(catalogue.ok());
  CHECK(catalogue->empty());
  CHECK(read_only->Dispatch(Request("app-container:api", "restart", "act_ro")).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  REQUIRE(daemon->Remove("api").ok());
}

TEST_CASE("a container removed between plan and execute is not found, and observed gone",
          "[docker][fleet]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec;
  spec.name = "ephemeral";
  spec.cmd = {"sleep", "600"};
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  auto fleet = OpenFleet(*daemon);
  REQUIRE(fleet->ListCapabilities("app-container:ephemeral").ok());
  REQUIRE(daemon->Remove(*id).ok());
  auto receipt = fleet->Dispatch(Request("app-container:ephemeral", "restart", "act_gone"));
  CHECK(receipt.status().code() == absl::StatusCode::kNotFound);
  core::PostconditionQuery query;
  query.resource_id = "app-container:ephemeral";
  query.capability_name = "restart";
  query.dispatched_at = absl::Now();
  auto observed = fleet->ObservePostcondition(query);
  REQUIRE(observed.ok());
  CHECK(observed->status == core::VerificationStatus::kContradicted);
  CHECK(observed->reason_code == "container_gone");
}

TEST_CASE("a daemon that dies during a dispatch leaves it inconclusive, never retried",
          "[docker][fleet]") {
  PULSE_NEED_DOCKERD(shared);  // skips alike where no daemon can start
  auto daemon = PrivateDockerd::Start();
  REQUIRE(daemon.ok());
  RunSpec spec;
  spec.name = "stubborn";
  spec.cmd = {"sleep", "600"};  // ignores SIGTERM as PID 1: the stop waits out its grace
  REQUIRE((*daemon)->Run(spec).ok());
  DockerFleetOptions options;
  options.engine.endpoint = (*daemon)->endpoint();
  options.allow_actions = true;
  options.stop_grace = absl::Seconds(8);
  options.action_deadline = absl::Seconds(20);
  auto fleet = DockerFleet::Open(options);
  REQUIRE(fleet.ok());
  std::thread killer([&] {
    absl::SleepFor(absl::Milliseconds(1500));  // the stop is under way (8 s grace)
    (*daemon)->KillDaemon();
  });
  const core::DispatchRequest request = Request("app-container:stubborn", "stop", "act_mid");
  auto receipt = (*fleet)->Dispatch(request);
  killer.join();
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kInconclusive);
  CHECK_FALSE(receipt->reason_code.empty());
  // Asking again returns the recorded outcome; nothing is sent to a daemon again.
  auto again = (*fleet)->Dispatch(request);
  REQUIRE(again.ok());
  CHECK(again->status == core::ExecutionStatus::kInconclusive);
  CHECK(again->reason_code == receipt->reason_code);
}

}  // namespace
}  // namespace pulse::docker::testing
