// HttpClient's routes to a server: the proxy of http_proxy / no_proxy (a loopback fake proxy
// sees the request unless no_proxy names the host; a loopback host never goes through it
// unless asked), and unix-socket targets.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "client_fixtures.h"
#include "pulse/adapters/http_client/http_client.h"
#include "raw_server.h"

namespace pulse::http_client {
namespace {

using testing::RawServer;

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                             "ALL_PROXY", "no_proxy", "NO_PROXY"}) {
      const char* old = ::getenv(name);
      saved_.emplace_back(
          name, old == nullptr ? std::optional<std::string>() : std::optional<std::string>(old));
      ::unsetenv(name);
    }
    for (const auto& [name, value] : vars) {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value.has_value()) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Answers every request with `tag` and remembers the last request line.
class TaggedServer {
 public:
  explicit TaggedServer(std::string tag)
      : tag_(std::move(tag)), server_([this](int fd, RawServer&) { Serve(fd); }) {}
  TaggedServer(const std::string& unix_path, std::string tag)
      : tag_(std::move(tag)), server_(unix_path, [this](int fd, RawServer&) { Serve(fd); }) {}

  std::string Url() const { return server_.Url(); }
  std::string last_request_line() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }
  int connections() const { return server_.connections(); }

 private:
  void Serve(int fd) {
    const std::string head = RawServer::ReadHead(fd);
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = head.substr(0, head.find("\r\n"));
    }
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(tag_.size()) +
                               "\r\nConnection: close\r\n\r\n" + tag_);
  }

  const std::string tag_;
  mutable std::mutex mu_;
  std::string last_;
  RawServer server_;
};

std::unique_ptr<HttpClient> ClientFor(const std::string& url, ClientOptions options = {}) {
  options.timeouts.connect = absl::Seconds(2);
  options.timeouts.response_header = absl::Seconds(2);
  auto client = HttpClient::Open(url, std::move(options));
  REQUIRE(client.ok());
  return *std::move(client);
}

using fixtures::Get;

TEST_CASE("http_proxy carries a request unless no_proxy matches the host",
          "[adapters][http_client][proxy]") {
  TaggedServer proxy("via-proxy");
  {
    ScopedEnv env({{"http_proxy", proxy.Url().c_str()}, {"no_proxy", "other.example"}});
    auto reply = ClientFor("http://pulse-proxied.invalid:8080/api")->Send(Get("/x?y=1"));
    REQUIRE(reply.ok());
    CHECK(reply->body == "via-proxy");
    CHECK(proxy.last_request_line() == "GET http://pulse-proxied.invalid:8080/api/x?y=1 HTTP/1.1");
  }
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    INFO(name);
    ScopedEnv env({{"http_proxy", proxy.Url().c_str()}, {name, "example.org,.invalid"}});
    const int before = proxy.connections();
    const absl::Status direct = ClientFor("http://pulse-direct.invalid")->Send(Get("/")).status();
    CHECK(ErrorKindOf(direct) == ErrorKind::kUnknownHost);  // went direct, and cannot resolve
    CHECK(proxy.connections() == before);
  }
  {  // proxying can be turned off
    ScopedEnv env({{"http_proxy", proxy.Url().c_str()}});
    ClientOptions options;
    options.proxy_from_environment = false;
    const int before = proxy.connections();
    CHECK(ErrorKindOf(ClientFor("http://pulse-off.invalid", options)->Send(Get("/")).status()) ==
          ErrorKind::kUnknownHost);
    CHECK(proxy.connections() == before);
  }
  {  // a proxy whose name does not resolve is an unknown host too
    ScopedEnv env({{"http_proxy", "http://pulse-proxy.invalid:3128"}});
    const absl::Status status = ClientFor("http://pulse-x.example")->Send(Get("/")).status();
    CHECK(ErrorKindOf(status) == ErrorKind::kUnknownHost);
    CHECK(std::string(status.message()).find("proxy") != std::string::npos);
  }
}

TEST_CASE("a loopback host never goes through the proxy unless asked",
          "[adapters][http_client][proxy]") {
  TaggedServer proxy("via-proxy");
  TaggedServer target("direct");
  ScopedEnv env({{"http_proxy", proxy.Url().c_str()}, {"all_proxy", proxy.Url().c_str()}});
  auto direct = ClientFor(target.Url())->Send(Get("/a"));
  REQUIRE(direct.ok());
  CHECK(direct->body == "direct");
  CHECK(proxy.connections() == 0);

  ClientOptions asked;
  asked.proxy_loopback = true;
  auto proxied = ClientFor(target.Url(), asked)->Send(Get("/a"));
  REQUIRE(proxied.ok());
  CHECK(proxied->body == "via-proxy");
  CHECK(proxy.last_request_line() == "GET " + target.Url() + "/a HTTP/1.1");
}

TEST_CASE("a unix-socket target carries the request, and a missing socket is refused",
          "[adapters][http_client][unix]") {
  char dir_template[] = "/tmp/pulse-http-client-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  {
    TaggedServer server(dir + "/docker.sock", "over-unix");
    TaggedServer proxy("via-proxy");
    ScopedEnv env({{"http_proxy", proxy.Url().c_str()}});
    ClientOptions options;
    options.unix_socket_path = dir + "/docker.sock";
    auto reply = ClientFor("http://localhost/v1.43", options)->Send(Get("/containers/json"));
    REQUIRE(reply.ok());
    CHECK(reply->body == "over-unix");
    CHECK(server.last_request_line() == "GET /v1.43/containers/json HTTP/1.1");
    CHECK(proxy.connections() == 0);

    options.unix_socket_path = dir + "/missing.sock";
    const absl::Status missing =
        ClientFor("http://localhost", options)->Send(Get("/_ping")).status();
    CHECK(ErrorKindOf(missing) == ErrorKind::kRefused);
    CHECK(missing.code() == absl::StatusCode::kUnavailable);
    CHECK(std::string(missing.message()).find("no socket") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pulse::http_client
