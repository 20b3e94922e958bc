// pulse-mcp's own parts: the HTTP caller against a loopback httplib server (the headers
// every request carries, methods, bodies, the base URL's path prefix, transport failures) and
// the stdio loop over pipes.
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "http_pulse_caller.h"
#include "pulse/adapters/mcp/mcp_server.h"
#include "pulse/adapters/mcp/mcp_session.h"
#include "stdio_loop.h"

namespace pulse::apps::mcp {
namespace {

struct Seen {
  std::string method, path, query_flag, token, surface, content_type, body;
};

class LoopbackServer {
 public:
  LoopbackServer() {
    auto record = [this](const httplib::Request& req, httplib::Response& res) {
      absl::MutexLock lock(&mu_);
      seen_ = Seen{req.method,
                   req.path,
                   req.get_param_value("flag"),
                   req.get_header_value("X-API-Token"),
                   req.get_header_value("X-Pulse-Agent-Surface"),
                   req.get_header_value("Content-Type"),
                   req.body};
      res.status = req.path.find("missing") != std::string::npos ? 404 : 200;
      res.set_content(R"({"ok":true})", "application/json");
    };
    server_.Get(".*", record);
    server_.Post(".*", record);
    server_.Put(".*", record);
    server_.Delete(".*", record);
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~LoopbackServer() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& prefix = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + prefix;
  }
  Seen seen() {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  absl::Mutex mu_;
  Seen seen_ ABSL_GUARDED_BY(mu_);
};

TEST_CASE("every request carries the token and the pulse_mcp surface marker", "[apps][mcp]") {
  LoopbackServer server;
  auto caller = HttpPulseCaller::Open(server.Url("/base/"), "tok-123", absl::Seconds(5));
  REQUIRE(caller.ok());

  auto get = (*caller)->Send({"GET", "/api/x/a%2Fb?flag=true", std::nullopt});
  REQUIRE(get.ok());
  CHECK(get->status == 200);
  CHECK(get->body == R"({"ok":true})");
  Seen seen = server.seen();
  CHECK(seen.method == "GET");
  CHECK(seen.path == "/base/api/x/a/b");  // httplib decodes the path on the server side
  CHECK(seen.query_flag == "true");
  CHECK(seen.token == "tok-123");
  CHECK(seen.surface == "pulse_mcp");

  auto post = (*caller)->Send({"POST", "/api/plan", std::string(R"({"a":1})")});
  REQUIRE(post.ok());
  seen = server.seen();
  CHECK(seen.method == "POST");
  CHECK(seen.content_type == "application/json");
  CHECK(seen.body == R"({"a":1})");
  CHECK(seen.surface == "pulse_mcp");

  auto missing = (*caller)->Send({"DELETE", "/missing", std::nullopt});
  REQUIRE(missing.ok());
  CHECK(missing->status == 404);  // a status is a reply, not a transport error
}

TEST_CASE("a server that is not there is Unavailable, and a bad URL is refused at Open",
          "[apps][mcp]") {
  auto caller = HttpPulseCaller::Open("http://127.0.0.1:1", "t", absl::Seconds(2));
  REQUIRE(caller.ok());
  auto reply = (*caller)->Send({"GET", "/api/agent/capabilities", std::nullopt});
  CHECK(reply.status().code() == absl::StatusCode::kUnavailable);
  CHECK(reply.status().message() == "the connection was refused (nothing listens there)");
  auto unknown = (*HttpPulseCaller::Open("http://pulse-mcp-test.invalid", "t", absl::Seconds(2)))
                     ->Send({"GET", "/api/agent/capabilities", std::nullopt});
  CHECK(unknown.status().code() == absl::StatusCode::kUnavailable);
  CHECK(unknown.status().message() == "the host name could not be resolved");
  for (const char* bad : {"127.0.0.1:7655", "ftp://x", "http://", "http://a b", "http://h?x"}) {
    INFO(bad);
    CHECK(HttpPulseCaller::Open(bad, "t", absl::Seconds(1)).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("the stdio loop answers each line and returns 0 at end of input", "[apps][mcp]") {
  struct NoCaller final : adapters::mcp::PulseCaller {
    [[nodiscard]] absl::StatusOr<adapters::mcp::PulseReply> Send(
        const adapters::mcp::PulseRequest&) override {
      return absl::UnavailableError("no server in this test");
    }
  } caller;
  adapters::mcp::McpServer server(caller, adapters::mcp::McpSurface{}, "1");
  adapters::mcp::McpSession session(server);
  int in[2];
  int out[2];
  REQUIRE(::pipe(in) == 0);
  REQUIRE(::pipe(out) == 0);
  const std::string input = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                            "\nnot json\n"
                            R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                            "\n"
                            R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  REQUIRE(::write(in[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  ::close(in[1]);
  CHECK(RunStdioLoop(session, in[0], out[1]) == 0);
  ::close(in[0]);
  ::close(out[1]);
  std::string written;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof(buffer))) > 0;) {
    written.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  const std::string first = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
  const std::string error = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,";
  const std::string last = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n";
  REQUIRE(written.size() > first.size() + last.size());
  CHECK(written.substr(0, first.size()) == first);
  CHECK(written.substr(first.size(), error.size()) == error);
  CHECK(written.substr(written.size() - last.size()) == last);
  CHECK(std::count(written.begin(), written.end(), '\n') == 3);
}

}  // namespace
}  // namespace pulse::apps::mcp
