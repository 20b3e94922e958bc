// The event-driven connection side of SseStream (SetWakeup, TryNext, HeartbeatFrame), which an
// event-loop transport uses instead of a thread blocked in Next: frames come out whole and in
// order, every state change wakes the connection outside the stream's lock, and producers
// racing a cancellation never lose the end of the stream.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/http/sse_stream.h"

namespace pulse::adapters::http {
namespace {

using Pull = SseStream::Pull;

// A connection stand-in: counts wake-ups and drains the stream with TryNext from the callback
// itself, the way an event loop would after the post. Calling TryNext there also proves the
// callback runs without the stream's lock held (absl::Mutex is not reentrant).
struct Drainer {
  explicit Drainer(std::shared_ptr<SseStream> s) : stream(std::move(s)) {}

  std::shared_ptr<SseStream> stream;
  std::mutex mu;
  std::condition_variable cv;
  std::string written;
  std::optional<Pull> last;
  int wakes = 0;

  void Attach() {
    stream->SetWakeup([this] {
      std::string out;
      const std::optional<Pull> pulled = stream->TryNext(out);
      std::lock_guard<std::mutex> lock(mu);
      ++wakes;
      written += out;
      if (pulled.has_value() && *pulled != Pull::kWrite) {
        last = pulled;
      }
      cv.notify_all();
    });
  }

  bool WaitForEnd() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [this] { return last.has_value(); });
  }
};

TEST_CASE("try-next never waits and returns queued frames whole and in order",
          "[adapters][http][sse]") {
  SseOptions options;
  options.heartbeat = absl::Seconds(30);
  auto stream = SseStream::Create(options);
  std::string out = "stale";
  CHECK_FALSE(stream->TryNext(out).has_value());
  CHECK(out.empty());
  CHECK(stream->Send("one"));
  CHECK(stream->SendEvent("x", "two\r\nlines", 7));
  CHECK(stream->Send("three"));
  REQUIRE(stream->TryNext(out) == Pull::kWrite);
  CHECK(out == "data: one\n\nevent: x\nid: 7\ndata: two\ndata: lines\n\ndata: three\n\n");
  CHECK_FALSE(stream->TryNext(out).has_value());
  stream->Close();
  CHECK(stream->TryNext(out) == Pull::kEnd);
  CHECK(stream->TryNext(out) == Pull::kEnd);  // stays ended
}

TEST_CASE("every change wakes the connection, outside the stream's lock", "[adapters][http][sse]") {
  auto stream = SseStream::Create();
  Drainer drainer(stream);
  drainer.Attach();
  CHECK(drainer.wakes == 0);  // nothing pending: no call at registration
  CHECK(stream->Send("a"));
  CHECK(stream->Send("b"));
  CHECK(drainer.wakes == 2);
  CHECK(drainer.written == "data: a\n\ndata: b\n\n");
  stream->Close();
  CHECK(drainer.wakes == 3);
  REQUIRE(drainer.last.has_value());
  CHECK(*drainer.last == Pull::kEnd);
  CHECK_FALSE(stream->Send("after close"));
  CHECK(drainer.wakes == 3);  // a refused frame changes nothing
}

TEST_CASE("a wake-up registered late fires at once for what is pending", "[adapters][http][sse]") {
  auto stream = SseStream::Create();
  CHECK(stream->Send("early"));
  int wakes = 0;
  stream->SetWakeup([&wakes] { ++wakes; });
  CHECK(wakes == 1);
  std::string out;
  REQUIRE(stream->TryNext(out) == Pull::kWrite);
  CHECK(out == "data: early\n\n");
  stream->SetWakeup(nullptr);
  CHECK(stream->Send("unwatched"));
  CHECK(wakes == 1);  // cleared: no more calls
}

