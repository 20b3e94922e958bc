// HttpClient over TLS against a loopback httplib SSLServer with a self-signed certificate made
// at test time by the openssl command: a CA file that signed it is accepted, any other CA (and
// the system store) refuses it as untrusted, a pinned SHA-256 fingerprint accepts exactly that
// certificate, and a server that does not speak TLS is a failed handshake.
#include <httplib.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "pulse/adapters/http_client/http_client.h"
#include "raw_server.h"

namespace pulse::http_client {
namespace {

std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    out += buffer;
  }
  REQUIRE(::pclose(pipe) == 0);
  return out;
}

// Two self-signed certificates (for localhost and 127.0.0.1) in a temporary directory.
class Certificates {
 public:
  Certificates() {
    char dir_template[] = "/tmp/pulse-tls-XXXXXX";
    REQUIRE(::mkdtemp(dir_template) != nullptr);
    dir_ = dir_template;
    for (const char* name : {"server", "other", "client"}) {
      Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
          "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
          dir_ + "/" + name + ".key -out " + dir_ + "/" + name + ".pem 2>/dev/null");
    }
    const std::string line =
        Run("openssl x509 -noout -fingerprint -sha256 -in " + dir_ + "/server.pem");
    fingerprint_ = line.substr(line.find('=') + 1);
    while (!fingerprint_.empty() && (fingerprint_.back() == '\n' || fingerprint_.back() == '\r')) {
      fingerprint_.pop_back();
    }
    REQUIRE(fingerprint_.size() == 95);  // 32 hex pairs with ':' between
  }
  ~Certificates() { std::filesystem::remove_all(dir_); }

  std::string Path(const char* file) const { return dir_ + "/" + file; }
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::string dir_;
  std::string fingerprint_;
};

