// pulse-server over a docker source at a tcp:// endpoint with TLS client certificates, against
// a real private dockerd run with --tlsverify on a loopback port (docs/fleet.md, "docker";
// tests/adapters/docker/docker_pki.h makes the CA and the certificates): fleet-context lists
// the daemon's containers, a governed restart goes through the TLS connection and is confirmed
// by the observer, and a client certificate the daemon's CA did not sign stops start-up naming
// the source.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "docker_pki.h"
#include "docker_test_support.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

using docker::testing::Pki;
using docker::testing::PrivateDockerd;
using docker::testing::RunSpec;

std::string TlsSource(const std::string& endpoint, const Pki& pki, const char* cert,
                      const char* key) {
  return R"({"sources": [{"name": "remote", "kind": "docker", "endpoint": ")" + endpoint +
         R"(", "tls_ca_file": ")" + pki.Path("ca.pem") + R"(", "tls_cert_file": ")" +
         pki.Path(cert) + R"(", "tls_key_file": ")" + pki.Path(key) +
         R"(", "allow_actions": true, "stop_grace_seconds": 0}]})";
}

TEST_CASE("pulse-server governs a container of a tcp docker source with TLS client certificates",
          "[e2e][server][fleet][docker][tls]") {
  PULSE_NEED_DOCKERD(shared);  // only to skip where no daemon can start at all
  const Pki pki;
  const std::string endpoint =
      "tcp://127.0.0.1:" + std::to_string(docker::testing::FreeLoopbackPort());
  absl::StatusOr<std::unique_ptr<PrivateDockerd>> daemon = PrivateDockerd::Start(
      {"--tlsverify", "--tlscacert=" + pki.Path("ca.pem"), "--tlscert=" + pki.Path("server.pem"),
       "--tlskey=" + pki.Path("server.key"), "--host=" + endpoint});
  REQUIRE(daemon.ok());
  RunSpec web;
  web.name = "e2e-tls-web";
  web.cmd = {"sleep", "600"};
  REQUIRE((*daemon)->Run(web).ok());

  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << TlsSource(endpoint, pki, "client.pem", "client.key");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  {
    ServerProcess server(dir.path(),
                         ServerOptions{{"--fleet", fleet, "--patrol-interval", "0"}});
    const int port = server.port();
    const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
    INFO(context.body);
    REQUIRE(context.status == 200);
    CHECK(context.body.find("app-container:e2e-tls-web") != std::string::npos);
    CHECK(context.body.find(R"("name":"remote")") != std::string::npos);
    CHECK(context.body.find(R"("state":"up")") != std::string::npos);

    const auto before = (*daemon)->client().Inspect("e2e-tls-web");
    REQUIRE(before.ok());
    const Reply planned = Send(
        port, "POST", "/api/actions/plan", alice,
        R"({"requestId":"e2e-docker-tls","resourceId":"app-container:e2e-tls-web",)"
        R"("capabilityName":"restart","params":{},"reason":"docker tls","requestedBy":"x"})");
    INFO(planned.body);
    REQUIRE(planned.status == 200);
    const std::string id = Str(Json(planned.body), "actionId");
    const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", bob,
                                R"({"outcome":"approved","reason":"docker tls"})");
    REQUIRE(approved.status == 200);
    const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
    INFO(executed.body);
    REQUIRE(executed.status == 200);
    const Reply detail = Send(port, "GET", "/api/actions/" + id, bob);
    INFO(detail.body);
    REQUIRE(detail.status == 200);
    const rapidjson::Document body = Json(detail.body);
    CHECK(Str(body["audit"], "state") == "completed");
    CHECK(Str(body["audit"]["result"]["verification"], "status") == "confirmed");
    const auto after = (*daemon)->client().Inspect("e2e-tls-web");
    REQUIRE(after.ok());
    CHECK(after->started_at > before->started_at);
    CHECK(server.Stop() == "exited 0");
  }

  // A client certificate the daemon's CA did not sign: refused at start-up, naming the source.
  std::ofstream(fleet) << TlsSource(endpoint, pki, "stranger.pem", "stranger.key");
  const Captured run = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                   "127.0.0.1:0", "--fleet", fleet, "--patrol-interval", "0"});
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("cannot start: --fleet " + fleet + ": fleet source \"remote\" (docker): ") !=
        std::string::npos);
  REQUIRE((*daemon)->Remove("e2e-tls-web").ok());
}

}  // namespace
}  // namespace pulse::testing::e2e
