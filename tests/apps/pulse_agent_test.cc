// pulse-agent as a process: its usage errors (exit 2), --once against a loopback server that
// speaks the protocol, the stand-in systemctl test hook, a graceful SIGTERM while connected,
// a refused token (exit 1) and a corrupt state file (refused, left as it was).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "fake_agent_server.h"
#include "pulse_agent_process.h"

namespace pulse::adapters::hostagent {
namespace {

using testing::Agent;
using testing::FakeAgentServer;
using testing::ReadFile;
using testing::Work;
using testing::WriteFile;

TEST_CASE("pulse-agent --help shows the flags and a walkthrough example", "[apps][agent]") {
  pulse::testing::TempDir dir("pulse-agent-app");
  Agent help(dir, {"--help"});
  REQUIRE(help.Wait() == 0);
  for (const char* text :
       {"--server", "--token-file", "--state-dir", "--hostname", "--allowlist", "--interval",
        "--once", "--ca-file", "--pin-sha256", "--log-level", "--docker-endpoint", "Example",
        "--kind agent", "mode 600", "umask 077"}) {
    INFO(text);
    CHECK(help.out().find(text) != std::string::npos);
  }
  Agent version(dir, {"--version"});
  REQUIRE(version.Wait() == 0);
  CHECK(version.out().rfind("pulse-agent ", 0) == 0);
  Agent missing(dir, {"--server", "http://127.0.0.1:1"});
  CHECK(missing.Wait() == 2);
  CHECK(missing.err().find("--token-file") != std::string::npos);
}

TEST_CASE("pulse-agent refuses a usage error with exit status 2 and says why", "[apps][agent]") {
  Work work("pulse_token");
  const std::string server = "http://127.0.0.1:1";
  SECTION("a token file open to group or others") {
    REQUIRE(chmod(work.token_file.c_str(), 0640) == 0);
    Agent agent(work.dir, work.Args(server));
    CHECK(agent.Wait() == 2);
    CHECK(agent.err().find(work.token_file) != std::string::npos);
    CHECK(agent.err().find("chmod 600") != std::string::npos);
  }
  SECTION("an allow.json with an unknown member") {
    WriteFile(work.allow, R"({"capabilities": ["restart"], "servces": ["nginx"]})");
    Agent agent(work.dir, work.Args(server));
    CHECK(agent.Wait() == 2);
    CHECK(agent.err().find("allowlist_invalid") != std::string::npos);
    CHECK(agent.err().find("servces") != std::string::npos);
  }
  SECTION("a bad host name, interval or server URL") {
    for (const auto& [flag, value] :
         std::vector<std::pair<std::string, std::string>>{{"--hostname", "-web"},
                                                          {"--interval", "0s"},
                                                          {"--interval", "2h"},
                                                          {"--server", "ftp://x"},
                                                          {"--log-level", "loud"}}) {
      INFO(flag << " " << value);
      std::vector<std::string> args = work.Args(server);
      args.insert(args.end(), {flag, value});
      Agent agent(work.dir, args);
      CHECK(agent.Wait() == 2);
    }
  }
  SECTION("a --docker-endpoint that is not unix:///path or none") {
    for (const char* endpoint : {"tcp://127.0.0.1:2375", "unix://docker.sock", "docker.sock"}) {
      INFO(endpoint);
      std::vector<std::string> args = work.Args(server);
      args.insert(args.end(), {"--docker-endpoint", endpoint});
      Agent agent(work.dir, args);
      CHECK(agent.Wait() == 2);
      CHECK(agent.err().find("docker_endpoint_invalid") != std::string::npos);
    }
  }
  CHECK_FALSE(std::filesystem::exists(work.dir.File("state/state.json")));
}

TEST_CASE("pulse-agent reports the host when no Docker daemon answers", "[apps][agent]") {
  FakeAgentServer server;
  Work work(server.Token());
  for (const std::string& endpoint :
       {"unix://" + work.dir.File("no-docker.sock"), std::string("none")}) {
    INFO(endpoint);
    std::vector<std::string> args = work.Args(server.url());
    args.insert(args.end(), {"--once", "--docker-endpoint", endpoint});
    Agent agent(work.dir, args, {work.Hook()});
    REQUIRE(agent.Wait() == 0);
  }
  const std::vector<Report> reports = server.reports();
  REQUIRE(reports.size() == 2);
  for (const Report& report : reports) {
    CHECK(std::any_of(report.resources.begin(), report.resources.end(),
                      [](const core::FleetResource& r) { return r.id == "node:web1"; }));
    CHECK(std::none_of(report.resources.begin(), report.resources.end(),
                       [](const core::FleetResource& r) { return r.type == "app-container"; }));
  }
}

TEST_CASE("pulse-agent --once reports the host through the stand-in systemctl", "[apps][agent]") {
  FakeAgentServer server;
  Work work(server.Token());
  std::vector<std::string> args = work.Args(server.url());
  args.push_back("--once");
  Agent agent(work.dir, args, {work.Hook()});
  REQUIRE(agent.Wait() == 0);
  CHECK(agent.err().find("PULSE_AGENT_TEST_SYSTEMCTL") != std::string::npos);  // logged
  const std::vector<Report> reports = server.reports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].host == "web1");
  CHECK(std::any_of(reports[0].resources.begin(), reports[0].resources.end(),
                    [](const core::FleetResource& r) { return r.id == "service:web1/nginx"; }));
  REQUIRE(reports[0].capabilities.size() == 1);
  CHECK(reports[0].capabilities[0].names == std::vector<std::string>{"restart"});
}

