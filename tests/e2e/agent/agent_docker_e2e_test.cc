// pulse-agent with the host's Docker daemon, end to end (label docker): a real pulse-server, a
// real pulse-agent whose --docker-endpoint is the private dockerd (tests/adapters/docker), and an
// operator's restart of a container through the lifecycle: planned on the server's catalogue
// for the agent's containers, run once by the agent, confirmed from a fresh report, and the
// container's StartedAt moved.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "child_process.h"
#include "docker_test_support.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

TEST_CASE("an operator restarts a container of an agent host through the lifecycle",
          "[e2e][agent][docker]") {
  PULSE_NEED_DOCKERD(dockerd);
  const std::string name = "pulse-e2e-agent-web";
  dockerd->Remove(name).IgnoreError();
  absl::StatusOr<std::string> container =
      dockerd->Run(docker::testing::Command({"sh", "-c", "sleep 3600"}, name));
  REQUIRE(container.ok());
  const absl::StatusOr<docker::ContainerDetails> before = dockerd->client().Inspect(*container);
  REQUIRE(before.ok());

  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources":[{"name":"agents","kind":"agents","allow_actions":true,)"
                          R"("action_allowlist":[")"
                       << name << R"("]}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  const std::string token = MintToken(dir.path(), "agent:report,agent:exec", "dock1", "agent");
  std::ofstream(dir.File("token")) << token << "\n";
  ::chmod(dir.File("token").c_str(), 0600);
  std::ofstream(dir.File("allow.json"))
      << R"({"capabilities":["restart","start","stop"],"docker":true})";
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet, "--patrol-interval", "0"}});
  const int port = server.port();

  ChildProcessOptions options;
  options.argv = {PULSE_AGENT_BINARY, "--server", absl::StrCat("http://127.0.0.1:", port),
                  "--token-file", dir.File("token"), "--state-dir", dir.File("state"),
                  "--hostname", "dock1", "--allowlist", dir.File("allow.json"), "--interval",
                  "1s", "--docker-endpoint", dockerd->endpoint()};
  options.log_path = dir.File("agent.log");
  absl::StatusOr<std::unique_ptr<ChildProcess>> agent = ChildProcess::Start(options);
  REQUIRE(agent.ok());

  const std::string id = "app-container:dock1/" + name;
  const std::string path = "/api/agent/resource-capabilities/app-container:dock1%2F" + name;
  bool offered = false;
  for (int i = 0; i < 200 && !offered; ++i) {
    const Reply caps = Send(port, "GET", path, reader);
    offered = caps.status == 200 && caps.body.find(R"("restart")") != std::string::npos;
    if (!offered) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  INFO((*agent)->LogTail());
  REQUIRE(offered);

  const Reply planned =
      Send(port, "POST", "/api/actions/plan", alice,
           absl::StrCat(R"({"requestId":"e2e-agent-docker","resourceId":")", id,
                        R"(","capabilityName":"restart","params":{},"reason":"agent docker",)"
                        R"("requestedBy":"e2e"})"));
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const std::string action = Str(Json(planned.body), "actionId");
  REQUIRE(Send(port, "POST", "/api/actions/" + action + "/decision", bob,
               R"({"outcome":"approved","reason":"agent docker"})")
              .status == 200);
  const Reply executed = Send(port, "POST", "/api/actions/" + action + "/execute", bob, "{}");
  INFO(executed.body);
  const Reply detail = Send(port, "GET", "/api/actions/" + action, bob);
  INFO(detail.body);
  const rapidjson::Document body = Json(detail.body);
  CHECK(Str(body["audit"], "state") == "completed");
  CHECK(Str(body["audit"]["result"]["verification"], "status") == "confirmed");
  CHECK(Str(body["audit"]["result"]["verification"], "evidenceClass") == "agent_attested");
  const absl::StatusOr<docker::ContainerDetails> after = dockerd->client().Inspect(*container);
  REQUIRE(after.ok());
  REQUIRE(before->started_at.has_value());
  REQUIRE(after->started_at.has_value());
  CHECK(*after->started_at > *before->started_at);

  CHECK((*agent)->Stop(absl::Seconds(10)) == "exited 0");
  CHECK(server.Stop() == "exited 0");
  CHECK(dockerd->Remove(*container).ok());
}

}  // namespace
}  // namespace pulse::testing::e2e
