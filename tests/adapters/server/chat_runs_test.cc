// ChatRuns' bounded pool (adapters/server/chat_runs.h): runs beyond the workers wait in a
// bounded queue, a run over it is refused and changes nothing, a queued run that is aborted or
// whose client goes away ends at once without starting, shutdown ends queued runs and cancels
// working ones, and idle workers leave. Real SseStreams and threads; the thread count is read
// from /proc/self/task.
#include "pulse/adapters/server/chat_runs.h"

#include <dirent.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;

int ThreadsNow() {
  DIR* dir = opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    n += entry->d_name[0] == '.' ? 0 : 1;
  }
  closedir(dir);
  return n;
}

// Polls `done` every 5 ms for up to `timeout`; its last answer.
template <typename Fn>
bool Eventually(Fn done, absl::Duration timeout = absl::Seconds(5)) {
  const auto until = std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(timeout);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) {
      return done();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Everything a stream carried once its producer closed it ("" if it is still open).
std::string Drain(http::SseStream& stream) {
  std::string all;
  for (int i = 0; i < 100; ++i) {
    std::string out;
    const http::SseStream::Pull pull = stream.Next(out);
    if (pull != http::SseStream::Pull::kWrite) {
      return all;
    }
    if (out.rfind(":", 0) != 0) {
      all += out;
    }
  }
  return all;
}

// A body that holds its worker until `release` is notified (or the run is cancelled).
std::function<void(ChatRun&)> Held(absl::Notification& release, std::atomic<int>& ran) {
  return [&release, &ran](ChatRun& run) {
    ++ran;
    while (!release.HasBeenNotified() && !run.cancelled()) {
      release.WaitForNotificationWithTimeout(absl::Milliseconds(5));
    }
    run.stream().Send("held run ended");
  };
}

TEST_CASE("runs beyond the worker bound wait in the queue and all complete on that many threads",
          "[server][runs][pool]") {
  ChatRunsOptions options;
  options.workers = 3;
  options.queue = 60;
  ChatRuns runs(options);
  const int idle_threads = ThreadsNow();  // the caller, Catch2's, and the runs' watcher
  std::atomic<int> working{0};
  std::atomic<int> most{0};
  std::atomic<int> finished{0};
  std::atomic<int> peak_threads{0};
  std::vector<std::shared_ptr<http::SseStream>> streams;
  for (int i = 0; i < 60; ++i) {
    streams.push_back(http::SseStream::Create());
    REQUIRE(runs.Start(streams.back(), "",
                       [&](ChatRun& run) {
                         const int now = ++working;
                         int seen = most.load();
                         while (now > seen && !most.compare_exchange_weak(seen, now)) {
                         }
                         const int threads = ThreadsNow();
                         seen = peak_threads.load();
                         while (threads > seen &&
                                !peak_threads.compare_exchange_weak(seen, threads)) {
                         }
                         std::this_thread::sleep_for(std::chrono::milliseconds(3));
                         run.stream().Send("ok");
                         --working;
                         ++finished;
                       })
                .ok());
  }
  CHECK(runs.workers() <= 3);
  REQUIRE(Eventually([&] { return finished.load() == 60 && runs.active() == 0; }));
  CHECK(most.load() <= 3);
  CHECK(most.load() >= 1);
  CHECK(peak_threads.load() <= idle_threads + 3);
  for (const auto& stream : streams) {
    CHECK(Drain(*stream) == "data: ok\n\n");
  }
  CHECK(runs.Shutdown(absl::Seconds(5)));
  CHECK(runs.workers() == 0);
}

TEST_CASE("a run over the queue bound is refused and changes nothing", "[server][runs][pool]") {
  ChatRunsOptions options;
  options.workers = 1;
  options.queue = 2;
  ChatRuns runs(options);
  absl::Notification release;
  std::atomic<int> ran{0};
  REQUIRE(runs.Start(http::SseStream::Create(), "ses_1", Held(release, ran)).ok());
  REQUIRE(Eventually([&] { return ran.load() == 1; }));
  REQUIRE(runs.Start(http::SseStream::Create(), "ses_2", Held(release, ran)).ok());
  REQUIRE(runs.Start(http::SseStream::Create(), "ses_3", Held(release, ran)).ok());
  CHECK(runs.queued() == 2);

  bool refused_ran = false;
  auto refused_stream = http::SseStream::Create();
  const absl::Status refused = runs.Start(
      refused_stream, "ses_4", [&](ChatRun&) { refused_ran = true; },
      [&](ChatRun&) { refused_ran = true; });
  CHECK(refused.code() == absl::StatusCode::kResourceExhausted);
  CHECK(refused.message().find("retry later") != std::string::npos);
  CHECK(runs.active() == 3);
  CHECK(runs.queued() == 2);
  CHECK_FALSE(runs.IsRunning("ses_4"));
  CHECK_FALSE(runs.Abort("ses_4"));
  CHECK_FALSE(refused_stream->cancelled());  // the caller answers the refusal; the run is not

  release.Notify();
  REQUIRE(Eventually([&] { return runs.active() == 0; }));
  CHECK(ran.load() == 3);
  CHECK_FALSE(refused_ran);
  // Room again.
  CHECK(runs.Start(http::SseStream::Create(), "ses_5", [](ChatRun&) {}).ok());
}

TEST_CASE("a zero queue refuses a run whenever every worker is busy", "[server][runs][pool]") {
  ChatRunsOptions options;
  options.workers = 2;
  options.queue = 0;
  ChatRuns runs(options);
  absl::Notification release;
  std::atomic<int> ran{0};
  REQUIRE(runs.Start(http::SseStream::Create(), "a", Held(release, ran)).ok());
  REQUIRE(runs.Start(http::SseStream::Create(), "b", Held(release, ran)).ok());
  CHECK(runs.Start(http::SseStream::Create(), "c", Held(release, ran)).code() ==
        absl::StatusCode::kResourceExhausted);
  release.Notify();
  REQUIRE(Eventually([&] { return runs.active() == 0; }));
  CHECK(ran.load() == 2);
  // A worker count of 0 is taken as 1: never a pool that cannot run anything.
  ChatRunsOptions zero;
  zero.workers = 0;
  zero.queue = 0;
  ChatRuns clamped(zero);
  CHECK(clamped.options().workers == 1);
  std::atomic<bool> done{false};
  REQUIRE(clamped.Start(http::SseStream::Create(), "", [&](ChatRun&) { done = true; }).ok());
  CHECK(Eventually([&] { return done.load(); }));
}

TEST_CASE("a queued run that is aborted or whose client goes away ends at once without starting",
          "[server][runs][pool]") {
  http::MetricsRegistry registry;
  absl::StatusOr<std::unique_ptr<ServerMetrics>> metrics = ServerMetrics::Register(registry);
  REQUIRE(metrics.ok());
  ChatRunsOptions options;
  options.workers = 1;
  options.queue = 4;
  ChatRuns runs(options);
  absl::Notification release;
  std::atomic<int> ran{0};
  auto holder = http::SseStream::Create();
  REQUIRE(runs.Start(holder, "ses_hold", Held(release, ran)).ok());
  REQUIRE(Eventually([&] { return ran.load() == 1; }));

  std::atomic<int> never_started{0};
  const auto cancelled_sink = [&](ChatRun& run) {
    ++never_started;
    ChatEventSink sink(run, **metrics);
    sink.EmitCancelledBeforeStart();
  };
  bool body_ran = false;
  auto queued = http::SseStream::Create();
  REQUIRE(runs.Start(
                  queued, "ses_q", [&](ChatRun&) { body_ran = true; }, cancelled_sink)
              .ok());
  CHECK(runs.IsRunning("ses_q"));  // queued counts: the session is held (no delete meanwhile)
  CHECK(runs.queued() == 1);
  CHECK(runs.Abort("ses_q"));
  CHECK(runs.queued() == 0);  // ended by Abort itself, not when a worker frees up
  CHECK_FALSE(runs.IsRunning("ses_q"));
  CHECK(never_started.load() == 1);
  const std::string frames = Drain(*queued);
  CHECK(frames.find(R"({"type":"error","data":{"code":"RUN_CANCELLED","reason":"cancelled")") !=
        std::string::npos);
  CHECK(frames.find(R"({"type":"done","data":{"session_id":"ses_q","outcome":"failed"}})") !=
        std::string::npos);
  CHECK(runs.IsRunning("ses_hold"));  // the working run is untouched

  auto left = http::SseStream::Create();
  REQUIRE(runs.Start(
                  left, "", [&](ChatRun&) { body_ran = true; }, cancelled_sink)
              .ok());
  left->Abort();  // the connection noticed the client left
  CHECK(Eventually([&] { return runs.queued() == 0; }, absl::Seconds(2)));
  CHECK(never_started.load() == 2);
  CHECK(ran.load() == 1);

  release.Notify();
  REQUIRE(Eventually([&] { return runs.active() == 0; }));
  CHECK_FALSE(body_ran);
  CHECK(Drain(*holder) == "data: held run ended\n\n");
}

TEST_CASE("shutdown ends queued runs without starting them and cancels the working ones",
          "[server][runs][pool]") {
  ChatRunsOptions options;
  options.workers = 2;
  options.queue = 8;
  auto runs = std::make_unique<ChatRuns>(options);
  absl::Notification never;  // the working runs end only by cancellation
  std::atomic<int> ran{0};
  std::atomic<int> never_started{0};
  std::vector<std::shared_ptr<http::SseStream>> streams;
  for (int i = 0; i < 5; ++i) {
    streams.push_back(http::SseStream::Create());
    REQUIRE(runs->Start(streams.back(), "ses_" + std::to_string(i), Held(never, ran),
                        [&](ChatRun& run) {
                          ++never_started;
                          run.stream().Send("never started");
                        })
                .ok());
  }
  REQUIRE(Eventually([&] { return ran.load() == 2; }));
  CHECK(runs->queued() == 3);
  CHECK(runs->Shutdown(absl::Seconds(5)));
  CHECK(ran.load() == 2);
  CHECK(never_started.load() == 3);
  CHECK(runs->active() == 0);
  CHECK(runs->workers() == 0);
  int ended_held = 0;
  int ended_unstarted = 0;
  for (const auto& stream : streams) {
    const std::string frames = Drain(*stream);
    ended_held += frames == "data: held run ended\n\n" ? 1 : 0;
    ended_unstarted += frames == "data: never started\n\n" ? 1 : 0;
  }
  CHECK(ended_held == 2);
  CHECK(ended_unstarted == 3);
  CHECK(runs->Start(http::SseStream::Create(), "late", [](ChatRun&) {}).code() ==
        absl::StatusCode::kUnavailable);
  runs.reset();  // nothing left to join: the destructor returns at once
}

TEST_CASE("a run slow to notice shutdown is waited for again, and nothing is left behind",
          "[server][runs][pool]") {
  const int before = ThreadsNow();
  {
    ChatRunsOptions options;
    options.workers = 1;
    ChatRuns runs(options);
    std::atomic<bool> started{false};
    REQUIRE(runs.Start(http::SseStream::Create(), "slow",
                       [&](ChatRun& run) {
                         started = true;
                         while (!run.cancelled()) {
                           std::this_thread::sleep_for(std::chrono::milliseconds(2));
                         }
                         std::this_thread::sleep_for(std::chrono::milliseconds(300));
                       })
                .ok());
    REQUIRE(Eventually([&] { return started.load(); }));
    CHECK_FALSE(runs.Shutdown(absl::Milliseconds(20)));
    CHECK(runs.workers() == 1);
    CHECK(runs.Shutdown(absl::Seconds(5)));
    CHECK(runs.workers() == 0);
  }
  CHECK(Eventually([&] { return ThreadsNow() == before; }));
}

TEST_CASE("an idle worker leaves after its timeout and a new one starts for the next run",
          "[server][runs][pool]") {
  ChatRunsOptions options;
  options.workers = 4;
  options.idle_worker_exit = absl::Milliseconds(50);
  ChatRuns runs(options);
  const int idle_threads = ThreadsNow();
  std::atomic<int> done{0};
  for (int i = 0; i < 4; ++i) {
    REQUIRE(runs.Start(http::SseStream::Create(), "",
                       [&](ChatRun&) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(20));
                         ++done;
                       })
                .ok());
  }
  REQUIRE(Eventually([&] { return done.load() == 4; }));
  CHECK(Eventually([&] { return runs.workers() == 0 && ThreadsNow() == idle_threads; }));
  REQUIRE(runs.Start(http::SseStream::Create(), "", [&](ChatRun&) { ++done; }).ok());
  CHECK(Eventually([&] { return done.load() == 5; }));
}

