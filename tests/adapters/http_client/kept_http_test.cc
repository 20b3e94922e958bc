// The keep-alive client's own transport (src/kept_http.h) against raw loopback servers: which
// requests it carries, the replies it reads alike with libcurl and the ones it refuses where
// libcurl is lenient, when a kept connection is used again, the request it writes, and
// thousands of mutated replies. The behaviour both transports share (deadlines, cancellation,
// caps, streaming, lost connections) is tested once per transport in http_client_test.cc.
#include <catch2/catch.hpp>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client_fixtures.h"
#include "pulse/adapters/http_client/http_client.h"
#include "raw_server.h"

namespace pulse::http_client::kept_test {
namespace {

using testing::RawServer;

using fixtures::FastOptions;
using fixtures::Get;

std::unique_ptr<HttpClient> Client(const std::string& url, const ClientOptions& options) {
  auto client = HttpClient::Open(url, options);
  REQUIRE(client.ok());
  return *std::move(client);
}

// What an exchange came to, in one comparable line.
std::string Outcome(const absl::StatusOr<Response>& reply) {
  if (!reply.ok()) {
    const std::optional<ErrorKind> kind = ErrorKindOf(reply.status());
    return std::string("error ") + (kind ? std::string(ErrorKindName(*kind)) : "<no kind>");
  }
  std::string headers;
  for (const auto& [name, value] : reply->head.headers) {
    headers += name + "=" + value + ";";
  }
  return "reply " + std::to_string(reply->head.status) + " [" + reply->head.reason + "] " +
         headers + " body=" + reply->body;
}

// The outcome of one GET answered with `reply` (the server then closes the connection).
std::string OutcomeOf(const std::string& reply, bool kept) {
  RawServer server([reply](int fd, RawServer&) {
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, reply);
  });
  return Outcome(Client(server.Url(), FastOptions(kept))->Send(Get()));
}

TEST_CASE("the kept transport carries a keep-alive client's GETs to a literal address only",
          "[adapters][http_client]") {
  RawServer server([](int fd, RawServer&) {
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  const std::string port = std::to_string(server.port());
  Request head = Get();
  head.method = "HEAD";
  Request post = Get();
  post.method = "POST";
  Request get_with_body = Get();
  get_with_body.body = "x";

  auto kept = Client("http://127.0.0.1:" + port, FastOptions(true));
  CHECK(kept->UsesKeptTransport(Get()));
  CHECK(kept->UsesKeptTransport(head));
  CHECK_FALSE(kept->UsesKeptTransport(post));  // a write never rides a kept connection
  CHECK_FALSE(kept->UsesKeptTransport(get_with_body));
  CHECK(Client("http://localhost:" + port, FastOptions(true))->UsesKeptTransport(Get()));
  CHECK(Client("http://[::1]:" + port, FastOptions(true))->UsesKeptTransport(Get()));

  CHECK_FALSE(Client("http://127.0.0.1:" + port, FastOptions(false))->UsesKeptTransport(Get()));
  CHECK_FALSE(Client("https://127.0.0.1:" + port, FastOptions(true))->UsesKeptTransport(Get()));
  CHECK_FALSE(Client("http://pulse.test:" + port, FastOptions(true))->UsesKeptTransport(Get()));
  ClientOptions unix_socket = FastOptions(true);
  unix_socket.unix_socket_path = "/tmp/pulse-no-such.sock";
  CHECK_FALSE(Client("http://localhost", unix_socket)->UsesKeptTransport(Get()));
  ClientOptions proxied = FastOptions(true);
  proxied.proxy_loopback = true;  // a proxy from the environment may apply: libcurl decides
  CHECK_FALSE(Client("http://127.0.0.1:" + port, proxied)->UsesKeptTransport(Get()));
  ClientOptions remote = FastOptions(true);  // not loopback, proxies from the environment
  CHECK_FALSE(Client("http://192.0.2.1:" + port, remote)->UsesKeptTransport(Get()));
  remote.proxy_from_environment = false;
  CHECK(Client("http://192.0.2.1:" + port, remote)->UsesKeptTransport(Get()));

  // localhost is 127.0.0.1 first.
  auto by_name = Client("http://localhost:" + port, FastOptions(true))->Send(Get());
  REQUIRE(by_name.ok());
  CHECK(by_name->body == "ok");
}

TEST_CASE(
    "the kept transport reads every reply libcurl reads alike, and refuses what HTTP/1.1 "
    "forbids where libcurl is lenient",
    "[adapters][http_client]") {
  struct Case {
    std::string reply;
    std::string kept;      // the kept transport's outcome
    bool same_as_libcurl;  // and libcurl's is the same
  };
  const std::vector<Case> cases = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
       "reply 200 [OK] Content-Length=5; body=hello", true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n "
       "world\r\n0\r\n\r\n",
       "reply 200 [OK] Transfer-Encoding=chunked; body=hello world", true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\n"
       "X-Trailer: t\r\n\r\n",
       "reply 200 [OK] Transfer-Encoding=chunked; body=hello", true},
      {"HTTP/1.1 200 OK\r\n\r\nuntil close", "reply 200 [OK]  body=until close", true},
      {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "reply 200 [OK] Content-Length=2; body=ok",
       true},
      {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
       "reply 200 [OK] Content-Length=2; body=ok", true},
      {"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n"
       "\r\nok",
       "reply 201 [Created] Content-Length=2; body=ok", true},
      {"HTTP/1.1 204 No Content\r\n\r\n", "reply 204 [No Content]  body=", true},
      {"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
       "reply 304 [Not Modified] Content-Length=10; body=", true},
      {"HTTP/1.1 204\r\n\r\n", "reply 204 []  body=", true},
      {"HTTP/1.1 200 Caf\xc3\xa9\r\nX-Empty:\r\nContent-Length: 0002\r\n\r\nok",
       "reply 200 [Caf\xc3\xa9] X-Empty=;Content-Length=0002; body=ok", true},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
       "reply 200 [OK] Content-Length=2;Content-Length=2; body=ok", true},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
       "reply 200 [OK] Content-Length=2; body=ok", true},
      {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
       "reply 200 [OK] Connection=close;Content-Length=2; body=ok", true},
      {"", "error connection_lost", true},
      {"SSH-2.0-OpenSSH_9.2\r\n\r\n", "error protocol", true},
      {"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok", "error protocol", true},
      {"HTTP/1.1 099 Low\r\nContent-Length: 2\r\n\r\nok", "error protocol", true},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nok", "error protocol", true},
      {"HTTP/1.1 200 OK\r\nNoColon\r\nContent-Length: 2\r\n\r\nok", "error protocol", true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
       "error protocol", true},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", "error connection_lost", true},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", "error connection_lost",
       true},
      // Where the two part: libcurl reads these, the kept transport refuses them as HTTP/1.1
      // says a recipient must (RFC 9112: two different lengths, a length beside chunked, a
      // length past 64 bits, a bad chunk size, whitespace before a field's colon, bare LF line
      // ends, a version other than 1.x).
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk", "error protocol",
       false},
      {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"
       "\r\n",
       "error protocol", false},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nok", "error protocol",
       false},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
       "error protocol", false},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nok", "error protocol", false},
      {"HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok", "error protocol", false},
      {"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", "error protocol", false},
      {"HTTP/2 200 OK\r\nContent-Length: 2\r\n\r\nok", "error protocol", false},
      // A folded field is one value with a space (libcurl drops the continuation).
      {"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok",
       "reply 200 [OK] X-A=a b;Content-Length=2; body=ok", false},
  };
  for (const Case& c : cases) {
    INFO(c.reply);
    const std::string kept = OutcomeOf(c.reply, true);
    CHECK(kept == c.kept);
    if (c.same_as_libcurl) {
      CHECK(OutcomeOf(c.reply, false) == kept);
    } else {
      CHECK(OutcomeOf(c.reply, false) != kept);  // the difference is still there
    }
  }
}

