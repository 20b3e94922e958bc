// pulse-server over a --fleet file holding a docker source, against a real private dockerd
// (tests/adapters/docker/private_dockerd.h): fleet-context lists the containers, a container
// that exits 1 under --restart on-failure reads exited with its restarts counted, and an
// operator plans, approves and executes `restart` on a healthy container, the observer
// confirming it by a new StartedAt. (Patrol's crash-loop finding for Docker is not asserted
// here: that triage rule is not in this tree yet.)
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "docker_test_support.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

using docker::testing::Command;
using docker::testing::RunSpec;

std::string Attribute(int port, const std::string& token, const std::string& escaped_id,
                      const std::string& name) {
  const Reply reply =
      Send(port, "GET", "/api/agent/resource-context/" + escaped_id, token);
  REQUIRE(reply.status == 200);
  const rapidjson::Document doc = Json(reply.body);
  for (const rapidjson::Value& section : doc["contextSections"].GetArray()) {
    if (section.HasMember("facts") && section["facts"].HasMember(name.c_str())) {
      return Str(section["facts"], name.c_str());
    }
  }
  return "";
}

TEST_CASE("pulse-server governs a restart on a docker source and the observer sees it",
          "[e2e][server][fleet][docker]") {
  PULSE_NEED_DOCKERD(daemon);
  REQUIRE(daemon->Run(Command({"sleep", "600"}, "e2e-web")).ok());
  RunSpec crashy = Command({"sh", "-c", "exit 1"}, "e2e-crashy");
  crashy.restart_policy = "on-failure";
  crashy.max_retries = 2;
  REQUIRE(daemon->Run(crashy).ok());

  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint()
                       << R"(", "allow_actions": true, "stop_grace_seconds": 0}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet}});
  const int port = server.port();

  const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  CHECK(context.body.find("app-container:e2e-web") != std::string::npos);
  CHECK(context.body.find("app-container:e2e-crashy") != std::string::npos);
  CHECK(context.body.find(R"("name":"docker1")") != std::string::npos);

  // The crash-looping container ends exited with code 1 after its two restarts.
  std::string restarts;
  for (int i = 0; i < 150 && restarts != "2"; ++i) {
    restarts = Attribute(port, reader, "app-container%3Ae2e-crashy", "restart_count");
    if (restarts != "2") {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  CHECK(restarts == "2");
  CHECK(Attribute(port, reader, "app-container%3Ae2e-crashy", "exit_code") == "1");

  // Plan, approve (another human), execute; the observer's inspect confirms a new StartedAt.
  const std::string started_before =
      Attribute(port, reader, "app-container%3Ae2e-web", "started_at");
  REQUIRE_FALSE(started_before.empty());
  const Reply planned = Send(
      port, "POST", "/api/actions/plan", alice,
      R"({"requestId":"e2e-docker-1","resourceId":"app-container:e2e-web",)"
      R"("capabilityName":"restart","params":{},"reason":"docker e2e","requestedBy":"x"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const rapidjson::Document plan = Json(planned.body);
  REQUIRE(plan["requiresApproval"].GetBool());
  const std::string id = Str(plan, "actionId");
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", bob,
                              R"({"outcome":"approved","reason":"docker e2e"})");
  INFO(approved.body);
  REQUIRE(approved.status == 200);
  const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
  INFO(executed.body);
  REQUIRE(executed.status == 200);
  const Reply detail = Send(port, "GET", "/api/actions/" + id, bob);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  INFO(detail.body);
  CHECK(Str(body["audit"], "state") == "completed");
  const rapidjson::Value& result = body["audit"]["result"];
  CHECK(Str(result["execution"], "status") == "succeeded");
  CHECK(Str(result["verification"], "status") == "confirmed");
  CHECK(Str(result["verification"], "evidenceClass") == "independent");
  const std::string started_after =
      Attribute(port, reader, "app-container%3Ae2e-web", "started_at");
  CHECK(started_after > started_before);
  CHECK(server.Stop() == "exited 0");
  REQUIRE(daemon->Remove("e2e-web").ok());
  REQUIRE(daemon->Remove("e2e-crashy").ok());
}

}  // namespace
}  // namespace pulse::testing::e2e
