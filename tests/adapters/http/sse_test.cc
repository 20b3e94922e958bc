// The SSE writer: frame text, the producer/connection hand-off, heartbeats, disconnect and
// shutdown handling over a real connection, the stream cap, and 256 open streams that must
// not starve a short request.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "http_test_support.h"
#include "pulse/adapters/http/sse_stream.h"

namespace pulse::adapters::http {
namespace {

using Clock = std::chrono::steady_clock;

// Streams opened by the handler, so a test can act as their producer.
struct StreamBox {
  absl::Mutex mu;
  std::vector<std::shared_ptr<SseStream>> streams ABSL_GUARDED_BY(mu);

  std::shared_ptr<SseStream> WaitFor(std::size_t index) {
    for (int i = 0; i < 300; ++i) {
      {
        absl::MutexLock lock(&mu);
        if (streams.size() > index) {
          return streams[index];
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL("no stream was opened");
    return nullptr;
  }
};

HttpHandler BoxedStream(StreamBox& box, absl::Duration heartbeat) {
  return [&box, heartbeat](const HttpRequest&) {
    SseOptions options;
    options.heartbeat = heartbeat;
    options.heartbeat_comment = "ping";
    auto stream = SseStream::Create(options);
    stream->SendEvent("stream.connected", R"({"kind":"stream.connected"})");
    {
      absl::MutexLock lock(&box.mu);
      box.streams.push_back(stream);
    }
    return HttpReply::EventStream(stream);
  };
}

template <class Pred>
bool Eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::milliseconds(3000)) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

TEST_CASE("frames follow the SSE grammar", "[adapters][http][sse]") {
  CHECK(FormatSseData(R"({"a":1})") == "data: {\"a\":1}\n\n");
  CHECK(FormatSseData("a\nb\r\nc\rd") == "data: a\ndata: b\ndata: c\ndata: d\n\n");
  CHECK(FormatSseData("") == "data: \n\n");
  CHECK(FormatSseEvent("finding.created", "{}", 7).value() ==
        "event: finding.created\nid: 7\ndata: {}\n\n");
  CHECK(FormatSseEvent("heartbeat", "{}").value() == "event: heartbeat\ndata: {}\n\n");
  for (const std::string& bad : {std::string(), std::string("a b"), std::string("a\nb"),
                                 std::string("a:b"), std::string(65, 'e')}) {
    CHECK_FALSE(FormatSseEvent(bad, "{}").has_value());
  }
  CHECK(FormatSseComment("ping") == ": ping\n\n");
  CHECK(FormatSseComment("a\nb") == ": a b\n\n");
}

TEST_CASE("the connection side batches frames, heartbeats and ends", "[adapters][http][sse]") {
  SseOptions options;
  options.heartbeat = absl::Milliseconds(30);
  options.heartbeat_comment = "ping";
  auto stream = SseStream::Create(options);
  CHECK(stream->Send("one"));
  CHECK(stream->SendEvent("x", "two", 1));
  std::string out;
  REQUIRE(stream->Next(out) == SseStream::Pull::kWrite);
  CHECK(out == "data: one\n\nevent: x\nid: 1\ndata: two\n\n");
  const auto start = Clock::now();
  REQUIRE(stream->Next(out) == SseStream::Pull::kWrite);
  CHECK(out == ": ping\n\n");
  CHECK(Clock::now() - start >= std::chrono::milliseconds(25));
  CHECK(stream->Send("last"));
  stream->Close();
  CHECK_FALSE(stream->Send("after close"));
  REQUIRE(stream->Next(out) == SseStream::Pull::kWrite);
  CHECK(out == "data: last\n\n");
  CHECK(stream->Next(out) == SseStream::Pull::kEnd);
  stream->MarkFinished(true);
  CHECK_FALSE(stream->cancelled());
  CHECK(stream->finished());
}

TEST_CASE("a heartbeat can be a whole frame of the producer's choosing", "[adapters][http][sse]") {
  SseOptions options;
  options.heartbeat = absl::Milliseconds(5);
  int beats = 0;
  options.heartbeat_frame = [&beats] {
    return FormatSseEvent("heartbeat", R"({"kind":"heartbeat"})", ++beats).value();
  };
  auto stream = SseStream::Create(options);
  std::string out;
  REQUIRE(stream->Next(out) == SseStream::Pull::kWrite);
  CHECK(out == "event: heartbeat\nid: 1\ndata: {\"kind\":\"heartbeat\"}\n\n");
}

TEST_CASE("a producer is woken at once, not at the next heartbeat", "[adapters][http][sse]") {
  SseOptions options;
  options.heartbeat = absl::Seconds(10);
  auto stream = SseStream::Create(options);
  std::thread producer([stream] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stream->Send("hello");
  });
  const auto start = Clock::now();
  std::string out;
  CHECK(stream->Next(out) == SseStream::Pull::kWrite);
  CHECK(out == "data: hello\n\n");
  CHECK(Clock::now() - start < std::chrono::seconds(2));
  producer.join();
}

TEST_CASE("overflow drops or cancels as configured", "[adapters][http][sse]") {
  SseOptions drop;
  drop.max_queued_frames = 2;
  drop.overflow = SseOverflow::kDropNewest;
  auto dropping = SseStream::Create(drop);
  CHECK(dropping->Send("1"));
  CHECK(dropping->Send("2"));
  CHECK_FALSE(dropping->Send("3"));
  CHECK(dropping->dropped() == 1);
  CHECK_FALSE(dropping->cancelled());

  SseOptions cancel = drop;
  cancel.overflow = SseOverflow::kCancel;
  auto cancelling = SseStream::Create(cancel);
  CHECK(cancelling->Send("1"));
  CHECK(cancelling->Send("2"));
  CHECK_FALSE(cancelling->Send("3"));
  CHECK(cancelling->cancelled());
  CHECK(*cancelling->cancel_flag());
  std::string out;
  CHECK(cancelling->Next(out) == SseStream::Pull::kAbort);
}

TEST_CASE("shutdown cancels the producer but drains what is queued", "[adapters][http][sse]") {
  auto stream = SseStream::Create();
  CHECK(stream->Send("queued"));
  stream->Shutdown();
  CHECK(stream->cancelled());
  CHECK(stream->WaitForCancel(absl::ZeroDuration()));
  CHECK_FALSE(stream->Send("late"));
  std::string out;
  REQUIRE(stream->Next(out) == SseStream::Pull::kWrite);
  CHECK(out == "data: queued\n\n");
  CHECK(stream->Next(out) == SseStream::Pull::kEnd);
  // A stream the connection released before its producer closed it counts as cancelled.
  auto orphan = SseStream::Create();
  orphan->MarkFinished(true);
  CHECK(orphan->cancelled());
}

TEST_CASE("a stream delivers events and heartbeats over HTTP", "[adapters][http][sse]") {
  StreamBox box;
  testing::TestServer server(
      testing::TestOptions(),
      testing::FullRouter({{"subscribe_events", BoxedStream(box, absl::Milliseconds(50))}}));
  const std::string token = server.Token({"monitoring:read"});
  std::string received;
  absl::Mutex mu;
  httplib::Headers response_headers;
  int status = 0;
  std::thread client([&] {
    auto cli = server.Client();
    httplib::Request req;
    req.method = "GET";
    req.path = "/api/agent/events";
    req.headers = testing::TokenHeader(token);
    req.response_handler = [&](const httplib::Response& res) {
      absl::MutexLock lock(&mu);
      status = res.status;
      response_headers = res.headers;
      return true;
    };
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      absl::MutexLock lock(&mu);
      received.append(data, n);
      return true;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    cli->send(req, res, error);
    CHECK(error == httplib::Error::Success);
  });
  std::shared_ptr<SseStream> stream = box.WaitFor(0);
  REQUIRE(stream->SendEvent("finding.created", R"({"findingId":"f-1"})", 1));
  auto has = [&](const std::string& text) {
    absl::MutexLock lock(&mu);
    return received.find(text) != std::string::npos;
  };
  CHECK(Eventually(
      [&] { return has("event: finding.created\nid: 1\ndata: {\"findingId\":\"f-1\"}\n\n"); }));
  CHECK(Eventually([&] { return has(": ping\n\n"); }));
  stream->Close();
  client.join();
  absl::MutexLock lock(&mu);
  CHECK(status == 200);
  CHECK(response_headers.find("Content-Type")->second == "text/event-stream");
  CHECK(response_headers.find("Cache-Control")->second == "no-cache");
  CHECK(received.rfind("event: stream.connected\ndata: {\"kind\":\"stream.connected\"}\n\n", 0) ==
        0);
  CHECK(Eventually([&] { return server.server().stats().open_streams == 0; }));
}

TEST_CASE("a client that goes away cancels the producer", "[adapters][http][sse]") {
  StreamBox box;
  testing::TestServer server(
      testing::TestOptions(),
      testing::FullRouter({{"subscribe_events", BoxedStream(box, absl::Milliseconds(20))}}));
  const std::string token = server.Token({"monitoring:read"});
  const testing::Reply reply =
      testing::Send(server, "GET", "/api/agent/events", "", testing::TokenHeader(token), true);
  CHECK(reply.status == 200);
  CHECK(reply.error == httplib::Error::Canceled);
  std::shared_ptr<SseStream> stream = box.WaitFor(0);
  CHECK(stream->WaitForCancel(absl::Seconds(3)));
  CHECK(Eventually([&] { return stream->finished(); }));
  CHECK_FALSE(stream->Send("anyone there?"));
  CHECK(Eventually([&] { return server.server().stats().open_streams == 0; }));
}

TEST_CASE("stopping the server ends open streams cleanly", "[adapters][http][sse]") {
  StreamBox box;
  auto server = std::make_unique<testing::TestServer>(
      testing::TestOptions(),
      testing::FullRouter({{"subscribe_events", BoxedStream(box, absl::Seconds(10))}}));
  const std::string token = server->Token({"monitoring:read"});
  httplib::Error error = httplib::Error::Unknown;
  std::string received;
  std::thread client([&] {
    auto cli = server->Client();
    cli->set_read_timeout(10, 0);
    auto result = cli->Get("/api/agent/events", testing::TokenHeader(token),
                           [&](const char* data, std::size_t n) {
                             received.append(data, n);
                             return true;
                           });
    error = result.error();
  });
  std::shared_ptr<SseStream> stream = box.WaitFor(0);
  // Open once the transport registered it (the handler's return is not enough: the Beast
  // transport admits the stream on its event loop; one still unadmitted at stop is a 503).
  REQUIRE(Eventually([&] { return server->server().stats().open_streams == 1; }));
  const auto start = Clock::now();
  server->server().Stop();
  client.join();
  CHECK(Clock::now() - start < std::chrono::seconds(3));
  CHECK(error == httplib::Error::Success);
  CHECK(stream->cancelled());
  CHECK(received.find("stream.connected") != std::string::npos);
  server.reset();
}

TEST_CASE("streams beyond the budget are 503 and their producers never started",
          "[adapters][http][sse]") {
  StreamBox box;
  HttpServerOptions options = testing::TestOptions();
  options.max_subscription_streams = 1;
  testing::TestServer server(
      options, testing::FullRouter({{"subscribe_events", BoxedStream(box, absl::Seconds(10))}}));
  const std::string token = server.Token({"monitoring:read"});
  std::thread first(
      [&] { testing::Send(server, "GET", "/api/agent/events", "", testing::TokenHeader(token)); });
  box.WaitFor(0);
  REQUIRE(Eventually([&] { return server.server().stats().open_streams == 1; }));
  const testing::Reply second =
      testing::Send(server, "GET", "/api/agent/events", "", testing::TokenHeader(token));
  CHECK(second.status == 503);
  CHECK(testing::ErrorCode(second.body) == "service_unavailable");
  CHECK(second.headers.find("Retry-After")->second == "1");
  {
    // The slot is taken before the handler runs: the refused stream's handler never ran.
    absl::MutexLock lock(&box.mu);
    CHECK(box.streams.size() == 1);
  }
  box.WaitFor(0)->Close();
  first.join();
}

TEST_CASE("256 open streams do not starve a short request", "[adapters][http][sse]") {
  constexpr int kStreams = 256;
  StreamBox box;
  testing::TestServer server(
      testing::TestOptions(),
      testing::FullRouter({{"subscribe_events", BoxedStream(box, absl::Seconds(10))}}));
  const std::string token = server.Token({"monitoring:read"});
  std::atomic<int> connected{0};
  std::vector<std::thread> clients;
  clients.reserve(kStreams);
  for (int i = 0; i < kStreams; ++i) {
    clients.emplace_back([&] {
      auto cli = server.Client();
      cli->set_read_timeout(15, 0);
      bool first = true;
      cli->Get("/api/agent/events", testing::TokenHeader(token), [&](const char*, std::size_t) {
        if (first) {
          first = false;
          ++connected;
        }
        return true;
      });
    });
  }
  REQUIRE(Eventually([&] { return connected.load() == kStreams; }, std::chrono::seconds(4)));
  CHECK(server.server().stats().open_streams == kStreams);
  const auto start = Clock::now();
  const testing::Reply reply =
      testing::Send(server, "GET", "/api/agent/fleet-context", "", testing::TokenHeader(token));
  const auto elapsed = Clock::now() - start;
  CHECK(reply.status == 200);
  CHECK(elapsed < std::chrono::milliseconds(1000));
  const HttpServerStats stats = server.server().stats();
  INFO("workers " << stats.threads << " peak " << stats.peak_threads << " short request "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
                  << " ms");
  // The event loops write every stream: no thread is added per stream.
  CHECK(stats.peak_threads < 16);
  server.server().Stop();
  for (std::thread& t : clients) {
    t.join();
  }
}

}  // namespace
}  // namespace pulse::adapters::http
