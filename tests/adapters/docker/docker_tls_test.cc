// tcp:// with TLS client certificates against a real private dockerd listening on loopback TCP
// with --tlsverify (docs/docker.md, "Endpoints and versions"). The test makes its own CA, a
// server certificate for 127.0.0.1 and two client certificates (one the CA signed, one not).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "docker_test_support.h"
#include "pulse/adapters/docker/docker_fleet.h"

namespace pulse::docker::testing {
namespace {

bool Sh(const std::string& command) {
  return std::system(("/bin/sh -c '" + command + "' >/dev/null 2>&1").c_str()) == 0;
}

class Pki {
 public:
  Pki() {
    char tmpl[] = "/tmp/pulse-docker-pki-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(Path("server.ext")) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                      << "extendedKeyUsage=serverAuth\n";
    std::ofstream(Path("client.ext")) << "extendedKeyUsage=clientAuth\n";
    REQUIRE(Sh("cd " + dir_ + " && openssl req -x509 " + ec +
               " -days 2 -subj /CN=pulse-test-ca -keyout ca.key -out ca.pem"));
    for (const char* name : {"server", "client"}) {
      const std::string n = name;
      REQUIRE(Sh("cd " + dir_ + " && openssl req " + ec + " -subj /CN=" + n + " -keyout " + n +
                 ".key -out " + n + ".csr && openssl x509 -req -in " + n +
                 ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile " + n +
                 ".ext -out " + n + ".pem"));
    }
    REQUIRE(Sh("cd " + dir_ + " && openssl req -x509 " + ec +
               " -days 2 -subj /CN=stranger -keyout stranger.key -out stranger.pem"));
  }
  ~Pki() { std::filesystem::remove_all(dir_); }
  std::string Path(const char* name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

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
