// Reads answered on the event loop (HttpServerOptions::loop_routes, core/ports/no_blocking.h),
// over real loopback connections: a listed GET runs on the loop inside a NoBlockingScope; a
// call in it that refuses to wait sends the request on to the handler pool, where it runs again
// and its reply is the one the client gets; the loop is free meanwhile; routes not listed, and
// listed routes reached by another method, run on the pool as before.
#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "http_test_support.h"
#include "pulse/core/ports/no_blocking.h"

namespace pulse::adapters::http {
namespace {

using testing::TestServer;

// Each run of a handler: whether it ran where it must not wait, and what it did.
class Runs {
 public:
  void Add(const std::string& route, bool on_loop, bool wrote) {
    absl::MutexLock lock(&mu_);
    runs_.push_back(Run{route, on_loop, wrote});
  }
  struct Run {
    std::string route;
    bool on_loop = false;
    bool wrote = false;
    friend bool operator==(const Run&, const Run&) = default;
  };
  std::vector<Run> Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(runs_, {});
  }

 private:
  absl::Mutex mu_;
  std::vector<Run> runs_ ABSL_GUARDED_BY(mu_);
};

// A handler that reads, then "writes" while `write` is set: the write is what a store would do,
// refusing first on a thread that must not wait. Its reply says where it ran.
HttpHandler Recording(Runs& runs, std::string route, const std::atomic<bool>& write) {
  return [&runs, route, &write](const HttpRequest&) {
    const bool on_loop = core::NoBlockingScope::Current() != nullptr;
    if (write) {
      if (absl::Status refused = core::RefuseIfNoBlocking("the test's write"); !refused.ok()) {
        runs.Add(route, on_loop, false);
        // What a handler makes of a refused write; the client must never see it.
        return HttpReply::Error(core::AgentErrorCode::kServiceUnavailable, "refused");
      }
    }
    runs.Add(route, on_loop, write.load());
    return HttpReply::Json(on_loop ? R"({"ran":"loop"})" : R"({"ran":"pool"})");
  };
}

HttpServerOptions LoopOptions(std::size_t io_threads) {
  HttpServerOptions options = testing::TestOptions();
  options.io_threads = io_threads;
  options.handler_threads = 2;
  options.loop_routes = {"get_fleet_context", "set_operator_state"};
  return options;
}

TEST_CASE("a loop route is answered on the event loop, and again on the pool when a call refuses",
          "[adapters][http][loop]") {
  Runs runs;
  std::atomic<bool> write{false};
  TestServer server(LoopOptions(2),
                    testing::FullRouter({{"get_fleet_context", Recording(runs, "fleet", write)},
                                         {"list_findings", Recording(runs, "findings", write)},
                                         {"set_operator_state", Recording(runs, "set", write)}}));
  const std::string token = server.Token({"*"});
  const httplib::Headers auth = {{"X-API-Token", token}};
  auto client = server.Client();

  // A read: answered where it ran, on the loop, once.
  httplib::Result read = client->Get("/api/agent/fleet-context", auth);
  REQUIRE(read);
  CHECK(read->status == 200);
  CHECK(read->body == R"({"ran":"loop"})");
  CHECK(runs.Take() == std::vector<Runs::Run>{{"fleet", true, false}});

  // A read that writes: refused on the loop, run again on the pool, written once there; the
  // client gets the pool's reply, not the refusal.
  write = true;
  httplib::Result written = client->Get("/api/agent/fleet-context", auth);
  REQUIRE(written);
  CHECK(written->status == 200);
  CHECK(written->body == R"({"ran":"pool"})");
  CHECK(runs.Take() == std::vector<Runs::Run>{{"fleet", true, false}, {"fleet", false, true}});

  // The connection is kept and its next loop read is answered on the loop again.
  write = false;
  httplib::Result again = client->Get("/api/agent/fleet-context", auth);
  REQUIRE(again);
  CHECK(again->body == R"({"ran":"loop"})");
  CHECK(runs.Take() == std::vector<Runs::Run>{{"fleet", true, false}});

  // A route not listed runs on the pool, and so does a listed name reached by a method that is
  // not a read (a body may be consumed, so it could not run twice).
  write = true;
  httplib::Result findings = client->Get("/api/ai/patrol/findings", auth);
  REQUIRE(findings);
  CHECK(findings->body == R"({"ran":"pool"})");
  httplib::Result set = client->Put("/api/resources/vm:1/operator-state", auth,
                                    R"({"intentionallyOffline":false,"neverAutoRemediate":true})",
                                    "application/json");
  REQUIRE(set);
  INFO(set->body);
  CHECK(runs.Take() == std::vector<Runs::Run>{{"findings", false, true}, {"set", false, true}});
  write = false;

  // Refusals before the handler are answered on the loop as usual.
  httplib::Result anonymous = client->Get("/api/agent/fleet-context");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 401);
  CHECK(runs.Take().empty());

  const HttpServerStats stats = server.server().stats();
  CHECK(stats.loop_answered == 3);  // the two reads and the 401
  CHECK(stats.loop_refused == 1);
}

TEST_CASE("a loop route sent on to the pool leaves its event loop free for other connections",
          "[adapters][http][loop]") {
  Runs runs;
  std::atomic<bool> write{false};
  absl::Notification release;
  absl::Notification waiting;
  // The write waits on the pool (as a write may, for the lock) until the test releases it.
  HttpHandler slow_write = [&](const HttpRequest& request) {
    HttpReply reply = Recording(runs, "fleet", write)(request);
    if (write && core::NoBlockingScope::Current() == nullptr) {
      waiting.Notify();
      release.WaitForNotificationWithTimeout(absl::Seconds(10));
    }
    return reply;
  };
  // One event loop: the second connection is served by the loop the first one came in on.
  TestServer server(LoopOptions(1), testing::FullRouter({{"get_fleet_context", slow_write}}));
  const std::string token = server.Token({"*"});
  const httplib::Headers auth = {{"X-API-Token", token}};

  int slow_status = 0;
  std::string slow_body;
  write = true;
  std::thread writer([&] {
    httplib::Result slow = server.Client()->Get("/api/agent/fleet-context", auth);
    if (slow) {
      slow_status = slow->status;
      slow_body = slow->body;
    }
  });
  REQUIRE(waiting.WaitForNotificationWithTimeout(absl::Seconds(5)));
  write = false;

  const auto start = std::chrono::steady_clock::now();
  httplib::Result quick = server.Client()->Get("/api/agent/fleet-context", auth);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(quick);
  CHECK(quick->body == R"({"ran":"loop"})");
  CHECK(took < std::chrono::seconds(2));  // not behind the write, which waits for ten

  release.Notify();
  writer.join();
  CHECK(slow_status == 200);
  CHECK(slow_body == R"({"ran":"pool"})");
}

TEST_CASE("a thread that must not wait is refused once and marks every scope around it",
          "[adapters][http][loop]") {
  CHECK(core::RefuseIfNoBlocking("outside").ok());
  core::NoBlockingScope outer;
  {
    core::NoBlockingScope inner;
    CHECK(core::NoBlockingScope::Current() == &inner);
    const absl::Status refused = core::RefuseIfNoBlocking("a write");
    CHECK(absl::IsUnavailable(refused));
    CHECK(refused.message().find("a write") != absl::string_view::npos);
    CHECK(inner.refused());
  }
  CHECK(core::NoBlockingScope::Current() == &outer);
  CHECK(outer.refused());
}

}  // namespace
}  // namespace pulse::adapters::http
