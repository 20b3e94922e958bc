// A throw-away PKI for tests of Docker over tcp:// with TLS (docs/docker.md, "Endpoints and
// versions"): its own CA, a server certificate for 127.0.0.1 / localhost, a client certificate
// the CA signed and a self-signed "stranger" one, made with `openssl` in a temporary directory
// removed on destruction; and a free loopback TCP port for a private dockerd's --host. Shared by
// docker_tls_test.cc and the end-to-end tests (tests/e2e/server).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace pulse::docker::testing {

inline bool Sh(const std::string& command) {
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
  Pki(const Pki&) = delete;
  Pki& operator=(const Pki&) = delete;
  std::string Path(const char* name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

inline int FreeLoopbackPort() {
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

}  // namespace pulse::docker::testing
