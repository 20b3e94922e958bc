// DockerFleet reads a container as OOM-killed from the daemon's `oom` event as well as from its
// State.OOMKilled flag. Docker 20.10 sets the flag only when it handles the OOM event before the
// exit; on a busy host the two swap and the flag stays false, while the event is still sent
// (measured against the private dockerd: 4 of 24 containers OOM-killed at once read false, every
// one had its event). The daemon will not lose that race on cue, so a fake daemon answers here
// with what the real one says when it does: an exited container, OOMKilled false, and an `oom`
// event. docker_watch_test.cc has the real daemon's side.
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fake_engine.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/core/json/json_time.h"

namespace pulse::docker {
namespace {

using pulse::docker::testing::Answer;
using pulse::docker::testing::FakeEngine;

const absl::Time kStart = absl::FromUnixSeconds(1796464800);  // 2026-12-04T10:00:00Z

std::string Id(char c) { return std::string(64, c); }

std::string Listed(char id, const std::string& name, const std::string& state) {
  return absl::StrCat(R"({"Id":")", Id(id), R"(","Names":["/)", name,
                      R"("],"Image":"img:1","ImageID":"sha256:1","State":")", state,
                      R"(","Status":"","Created":1796464700,"Labels":{}})");
}

std::string Inspected(char id, const std::string& name, bool running, int exit_code,
                      absl::Time started) {
  return absl::StrCat(
      R"({"Id":")", Id(id), R"(","Name":"/)", name,
      R"(","Image":"sha256:1","RestartCount":0,"Created":"2026-12-04T09:58:20Z",)",
      R"("State":{"Status":")", running ? "running" : "exited", R"(","Running":)",
      running ? "true" : "false", R"(,"OOMKilled":false,"ExitCode":)", exit_code,
      R"(,"Pid":0,"StartedAt":")", core::FormatRfc3339(started),
      R"(","FinishedAt":"0001-01-01T00:00:00Z"},)",
      R"("Config":{"Image":"img:1","Tty":false,"Labels":{}},)",
      R"("HostConfig":{"RestartPolicy":{"Name":"no","MaximumRetryCount":0},"Memory":16777216}})");
}

std::string OomEvent(char id, const std::string& name, absl::Time at) {
  return absl::StrCat(R"({"Type":"container","Action":"oom","Actor":{"ID":")", Id(id),
                      R"(","Attributes":{"name":")", name, R"("}},"time":)",
                      absl::ToUnixSeconds(at), R"(,"timeNano":)", absl::ToUnixNanos(at), "}\n");
}

bool Eventually(const std::function<bool()>& condition) {
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (absl::Now() < until) {
    if (condition()) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return condition();
}

TEST_CASE("an oom event reads a stopped container as OOM-killed where the daemon's flag says not",
          "[docker][fleet][events]") {
  const std::string json = "/v1.41/containers/";
  FakeEngine engine(
      {{"/version",
        Answer(200, R"({"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12"})")},
       {"/v1.41/info", Answer(200, R"({"Name":"fake","OperatingSystem":"Debian GNU/Linux 12",
                                       "ServerVersion":"20.10.24","NCPU":2,"MemTotal":1024})")},
       {"/v1.41/containers/json", Answer(200, absl::StrCat("[", Listed('a', "killed", "exited"),
                                                           ",", Listed('b', "rerun", "exited"), ",",
                                                           Listed('c', "living", "running"), ",",
                                                           Listed('d', "plain", "exited"), "]"))},
       // Killed in this run; its flag lost the race.
       {json + Id('a'), Answer(200, Inspected('a', "killed", false, 137, kStart))},
       // Killed in an earlier run, started again since, and exited on its own.
       {json + Id('b'), Answer(200, Inspected('b', "rerun", false, 1, kStart + absl::Seconds(10)))},
       // A child process killed; the container runs on.
       {json + Id('c'), Answer(200, Inspected('c', "living", true, 0, kStart))},
       {json + Id('d'), Answer(200, Inspected('d', "plain", false, 0, kStart))},
       // The container that must read OOM-killed comes last, so that once it does, the other
       // events have been taken in too.
       {"/v1.41/events",
        Answer(200, absl::StrCat(OomEvent('b', "rerun", kStart + absl::Seconds(5)),
                                 OomEvent('c', "living", kStart + absl::Seconds(2)),
                                 OomEvent('a', "killed", kStart + absl::Seconds(1))))}},
      absl::Milliseconds(100));
  DockerFleetOptions options;
  options.engine = engine.Options();
  options.sample_interval = absl::ZeroDuration();
  auto fleet = DockerFleet::Open(options);
  REQUIRE(fleet.ok());
  auto oom_killed = [&](const std::string& name) {
    auto r = (*fleet)->GetResource("app-container:" + name);
    REQUIRE(r.ok());
    return r->attributes.at("oom_killed");
  };
  CHECK(Eventually([&] { return oom_killed("killed") == "true"; }));
  auto status = (*fleet)->GetStatus("app-container:killed");
  REQUIRE(status.ok());
  CHECK(status->facts.at("oom_killed") == "true");
  CHECK((*fleet)->ContainerChangesSince(0, 100).size() == 3);  // every oom event was read
  CHECK(oom_killed("rerun") == "false");
  CHECK(oom_killed("living") == "false");
  CHECK(oom_killed("plain") == "false");
}

TEST_CASE("an oom event counts for the run it happened in, once the container stopped",
          "[docker][fleet]") {
  ContainerDetails d;
  d.started_at = kStart;
  CHECK(OomKilledByEvent(d, kStart));
  CHECK(OomKilledByEvent(d, kStart + absl::Seconds(3)));
  CHECK_FALSE(OomKilledByEvent(d, kStart - absl::Nanoseconds(1)));  // an earlier run
  d.running = true;
  CHECK_FALSE(OomKilledByEvent(d, kStart + absl::Seconds(3)));  // a child, the container runs
  ContainerDetails never;
  CHECK_FALSE(OomKilledByEvent(never, kStart));  // never started
}

}  // namespace
}  // namespace pulse::docker