TEST_CASE("run workers and the run queue come from flags or pulse.json, bounded",
          "[server][config][runs]") {
  testing::TempDir dir;
  ServerSettings defaults;
  defaults.data_dir = dir.path();
  absl::StatusOr<ServerConfig> plain = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE(plain.ok());
  CHECK(plain->run_workers == kDefaultRunWorkers);
  CHECK(plain->run_queue == kDefaultRunQueue);
  { std::ofstream(dir.path() + "/pulse.json") << R"({"run_workers":4,"run_queue":"0"})"; }
  absl::StatusOr<ServerConfig> file = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE(file.ok());
  CHECK(file->run_workers == 4);
  CHECK(file->run_queue == 0);  // no waiting: a run is refused whenever every worker is busy
  ServerSettings flag = defaults;
  flag.run_workers = "256";
  flag.run_queue = "65536";
  absl::StatusOr<ServerConfig> most = ResolveServerConfig(flag, std::nullopt);
  REQUIRE(most.ok());
  CHECK(most->run_workers == 256);  // the command line wins over pulse.json
  CHECK(most->run_queue == 65536);
  std::remove((dir.path() + "/pulse.json").c_str());
  for (const char* bad : {"0", "-1", "257", "1e3", "", " 4", "4 ", "4.0", "0x10", "+4",
                          "99999999999999999999", "\xef\xbc\x94"}) {
    INFO(bad);
    ServerSettings wrong = defaults;
    wrong.run_workers = bad;
    absl::StatusOr<ServerConfig> refused = ResolveServerConfig(wrong, std::nullopt);
    REQUIRE_FALSE(refused.ok());
    CHECK(std::string(refused.status().message()) ==
          "--run-workers must be an integer from 1 to 256");
  }
  for (const char* bad : {"-1", "65537", "1000000", "", "abc", "-0", "1e3"}) {
    INFO(bad);
    ServerSettings wrong = defaults;
    wrong.run_queue = bad;
    absl::StatusOr<ServerConfig> refused = ResolveServerConfig(wrong, std::nullopt);
    REQUIRE_FALSE(refused.ok());
    CHECK(std::string(refused.status().message()) ==
          "--run-queue must be an integer from 0 to 65536");
  }
  for (const char* json : {R"({"run_workers":0})", R"({"run_workers":-3})", R"({"run_queue":1.5})",
                           R"({"run_queue":true})", R"({"run_workers":4294967296})"}) {
    INFO(json);
    { std::ofstream(dir.path() + "/pulse.json") << json; }
    absl::StatusOr<ServerConfig> refused = ResolveServerConfig(defaults, std::nullopt);
    REQUIRE_FALSE(refused.ok());
    CHECK(std::string(refused.status().message()).find("pulse.json") != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::server
