// pulse-agent as a process against the real private dockerd (label docker): --once reports a
// running container as app-container:<host>/<name> under the engine, beside the host's own
// resources.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "docker_test_support.h"
#include "fake_agent_server.h"
#include "pulse_agent_process.h"

namespace pulse::adapters::hostagent {
namespace {

using testing::Agent;
using testing::FakeAgentServer;
using testing::Work;

TEST_CASE("pulse-agent --once reports the local Docker daemon's containers",
          "[apps][agent][docker]") {
  PULSE_NEED_DOCKERD(dockerd);
  const std::string name = "pulse-agent-app-web";
  dockerd->Remove(name).IgnoreError();
  absl::StatusOr<std::string> id =
      dockerd->Run(docker::testing::Command({"sh", "-c", "sleep 3600"}, name));
  REQUIRE(id.ok());
  FakeAgentServer server;
  Work work(server.Token());
  std::vector<std::string> args = work.Args(server.url());
  args.insert(args.end(), {"--once", "--docker-endpoint", dockerd->endpoint()});
  Agent agent(work.dir, args, {work.Hook()});
  REQUIRE(agent.Wait(absl::Seconds(60)) == 0);
  const std::vector<Report> reports = server.reports();
  REQUIRE(reports.size() == 1);
  const Report& report = reports[0];
  const auto found = std::find_if(
      report.resources.begin(), report.resources.end(),
      [&](const core::FleetResource& r) { return r.id == "app-container:web1/" + name; });
  REQUIRE(found != report.resources.end());
  CHECK(found->status == "running");
  CHECK(found->attributes.at("container_id") == *id);
  CHECK(found->parent_id.rfind("docker-engine:web1/", 0) == 0);
  CHECK(std::any_of(report.resources.begin(), report.resources.end(),
                    [](const core::FleetResource& r) { return r.id == "service:web1/nginx"; }));
  CHECK(std::any_of(report.relationships.begin(), report.relationships.end(),
                    [&](const core::FleetRelationship& e) {
                      return e.from_id == found->parent_id && e.to_id == "node:web1" &&
                             e.kind == "runs_on";
                    }));
  CHECK(dockerd->Remove(*id).ok());
}

}  // namespace
}  // namespace pulse::adapters::hostagent
