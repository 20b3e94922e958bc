// EngineClient against the real private daemon: version negotiation, list and inspect with
// labels and restart policy, stats, demultiplexed and bounded logs (TTY too), start / stop /
// restart with deadlines observed by an independent inspect, events with filters, a crash-loop
// under --restart on-failure, and a removed container as not_found.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "docker_test_support.h"

namespace pulse::docker::testing {
namespace {

// Polls inspect until `pred` holds (or about 15 s pass); the last details.
template <class Pred>
ContainerDetails WaitFor(const EngineClient& client, const std::string& id, Pred pred) {
  ContainerDetails details;
  for (int i = 0; i < 300; ++i) {
    auto inspected = client.Inspect(id);
    REQUIRE(inspected.ok());
    details = *inspected;
    if (pred(details)) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return details;
}

TEST_CASE("the client negotiates the daemon's API and lists and inspects containers",
          "[docker][engine]") {
  PULSE_NEED_DOCKERD(daemon);
  const EngineClient& client = daemon->client();
  CHECK(client.api() >= ApiVersion{1, 41});
  CHECK(client.api() <= kMaxApiVersion);
  CHECK_FALSE(client.version().version.empty());
  RunSpec spec;
  spec.name = "web";
  spec.cmd = {"sleep", "600"};
  spec.labels = {{"com.docker.compose.project", "shop"}, {"com.docker.compose.service", "web"}};
  spec.restart_policy = "unless-stopped";
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  auto list = client.ListContainers();
  REQUIRE(list.ok());
  const auto found = std::find_if(list->begin(), list->end(),
                                  [&](const ContainerSummary& c) { return c.id == *id; });
  REQUIRE(found != list->end());
  CHECK(found->name == "web");
  CHECK(found->image == kImage);
  CHECK(found->state == "running");
  CHECK(found->labels.at("com.docker.compose.project") == "shop");
  auto details = client.Inspect("web");  // by name as well as by id
  REQUIRE(details.ok());
  CHECK(details->id == *id);
  CHECK(details->running);
  CHECK(details->restart_policy == "unless-stopped");
  CHECK(details->started_at.has_value());
  CHECK(details->health.empty());
  CHECK(details->labels.at("com.docker.compose.service") == "web");
  REQUIRE(daemon->Remove(*id).ok());
  auto gone = client.Inspect(*id);
  CHECK(EngineErrorKindOf(gone.status()) == EngineErrorKind::kNotFound);
  CHECK(EngineErrorKindOf(client.Stats(*id).status()) == EngineErrorKind::kNotFound);
  CHECK(EngineErrorKindOf(client.Restart(*id, absl::Seconds(1), absl::Seconds(10)).status()) ==
        EngineErrorKind::kNotFound);
}

TEST_CASE("stats of a running container give CPU, memory and pids", "[docker][engine]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec;
  spec.cmd = {"sh", "-c", "while true; do :; done"};  // keeps a CPU busy
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  auto stats = daemon->client().Stats(*id);
  REQUIRE(stats.ok());
  REQUIRE(stats->cpu_percent.has_value());
  CHECK(*stats->cpu_percent > 5.0);
  CHECK(*stats->cpu_percent <= 100.0 * static_cast<double>(stats->online_cpus) + 1.0);
  CHECK(stats->memory_used > 0);
  CHECK(stats->memory_limit > stats->memory_used);
  CHECK(stats->pids >= 1);
  CHECK(stats->net_rx_bytes == 0);  // --network none
  REQUIRE(daemon->Remove(*id).ok());
}

TEST_CASE("logs are demultiplexed, timestamped and bounded", "[docker][engine]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec;
  spec.cmd = {"sh", "-c", "echo out1; echo err1 >&2; echo out2; seq 1 500; sleep 600"};
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  LogQuery query;
  query.tail = 0;
  auto logs = LogsWhenAtLeast(daemon->client(), *id, query, 503);
  REQUIRE(logs.ok());
  REQUIRE(logs->lines.size() == 503);
  CHECK_FALSE(logs->truncated);
  std::vector<std::string> out, err;
  for (const LogLine& line : logs->lines) {
    REQUIRE(line.time.has_value());
    CHECK(absl::Now() - *line.time < absl::Minutes(1));
    (line.stream == LogStream::kStderr ? err : out).push_back(line.text);
  }
  CHECK(err == std::vector<std::string>{"err1"});
  CHECK(out[0] == "out1");
  CHECK(out[1] == "out2");
  CHECK(out.back() == "500");
  // Bounded by the daemon's tail and by our own line bound.
  query.tail = 5;
  query.timestamps = false;
  logs = daemon->client().Logs(*id, query);
  REQUIRE(logs.ok());
  REQUIRE(logs->lines.size() == 5);
  CHECK(std::any_of(logs->lines.begin(), logs->lines.end(),
                    [](const LogLine& line) { return line.text == "500"; }));
  CHECK_FALSE(logs->lines.back().time.has_value());
  query.tail = 0;
  query.bounds.max_lines = 10;
  logs = daemon->client().Logs(*id, query);
  REQUIRE(logs.ok());
  CHECK(logs->lines.size() == 10);
  CHECK(logs->truncated);
  // A TTY container's logs are raw, not framed.
  RunSpec tty;
  tty.tty = true;
  tty.cmd = {"sh", "-c", "echo on a tty; sleep 600"};
  auto tty_id = daemon->Run(tty);
  REQUIRE(tty_id.ok());
  logs = LogsWhenAtLeast(daemon->client(), *tty_id, LogQuery{}, 1);
  REQUIRE(logs.ok());
  REQUIRE(logs->lines.size() == 1);
  CHECK(logs->lines[0].text == "on a tty");
  REQUIRE(daemon->Remove(*id).ok());
  REQUIRE(daemon->Remove(*tty_id).ok());
}

TEST_CASE("stop, start and restart keep their deadline and are observed by inspect",
          "[docker][engine]") {
  PULSE_NEED_DOCKERD(daemon);
  const EngineClient& client = daemon->client();
  RunSpec spec;
  spec.cmd = {"sleep", "600"};
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  auto before = client.Inspect(*id);
  REQUIRE(before.ok());
  // sleep as PID 1 ignores SIGTERM: the daemon waits out the grace period, then SIGKILL.
  const absl::Time t0 = absl::Now();
  auto stopped = client.Stop(*id, absl::Seconds(1), absl::Seconds(20));
  REQUIRE(stopped.ok());
  CHECK(*stopped == LifecycleOutcome::kDone);
  CHECK(absl::Now() - t0 < absl::Seconds(10));
  auto after_stop = client.Inspect(*id);
  REQUIRE(after_stop.ok());
  CHECK_FALSE(after_stop->running);
  CHECK(after_stop->state == "exited");
  auto again = client.Stop(*id, absl::Seconds(1), absl::Seconds(20));
  REQUIRE(again.ok());
  CHECK(*again == LifecycleOutcome::kAlreadyInState);
  auto started = client.Start(*id, absl::Seconds(20));
  REQUIRE(started.ok());
  CHECK(*started == LifecycleOutcome::kDone);
  auto after_start = client.Inspect(*id);
  REQUIRE(after_start.ok());
  CHECK(after_start->running);
  REQUIRE(after_start->started_at.has_value());
  CHECK(*after_start->started_at > *before->started_at);
  auto restarted = client.Restart(*id, absl::Seconds(1), absl::Seconds(20));
  REQUIRE(restarted.ok());
  auto after_restart = client.Inspect(*id);
  REQUIRE(after_restart.ok());
  CHECK(after_restart->running);
  CHECK(*after_restart->started_at > *after_start->started_at);
  // The grace period must fit inside the deadline.
  auto slow = client.Stop(*id, absl::Seconds(3), absl::Seconds(1));
  CHECK(EngineErrorKindOf(slow.status()) == EngineErrorKind::kInvalidArgument);
  RunSpec stubborn;
  stubborn.cmd = {"sleep", "600"};
  auto stubborn_id = daemon->Run(stubborn);
  REQUIRE(stubborn_id.ok());
  auto late = client.Stop(*stubborn_id, absl::Seconds(5), absl::Seconds(6));
  REQUIRE(late.ok());  // 5 s grace then SIGKILL: within the 6 s deadline
  CHECK(EngineErrorKindOf(
            client.Restart(*stubborn_id, absl::Seconds(2), absl::Seconds(2)).status()) ==
        EngineErrorKind::kInvalidArgument);
  REQUIRE(daemon->Remove(*id).ok());
  REQUIRE(daemon->Remove(*stubborn_id).ok());
}

TEST_CASE("a container exiting 1 under on-failure restarts and counts its restarts",
          "[docker][engine]") {
  PULSE_NEED_DOCKERD(daemon);
  const absl::Time since = absl::Now() - absl::Seconds(1);
  RunSpec spec;
  spec.name = "crashloop";
  spec.cmd = {"sh", "-c", "echo starting; exit 1"};
  spec.restart_policy = "on-failure";
  spec.max_retries = 2;
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  const ContainerDetails details = WaitFor(daemon->client(), *id, [](const ContainerDetails& d) {
    return d.restart_count >= 2 && d.state == "exited";
  });
  CHECK(details.restart_count == 2);
  CHECK(details.exit_code == 1);
  CHECK(details.state == "exited");
  CHECK(details.restart_policy == "on-failure");
  EventQuery query;
  query.since = since;
  query.until = absl::Now();
  query.filters = {{"type", "container"}, {"event", "die"}, {"container", *id}};
  auto events = daemon->client().Events(query);
  REQUIRE(events.ok());
  REQUIRE(events->events.size() == 3);  // the first run and two restarts
  for (const EngineEvent& e : events->events) {
    CHECK(e.type == "container");
    CHECK(e.action == "die");
    CHECK(e.actor_id == *id);
    CHECK(e.attributes.at("exitCode") == "1");
    CHECK(e.attributes.at("name") == "crashloop");
    CHECK(e.time >= since);
  }
  query.max_events = 2;
  auto bounded = daemon->client().Events(query);
  REQUIRE(bounded.ok());
  CHECK(bounded->events.size() == 2);
  CHECK(bounded->truncated);
  REQUIRE(daemon->Remove(*id).ok());
}

TEST_CASE("events arriving while the stream is open are delivered until it closes",
          "[docker][engine]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec;
  spec.cmd = {"sleep", "600"};
  spec.start = false;
  auto id = daemon->Run(spec);
  REQUIRE(id.ok());
  EventQuery query;
  query.until = absl::Now() + absl::Seconds(2);
  query.filters = {{"type", "container"}, {"event", "start"}};
  std::thread starter([&] {
    absl::SleepFor(absl::Milliseconds(300));
    (void)daemon->client().Start(*id, absl::Seconds(10));
  });
  const absl::Time t0 = absl::Now();
  auto events = daemon->client().Events(query);
  starter.join();
  REQUIRE(events.ok());
  CHECK(absl::Now() - t0 >= absl::Milliseconds(1500));
  REQUIRE(events->events.size() == 1);
  CHECK(events->events[0].action == "start");
  CHECK(events->events[0].actor_id == *id);
  CHECK(EngineErrorKindOf(daemon->client().Events(EventQuery{}).status()) ==
        EngineErrorKind::kInvalidArgument);
  REQUIRE(daemon->Remove(*id).ok());
}

}  // namespace
}  // namespace pulse::docker::testing
