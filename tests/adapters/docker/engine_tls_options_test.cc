// The TLS settings of a Docker endpoint, checked before any connection (docs/docker.md,
// "Endpoints and versions"): plain tcp:// is refused unless allowed, TLS settings on a unix
// socket are refused, a certificate needs its key, and missing or unreadable files are named.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "pulse/adapters/docker/engine_client.h"

namespace pulse::docker {
namespace {

struct TempFiles {
  std::string dir;
  TempFiles() {
    char tmpl[] = "/tmp/pulse-docker-tls-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    for (const char* name : {"ca.pem", "cert.pem", "key.pem"}) {
      std::ofstream(dir + "/" + name) << "not really PEM\n";
    }
  }
  ~TempFiles() { std::filesystem::remove_all(dir); }
  std::string Path(const char* name) const { return dir + "/" + name; }
};

absl::Status ConnectStatus(const EngineOptions& options) {
  return EngineClient::Connect(options).status();
}

TEST_CASE("plain tcp to a Docker Engine is refused unless allowed", "[adapters][docker][tls]") {
  EngineOptions plain;
  plain.endpoint = "tcp://127.0.0.1:1";
  plain.connect_timeout = absl::Seconds(1);
  const absl::Status refused = ConnectStatus(plain);
  CHECK(EngineErrorKindOf(refused) == EngineErrorKind::kInvalidArgument);
  CHECK(refused.message().find("allow_plain_tcp") != absl::string_view::npos);
  CHECK(refused.message().find("tls_cert_file") != absl::string_view::npos);
  // Allowed: it is tried (and nothing listens on port 1).
  plain.allow_plain_tcp = true;
  CHECK(EngineErrorKindOf(ConnectStatus(plain)) == EngineErrorKind::kUnreachable);
}

TEST_CASE("Docker TLS settings are checked before connecting", "[adapters][docker][tls]") {
  const TempFiles files;
  EngineOptions o;
  o.endpoint = "unix:///tmp/pulse-no-such.sock";
  o.tls_ca_file = files.Path("ca.pem");
  absl::Status s = ConnectStatus(o);
  CHECK(EngineErrorKindOf(s) == EngineErrorKind::kInvalidArgument);
  CHECK(s.message().find("tcp:// endpoints only") != absl::string_view::npos);

  o.endpoint = "tcp://127.0.0.1:1";
  o.tls_cert_file = files.Path("cert.pem");
  s = ConnectStatus(o);
  CHECK(EngineErrorKindOf(s) == EngineErrorKind::kInvalidArgument);
  CHECK(s.message() == "tls_cert_file is set without tls_key_file: set both or neither");
  o.tls_cert_file.clear();
  o.tls_key_file = files.Path("key.pem");
  CHECK(ConnectStatus(o).message() ==
        "tls_key_file is set without tls_cert_file: set both or neither");

  o.tls_cert_file = files.Path("absent.pem");
  s = ConnectStatus(o);
  CHECK(EngineErrorKindOf(s) == EngineErrorKind::kInvalidArgument);
  CHECK(s.message().find("tls_cert_file " + files.Path("absent.pem") + " does not exist") == 0);
  o.tls_cert_file = files.Path("cert.pem");
  o.tls_ca_file = files.Path("absent-ca.pem");
  CHECK(ConnectStatus(o).message().find("tls_ca_file") == 0);
  if (::geteuid() != 0) {  // root reads any file
    o.tls_ca_file = files.Path("ca.pem");
    std::filesystem::permissions(files.Path("key.pem"), std::filesystem::perms::none);
    CHECK(ConnectStatus(o).message().find("cannot be read") != absl::string_view::npos);
  }
}

}  // namespace
}  // namespace pulse::docker