// Answers every request on a connection with `reply` while the client keeps it open; counts
// the requests.
RawServer::Handler Answering(std::string reply, std::atomic<int>& requests) {
  return [reply = std::move(reply), &requests](int fd, RawServer& self) {
    while (!self.stopping()) {
      if (RawServer::ReadHead(fd).empty()) {
        return;
      }
      requests.fetch_add(1);
      RawServer::SendAll(fd, reply);
    }
  };
}

TEST_CASE("a status line without a reason reads the same however the reply is cut",
          "[adapters][http_client]") {
  // Cut right after the CR of "HTTP/1.1 204": the CR is where Beast wants a space, so the reader
  // waits for the LF before it decides (found by the http_reply fuzz target).
  for (const std::size_t cut : {std::size_t{12}, std::size_t{13}, std::size_t{14}}) {
    INFO("cut after " << cut << " bytes");
    const std::string reply = "HTTP/1.1 204\r\nX-A: 1\r\n\r\n";
    RawServer server([&reply, cut](int fd, RawServer&) {
      (void)RawServer::ReadHead(fd);
      RawServer::SendAll(fd, reply.substr(0, cut));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      RawServer::SendAll(fd, reply.substr(cut));
    });
    for (const bool kept : {false, true}) {
      INFO("transport: " << (kept ? "kept connections" : "libcurl"));
      auto got = Client(server.Url(), FastOptions(kept))->Send(Get());
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      CHECK(got->head.status == 204);
      CHECK(got->head.Header("X-A") == "1");
    }
  }
}

