// The strict parsers of Engine API answers: the documented formulas (CPU %, memory, network,
// block I/O), and malformed, wrongly typed, too deep and oversized answers as DataLoss errors.
#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/docker/engine_types.h"

namespace pulse::docker {
namespace {

constexpr char kStats[] = R"({
  "read":"2026-12-02T01:17:16.623524148Z",
  "pids_stats":{"current":3},
  "blkio_stats":{"io_service_bytes_recursive":[
    {"major":8,"minor":0,"op":"Read","value":4096},{"major":8,"minor":0,"op":"Write","value":100},
    {"major":8,"minor":16,"op":"read","value":4},{"major":8,"minor":0,"op":"Total","value":9}]},
  "cpu_stats":{"cpu_usage":{"total_usage":300,"percpu_usage":[1,2,3,4]},
               "system_cpu_usage":2000,"online_cpus":2},
  "precpu_stats":{"cpu_usage":{"total_usage":100},"system_cpu_usage":1000,"online_cpus":2},
  "memory_stats":{"usage":1000,"limit":4000,"stats":{"total_inactive_file":200,"cache":500}},
  "networks":{"eth0":{"rx_bytes":10,"tx_bytes":20},"eth1":{"rx_bytes":1,"tx_bytes":2}}
})";

TEST_CASE("stats follow the Engine API formulas", "[docker][json]") {
  auto stats = ParseStatsJson(kStats);
  REQUIRE(stats.ok());
  // (300-100)/(2000-1000) * 2 online CPUs * 100
  REQUIRE(stats->cpu_percent.has_value());
  CHECK(*stats->cpu_percent == Approx(40.0));
  CHECK(stats->online_cpus == 2);
  CHECK(stats->memory_used == 800);  // usage - total_inactive_file (cgroup v1)
  CHECK(stats->memory_limit == 4000);
  CHECK(*stats->memory_percent == Approx(20.0));
  CHECK(stats->net_rx_bytes == 11);
  CHECK(stats->net_tx_bytes == 22);
  CHECK(stats->block_read_bytes == 4100);
  CHECK(stats->block_write_bytes == 100);
  CHECK(stats->pids == 3);
}

TEST_CASE("stats without a previous sample have no CPU percentage", "[docker][json]") {
  auto stats = ParseStatsJson(
      R"({"cpu_stats":{"cpu_usage":{"total_usage":5,"percpu_usage":[5]},"system_cpu_usage":9},
          "precpu_stats":{"cpu_usage":{"total_usage":0}},
          "memory_stats":{"usage":100,"stats":{"inactive_file":30}}})");
  REQUIRE(stats.ok());
  CHECK_FALSE(stats->cpu_percent.has_value());
  CHECK(stats->online_cpus == 1);                  // from percpu_usage when online_cpus is missing
  CHECK(stats->memory_used == 70);                 // cgroup v2: inactive_file
  CHECK_FALSE(stats->memory_percent.has_value());  // no limit
}

TEST_CASE("wrongly typed stats are errors, never guesses", "[docker][json]") {
  for (const char* body : {
           R"({"memory_stats":{"usage":"1000"}})",
           R"({"memory_stats":{"usage":-1}})",
           R"({"cpu_stats":[]})",
           R"({"networks":{"eth0":5}})",
           R"({"blkio_stats":{"io_service_bytes_recursive":[1]}})",
           R"({"read":"yesterday"})",
           R"([])",
           R"({"memory_stats":{"usage":1e400}})",
       }) {
    CAPTURE(body);
    auto stats = ParseStatsJson(body);
    CHECK(stats.status().code() == absl::StatusCode::kDataLoss);
  }
}

TEST_CASE("malformed, too deep and oversized answers are DataLoss", "[docker][json]") {
  CHECK(ParseContainerListJson("[{\"Id\":").status().code() == absl::StatusCode::kDataLoss);
  CHECK(ParseContainerListJson(std::string(100, '[') + std::string(100, ']')).status().code() ==
        absl::StatusCode::kDataLoss);
  std::string huge = "[\"" + std::string((std::size_t{17} << 20), 'a') + "\"]";
  CHECK(ParseContainerListJson(huge).status().code() == absl::StatusCode::kDataLoss);
  CHECK(ParseContainerListJson("[1]").status().code() == absl::StatusCode::kDataLoss);
  CHECK(ParseContainerListJson(R"([{"Names":["/x"]}])").status().code() ==
        absl::StatusCode::kDataLoss);  // no Id
  CHECK(ParseContainerListJson(R"([{"Id":"a","Labels":{"k":1}}])").status().code() ==
        absl::StatusCode::kDataLoss);
  CHECK(ParseContainerJson(R"({"Id":"a"})").status().code() == absl::StatusCode::kDataLoss);
  CHECK(ParseContainerJson(R"({"Id":"a","State":{"Status":"running","ExitCode":"0"}})")
            .status()
            .code() == absl::StatusCode::kDataLoss);
  CHECK(ParseEventJson("{\"Type\":\"container\"} trailing").status().code() ==
        absl::StatusCode::kDataLoss);
}

