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
  for (const std::string& endpoint :
       std::vector<std::string>{"tcp://10.0.0.1:2375",
                                "tcp://",
                                "tcp://host",
                                "tcp://host:",
                                "tcp://host:0",
                                "tcp://host:65536",
                                "tcp://host:02376",
                                "tcp://host:+2376",
                                "tcp://user@host:2376",
                                "tcp://host:2376/path",
                                "tcp://host:2376?x=1",
                                "tcp://-host:2376",
                                "tcp://ho st:2376",
                                "tcp://host..example:2376",
                                "tcp://[zz::1]:2376",
                                "tcp://[]:2376",
                                "tcp://::1:2376",
                                "tcp://" + std::string(300, 'a') + ":2376",
                                "TCP://host:2376",
                                "http://localhost/",
                                "unix://",
                                "unix://relative/docker.sock",
                                "unix:///",
                                "unix:///var/run/../../etc/shadow",
                                "unix:///var/run/docker.sock/..",
                                "unix:///var/run/docker sock",
                                "unix:///var/run/docker.sock\\t",
                                "npipe:////./pipe/docker",
                                "unix:///" + std::string(120, 'a'),
                                "unix:///var/run/\\u0001.sock"}) {
    INFO(endpoint);
    CHECK(Refusal(R"({"name": "d", "kind": "docker", "endpoint": ")" + endpoint + R"("})")
              .find("endpoint") != std::string::npos);
  }
}

TEST_CASE("a docker source reaches exec and TLS settings and a tcp endpoint", "[docker][source]") {
  absl::StatusOr<DockerFleetOptions> plain =
      ParseDockerSource(R"({"name": "docker1", "kind": "docker"})");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->allow_exec);
  CHECK(plain->exec_deadline == absl::Seconds(30));
  CHECK(plain->engine.tls_ca_file.empty());
  CHECK_FALSE(plain->engine.allow_plain_tcp);

  absl::StatusOr<DockerFleetOptions> tls = ParseDockerSource(
      R"({"name": "d", "kind": "docker", "endpoint": "tcp://docker-1.lab.example:2376",
          "allow_exec": true, "exec_deadline_seconds": 5, "tls_ca_file": "/etc/pulse/ca.pem",
          "tls_cert_file": "/etc/pulse/cert.pem", "tls_key_file": "/etc/pulse/key.pem"})");
  REQUIRE(tls.ok());
  CHECK(tls->engine.endpoint == "tcp://docker-1.lab.example:2376");
  CHECK(tls->allow_exec);
  CHECK(tls->exec_deadline == absl::Seconds(5));
  CHECK(tls->engine.tls_ca_file == "/etc/pulse/ca.pem");
  CHECK(tls->engine.tls_cert_file == "/etc/pulse/cert.pem");
  CHECK(tls->engine.tls_key_file == "/etc/pulse/key.pem");
  CHECK_FALSE(tls->engine.allow_plain_tcp);

  // The daemon's certificate checked against a CA alone (no client certificate) is allowed.
  CHECK(ParseDockerSource(R"({"name": "d", "kind": "docker", "endpoint": "tcp://10.0.0.1:2376",
                              "tls_ca_file": "/ca.pem"})")
            .ok());
  for (const char* endpoint : {"tcp://127.0.0.1:2375", "tcp://[::1]:2375", "tcp://h:65535"}) {
    INFO(endpoint);
    absl::StatusOr<DockerFleetOptions> open = ParseDockerSource(
        std::string(R"({"name": "d", "kind": "docker", "allow_plain_tcp": true, "endpoint": ")") +
        endpoint + R"("})");
    REQUIRE(open.ok());
    CHECK(open->engine.allow_plain_tcp);
    CHECK(open->engine.endpoint == endpoint);
  }
}

TEST_CASE("hostile exec and TLS settings are refused naming the setting", "[docker][source]") {
  const std::string tcp = R"("name": "d", "kind": "docker", "endpoint": "tcp://h:2376", )";
  const auto refused = [&](const std::string& members) {
    return Refusal("{" + tcp + members + "}");
  };
  CHECK(refused(R"("allow_plain_tcp": true, "allow_exec": "yes")").find("allow_exec") !=
        std::string::npos);
  CHECK(refused(R"("allow_plain_tcp": true, "exec_deadline_seconds": 0)")
            .find("exec_deadline_seconds") != std::string::npos);
  CHECK(refused(R"("allow_plain_tcp": true, "exec_deadline_seconds": 301)")
            .find("exec_deadline_seconds") != std::string::npos);
  CHECK(refused(R"("allow_plain_tcp": "true")").find("allow_plain_tcp") != std::string::npos);
  for (const std::string& path :
       {std::string("ca.pem"), std::string(""), std::string("/etc/pulse/ca pem"),
        std::string("/etc/pulse/"), "/" + std::string(5000, 'a')}) {
    INFO(path);
    CHECK(refused(R"("tls_cert_file": "/c.pem", "tls_key_file": "/k.pem", "tls_ca_file": ")" +
                  path + R"(")")
              .find("tls_ca_file") != std::string::npos);
  }
  // A control character: an escaped one reaches the path check, a raw one breaks the JSON.
  CHECK(refused(R"("tls_ca_file": "/etc/\u0007ca.pem")").find("tls_ca_file") != std::string::npos);
  CHECK_FALSE(ParseDockerSource("{" + tcp + "\"tls_ca_file\": \"/etc/\u0007ca.pem\"}").ok());
  CHECK(refused(R"("tls_ca_file": 7)").find("tls_ca_file") != std::string::npos);
  // A client certificate without its key, or the reverse.
  CHECK(refused(R"("tls_cert_file": "/c.pem")").find("tls_key_file") != std::string::npos);
  CHECK(refused(R"("tls_key_file": "/k.pem")").find("tls_cert_file") != std::string::npos);
  // Plain TCP only when the operator says so, and not mixed with TLS.
  CHECK(refused(R"("allow_exec": false)").find("allow_plain_tcp") != std::string::npos);
  CHECK(refused(R"("allow_plain_tcp": false)").find("allow_plain_tcp") != std::string::npos);
  CHECK(refused(R"("allow_plain_tcp": true, "tls_ca_file": "/ca.pem")").find("allow_plain_tcp") !=
        std::string::npos);
  // TLS settings mean nothing on a unix socket.
  CHECK(
      Refusal(R"({"name": "d", "kind": "docker", "tls_ca_file": "/ca.pem"})").find("unix socket") !=
      std::string::npos);
  CHECK(Refusal(R"({"name": "d", "kind": "docker", "allow_plain_tcp": true})")
            .find("allow_plain_tcp") != std::string::npos);
}

}  // namespace
}  // namespace pulse::docker
