// The notification outbox's delivery figures (docs/performance.md "Notifications"): the real
// pulse-server delivering to a loopback webhook receiver (tests/e2e/notifications). Not a Google
// Benchmark suite and not a ctest: run it by hand, it prints two figures.
//   throughput: N findings written through the SQLite store while the server is down (each queues
//     one notification per channel in its own transaction; four channels, so each stays under
//     its 600-a-minute rate limit), then the server started: notifications/s from the first
//     delivery to the last;
//   latency: with the server running, a finding written every 20 ms from this process (another
//     connection to the same WAL database, as a second writer would be): time from the write's
//     commit to the receiver's arrival, p50 / p99 / max.
// PULSE_BENCH_NOTIFICATIONS (N findings, default 500) and PULSE_BENCH_LATENCY_EVENTS (M,
// default 200) size the runs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "notification_receiver.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/json/json.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::max(1, std::atoi(v));
}

core::Finding MakeFinding(const std::string& id) {
  core::Finding f;
  f.id = id;
  f.key = id;
  f.severity = core::Severity::kWarning;
  f.category = core::Category::kReliability;
  f.resource_id = "vm:" + id;
  f.title = "bench " + id;
  f.detected_at = absl::Now();
  f.last_seen_at = f.detected_at;
  f.times_raised = 1;
  return f;
}

absl::Duration Percentile(std::vector<absl::Duration> v, double p) {
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

TEST_CASE("notification delivery: throughput and event-to-receiver latency", "[bench]") {
  const int n = std::min(EnvInt("PULSE_BENCH_NOTIFICATIONS", 500), 600);
  const int m = EnvInt("PULSE_BENCH_LATENCY_EVENTS", 200);
  TempDir dir;
  const std::string token = MintToken(dir.path(), "settings:write", "bench");
  NotificationReceiver receiver;
  const std::vector<std::string> args = {"--patrol-interval", "0"};
  {
    ServerProcess server(dir.path(), {.args = args});
    std::string channels;
    for (int c = 0; c < 4; ++c) {
      absl::StrAppend(&channels, c == 0 ? "" : ",", R"({"name":"bench)", c,
                      R"(","kind":"webhook","url":")", receiver.Url("/hook"),
                      R"(","secret":"s","rate_per_minute":600})");
    }
    const Reply put = Send(server.port(), "PUT", "/api/settings/notifications", token,
                           absl::StrCat(R"({"channels":[)", channels, "]}"));
    REQUIRE(put.status == 200);
    server.Stop();
  }
  {
    auto storage = adapters::storage::OpenSqliteStorage(dir.path());
    REQUIRE(storage.ok());
    for (int i = 0; i < n; ++i) {
      REQUIRE((*storage)->findings->Put(MakeFinding(absl::StrCat("t", i)), 0).ok());
    }
  }
  ServerProcess server(dir.path(), {.args = args});
  REQUIRE(receiver.WaitFor(static_cast<std::size_t>(4 * n), absl::Seconds(300)));
  std::vector<ReceivedRequest> got = receiver.Requests();
  const absl::Duration span = got.back().at - got.front().at;
  const double per_second =
      static_cast<double>(got.size() - 1) / std::max(absl::ToDoubleSeconds(span), 1e-9);
  std::printf("throughput: %zu notifications in %.3f s = %.0f notifications/s (4 channels)\n",
              got.size(), absl::ToDoubleSeconds(span), per_second);

  // Latency: one fresh channel (its own rate window), findings written from this process.
  REQUIRE(Send(server.port(), "PUT", "/api/settings/notifications", token,
               absl::StrCat(R"({"channels":[{"name":"lat","kind":"webhook","url":")",
                            receiver.Url("/hook"), R"(","rate_per_minute":600}]})"))
              .status == 200);
  const std::size_t before = receiver.Requests().size();
  std::map<std::string, absl::Time> written;
  {
    auto storage = adapters::storage::OpenSqliteStorage(dir.path());
    REQUIRE(storage.ok());
    for (int i = 0; i < m; ++i) {
      const core::Finding f = MakeFinding(absl::StrCat("l", i));
      REQUIRE((*storage)->findings->Put(f, 0).ok());
      written[f.id] = absl::Now();
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  REQUIRE(receiver.WaitFor(before + static_cast<std::size_t>(m), absl::Seconds(120)));
  std::vector<absl::Duration> latencies;
  for (const ReceivedRequest& r : receiver.Requests()) {
    rapidjson::Document payload = Json(r.body);
    auto it = written.find(Str(payload, "subject_id"));
    if (it != written.end()) {
      latencies.push_back(r.at - it->second);
    }
  }
  REQUIRE(latencies.size() == static_cast<std::size_t>(m));
  std::printf(
      "latency (write committed -> receiver), %d events: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      m, absl::ToDoubleMilliseconds(Percentile(latencies, 0.50)),
      absl::ToDoubleMilliseconds(Percentile(latencies, 0.99)),
      absl::ToDoubleMilliseconds(Percentile(latencies, 1.0)));

  // The same, for events the server's own stores write (here an alert's finding, through
  // POST /api/ai/investigate-alert): those wake the sender, rows from another process wait for
  // its poll. The polled figure above is this run's baseline.
  const std::string alerts = MintToken(dir.path(), "ai:execute", "bench-alerts");
  const std::size_t before_alerts = receiver.Requests().size();
  std::map<std::string, absl::Time> posted;  // alert name -> when its POST was sent
  for (int i = 0; i < m; ++i) {
    const std::string name = absl::StrCat("BenchAlert", i);
    posted[name] = absl::Now();
    const Reply reply = Send(server.port(), "POST", "/api/ai/investigate-alert", alerts,
                             absl::StrCat(R"({"alerts":[{"name":")", name,
                                          R"(","resource_id":"vm:101","severity":"critical"}]})"));
    REQUIRE(reply.status == 200);
    absl::SleepFor(absl::Milliseconds(20));
  }
  REQUIRE(receiver.WaitFor(before_alerts + static_cast<std::size_t>(m), absl::Seconds(120)));
  std::vector<absl::Duration> woken;
  for (const ReceivedRequest& r : receiver.Requests()) {
    rapidjson::Document payload = Json(r.body);
    const std::string title = Str(payload, "title");
    for (const auto& [name, at] : posted) {
      if (title.find(absl::StrCat("Alert ", name, " is firing")) != std::string::npos) {
        woken.push_back(r.at - at);
      }
    }
  }
  REQUIRE(woken.size() == static_cast<std::size_t>(m));
  std::printf(
      "latency (alert POST sent -> receiver, sender woken by the write), %d events: p50 %.1f ms, "
      "p99 %.1f ms, max %.1f ms; p50 against the polled baseline: x%.2f\n",
      m, absl::ToDoubleMilliseconds(Percentile(woken, 0.50)),
      absl::ToDoubleMilliseconds(Percentile(woken, 0.99)),
      absl::ToDoubleMilliseconds(Percentile(woken, 1.0)),
      absl::ToDoubleMilliseconds(Percentile(woken, 0.50)) /
          std::max(absl::ToDoubleMilliseconds(Percentile(latencies, 0.50)), 1e-9));
}

}  // namespace
}  // namespace pulse::testing::e2e
