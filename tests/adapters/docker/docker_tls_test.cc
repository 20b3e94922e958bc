// tcp:// with TLS client certificates against a real private dockerd listening on loopback TCP
// with --tlsverify (docs/docker.md, "Endpoints and versions"). The test makes its own CA, a
// server certificate for 127.0.0.1 and two client certificates (one the CA signed, one not):
// docker_pki.h.
#include <catch2/catch.hpp>
#include <string>

#include "docker_pki.h"
#include "docker_test_support.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/adapters/docker/docker_source.h"

namespace pulse::docker::testing {
namespace {

TEST_CASE("a tcp endpoint with TLS client certificates reaches a --tlsverify daemon",
          "[docker][tls]") {
  PULSE_NEED_DOCKERD(shared);  // only to skip where no daemon can start at all
  const Pki pki;
  const int port = FreeLoopbackPort();
  auto daemon = PrivateDockerd::Start(
      {"--tlsverify", "--tlscacert=" + pki.Path("ca.pem"), "--tlscert=" + pki.Path("server.pem"),
       "--tlskey=" + pki.Path("server.key"), "--host=tcp://127.0.0.1:" + std::to_string(port)});
  REQUIRE(daemon.ok());
  EngineOptions tls;
  tls.endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  tls.tls_ca_file = pki.Path("ca.pem");
  tls.tls_cert_file = pki.Path("client.pem");
  tls.tls_key_file = pki.Path("client.key");
  tls.connect_timeout = absl::Seconds(5);
  auto client = EngineClient::Connect(tls);
  REQUIRE(client.ok());
  CHECK((*client)->Ping().ok());
  CHECK((*client)->ListContainers(true).ok());
  DockerFleetOptions fleet_options;
  fleet_options.engine = tls;
  auto fleet = DockerFleet::Open(fleet_options);
  REQUIRE(fleet.ok());
  CHECK((*fleet)->GetResource((*fleet)->node_id()).ok());

  // The same daemon through a source's settings, as a pulse.json or --fleet file writes them
  // (docs/fleet.md, "docker"; the server opens a source this way: fleet_opening.cc).
  const std::string source = R"({"name": "remote", "kind": "docker", "endpoint": ")" +
                             tls.endpoint + R"(", "tls_ca_file": ")" + pki.Path("ca.pem") +
                             R"(", "tls_cert_file": ")" + pki.Path("client.pem") +
                             R"(", "tls_key_file": ")" + pki.Path("client.key") +
                             R"(", "sample_interval_seconds": 0, "allow_exec": true})";
  absl::StatusOr<DockerFleetOptions> configured = ParseDockerSource(source);
  REQUIRE(configured.ok());
  auto configured_fleet = DockerFleet::Open(*configured);
  REQUIRE(configured_fleet.ok());
  CHECK((*configured_fleet)->GetResource((*configured_fleet)->node_id()).ok());
  // A certificate file that is not there is refused when the source opens, naming the setting.
  absl::StatusOr<DockerFleetOptions> missing = ParseDockerSource(
      R"({"name": "remote", "kind": "docker", "endpoint": ")" + tls.endpoint +
      R"(", "tls_ca_file": ")" + pki.Path("ca.pem") +
      R"(", "tls_cert_file": "/nonexistent/pulse/client.pem", "tls_key_file": ")" +
      pki.Path("client.key") + R"("})");
  REQUIRE(missing.ok());
  const absl::Status absent = DockerFleet::Open(*missing).status();
  CHECK(absent.message().find("tls_cert_file /nonexistent/pulse/client.pem does not exist") !=
        absl::string_view::npos);

  // Without a client certificate, or with one the daemon's CA did not sign: refused.
  EngineOptions no_cert = tls;
  no_cert.tls_cert_file.clear();
  no_cert.tls_key_file.clear();
  CHECK_FALSE(EngineClient::Connect(no_cert).ok());
  EngineOptions stranger = tls;
  stranger.tls_cert_file = pki.Path("stranger.pem");
  stranger.tls_key_file = pki.Path("stranger.key");
  CHECK_FALSE(EngineClient::Connect(stranger).ok());
  // A daemon certificate the configured CA did not sign is not trusted.
  EngineOptions wrong_ca = tls;
  wrong_ca.tls_ca_file = pki.Path("stranger.pem");
  const absl::Status untrusted = EngineClient::Connect(wrong_ca).status();
  CHECK(EngineErrorKindOf(untrusted) == EngineErrorKind::kUnreachable);
  CHECK(untrusted.message().find("not trusted") != absl::string_view::npos);
  // Plain TCP to it: refused by Pulse unless allowed, then by the daemon's TLS.
  EngineOptions plain;
  plain.endpoint = tls.endpoint;
  CHECK(EngineErrorKindOf(EngineClient::Connect(plain).status()) ==
        EngineErrorKind::kInvalidArgument);
  plain.allow_plain_tcp = true;
  CHECK_FALSE(EngineClient::Connect(plain).ok());
}

}  // namespace
}  // namespace pulse::docker::testing