TEST_CASE("a kept connection is used again only after a whole reply the server keeps open",
          "[adapters][http_client]") {
  struct Case {
    std::string reply;
    std::string method;
    int connections;  // for three exchanges
  };
  const std::vector<Case> cases = {
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "GET", 1},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", "GET", 1},
      {"HTTP/1.1 204 No Content\r\n\r\n", "GET", 1},
      {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "GET", 1},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "HEAD", 1},  // no body after a HEAD
      {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", "GET", 3},
      {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "GET", 3},
      {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", "GET", 1},
      // Bytes beyond the reply: nobody asked for them, so the connection cannot carry another.
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", "GET", 3},
  };
  for (const Case& c : cases) {
    INFO(c.method << " answered with " << c.reply);
    std::atomic<int> requests{0};
    // Each reply closes the connection when the client does; a reply that ends with the close
    // of its connection is not among these.
    RawServer server(Answering(c.reply, requests));
    auto client = Client(server.Url(), FastOptions(true));
    Request request = Get();
    request.method = c.method;
    REQUIRE(client->UsesKeptTransport(request));
    for (int i = 0; i < 3; ++i) {
      auto reply = client->Send(request);
      INFO(reply.status().ToString());
      REQUIRE(reply.ok());
    }
    client.reset();  // closes the kept connection, so the handler sees the end of it
    server.Stop();
    CHECK(requests.load() == 3);
    CHECK(server.connections() == c.connections);
  }

  // A stream a callback stopped leaves its connection mid-reply: it is closed, not kept.
  std::atomic<int> requests{0};
  RawServer server(Answering("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nokok", requests));
  auto client = Client(server.Url(), FastOptions(true));
  for (int i = 0; i < 2; ++i) {
    auto end = client->Stream(
        Get(), [](const ResponseHead&) { return false; }, [](std::string_view) { return true; });
    REQUIRE(end.ok());
    CHECK(*end == StreamEnd::kStopped);
  }
  auto whole = client->Send(Get());
  REQUIRE(whole.ok());
  CHECK(whole->body == "okok");
  client.reset();
  server.Stop();
  CHECK(server.connections() == 3);

  // Bytes a server sends on an idle kept connection answer nothing: the connection is dropped
  // before the next request, which must not take them for its reply.
  RawServer chatty([](int fd, RawServer& self) {
    if (self.connections() > 1) {
      (void)RawServer::ReadHead(fd);
      RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh");
      return;
    }
    (void)RawServer::ReadHead(fd);
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale");
    (void)RawServer::ReadHead(fd);  // until the client closes it
  });
  auto reader = Client(chatty.Url(), FastOptions(true));
  auto first = reader->Send(Get());
  REQUIRE(first.ok());
  CHECK(first->body == "ok");
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto second = reader->Send(Get());
  REQUIRE(second.ok());
  CHECK(second->body == "fresh");
}