TEST_CASE("abort and shutdown wake the connection and end it as each requires",
          "[adapters][http][sse]") {
  SECTION("abort drops what is queued") {
    auto stream = SseStream::Create();
    CHECK(stream->Send("never written"));
    int wakes = 0;
    stream->SetWakeup([&wakes] { ++wakes; });
    CHECK(wakes == 1);
    stream->Abort();
    CHECK(wakes == 2);
    CHECK(stream->cancelled());
    std::string out;
    CHECK(stream->TryNext(out) == Pull::kAbort);
    CHECK(out.empty());
  }
  SECTION("shutdown drains, then ends cleanly") {
    auto stream = SseStream::Create();
    int wakes = 0;
    stream->SetWakeup([&wakes] { ++wakes; });
    CHECK(stream->Send("queued"));
    stream->Shutdown();
    CHECK(wakes == 2);
    CHECK(stream->cancelled());
    std::string out;
    REQUIRE(stream->TryNext(out) == Pull::kWrite);
    CHECK(out == "data: queued\n\n");
    CHECK(stream->TryNext(out) == Pull::kEnd);
  }
  SECTION("overflow with kCancel aborts and wakes") {
    SseOptions options;
    options.max_queued_frames = 1;
    auto stream = SseStream::Create(options);
    int wakes = 0;
    stream->SetWakeup([&wakes] { ++wakes; });
    CHECK(stream->Send("1"));
    CHECK_FALSE(stream->Send("2"));
    CHECK(wakes == 2);
    std::string out;
    CHECK(stream->TryNext(out) == Pull::kAbort);
  }
  SECTION("a finished stream wakes and aborts a producer that had not closed") {
    auto stream = SseStream::Create();
    int wakes = 0;
    stream->SetWakeup([&wakes] { ++wakes; });
    stream->MarkFinished(true);
    CHECK(wakes == 1);
    CHECK(stream->cancelled());
    std::string out;
    CHECK(stream->TryNext(out) == Pull::kAbort);
  }
}

TEST_CASE("the heartbeat frame is the comment or the producer's frame", "[adapters][http][sse]") {
  SseOptions comment;
  comment.heartbeat = absl::Seconds(15);
  comment.heartbeat_comment = "beat\nwith a break";
  auto plain = SseStream::Create(comment);
  CHECK(plain->HeartbeatFrame() == ": beat with a break\n\n");
  CHECK(plain->heartbeat_interval() == absl::Seconds(15));
  std::string out;
  CHECK_FALSE(plain->TryNext(out).has_value());  // a heartbeat is never queued

  SseOptions framed;
  int beats = 0;
  framed.heartbeat_frame = [&beats] { return FormatSseEvent("heartbeat", "{}", ++beats).value(); };
  auto custom = SseStream::Create(framed);
  CHECK(custom->HeartbeatFrame() == "event: heartbeat\nid: 1\ndata: {}\n\n");
  CHECK(custom->HeartbeatFrame() == "event: heartbeat\nid: 2\ndata: {}\n\n");
}

TEST_CASE("producers racing a cancellation lose no frame before it and never hang",
          "[adapters][http][sse]") {
  for (int round = 0; round < 20; ++round) {
    SseOptions options;
    options.max_queued_frames = 1 << 20;
    auto stream = SseStream::Create(options);
    Drainer drainer(stream);
    drainer.Attach();
    std::atomic<int> accepted{0};
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p) {
      producers.emplace_back([&stream, &accepted, p] {
        for (int i = 0; i < 200; ++i) {
          if (stream->Send(absl::StrCat(p, ":", i))) {
            accepted.fetch_add(1);
          }
        }
      });
    }
    std::thread canceller([&stream, round] {
      if (round % 2 == 0) {
        stream->Close();
      } else {
        stream->Shutdown();
      }
    });
    for (std::thread& t : producers) {
      t.join();
    }
    canceller.join();
    REQUIRE(drainer.WaitForEnd());
    std::string rest;
    while (stream->TryNext(rest) == Pull::kWrite) {
      drainer.written += rest;
    }
    CHECK(*drainer.last == Pull::kEnd);
    // Every frame a producer was told was accepted reached the connection, each whole. (After
    // Shutdown, Send may report false for a frame queued just before it, which still drains.)
    std::size_t frames = 0;
    for (std::size_t at = 0; (at = drainer.written.find("\n\n", at)) != std::string::npos;
         at += 2) {
      ++frames;
    }
    if (round % 2 == 0) {
      CHECK(frames == static_cast<std::size_t>(accepted.load()));
    } else {
      CHECK(frames >= static_cast<std::size_t>(accepted.load()));
    }
  }
}

}  // namespace
}  // namespace pulse::adapters::http
