// The Beast transport's hard bounds (issue 22), over real loopback connections: over-long heads,
// lines and field counts are 431/414, a head or body that does not arrive within its deadline
// is 408 even when bytes keep trickling in, the connection caps answer 503, every refusal is
// the agent envelope followed by a close, idle keep-alive connections are closed on a timer,
// event streams beat on timers, /metrics counts each refusal, and a constant route is answered
// from the bytes of its first reply.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http_test_support.h"
#include "pulse/adapters/http/metrics_registry.h"

namespace pulse::adapters::http {
namespace {

using Clock = std::chrono::steady_clock;
using testing::TestServer;

HttpServerOptions BeastOptions() {
  HttpServerOptions options = testing::TestOptions();
  options.io_threads = 2;
  options.handler_threads = 2;
  return options;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// The status line and the envelope's code of a raw reply, and whether the server closed.
void CheckRefused(const std::string& raw, const std::string& status, const std::string& code) {
  INFO(raw.substr(0, 400));
  CHECK(StartsWith(raw, "HTTP/1.1 " + status));
  CHECK(raw.find("\"error\":\"" + code + "\"") != std::string::npos);
  CHECK(raw.find("Connection: close") != std::string::npos);
}

const char kHealth[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n";

TEST_CASE("beast: an over-long header line, too many fields or a huge head are 431",
          "[adapters][http][beast]") {
  TestServer server(BeastOptions());
  CheckRefused(server.Raw(std::string(kHealth) + "X-Long: " + std::string(9000, 'a') + "\r\n\r\n"),
               "431", "request_header_too_large");
  std::string many = kHealth;
  for (int i = 0; i < 101; ++i) {
    many += "X-F" + std::to_string(i) + ": v\r\n";
  }
  CheckRefused(server.Raw(many + "\r\n"), "431", "request_header_too_large");
  // 200 KB without a line break: refused once the head bound is reached, not buffered.
  CheckRefused(server.Raw(std::string(kHealth) + "X-Flood: " + std::string(200'000, 'b')), "431",
               "request_header_too_large");
  // Right at the bounds: served.
  std::string fine = kHealth;
  for (int i = 0; i < 97; ++i) {  // with Host, X-Long and Connection: 100 fields
    fine += "X-F" + std::to_string(i) + ": v\r\n";
  }
  fine += "X-Long: " + std::string(8000, 'c') + "\r\nConnection: close\r\n\r\n";
  CHECK(StartsWith(server.Raw(fine), "HTTP/1.1 200"));
}

// Counts the head lines of `reply` that start with `name: ` (the head only, not the body).
int HeadCount(const std::string& reply, const std::string& name) {
  const std::string head = reply.substr(0, reply.find("\r\n\r\n"));
  int count = 0;
  for (std::size_t at = 0; (at = head.find("\r\n" + name + ": ", at)) != std::string::npos; ++at) {
    ++count;
  }
  return count;
}

TEST_CASE("beast: every reply carries the security headers once, whoever answers it",
          "[adapters][http][beast][security]") {
  std::shared_ptr<SseStream> opened;
  TestServer server(BeastOptions(),
                    testing::FullRouter({{"subscribe_events",
                                          [&](const HttpRequest&) {
                                            opened = SseStream::Create(SseOptions{});
                                            return HttpReply::EventStream(opened);
                                          }},
                                         {"healthz", [](const HttpRequest&) {
                                            // A handler's own policy wins over the default.
                                            HttpReply reply = HttpReply::Json("{}");
                                            reply.headers.emplace_back("Content-Security-Policy",
                                                                       "default-src 'self'");
                                            return reply;
                                          }}}));
  const std::string token = server.Token({"monitoring:read"});
  const std::string close = "Connection: close\r\n\r\n";
  struct Case {
    std::string what;
    std::string request;
    std::string status;
  };
  const std::vector<Case> cases = {
      {"a handler's reply", "GET /api/agent/capabilities HTTP/1.1\r\nHost: x\r\n" + close, "200"},
      {"no route", "GET /nope HTTP/1.1\r\nHost: x\r\n" + close, "404"},
      {"no token", "GET /api/actions HTTP/1.1\r\nHost: x\r\n" + close, "401"},
      {"a transport refusal",
       "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(9000, 'a') + "\r\n\r\n", "431"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const std::string reply = server.Raw(c.request);
    CHECK(StartsWith(reply, "HTTP/1.1 " + c.status));
    CHECK(HeadCount(reply, "Content-Security-Policy") == 1);
    CHECK(
        reply.find("\r\nContent-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n") !=
        std::string::npos);
    CHECK(HeadCount(reply, "X-Frame-Options") == 1);
    CHECK(reply.find("\r\nX-Frame-Options: DENY\r\n") != std::string::npos);
    CHECK(HeadCount(reply, "Referrer-Policy") == 1);
    CHECK(HeadCount(reply, "X-Content-Type-Options") == 1);
    CHECK(HeadCount(reply, "Cache-Control") == 1);
  }
  const std::string own = server.Raw("GET /healthz HTTP/1.1\r\nHost: x\r\n" + close);
  CHECK(HeadCount(own, "Content-Security-Policy") == 1);
  CHECK(own.find("\r\nContent-Security-Policy: default-src 'self'\r\n") != std::string::npos);
  // An event stream: the headers too, and its own Cache-Control only.
  TestServer::RawConnection connection(server.port());
  connection.Send("GET /api/agent/events HTTP/1.1\r\nHost: x\r\nX-API-Token: " + token +
                  "\r\n\r\n");
  const std::string stream = connection.Read(300);
  CHECK(StartsWith(stream, "HTTP/1.1 200"));
  CHECK(HeadCount(stream, "Cache-Control") == 1);
  CHECK(stream.find("\r\nCache-Control: no-cache\r\n") != std::string::npos);
  CHECK(HeadCount(stream, "X-Frame-Options") == 1);
  CHECK(HeadCount(stream, "Content-Security-Policy") == 1);
  server.server().Stop();
}

TEST_CASE("beast: a request line over the line bound is 414", "[adapters][http][beast]") {
  TestServer server(BeastOptions());
  CheckRefused(server.Raw("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n"), "414",
               "uri_too_long");
}

TEST_CASE("beast: the head deadline runs from the first byte, however slowly bytes come",
          "[adapters][http][beast]") {
  HttpServerOptions options = BeastOptions();
  options.head_deadline = absl::Milliseconds(400);
  TestServer server(options);
  TestServer::RawConnection slow(server.port());
  const auto start = Clock::now();
  const std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  slow.Send(head);
  for (int i = 0; i < 12; ++i) {  // a byte every 100 ms: a per-read timeout would never fire
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    slow.Send("a");
  }
  const std::string reply = slow.Read(1000);
  const auto elapsed = Clock::now() - start;
  CheckRefused(reply, "408", "request_timeout");
  CHECK(elapsed < std::chrono::milliseconds(2500));
}

TEST_CASE("beast: heads that began together expire spread over a tenth of their deadline",
          "[adapters][http][beast]") {
  HttpServerOptions options = BeastOptions();
  options.head_deadline = absl::Milliseconds(1000);
  TestServer server(options);
  constexpr int kConnections = 24;
  std::vector<std::unique_ptr<TestServer::RawConnection>> slow;
  for (int i = 0; i < kConnections; ++i) {
    slow.push_back(std::make_unique<TestServer::RawConnection>(server.port()));
  }
  const auto start = Clock::now();
  for (auto& c : slow) {
    c->Send("GET /healthz HTTP/1.1\r\nHost: x\r\n");  // a head that never ends
  }
  // When each connection's 408 arrives, in milliseconds from the first byte.
  std::vector<std::int64_t> answered(kConnections, -1);
  int pending = kConnections;
  while (pending > 0 && Clock::now() - start < std::chrono::seconds(5)) {
    std::vector<pollfd> fds;
    for (int i = 0; i < kConnections; ++i) {
      fds.push_back({answered[i] < 0 ? slow[i]->fd() : -1, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 5);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    for (int i = 0; i < kConnections; ++i) {
      if (answered[i] < 0 && (fds[i].revents & (POLLIN | POLLHUP)) != 0) {
        answered[i] = ms;
        --pending;
      }
    }
  }
  REQUIRE(pending == 0);
  for (auto& c : slow) {
    CHECK(c->Read(200).rfind("HTTP/1.1 408", 0) == 0);
  }
  const auto [first, last] = std::minmax_element(answered.begin(), answered.end());
  INFO("first 408 after " << *first << " ms, last after " << *last << " ms");
  CHECK(*first >= 990);         // never before the deadline
  CHECK(*last <= 1100 + 1000);  // within a tenth more (and slack for a loaded machine)
  // 24 uniform draws over 100 ms all within 20 ms of each other: chance about 1e-15.
  CHECK(*last - *first >= 20);
}

TEST_CASE("beast: a body that does not arrive within its deadline is 408",
          "[adapters][http][beast]") {
  HttpServerOptions options = BeastOptions();
  options.body_deadline = absl::Milliseconds(300);
  std::atomic<int> calls{0};
  TestServer server(options, testing::FullRouter({{"acknowledge_finding", [&calls](const auto& r) {
                                                     ++calls;
                                                     return testing::EchoReply(r);
                                                   }}}));
  const std::string token = server.Token({"*"});
  TestServer::RawConnection connection(server.port());
  connection.Send(
      "POST /api/ai/patrol/acknowledge HTTP/1.1\r\nHost: x\r\nX-API-Token: " + token +
      "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"finding_id\":");
  CheckRefused(connection.Read(2000), "408", "request_timeout");
  CHECK(calls == 0);
}

TEST_CASE("beast: connections over the per-peer or global cap are 503 and closed",
          "[adapters][http][beast]") {
  SECTION("per peer") {
    HttpServerOptions options = BeastOptions();
    options.max_connections_per_peer = 2;
    TestServer server(options);
    TestServer::RawConnection a(server.port());
    TestServer::RawConnection b(server.port());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both admitted
    CheckRefused(server.Raw(std::string(kHealth) + "\r\n"), "503", "service_unavailable");
    a.Send(std::string(kHealth) + "\r\n");
    CHECK(StartsWith(a.Read(300), "HTTP/1.1 200"));  // the admitted ones are served
  }
  SECTION("global") {
    HttpServerOptions options = BeastOptions();
    options.max_connections = 1;
    TestServer server(options);
    TestServer::RawConnection a(server.port());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string refused = server.Raw(std::string(kHealth) + "\r\n");
    CheckRefused(refused, "503", "service_unavailable");
    CHECK(refused.find("Retry-After: 1") != std::string::npos);
  }
}

TEST_CASE("beast: an idle keep-alive connection is closed on its timer, a busy one is kept",
          "[adapters][http][beast]") {
  HttpServerOptions options = BeastOptions();
  options.keep_alive_timeout = absl::Milliseconds(300);
  TestServer server(options);
  TestServer::RawConnection connection(server.port());
  for (int i = 0; i < 3; ++i) {
    connection.Send(std::string(kHealth) + "\r\n");
    const std::string reply = connection.Read(150);
    CHECK(StartsWith(reply, "HTTP/1.1 200"));
    CHECK(reply.find("Connection: close") == std::string::npos);
  }
  const auto start = Clock::now();
  CHECK(connection.Read(3000).empty());  // closed by the server, not by our read timeout
  CHECK(Clock::now() - start < std::chrono::milliseconds(2000));
}

TEST_CASE("beast: pipelined requests are answered in order on one connection",
          "[adapters][http][beast]") {
  TestServer server(BeastOptions());
  const std::string reply = server.Raw(std::string(kHealth) + "\r\n" + kHealth + "\r\n" + kHealth +
                                       "Connection: close\r\n\r\n");
  std::size_t answers = 0;
  for (std::size_t at = 0; (at = reply.find("HTTP/1.1 200", at)) != std::string::npos; ++at) {
    ++answers;
  }
  CHECK(answers == 3);
}

TEST_CASE("beast: event streams beat on timers and end on stop", "[adapters][http][beast]") {
  std::shared_ptr<SseStream> opened;
  std::atomic<bool> ready{false};
  HttpServerOptions options = BeastOptions();
  TestServer server(options, testing::FullRouter({{"subscribe_events", [&](const HttpRequest&) {
                                                     SseOptions sse;
                                                     sse.heartbeat = absl::Milliseconds(200);
                                                     opened = SseStream::Create(sse);
                                                     ready = true;
                                                     return HttpReply::EventStream(opened);
                                                   }}}));
  const std::string token = server.Token({"monitoring:read"});
  TestServer::RawConnection connection(server.port());
  connection.Send("GET /api/agent/events HTTP/1.1\r\nHost: x\r\nX-API-Token: " + token +
                  "\r\n\r\n");
  // Heartbeats every 200 ms never leave the connection quiet for long: read in slices.
  std::string beats;
  const auto start = Clock::now();
  while (Clock::now() - start < std::chrono::milliseconds(1100)) {
    beats += connection.Read(150);
  }
  INFO(beats.substr(0, 400));
  CHECK(StartsWith(beats, "HTTP/1.1 200"));
  CHECK(beats.find("Transfer-Encoding: chunked") != std::string::npos);
  std::size_t count = 0;
  for (std::size_t at = 0; (at = beats.find(": heartbeat", at)) != std::string::npos; ++at) {
    ++count;
  }
  CHECK(count >= 4);  // 5 or 6 in 1.1 s at 200 ms, the first one jittered to 100-200 ms
  CHECK(count <= 12);
  REQUIRE(ready.load());
  CHECK(opened->Send("hello"));
  CHECK(connection.Read(200).find("data: hello") != std::string::npos);
  CHECK(server.server().stats().open_streams == 1);
  server.server().Stop();
  CHECK(connection.Read(500).find("0\r\n\r\n") != std::string::npos);  // ended cleanly
  CHECK(opened->finished());
}

TEST_CASE("beast: a frame and the end announced by one wake-up are both written",
          "[adapters][http][beast]") {
  for (int round = 0; round < 5; ++round) {
    std::shared_ptr<SseStream> opened;
    std::atomic<bool> ready{false};
    TestServer server(BeastOptions(),
                      testing::FullRouter({{"subscribe_events", [&](const HttpRequest&) {
                                              opened = SseStream::Create();
                                              ready = true;
                                              return HttpReply::EventStream(opened);
                                            }}}));
    const std::string token = server.Token({"monitoring:read"});
    TestServer::RawConnection connection(server.port());
    connection.Send("GET /api/agent/events HTTP/1.1\r\nHost: x\r\nX-API-Token: " + token +
                    "\r\n\r\n");
    CHECK(StartsWith(connection.Read(200), "HTTP/1.1 200"));
    REQUIRE(ready.load());
    CHECK(opened->Send("last words"));
    opened->Close();
    const std::string rest = connection.Read(2000);  // returns once the server closes
    CHECK(rest.find("data: last words") != std::string::npos);
    CHECK(rest.find("0\r\n\r\n") != std::string::npos);
  }
}

TEST_CASE("beast: a constant route is answered with the bytes of its first reply, others are not",
          "[adapters][http][beast]") {
  MetricsRegistry registry;
  std::atomic<int> calls{0};
  TestServer server(BeastOptions(),
                    testing::FullRouter({{"get_capabilities",
                                          [&calls](const auto&) {
                                            ++calls;
                                            HttpReply reply = HttpReply::Json(R"({"v":1})");
                                            reply.headers.emplace_back("Cache-Control",
                                                                       "max-age=9");
                                            reply.headers.emplace_back("Bad\nName", "dropped");
                                            return reply;
                                          }}}),
                    &registry);
  const std::string get = "GET /api/agent/capabilities HTTP/1.1\r\nHost: x\r\n";
  const std::string first = server.Raw(get + "Connection: close\r\n\r\n");
  CHECK(first ==
        "HTTP/1.1 200 OK\r\nCache-Control: max-age=9\r\n"
        "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
        "X-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Content-Type: application/json\r\nConnection: close\r\nContent-Length: 7\r\n\r\n"
        "{\"v\":1}");
  int answered = 1;
  for (int i = 0; i < 8; ++i, ++answered) {
    CHECK(server.Raw(get + "Connection: close\r\n\r\n") == first);
  }
  // Kept alive: the same reply without Connection: close, request after request.
  TestServer::RawConnection connection(server.port());
  std::string kept;
  for (int i = 0; i < 8; ++i, ++answered) {
    connection.Send(get + "\r\n");
    const std::string reply = connection.Read(150);
    CHECK(StartsWith(reply, "HTTP/1.1 200 OK\r\nCache-Control: max-age=9\r\n"));
    CHECK(reply.find("Connection: close") == std::string::npos);
    if (i > 0) {
      CHECK(reply == kept);
    }
    kept = reply;
  }
  CHECK(calls <= 3);  // the first reply on each of the two loops (and the kept connection's)
  const int before = calls;
  // Anything else than a plain GET runs the pipeline: a query is validated (refused here), a
  // Range refused, credentials make the handler run.
  CHECK(StartsWith(server.Raw("GET /api/agent/capabilities?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"),
                   "HTTP/1.1 400"));
  CHECK(StartsWith(server.Raw(get + "Range: bytes=0-1\r\n\r\n"), "HTTP/1.1 400"));
  CHECK(StartsWith(server.Raw(get + "X-API-Token: nope\r\nConnection: close\r\n\r\n"),
                   "HTTP/1.1 200"));
  ++answered;
  CHECK(calls == before + 1);
  // Every answer is counted, from the bytes or not.
  const std::string text = registry.Render();
  INFO(text);
  CHECK(text.find("route=\"get_capabilities\",status=\"200\"} " + std::to_string(answered)) !=
        std::string::npos);
}

// The descriptors of this process that are epoll instances, and for each the inodes of the files
// it watches (from /proc/self/fdinfo: one "tfd: N events: ..." line per watched descriptor).
std::vector<std::vector<ino_t>> EpollWatches() {
  std::vector<std::vector<ino_t>> watches;
  DIR* dir = ::opendir("/proc/self/fd");
  REQUIRE(dir != nullptr);
  std::vector<int> fds;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') {
      fds.push_back(std::atoi(entry->d_name));
    }
  }
  ::closedir(dir);
  for (const int fd : fds) {
    char target[64] = {};
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    if (::readlink(link.c_str(), target, sizeof(target) - 1) <= 0 ||
        std::string(target) != "anon_inode:[eventpoll]") {
      continue;
    }
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
    std::vector<ino_t> watched;
    std::string line;
    while (std::getline(info, line)) {
      int tfd = -1;
      struct stat st {};
      if (std::sscanf(line.c_str(), "tfd: %d", &tfd) == 1 && ::fstat(tfd, &st) == 0) {
        watched.push_back(st.st_ino);
      }
    }
    watches.push_back(std::move(watched));
  }
  return watches;
}

// The inode of this process's listening TCP socket on `port`.
ino_t ListeningInode(int port) {
  DIR* dir = ::opendir("/proc/self/fd");
  REQUIRE(dir != nullptr);
  ino_t found = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    int listening = 0;
    socklen_t flag_len = sizeof(listening);
    struct stat st {};
    if (entry->d_name[0] != '.' &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        addr.sin_family == AF_INET && ntohs(addr.sin_port) == port &&
        ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &flag_len) == 0 && listening != 0 &&
        ::fstat(fd, &st) == 0) {
      found = st.st_ino;
    }
  }
  ::closedir(dir);
  return found;
}

TEST_CASE("beast: one thread waits on the listening socket, and connections go to every loop",
          "[adapters][http][beast]") {
  // With an epoll per loop on the listening socket, every new connection woke every loop, and
  // on the 2-core VM a client's connect() then took ~3 ms for tens of seconds at a time
  // (tests/fault/TRANSPORT.md, "One waiter on the listening socket").
  HttpServerOptions options = BeastOptions();
  options.io_threads = 3;
  TestServer server(options);
  const ino_t listening = ListeningInode(server.port());
  REQUIRE(listening != 0);
  int watching = 0;
  for (const std::vector<ino_t>& watched : EpollWatches()) {
    watching += static_cast<int>(std::count(watched.begin(), watched.end(), listening));
  }
  CHECK(watching == 1);
  // Connections held open together land on every loop and each is served: three loops, six
  // keep-alive connections, each asked twice.
  std::vector<std::unique_ptr<httplib::Client>> clients;
  for (int i = 0; i < 6; ++i) {
    clients.push_back(server.Client());
    clients.back()->set_keep_alive(true);
  }
  for (int round = 0; round < 2; ++round) {
    for (const auto& client : clients) {
      const httplib::Result r = client->Get("/healthz");
      REQUIRE(r);
      CHECK(r->status == 200);
    }
  }
}

TEST_CASE("beast: refusals by each bound are counted in /metrics", "[adapters][http][beast]") {
  {
    MetricsRegistry registry;
    HttpServerOptions options = BeastOptions();
    options.head_deadline = absl::Milliseconds(200);
    TestServer server(options, testing::FullRouter(), &registry);
    server.Raw(std::string(kHealth) + "X-Long: " + std::string(9000, 'a') + "\r\n\r\n");
    server.Raw("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n");
    server.Raw("GET /healthz HTTP/1.1\r\nHost", 1000);
    server.Raw("GET /healthz?q=" + std::string(3000, 'q') + " HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string text = registry.Render();
    INFO(text);
    CHECK(text.find("pulse_http_requests_refused_total{bound=\"line\"} 2") != std::string::npos);
    CHECK(text.find("pulse_http_deadline_expiries_total{phase=\"head\"} 1") != std::string::npos);
    CHECK(text.find("pulse_http_requests_refused_total{bound=\"target\"} 1") != std::string::npos);
  }
  // The per-peer cap, on a server whose head deadline leaves the idle connections open however
  // slow this machine is.
  MetricsRegistry registry;
  HttpServerOptions options = BeastOptions();
  options.max_connections_per_peer = 3;
  TestServer server(options, testing::FullRouter(), &registry);
  TestServer::RawConnection a(server.port());
  TestServer::RawConnection b(server.port());
  TestServer::RawConnection c(server.port());
  // All three admitted before the fourth arrives (an accept can lag on a loaded machine).
  for (int i = 0;
       i < 200 && registry.Render().find("pulse_http_connections 3") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string refused = server.Raw(std::string(kHealth) + "\r\n");
  CHECK(refused.rfind("HTTP/1.1 503", 0) == 0);
  const std::string text = registry.Render();
  INFO(text);
  CHECK(text.find("pulse_http_connections_refused_total{reason=\"per_peer\"} 1") !=
        std::string::npos);
  CHECK(text.find("pulse_http_connections 3") != std::string::npos);
}

}  // namespace
}  // namespace pulse::adapters::http