TEST_CASE("a kept connection the server drops while the request is on its way is replaced once",
          "[adapters][http_client]") {
  const bool kept = GENERATE(false, true);
  INFO("transport: " << (kept ? "kept connections" : "libcurl"));
  ClientOptions options = FastOptions(true);
  options.proxy_loopback = !kept;  // libcurl carries it then (no proxy is set here)
  std::atomic<int> requests{0};
  // The first connection answers one request, then reads the next and hangs up without a word,
  // as a server does whose idle timeout ends just as a request arrives. Later ones answer all.
  RawServer server([&requests](int fd, RawServer& self) {
    const bool first = self.connections() == 1;
    while (!self.stopping()) {
      if (RawServer::ReadHead(fd).empty()) {
        return;
      }
      if (requests.fetch_add(1) == 1 && first) {
        return;
      }
      RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  });
  auto client = Client(server.Url(), options);
  REQUIRE(client->UsesKeptTransport(Get()) == kept);
  for (int i = 0; i < 2; ++i) {
    auto reply = client->Send(Get());
    INFO(reply.status().ToString());
    REQUIRE(reply.ok());
    CHECK(reply->body == "ok");
  }
  client.reset();
  server.Stop();
  CHECK(requests.load() == 3);  // the second request went twice: once to the dying connection
  CHECK(server.connections() == 2);

  // A new connection that closes without a reply is an error, not sent again.
  RawServer mute([](int fd, RawServer&) { (void)RawServer::ReadHead(fd); });
  auto once = Client(mute.Url(), options)->Send(Get());
  REQUIRE_FALSE(once.ok());
  CHECK(ErrorKindOf(once.status()) == ErrorKind::kConnectionLost);
  mute.Stop();
  CHECK(mute.connections() == 1);
}

TEST_CASE("the kept transport writes the request libcurl writes", "[adapters][http_client]") {
  std::mutex mu;
  std::vector<std::string> heads;
  RawServer server([&](int fd, RawServer&) {
    std::string head = RawServer::ReadHead(fd);
    {
      const std::lock_guard<std::mutex> lock(mu);
      heads.push_back(std::move(head));
    }
    RawServer::SendAll(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  Request request = Get("/a/b?c=d&e=%20");
  request.headers = {{"X-API-Token", "secret"}, {"X-Empty", ""}, {"Accept", "application/json"}};
  for (bool kept : {false, true}) {
    auto client = Client(server.Url() + "/prefix", FastOptions(kept));
    REQUIRE(client->UsesKeptTransport(request) == kept);
    REQUIRE(client->Send(request).ok());
  }
  server.Stop();
  REQUIRE(heads.size() == 2);
  // The same lines, in any order (libcurl's name for an empty value is "X-Empty;", sent as
  // "X-Empty:").
  const auto lines = [](const std::string& head) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < head.size()) {
      const std::size_t end = head.find("\r\n", at);
      std::string line = head.substr(at, end - at);
      if (line.size() > 0 && line.back() == ' ') {
        line.pop_back();  // "X-Empty: " and "X-Empty:" are one field
      }
      out.push_back(line);
      at = end + 2;
    }
    std::sort(out.begin() + 1, out.end());
    return out;
  };
  INFO(heads[0] << "\n---\n" << heads[1]);
  CHECK(lines(heads[0]) == lines(heads[1]));
  CHECK(heads[1].rfind("GET /prefix/a/b?c=d&e=%20 HTTP/1.1\r\n", 0) == 0);
  CHECK(heads[1].find("\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n") !=
        std::string::npos);
  CHECK(heads[1].find("\r\nUser-Agent: pulse-core\r\n") != std::string::npos);
  CHECK(heads[1].find("*/*") == std::string::npos);  // the request's own Accept replaced it
}

TEST_CASE("mutated replies end in a reply or a named error, never a crash or a hang",
          "[adapters][http_client]") {
  const std::vector<std::string> seeds = {
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
      "{\"a\":[1,2,3]}",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n3;x=y\r\nefg\r\n0\r\n"
      "T: 1\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno",
      "HTTP/1.0 200 OK\r\n\r\nto the end",
  };
  std::mutex mu;
  std::string reply;
  // One reply per connection, then the close: no mutation can leave the client waiting.
  RawServer server([&](int fd, RawServer&) {
    (void)RawServer::ReadHead(fd);
    std::string bytes;
    {
      const std::lock_guard<std::mutex> lock(mu);
      bytes = reply;
    }
    RawServer::SendAll(fd, bytes);
  });
  ClientOptions options = FastOptions(true);
  options.max_header_bytes = 512;
  options.max_body_bytes = 64;
  auto client = Client(server.Url(), options);
  std::mt19937 random(20261205);
  const std::string specials = "\r\n :;,0123456789abcdefHTTP/1.\x80\xff";
  int replies = 0;
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = seeds[static_cast<std::size_t>(i) % seeds.size()];
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !mutated.empty(); ++e) {
      const std::size_t at = random() % mutated.size();
      const char byte = (random() % 2) != 0 ? specials[random() % specials.size()]
                                            : static_cast<char>(random() % 256);
      switch (random() % 4) {
        case 0:
          mutated[at] = byte;
          break;
        case 1:
          mutated.insert(mutated.begin() + static_cast<std::ptrdiff_t>(at), byte);
          break;
        case 2:
          mutated.erase(at, 1 + random() % 8);
          break;
        default:
          mutated.resize(at);
          break;
      }
    }
    {
      const std::lock_guard<std::mutex> lock(mu);
      reply = mutated;
    }
    std::size_t body = 0;
    const absl::StatusOr<StreamEnd> end = client->Stream(
        Get(),
        [](const ResponseHead& head) {
          CHECK(head.status >= 100);
          CHECK(head.status <= 999);
          CHECK(head.reason.size() <= 512);
          return true;
        },
        [&body](std::string_view bytes) {
          body += bytes.size();
          return true;
        });
    if (end.ok()) {
      ++replies;
      CHECK(body <= options.max_body_bytes);
    } else {
      ++errors;
      INFO(mutated);
      INFO(end.status().ToString());
      REQUIRE(ErrorKindOf(end.status()).has_value());
      CHECK_FALSE(end.status().message().empty());
    }
  }
  CHECK(replies > 300);  // the mutations leave many replies readable,
  CHECK(errors > 300);   // and break many more
}

}  // namespace
}  // namespace pulse::http_client::kept_test