class TlsServer {
 public:
  // With `client_ca`, the server demands a client certificate signed by it.
  explicit TlsServer(const Certificates& certs, const char* client_ca = nullptr)
      : server_(certs.Path("server.pem").c_str(), certs.Path("server.key").c_str(),
                client_ca == nullptr ? nullptr : certs.Path(client_ca).c_str()) {
    REQUIRE(server_.is_valid());
    server_.Get("/secure", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("secret", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~TlsServer() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const char* host = "127.0.0.1") const {
    return std::string("https://") + host + ":" + std::to_string(port_);
  }

 private:
  httplib::SSLServer server_;
  int port_ = 0;
  std::thread thread_;
};

absl::StatusOr<Response> Fetch(const std::string& url, ClientOptions options) {
  options.timeouts.connect = absl::Seconds(2);
  options.timeouts.response_header = absl::Seconds(2);
  auto client = HttpClient::Open(url, std::move(options));
  REQUIRE(client.ok());
  Request request;
  request.target = "/secure";
  return (*client)->Send(request);
}

TEST_CASE("TLS: the CA file, the system store and a pinned fingerprint decide trust",
          "[adapters][http_client][tls]") {
  const Certificates certs;
  TlsServer server(certs);

  ClientOptions ca;
  ca.ca_file = certs.Path("server.pem");
  for (const char* host : {"127.0.0.1", "localhost"}) {
    auto trusted = Fetch(server.Url(host), ca);
    REQUIRE(trusted.ok());
    CHECK(trusted->body == "secret");
  }

  ClientOptions wrong_ca;
  wrong_ca.ca_file = certs.Path("other.pem");
  const absl::Status wrong = Fetch(server.Url(), wrong_ca).status();
  CHECK(ErrorKindOf(wrong) == ErrorKind::kTlsUntrusted);
  CHECK(wrong.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(wrong.message() == "the server's TLS certificate is not trusted");
  CHECK(ErrorKindOf(Fetch(server.Url(), ClientOptions()).status()) == ErrorKind::kTlsUntrusted);

  ClientOptions pinned;
  pinned.pinned_sha256 = certs.fingerprint();
  auto pin_ok = Fetch(server.Url(), pinned);
  REQUIRE(pin_ok.ok());
  CHECK(pin_ok->body == "secret");
  std::string lower = certs.fingerprint();
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  pinned.pinned_sha256 = lower;  // case and ':' do not matter
  CHECK(Fetch(server.Url(), pinned).ok());

  ClientOptions mismatch;
  mismatch.pinned_sha256 = std::string(64, 'a');
  mismatch.ca_file = certs.Path("server.pem");  // a pin wins over a CA that would trust it
  const absl::Status pin_bad = Fetch(server.Url(), mismatch).status();
  CHECK(ErrorKindOf(pin_bad) == ErrorKind::kTlsUntrusted);
  CHECK(pin_bad.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(pin_bad.message()).find("pinned fingerprint") != std::string::npos);
}

TEST_CASE("TLS: a client certificate is presented to a server that demands one",
          "[adapters][http_client][tls]") {
  const Certificates certs;
  TlsServer server(certs, "client.pem");
  ClientOptions with_cert;
  with_cert.ca_file = certs.Path("server.pem");
  with_cert.client_cert_file = certs.Path("client.pem");
  with_cert.client_key_file = certs.Path("client.key");
  auto ok = Fetch(server.Url(), with_cert);
  REQUIRE(ok.ok());
  CHECK(ok->body == "secret");

  ClientOptions without = with_cert;
  without.client_cert_file.clear();
  without.client_key_file.clear();
  CHECK_FALSE(Fetch(server.Url(), without).ok());
  ClientOptions wrong = with_cert;  // a certificate the server's client CA did not sign
  wrong.client_cert_file = certs.Path("other.pem");
  wrong.client_key_file = certs.Path("other.key");
  CHECK_FALSE(Fetch(server.Url(), wrong).ok());
  ClientOptions mismatched = with_cert;  // a key that is not the certificate's
  mismatched.client_key_file = certs.Path("other.key");
  CHECK_FALSE(Fetch(server.Url(), mismatched).ok());
  ClientOptions garbage = with_cert;
  garbage.client_cert_file = certs.Path("garbage.pem");
  {
    std::ofstream out(garbage.client_cert_file);
    out << "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n";
  }
  const absl::Status broken = Fetch(server.Url(), garbage).status();
  CHECK_FALSE(broken.ok());
  CHECK(ErrorKindOf(broken).has_value());
}

TEST_CASE("TLS: client certificate options are checked when the client opens",
          "[adapters][http_client][tls]") {
  const Certificates certs;
  ClientOptions only_cert;
  only_cert.client_cert_file = certs.Path("client.pem");
  auto opened = HttpClient::Open("https://127.0.0.1:1", only_cert);
  CHECK(opened.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(opened.status().message() == "a client certificate needs its private key");
  ClientOptions only_key;
  only_key.client_key_file = certs.Path("client.key");
  opened = HttpClient::Open("https://127.0.0.1:1", only_key);
  CHECK(opened.status().message() == "a client key needs its client certificate");
  ClientOptions missing;
  missing.client_cert_file = certs.Path("absent.pem");
  missing.client_key_file = certs.Path("client.key");
  opened = HttpClient::Open("https://127.0.0.1:1", missing);
  CHECK(opened.status().message() == "the client certificate file cannot be read");
  missing.client_cert_file = certs.Path("client.pem");
  missing.client_key_file = certs.Path("absent.key");
  opened = HttpClient::Open("https://127.0.0.1:1", missing);
  CHECK(opened.status().message() == "the client key file cannot be read");
}

TEST_CASE("TLS to a server that does not speak it is a failed handshake",
          "[adapters][http_client][tls]") {
  testing::RawServer plain([](int fd, testing::RawServer&) {
    char buffer[1024];
    (void)::recv(fd, buffer, sizeof(buffer), 0);
    testing::RawServer::SendAll(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
  });
  const absl::Status status =
      Fetch("https://127.0.0.1:" + std::to_string(plain.port()), ClientOptions()).status();
  CHECK(ErrorKindOf(status) == ErrorKind::kTlsHandshake);
  CHECK(status.code() == absl::StatusCode::kUnavailable);
  CHECK(status.message() == "the TLS handshake with the server failed");
}

}  // namespace
}  // namespace pulse::http_client
