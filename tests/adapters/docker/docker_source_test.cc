// The settings of a fleet source of kind "docker" (docker_source.h): defaults, every setting,
// and hostile values refused naming the member.
#include "pulse/adapters/docker/docker_source.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pulse::docker {
namespace {

std::string Refusal(const std::string& json) {
  absl::StatusOr<DockerFleetOptions> options = ParseDockerSource(json);
  REQUIRE_FALSE(options.ok());
  CHECK(options.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(options.status().message());
}

TEST_CASE("a docker source takes its defaults and every documented setting", "[docker][source]") {
  absl::StatusOr<DockerFleetOptions> plain =
      ParseDockerSource(R"({"name": "docker1", "kind": "docker"})");
  REQUIRE(plain.ok());
  CHECK(plain->engine.endpoint == "unix:///var/run/docker.sock");
  CHECK_FALSE(plain->allow_actions);
  CHECK(plain->sample_interval == absl::Seconds(15));
  CHECK(plain->max_staleness == absl::Seconds(2));

  absl::StatusOr<DockerFleetOptions> all = ParseDockerSource(
      R"({"name": "d", "kind": "docker", "endpoint": "unix:///run/user/1000/docker.sock",
          "allow_actions": true, "sample_interval_seconds": 0, "max_staleness_ms": 500,
          "action_deadline_seconds": 30, "stop_grace_seconds": 0})");
  REQUIRE(all.ok());
  CHECK(all->engine.endpoint == "unix:///run/user/1000/docker.sock");
  CHECK(all->allow_actions);
  CHECK(all->sample_interval == absl::ZeroDuration());
  CHECK(all->max_staleness == absl::Milliseconds(500));
  CHECK(all->action_deadline == absl::Seconds(30));
  CHECK(all->stop_grace == absl::ZeroDuration());
}

TEST_CASE("hostile docker source settings are refused naming the setting", "[docker][source]") {
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "socket": "/x"})").find("socket") !=
        std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "allow_actions": 1})").find("allow_actions") !=
        std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "sample_interval_seconds": 3601})")
            .find("sample_interval_seconds") != std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "sample_interval_seconds": 1.5})")
            .find("sample_interval_seconds") != std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "max_staleness_ms": -1})")
            .find("max_staleness_ms") != std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "action_deadline_seconds": 0})")
            .find("action_deadline_seconds") != std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "endpoint": 5})").find("endpoint") !=
        std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "allow_actions": true, "allow_actions": false})")
            .find("allow_actions") != std::string::npos);
  CHECK_FALSE(ParseDockerSource("[1, 2]").ok());
  CHECK_FALSE(ParseDockerSource("{").ok());
  for (const std::string& endpoint : std::vector<std::string>{
           "tcp://10.0.0.1:2375", "http://localhost/", "unix://", "unix://relative/docker.sock",
           "unix:///", "unix:///var/run/../../etc/shadow", "unix:///var/run/docker.sock/..",
           "unix:///var/run/docker sock", "unix:///var/run/docker.sock\\t",
           "npipe:////./pipe/docker", "unix:///" + std::string(120, 'a'),
           "unix:///var/run/\\u0001.sock"}) {
    INFO(endpoint);
    CHECK(Refusal(R"({"name": "d", "kind": "docker", "endpoint": ")" + endpoint + R"("})")
              .find("endpoint") != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::docker
