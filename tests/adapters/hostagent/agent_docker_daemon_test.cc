// Local containers in the agent against a real private dockerd (label docker): a container
// appears in the agent's report as app-container:<host>/<name>, and a restart through the
// executor runs once (StartedAt moves, a repeat is answered from the state file) with
// "docker": true, and is refused agent_allowlist with "docker": false.
#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent_test_support.h"
#include "docker_test_support.h"
#include "pulse/adapters/hostagent/agent_docker.h"
#include "pulse/adapters/hostagent/agent_report.h"

namespace pulse::adapters::hostagent {
namespace {

using testing::AgentRig;

// The container's StartedAt as the daemon tells it (not through the agent).
std::string StartedAt(const docker::EngineClient& client, const std::string& id) {
  absl::StatusOr<docker::ContainerDetails> details = client.Inspect(id);
  REQUIRE(details.ok());
  REQUIRE(details->started_at.has_value());
  return absl::FormatTime(absl::RFC3339_full, *details->started_at, absl::UTCTimeZone());
}

TEST_CASE("a local container is reported in the host's namespace and restarted once",
          "[adapters][hostagent][docker][daemon]") {
  PULSE_NEED_DOCKERD(dockerd);
  const std::string name = "pulse-agent-web";
  dockerd->Remove(name).IgnoreError();
  absl::StatusOr<std::string> id =
      dockerd->Run(docker::testing::Command({"sh", "-c", "sleep 3600"}, name));
  REQUIRE(id.ok());

  // "docker": false: reported, never acted on.
  AgentRig watching;
  watching.UseDocker(dockerd->endpoint());
  ReportContext context;
  context.agent_version = "test";
  context.now = watching.clock.Now();
  absl::StatusOr<Report> report = BuildHostReport(*watching.fleet, *watching.executor, context);
  REQUIRE(report.ok());
  absl::StatusOr<Report> decoded = DecodeReport(EncodeReport(*report));
  REQUIRE(decoded.ok());
  const std::string resource = "app-container:web1/" + name;
  const core::FleetResource* web = nullptr;
  for (const core::FleetResource& r : decoded->resources) {
    if (r.id == resource) {
      web = &r;
    }
  }
  REQUIRE(web != nullptr);
  CHECK(web->status == "running");
  CHECK(web->attributes.at("container_id") == *id);
  CHECK(absl::StartsWith(web->parent_id, "docker-engine:web1/"));
  const std::string before = StartedAt(dockerd->client(), *id);
  const Result refused = watching.executor->Execute(
      watching.Dispatch("cmd_00000000000000e1", "act_e1", resource, "restart"));
  CHECK(refused.status == core::ExecutionStatus::kNotRun);
  CHECK(refused.reason_code == "agent_allowlist");
  CHECK(StartedAt(dockerd->client(), *id) == before);
  CHECK(watching.state->size() == 0);

  // "docker": true: the restart runs once; the same attempt again is the stored answer.
  AgentRig acting(R"({"capabilities": ["restart"], "services": [], "docker": true})");
  acting.UseDocker(dockerd->endpoint());
  const Command restart = acting.Dispatch("cmd_00000000000000e2", "act_e2", resource, "restart");
  const Result first = acting.executor->Execute(restart);
  INFO(first.reason_code << ": " << first.summary);
  CHECK(first.status == core::ExecutionStatus::kSucceeded);
  CHECK_FALSE(first.replayed);
  const std::string after = StartedAt(dockerd->client(), *id);
  CHECK(after > before);
  acting.Restart();  // the agent process restarted: the state file remembers the attempt
  Command again = restart;
  again.command_id = "cmd_00000000000000e3";
  const Result replay = acting.executor->Execute(again);
  CHECK(replay.replayed);
  CHECK(replay.status == core::ExecutionStatus::kSucceeded);
  CHECK(StartedAt(dockerd->client(), *id) == after);

  // Read-only exec inside the container, classifier-checked.
  const Result exec =
      acting.executor->Execute(acting.Exec("cmd_00000000000000e4", resource, "uname -s"));
  CHECK(exec.status == core::ExecutionStatus::kSucceeded);
  REQUIRE(exec.exec.has_value());
  CHECK(exec.exec->exit_code == 0);
  CHECK(absl::StartsWith(exec.exec->output, "Linux"));
  CHECK(dockerd->Remove(*id).ok());
}

}  // namespace
}  // namespace pulse::adapters::hostagent