TEST_CASE("pulse-agent restarts an allowlisted unit once and stops gracefully on SIGTERM",
          "[apps][agent]") {
  FakeAgentServer server;
  Work work(server.Token());
  Agent agent(work.dir, work.Args(server.url()), {work.Hook()});
  REQUIRE(server.WaitForStreams(1, absl::Seconds(15)));
  Command restart;
  restart.command_id = "cmd_0000000000000a01";
  restart.kind = CommandKind::kDispatch;
  restart.issued_at = absl::Now();
  restart.deadline = absl::Now() + absl::Seconds(60);
  restart.action_id = "act_app";
  restart.attempt_id = "act_app.dispatch.1";
  restart.plan_hash = "sha256:x";
  restart.resource_id = "service:web1/nginx";
  restart.capability = "restart";
  REQUIRE(server.Push("command", EncodeCommand(restart)));
  REQUIRE(server.WaitForResults(1, absl::Seconds(15)));
  CHECK(server.results()[0].status == core::ExecutionStatus::kSucceeded);
  // Reports keep coming at the interval.
  REQUIRE(server.WaitForReports(2, absl::Seconds(10)));
  agent.Signal(SIGTERM);
  CHECK(agent.Wait() == 0);

  // A restarted agent (same state directory) answers the same attempt from its state file.
  Agent again(work.dir, work.Args(server.url()), {work.Hook()});
  REQUIRE(server.WaitForStreams(2, absl::Seconds(15)));
  restart.command_id = "cmd_0000000000000a02";
  REQUIRE(server.Push("command", EncodeCommand(restart)));
  REQUIRE(server.WaitForResults(2, absl::Seconds(15)));
  CHECK(server.results()[1].replayed);
  CHECK(ReadFile(work.dir.File("bin/units/nginx.service.restarts")) == "restart\n");
  again.Signal(SIGINT);
  CHECK(again.Wait() == 0);
}

TEST_CASE("pulse-agent exits 1 on a refused token and on a corrupt state file", "[apps][agent]") {
  FakeAgentServer server;
  Work work("pulse_not-a-real-token");
  Agent refused(work.dir, work.Args(server.url()), {work.Hook()});
  CHECK(refused.Wait(absl::Seconds(10)) == 1);
  CHECK(refused.err().find("401") != std::string::npos);

  std::filesystem::create_directories(work.dir.File("state"));
  WriteFile(work.dir.File("state/state.json"), "{\"version\":1,\"attempts\":[{]}");
  Agent corrupt(work.dir, work.Args(server.url()), {work.Hook()});
  CHECK(corrupt.Wait() == 1);
  CHECK(corrupt.err().find("state_corrupt") != std::string::npos);
  CHECK(ReadFile(work.dir.File("state/state.json")) == "{\"version\":1,\"attempts\":[{]}");
}

}  // namespace
}  // namespace pulse::adapters::hostagent