TEST_CASE("a container list is read with names, labels and states", "[docker][json]") {
  auto list = ParseContainerListJson(
      R"([{"Id":"abc","Names":["/web"],"Image":"img:1","ImageID":"sha256:1","State":"running",
           "Status":"Up 1 second","Created":1796174233,"Labels":{"com.docker.compose.project":"p"}},
          {"Id":"def","Names":null,"Labels":null}])");
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "web");
  CHECK((*list)[0].labels.at("com.docker.compose.project") == "p");
  CHECK(absl::ToUnixSeconds((*list)[0].created) == 1796174233);
  CHECK((*list)[1].name.empty());
}

TEST_CASE("inspect reads state, health, restarts and Go's zero time as never", "[docker][json]") {
  auto c = ParseContainerJson(R"({"Id":"abc","Name":"/web","Image":"sha256:1","RestartCount":4,
      "Created":"2026-12-02T01:17:00Z",
      "State":{"Status":"exited","Running":false,"OOMKilled":true,"ExitCode":137,"Pid":0,
               "StartedAt":"2026-12-02T01:17:01.5Z","FinishedAt":"0001-01-01T00:00:00Z",
               "Health":{"Status":"unhealthy","FailingStreak":3,"Log":[]}},
      "Config":{"Image":"img:1","Tty":true,"Labels":{"a":"b"}},
      "HostConfig":{"RestartPolicy":{"Name":"on-failure","MaximumRetryCount":3}}})");
  REQUIRE(c.ok());
  CHECK(c->name == "web");
  CHECK(c->state == "exited");
  CHECK(c->oom_killed);
  CHECK(c->exit_code == 137);
  CHECK(c->restart_count == 4);
  CHECK(c->health == "unhealthy");
  CHECK(c->tty);
  CHECK(c->image == "img:1");
  CHECK(c->restart_policy == "on-failure");
  REQUIRE(c->started_at.has_value());
  CHECK_FALSE(c->finished_at.has_value());
  CHECK(c->labels.at("a") == "b");
}

TEST_CASE("API versions are two numbers and compare numerically", "[docker][json]") {
  auto v = ParseApiVersion("1.41");
  REQUIRE(v.ok());
  CHECK(*v == ApiVersion{1, 41});
  CHECK(ApiVersion{1, 9} < ApiVersion{1, 41});
  CHECK(v->ToString() == "1.41");
  for (const char* bad : {"", "1", "1.", ".41", "1.41.2", "v1.41", "1.-4", "99999999999.1"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseApiVersion(bad).ok());
  }
  auto version = ParseVersionJson(R"({"Version":"20.10.24","ApiVersion":"1.41",
      "MinAPIVersion":"1.12","Os":"linux","Arch":"amd64"})");
  REQUIRE(version.ok());
  CHECK(version->api == ApiVersion{1, 41});
  CHECK(version->min_api == ApiVersion{1, 12});
  CHECK(ParseVersionJson(R"({"Version":"x","ApiVersion":"one"})").status().code() ==
        absl::StatusCode::kDataLoss);
}

TEST_CASE("events carry type, action, actor and nanosecond time", "[docker][json]") {
  auto e = ParseEventJson(R"({"status":"die","id":"abc","Type":"container","Action":"die",
      "Actor":{"ID":"abc","Attributes":{"exitCode":"1","name":"web"}},"scope":"local",
      "time":1796174233,"timeNano":1796174233123456789})");
  REQUIRE(e.ok());
  CHECK(e->type == "container");
  CHECK(e->action == "die");
  CHECK(e->actor_id == "abc");
  CHECK(e->attributes.at("exitCode") == "1");
  CHECK(absl::ToUnixNanos(e->time) == 1796174233123456789);
}

TEST_CASE("error messages are read from error answers, bounded", "[docker][json]") {
  CHECK(ParseErrorMessage(R"({"message":"No such container: x"})") == "No such container: x");
  CHECK(ParseErrorMessage("not json").empty());
  CHECK(ParseErrorMessage(R"({"message":7})").empty());
  CHECK(ParseErrorMessage("{\"message\":\"" + std::string(2000, 'm') + "\"}").size() == 512);
}

}  // namespace
}  // namespace pulse::docker
