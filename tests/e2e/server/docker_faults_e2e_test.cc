// Docker faults through pulse-server (docs/docker.md, docs/fleet.md), against real private
// dockerds (tests/adapters/docker/private_dockerd.h): a daemon killed while a governed stop is
// under way leaves the action failed with an inconclusive execution that is never dispatched
// again, and a docker socket the server's user may not open stops start-up with a message
// naming the fix.
#include <sys/types.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "docker_test_support.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

using docker::testing::PrivateDockerd;
using docker::testing::RunSpec;

TEST_CASE("a daemon killed during a governed stop leaves the action inconclusive, not retried",
          "[e2e][server][fleet][docker][faults]") {
  PULSE_NEED_DOCKERD(shared);  // skips alike where no daemon can start
  // A daemon of its own: this test kills it.
  absl::StatusOr<std::unique_ptr<PrivateDockerd>> daemon = PrivateDockerd::Start();
  REQUIRE(daemon.ok());
  RunSpec stubborn;
  stubborn.name = "e2e-stubborn";
  stubborn.cmd = {"sleep", "600"};  // ignores SIGTERM as PID 1: the stop waits out its grace
  REQUIRE((*daemon)->Run(stubborn).ok());

  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << (*daemon)->endpoint()
                       << R"(", "allow_actions": true, "stop_grace_seconds": 8,)"
                       << R"( "action_deadline_seconds": 20}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet, "--patrol-interval", "0"}});
  const int port = server.port();

  const Reply planned = Send(
      port, "POST", "/api/actions/plan", alice,
      R"({"requestId":"e2e-docker-kill","resourceId":"app-container:e2e-stubborn",)"
      R"("capabilityName":"stop","params":{},"reason":"docker fault","requestedBy":"x"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const std::string id = Str(Json(planned.body), "actionId");
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", bob,
                              R"({"outcome":"approved","reason":"docker fault"})");
  INFO(approved.body);
  REQUIRE(approved.status == 200);

  // The stop waits out its 8 s grace; the daemon dies 1.5 s into it.
  std::thread killer([&] {
    absl::SleepFor(absl::Milliseconds(1500));
    (*daemon)->KillDaemon();
  });
  const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
  killer.join();
  INFO(executed.body);
  const Reply detail = Send(port, "GET", "/api/actions/" + id, bob);
  INFO(detail.body);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  // The outcome is unknown: the action failed with an inconclusive execution, not succeeded,
  // and nothing claims the container stopped.
  CHECK(Str(body["audit"], "state") == "failed");
  REQUIRE(body["audit"].HasMember("result"));
  const rapidjson::Value& result = body["audit"]["result"];
  CHECK(Str(result["execution"], "status") == "inconclusive");
  CHECK_FALSE(Str(result["execution"], "reasonCode").empty());
  CHECK(Str(result["verification"], "status") != "confirmed");
  const std::size_t events_before = body["events"].GetArray().Size();

  // Executing again replays the recorded outcome: an inconclusive dispatch is never sent a
  // second time.
  const Reply again = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
  INFO(again.body);
  REQUIRE(again.status == 200);
  const rapidjson::Document replay = Json(again.body);
  CHECK(replay["replayed"].GetBool());
  CHECK_FALSE(replay["dispatched"].GetBool());
  CHECK(again.body.find(R"("execution":{"status":"inconclusive")") != std::string::npos);
  const Reply after = Send(port, "GET", "/api/actions/" + id, bob);
  REQUIRE(after.status == 200);
  const rapidjson::Document after_body = Json(after.body);
  CHECK(Str(after_body["audit"], "state") == "failed");
  CHECK(after_body["events"].GetArray().Size() == events_before);

  // The source is down now; its container stays in the fleet, unknown.
  const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  CHECK(context.body.find(R"("state":"down")") != std::string::npos);
  CHECK(context.body.find("app-container:e2e-stubborn") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a docker socket pulse-server may not open stops start-up naming the fix",
          "[e2e][server][fleet][docker][faults]") {
  PULSE_NEED_DOCKERD(daemon);
  if (::geteuid() != 0) {
    // Only root can run the server as another user here; CI runs the docker tests as root.
    WARN("skipped: needs root to run pulse-server as user nobody");
    return;
  }
  // The daemon's socket sits in a directory of mode 0700 owned by root: user nobody cannot
  // reach it. The data dir and the fleet file belong to nobody.
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint() << R"("}]})";
  REQUIRE(::chown(dir.path().c_str(), 65534, 65534) == 0);
  REQUIRE(::chown(fleet.c_str(), 65534, 65534) == 0);
  const Captured run =
      RunCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                  ServerBinary(), "--data-dir", dir.path(), "--listen", "127.0.0.1:0", "--fleet",
                  fleet, "--patrol-interval", "0"});
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("cannot start: --fleet " + fleet + ": fleet source \"docker1\" (docker): ") !=
        std::string::npos);
  CHECK(run.err.find("permission denied on the Docker socket " + daemon->socket_path()) !=
        std::string::npos);
  CHECK(run.err.find("usermod -aG docker USER") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
