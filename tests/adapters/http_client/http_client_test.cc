// HttpClient against real loopback servers: bodies collected and streamed, what it sends, and
// each failure as its own kind with a human message: refused, unknown host, timeouts,
// cancellation, oversized replies, a server that hangs up mid-body.
#include "pulse/adapters/http_client/http_client.h"

#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client_fixtures.h"
#include "raw_server.h"

namespace pulse::http_client {
namespace {

using testing::RawServer;
using Ms = std::chrono::milliseconds;

// A real HTTP server on loopback: /hello, /echo (method, headers and body back), /stream
// (chunked, in small pieces with pauses), /big (64 KiB).
class LoopbackHttp {
 public:
  LoopbackHttp() {
    server_.Get("/hello", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("hello", "text/plain");
    });
    auto echo = [](const httplib::Request& req, httplib::Response& res) {
      std::string out = req.method + " " + req.target + "\n";
      out += "ct=" + req.get_header_value("Content-Type") + "\n";
      out += "x=" + req.get_header_value("X-Test") + "\n";
      out += "ua=" + req.get_header_value("User-Agent") + "\n";
      out += "body=" + req.body;
      res.status = req.target.find("teapot") != std::string::npos ? 418 : 200;
      res.set_header("X-Reply", "yes");
      res.set_content(out, "text/plain");
    };
    server_.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider(
          "text/event-stream", [](std::size_t, httplib::DataSink& sink) {
            for (const char* piece : {"da", "ta: {\"a\"", ":1}\n", "\n", "data: [DONE]\n\n"}) {
              sink.write(piece, std::strlen(piece));
              std::this_thread::sleep_for(Ms(40));
            }
            sink.done();
            return true;
          });
    });
    // The client's port: which connection carried the request.
    auto port = [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.remote_port), "text/plain");
    };
    server_.Get("/port", port);
    server_.Post("/port", port);
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(64 << 10, 'x'), "text/plain");
    });
    // The catch-all echo last: httplib takes the first route that matches.
    server_.Get(".*", echo);
    server_.Post(".*", echo);
    server_.Put(".*", echo);
    server_.Delete(".*", echo);
    server_.Patch(".*", echo);
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~LoopbackHttp() {
    server_.stop();
    thread_.join();
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// The tests of behaviour both transports share run once with each (GENERATE).
using fixtures::FastOptions;
using fixtures::Get;

// A keep-alive client on either transport: libcurl carries it when the kept transport is
// ruled out by proxy_loopback (libcurl then goes through a proxy only if the environment names
// one, and no test's does).
ClientOptions KeepAliveOptions(bool kept) {
  ClientOptions options = FastOptions(true);
  options.proxy_loopback = !kept;
  return options;
}

std::unique_ptr<HttpClient> ClientFor(const std::string& url,
                                      ClientOptions options = FastOptions()) {
  const bool kept = options.keep_alive && !options.proxy_loopback;
  auto client = HttpClient::Open(url, std::move(options));
  REQUIRE(client.ok());
  if (url.rfind("http://127.0.0.1:", 0) == 0) {
    REQUIRE((*client)->UsesKeptTransport(Get("/")) == kept);  // the transport under test
  }
  return *std::move(client);
}

// Both transports, one run each, named in the report of a failure.
#define PULSE_EACH_TRANSPORT(kept)         \
  const bool kept = GENERATE(false, true); \
  INFO("transport: " << ((kept) ? "kept connections" : "libcurl"))

void CheckKind(const absl::Status& status, ErrorKind kind, absl::StatusCode code) {
  INFO(status.ToString());
  REQUIRE(ErrorKindOf(status).has_value());
  CHECK(*ErrorKindOf(status) == kind);
  CHECK(status.code() == code);
  const std::string message(status.message());
  CHECK_FALSE(message.empty());
  for (const char* internal : {"curl", "CURLE", "httplib", "Error::", "127.0.0.1"}) {
    CHECK(message.find(internal) == std::string::npos);
  }
}

int ClosedPort() {
  RawServer server([](int, RawServer&) {});
  const int port = server.port();
  server.Stop();
  return port;
}

TEST_CASE("a reply is collected with its status and headers", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  LoopbackHttp server;
  auto client = ClientFor(server.Url() + "/base/", FastOptions(kept));
  auto dotted = client->Send(Get("/../hello"));
  REQUIRE(dotted.ok());
  CHECK(dotted->body.rfind("GET /base/../hello\n", 0) == 0);  // sent as given, not normalised

  auto plain = ClientFor(server.Url(), FastOptions(kept))->Send(Get("/hello"));
  REQUIRE(plain.ok());
  CHECK(plain->head.status == 200);
  CHECK(plain->body == "hello");
  CHECK(plain->head.Header("content-type") == "text/plain");

  Request post;
  post.method = "POST";
  post.target = "/echo?teapot=1";
  post.headers = {{"X-Test", "v1"}, {"Content-Type", "application/json"}};
  post.body = R"({"a":1})";
  auto echoed = client->Send(post);
  REQUIRE(echoed.ok());
  CHECK(echoed->head.status == 418);  // any status is a result
  CHECK(echoed->head.Header("X-REPLY") == "yes");
  CHECK(echoed->body ==
        "POST /base/echo?teapot=1\nct=application/json\nx=v1\nua=pulse-core\nbody={\"a\":1}");

  for (const char* method : {"PUT", "PATCH", "DELETE"}) {
    Request other;
    other.method = method;
    other.target = "/echo";
    other.body = "b";
    auto reply = client->Send(other);
    REQUIRE(reply.ok());
    CHECK(reply->body == std::string(method) + " /base/echo\nct=\nx=\nua=pulse-core\nbody=b");
  }
}

TEST_CASE("one client serves concurrent callers", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  LoopbackHttp server;
  auto client = ClientFor(server.Url(), FastOptions(kept));
  std::atomic<int> good{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&client, &good] {
      for (int i = 0; i < 15; ++i) {
        auto reply = client->Send(Get("/hello"));
        if (reply.ok() && reply->body == "hello") {
          good.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& caller : callers) {
    caller.join();
  }
  CHECK(good.load() == 90);
}

// A server that answers "ok" to every request on a connection for as long as the client keeps
// it open, counting the requests.
RawServer::Handler KeepAnswering(std::atomic<int>& requests) {
  return [&requests](int fd, RawServer& self) {
    while (!self.stopping()) {
      if (RawServer::ReadHead(fd).empty()) {
        return;  // the client closed the connection
      }
      requests.fetch_add(1);
      RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  };
}

TEST_CASE("every exchange opens its own connection, even when the server would keep it",
          "[adapters][http_client]") {
  std::atomic<int> requests{0};
  RawServer keeper(KeepAnswering(requests));
  auto client = ClientFor(keeper.Url());
  for (int i = 0; i < 3; ++i) {
    auto reply = client->Send(Get("/"));
    REQUIRE(reply.ok());
    CHECK(reply->body == "ok");
  }
  CHECK(requests.load() == 3);
  CHECK(keeper.connections() == 3);
}

TEST_CASE("with keep_alive, exchanges share one connection while the server keeps it",
          "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  std::atomic<int> requests{0};
  RawServer keeper(KeepAnswering(requests));
  ClientOptions options = KeepAliveOptions(kept);
  auto client = ClientFor(keeper.Url(), options);
  for (int i = 0; i < 4; ++i) {
    auto reply = client->Send(Get("/"));
    REQUIRE(reply.ok());
    CHECK(reply->body == "ok");
  }
  CHECK(requests.load() == 4);
  CHECK(keeper.connections() == 1);
  client.reset();  // closes the kept connection, so the handler sees the end of it
}

TEST_CASE("with keep_alive, a connection the server closed is replaced, not an error",
          "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  std::atomic<int> requests{0};
  // Answers one request per connection and hangs up without saying so (no Connection: close),
  // as a server does when its idle timeout ends a kept connection.
  RawServer closer([&requests](int fd, RawServer&) {
    if (!RawServer::ReadHead(fd).empty()) {
      requests.fetch_add(1);
      RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  });
  ClientOptions options = KeepAliveOptions(kept);
  auto client = ClientFor(closer.Url(), options);
  for (int i = 0; i < 3; ++i) {
    auto reply = client->Send(Get("/read"));
    INFO(reply.status().ToString());
    REQUIRE(reply.ok());
    CHECK(reply->body == "ok");
  }
  CHECK(requests.load() == 3);
  CHECK(closer.connections() == 3);
}

TEST_CASE("with keep_alive, a write never rides a kept connection", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  LoopbackHttp server;
  ClientOptions options = KeepAliveOptions(kept);
  auto client = ClientFor(server.Url(), options);
  auto port_of = [&client](std::string method) {
    Request request = Get("/port");
    request.method = std::move(method);
    if (request.method == "POST") {
      request.body = "{}";
    }
    auto reply = client->Send(request);
    REQUIRE(reply.ok());
    return reply->body;
  };
  const std::string read = port_of("GET");
  CHECK(port_of("GET") == read);
  const std::string write = port_of("POST");
  CHECK(write != read);
  CHECK(port_of("POST") != write);
  CHECK(port_of("GET") == read);
}

TEST_CASE("malformed requests are refused before anything is sent", "[adapters][http_client]") {
  RawServer server([](int, RawServer&) {});
  auto client = ClientFor(server.Url());
  Request injected = Get("/x");
  injected.headers = {{"X-Token", "a\r\nX-Evil: 1"}};
  CheckKind(client->Send(injected).status(), ErrorKind::kInvalidRequest,
            absl::StatusCode::kInvalidArgument);
  for (const char* target : {"x", "/a b", "/a#b", "/\x01", ""}) {
    CheckKind(client->Send(Get(target)).status(), ErrorKind::kInvalidRequest,
              absl::StatusCode::kInvalidArgument);
  }
  Request bad_method = Get("/");
  bad_method.method = "GET /x HTTP/1.1\r\n";
  CheckKind(client->Send(bad_method).status(), ErrorKind::kInvalidRequest,
            absl::StatusCode::kInvalidArgument);
  Request bad_name = Get("/");
  bad_name.headers = {{"X Bad", "v"}};
  CheckKind(client->Send(bad_name).status(), ErrorKind::kInvalidRequest,
            absl::StatusCode::kInvalidArgument);
  CHECK(server.connections() == 0);
}

TEST_CASE("Open refuses bad options", "[adapters][http_client]") {
  CHECK(HttpClient::Open("ftp://x", FastOptions()).status().code() ==
        absl::StatusCode::kInvalidArgument);
  ClientOptions zero = FastOptions();
  zero.timeouts.idle = absl::ZeroDuration();
  CHECK(HttpClient::Open("http://127.0.0.1:1", zero).status().code() ==
        absl::StatusCode::kInvalidArgument);
  ClientOptions pin = FastOptions();
  pin.pinned_sha256 = "abc";
  CHECK(HttpClient::Open("https://127.0.0.1:1", pin).status().code() ==
        absl::StatusCode::kInvalidArgument);
  ClientOptions ca = FastOptions();
  ca.ca_file = "/nonexistent/ca.pem";
  CHECK(HttpClient::Open("https://127.0.0.1:1", ca).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("every error kind has its own stable name", "[adapters][http_client]") {
  const std::vector<std::string_view> names = {
      "refused",   "unknown_host", "unreachable", "tls_handshake",   "tls_untrusted",  "timeout",
      "cancelled", "too_large",    "protocol",    "connection_lost", "invalid_request"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK(ErrorKindName(static_cast<ErrorKind>(i)) == names[i]);
  }
  CHECK(ErrorKindName(static_cast<ErrorKind>(names.size())) == "unknown");
  CHECK_FALSE(ErrorKindOf(absl::UnavailableError("refused")).has_value());
}

TEST_CASE("a refused port and an unknown host are different errors", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  const absl::Status refused =
      ClientFor("http://127.0.0.1:" + std::to_string(ClosedPort()), FastOptions(kept))
          ->Send(Get("/"))
          .status();
  CheckKind(refused, ErrorKind::kRefused, absl::StatusCode::kUnavailable);
  CHECK(std::string(refused.message()).find("refused") != std::string::npos);

  const absl::Status unknown = ClientFor("http://pulse-test.invalid:80")->Send(Get("/")).status();
  CheckKind(unknown, ErrorKind::kUnknownHost, absl::StatusCode::kUnavailable);
  CHECK(std::string(unknown.message()).find("could not be resolved") != std::string::npos);
  CHECK(refused.message() != unknown.message());
}

TEST_CASE("a server that accepts and never answers times out promptly", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  RawServer silent([](int fd, RawServer& self) {
    (void)RawServer::ReadHead(fd);
    self.Idle();
  });
  ClientOptions options = FastOptions(kept);
  options.timeouts.response_header = absl::Milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = ClientFor(silent.Url(), options)->Send(Get("/")).status();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CheckKind(status, ErrorKind::kTimeout, absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(status.message()).find("no response headers within 200ms") !=
        std::string::npos);
  CHECK(elapsed >= Ms(200));
  CHECK(elapsed < Ms(1500));
}

TEST_CASE("a body that stalls past the idle timeout, or trickles past the total, times out",
          "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  RawServer stalling([](int fd, RawServer& self) {
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
    for (int i = 0; i < 20 && !self.stopping(); ++i) {
      std::this_thread::sleep_for(Ms(30));
      RawServer::SendAll(fd, "1\r\n.\r\n");
    }
    self.Idle();  // then silence
  });
  ClientOptions idle = FastOptions(kept);
  idle.timeouts.idle = absl::Milliseconds(300);
  std::string got;
  const absl::StatusOr<StreamEnd> idle_end =
      ClientFor(stalling.Url(), idle)
          ->Stream(
              Get("/"), [](const ResponseHead&) { return true; },
              [&got](std::string_view bytes) {
                got.append(bytes);
                return true;
              });
  CheckKind(idle_end.status(), ErrorKind::kTimeout, absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(idle_end.status().message()).find("idle for 300ms") != std::string::npos);
  CHECK(got.rfind("abc", 0) == 0);
  CHECK(got.size() > 3);  // the trickle arrived before the stall
  stalling.Stop();

  RawServer trickling([](int fd, RawServer& self) {
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 100 && !self.stopping(); ++i) {
      std::this_thread::sleep_for(Ms(20));
      RawServer::SendAll(fd, "1\r\n.\r\n");
    }
  });
  ClientOptions total = FastOptions(kept);
  total.timeouts.total = absl::Milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = ClientFor(trickling.Url(), total)->Send(Get("/")).status();
  CheckKind(status, ErrorKind::kTimeout, absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(status.message()).find("longer than 300ms") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < Ms(1500));
}

TEST_CASE("cancellation ends a waiting exchange promptly", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  RawServer silent([](int fd, RawServer& self) {
    (void)RawServer::ReadHead(fd);
    self.Idle();
  });
  std::atomic<bool> cancelled{false};
  std::thread canceller([&cancelled] {
    std::this_thread::sleep_for(Ms(100));
    cancelled.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status =
      ClientFor(silent.Url(), FastOptions(kept))->Send(Get("/"), &cancelled).status();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  canceller.join();
  CheckKind(status, ErrorKind::kCancelled, absl::StatusCode::kCancelled);
  CHECK(elapsed < Ms(600));
  // A flag already set sends nothing.
  CheckKind(ClientFor(silent.Url(), FastOptions(kept))->Send(Get("/"), &cancelled).status(),
            ErrorKind::kCancelled, absl::StatusCode::kCancelled);
  CHECK(silent.connections() == 1);
}

TEST_CASE("a body or headers over the cap are TooLarge", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  LoopbackHttp server;
  ClientOptions capped = FastOptions(kept);
  capped.max_body_bytes = 1000;
  const absl::Status big = ClientFor(server.Url(), capped)->Send(Get("/big")).status();
  CheckKind(big, ErrorKind::kTooLarge, absl::StatusCode::kResourceExhausted);
  CHECK(std::string(big.message()).find("larger than 1000 bytes") != std::string::npos);
  CHECK(ClientFor(server.Url(), FastOptions(kept))->Send(Get("/big"))->body.size() == 64u << 10);

  RawServer fat_headers([](int fd, RawServer&) {
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 200; ++i) {
      RawServer::SendAll(fd, "X-Pad-" + std::to_string(i) + ": " + std::string(1000, 'p') + "\r\n");
    }
    RawServer::SendAll(fd, "Content-Length: 0\r\n\r\n");
  });
  CheckKind(ClientFor(fat_headers.Url(), FastOptions(kept))->Send(Get("/")).status(),
            ErrorKind::kTooLarge, absl::StatusCode::kResourceExhausted);
}

TEST_CASE("a chunked stream arrives in pieces as it is sent, and a callback can stop it",
          "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  LoopbackHttp server;
  auto client = ClientFor(server.Url(), FastOptions(kept));
  std::vector<std::string> pieces;
  std::vector<std::chrono::steady_clock::time_point> times;
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  auto end = client->Stream(
      Get("/stream"),
      [&status](const ResponseHead& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view bytes) {
        pieces.emplace_back(bytes);
        times.push_back(std::chrono::steady_clock::now());
        return true;
      });
  REQUIRE(end.ok());
  CHECK(*end == StreamEnd::kComplete);
  CHECK(status == 200);
  std::string joined;
  for (const std::string& piece : pieces) {
    joined += piece;
  }
  CHECK(joined == "data: {\"a\":1}\n\ndata: [DONE]\n\n");
  REQUIRE(pieces.size() >= 3);
  CHECK(times.front() - start < Ms(150));  // the first piece did not wait for the last

  std::size_t calls = 0;
  auto stopped = client->Stream(
      Get("/stream"), [](const ResponseHead&) { return true; },
      [&calls](std::string_view) { return ++calls < 2; });
  REQUIRE(stopped.ok());
  CHECK(*stopped == StreamEnd::kStopped);
  CHECK(calls == 2);

  auto head_stop = client->Stream(
      Get("/stream"), [](const ResponseHead&) { return false; },
      [](std::string_view) {
        FAIL("no body after the head callback said stop");
        return true;
      });
  REQUIRE(head_stop.ok());
  CHECK(*head_stop == StreamEnd::kStopped);
}

TEST_CASE("a server that hangs up mid-body is a lost connection, not a complete reply",
          "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  for (const char* reply : {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..",
                            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\nshort"}) {
    INFO(reply);
    RawServer cutter([reply](int fd, RawServer&) {
      (void)RawServer::ReadHead(fd);
      RawServer::SendAll(fd, reply);
    });
    bool head = false;
    const absl::StatusOr<StreamEnd> end = ClientFor(cutter.Url(), FastOptions(kept))
                                              ->Stream(
                                                  Get("/"),
                                                  [&head](const ResponseHead&) {
                                                    head = true;
                                                    return true;
                                                  },
                                                  [](std::string_view) { return true; });
    CheckKind(end.status(), ErrorKind::kConnectionLost, absl::StatusCode::kUnavailable);
    CHECK(head);
    CHECK(std::string(end.status().message()).find("before the response was complete") !=
          std::string::npos);
  }
  RawServer mute([](int fd, RawServer&) { (void)RawServer::ReadHead(fd); });
  const absl::Status nothing = ClientFor(mute.Url(), FastOptions(kept))->Send(Get("/")).status();
  CheckKind(nothing, ErrorKind::kConnectionLost, absl::StatusCode::kUnavailable);
  CHECK(std::string(nothing.message()).find("without a response") != std::string::npos);

  RawServer garbage([](int fd, RawServer&) {
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, "SSH-2.0-OpenSSH_9.2\r\n\r\n");
  });
  CheckKind(ClientFor(garbage.Url(), FastOptions(kept))->Send(Get("/")).status(),
            ErrorKind::kProtocol, absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace pulse::http_client

namespace pulse::http_client {
namespace {

TEST_CASE("the reason phrase of the status line is kept as sent", "[adapters][http_client]") {
  PULSE_EACH_TRANSPORT(kept);
  for (const char* line : {"HTTP/1.1 500 VM 101 is locked (backup)", "HTTP/1.1 596 Broken pipe",
                           "HTTP/1.1 200 OK", "HTTP/1.1 204"}) {
    const std::string status_line = line;
    RawServer server([status_line](int fd, RawServer&) {
      RawServer::ReadHead(fd);
      RawServer::SendAll(fd, status_line + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    });
    auto reply = ClientFor(server.Url(), FastOptions(kept))->Send(Get("/"));
    REQUIRE(reply.ok());
    const std::size_t space = status_line.find(' ', 9);
    CHECK(reply->head.reason ==
          (space == std::string::npos ? std::string() : status_line.substr(space + 1)));
  }
}

}  // namespace
}  // namespace pulse::http_client
