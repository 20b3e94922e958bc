// The container triage rules (docs/patrol.md): crash loop from a rising restart count across
// observations, unhealthy, OOM-killed, memory near the container's limit — as pure rules, as the
// RestartObservations memory, and through PatrolService's finding lifecycle.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "patrol_test_support.h"

namespace pulse::testing::patrol {
namespace {

using core::Category;
using core::Severity;
using Facts = std::map<std::string, std::string>;
using Keys = std::vector<std::string>;

core::FleetResource Container(std::string name, std::string container_id = "c1") {
  core::FleetResource r = Res("app-container:" + name, "app-container", name, "running");
  r.attributes["container_id"] = std::move(container_id);
  return r;
}

core::FleetStatus State(std::string state, Facts facts) {
  core::FleetStatus s;
  s.status = std::move(state);
  s.summary = "container is " + s.status;
  s.facts = std::move(facts);
  return s;
}

std::vector<core::FindingReport> Triage(const core::FleetResource& r, const core::FleetStatus& s,
                                        core::TriageHistory h = {}) {
  return core::TriageResource(r, s, std::nullopt, {}, h);
}

Keys KeysOf(const std::vector<core::FindingReport>& reports) {
  Keys out;
  for (const core::FindingReport& r : reports) {
    out.push_back(r.key);
  }
  return out;
}

core::TriageHistory Rise(std::int64_t n) {
  core::TriageHistory h;
  h.restarts_in_window = n;
  return h;
}

TEST_CASE("a container whose restart count rose is crash-looping, one restart is not",
          "[core][patrol][triage]") {
  const core::FleetResource web = Container("web");
  std::vector<core::FindingReport> r =
      Triage(web, State("running", {{"restart_count", "9"}, {"exit_code", "1"}}), Rise(4));
  REQUIRE(KeysOf(r) == Keys{"container-crash-loop"});
  CHECK(r[0].severity == Severity::kCritical);
  CHECK(r[0].category == Category::kReliability);
  CHECK(r[0].source == core::kTriageFindingSource);
  CHECK(r[0].evidence.find("restart_count=9") != std::string::npos);
  CHECK(r[0].description.find("4 restarts") != std::string::npos);
  // One restart in the window, no earlier observation, or a restarting container with a single
  // restart: not a loop.
  CHECK(Triage(web, State("running", {{"restart_count", "9"}}), Rise(1)).empty());
  CHECK(Triage(web, State("running", {{"restart_count", "9"}})).empty());
  CHECK(Triage(web, State("restarting", {{"restart_count", "1"}})).empty());
  // Docker's own "restarting" with repeated restarts needs no earlier observation.
  CHECK(KeysOf(Triage(web, State("restarting", {{"restart_count", "2"}}))) ==
        Keys{"container-crash-loop"});
  // Once it stopped for good (retries exhausted) it is an exited container, not a loop.
  CHECK(KeysOf(Triage(web, State("exited", {{"restart_count", "5"}, {"exit_code", "1"}}),
                      Rise(5))) == Keys{"container-exited"});
  // Other types never get container findings.
  CHECK(Triage(Res("vm:1", "vm", "vm", "running"), State("restarting", {{"restart_count", "9"}}),
               Rise(9))
            .empty());
}

TEST_CASE("unhealthy and OOM-killed containers are reliability findings",
          "[core][patrol][triage]") {
  const core::FleetResource web = Container("web");
  std::vector<core::FindingReport> r = Triage(web, State("running", {{"health", "unhealthy"}}));
  REQUIRE(KeysOf(r) == Keys{"container-unhealthy"});
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(Triage(web, State("running", {{"health", "healthy"}})).empty());
  CHECK(Triage(web, State("running", {{"health", "starting"}})).empty());
  CHECK(Triage(web, State("running", {{"health", "UNHEALTHY; rm -rf /"}})).empty());
  r = Triage(web, State("exited", {{"oom_killed", "true"}, {"exit_code", "137"}}));
  CHECK(KeysOf(r) == Keys{"container-exited", "container-oom-killed"});
  CHECK(Triage(web, State("running", {{"oom_killed", "false"}})).empty());
  CHECK(Triage(web, State("running", {{"oom_killed", "1"}})).empty());
}

TEST_CASE("memory near a container's own limit replaces the generic memory rule",
          "[core][patrol][triage]") {
  const core::FleetResource web = Container("web");
  std::vector<core::FindingReport> r =
      Triage(web, State("running", {{"memory_bytes", "95"}, {"memory_limit_bytes", "100"}}));
  REQUIRE(KeysOf(r) == Keys{"container-memory-limit"});
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(r[0].category == Category::kPerformance);
  CHECK(KeysOf(Triage(web, State("running", {{"memory_bytes", "99"},
                                             {"memory_limit_bytes", "100"},
                                             {"memory_pct", "99"}})))[0] ==
        "container-memory-limit");
  CHECK(Triage(web, State("running", {{"memory_bytes", "99"}, {"memory_limit_bytes", "100"}}))[0]
            .severity == Severity::kCritical);
  // A container under its limit: no finding, and memory_pct (of the same limit) is not
  // reported twice.
  CHECK(Triage(web,
               State("running",
                     {{"memory_bytes", "50"}, {"memory_limit_bytes", "100"}, {"memory_pct", "95"}}))
            .empty());
  // No limit (0, missing, garbage): the generic memory-high rule over memory_pct applies.
  CHECK(KeysOf(Triage(web, State("running", {{"memory_bytes", "95"},
                                             {"memory_limit_bytes", "0"},
                                             {"memory_pct", "95"}}))) == Keys{"memory-high"});
  CHECK(KeysOf(Triage(web, State("running", {{"memory_limit_bytes", "lots"},
                                             {"memory_pct", "95"}}))) == Keys{"memory-high"});
  CHECK(Triage(web, State("running", {{"memory_bytes", "-5"}, {"memory_limit_bytes", "100"}}))
            .empty());
  CHECK(Triage(web, State("running", {{"memory_bytes", "1e308"}, {"memory_limit_bytes", "-1"}}))
            .empty());
}

TEST_CASE("restart observations answer the rise within the window", "[core][patrol][triage]") {
  core::RestartObservations obs;
  const absl::Duration window = absl::Minutes(30);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  const core::FleetResource web = Container("web", "aaa");
  auto at = [](std::int64_t count) {
    return State("running", {{"restart_count", std::to_string(count)}});
  };
  CHECK_FALSE(obs.Observe(web, at(3), t0, window).restarts_in_window.has_value());
  CHECK(obs.Observe(web, at(7), t0 + absl::Minutes(10), window).restarts_in_window == 4);
  CHECK(obs.Peek(web, at(9), t0 + absl::Minutes(11), window).restarts_in_window == 6);
  CHECK(obs.Observe(web, at(9), t0 + absl::Minutes(20), window).restarts_in_window == 6);
  // Peek records nothing; samples older than the window no longer count.
  CHECK(obs.Observe(web, at(9), t0 + absl::Minutes(45), window).restarts_in_window == 0);
  // Nothing else left in the window: no earlier observation to compare with.
  CHECK_FALSE(
      obs.Observe(web, at(9), t0 + absl::Minutes(90), window).restarts_in_window.has_value());
  // A container recreated under the same name (new id), or a lower count, starts afresh.
  const core::FleetResource recreated = Container("web", "bbb");
  CHECK_FALSE(obs.Observe(recreated, at(20), t0 + absl::Minutes(91), window)
                  .restarts_in_window.has_value());
  CHECK_FALSE(obs.Peek(web, at(30), t0 + absl::Minutes(92), window).restarts_in_window.has_value());
  CHECK_FALSE(
      obs.Observe(recreated, at(2), t0 + absl::Minutes(93), window).restarts_in_window.has_value());
  // Non-containers, missing, negative and garbage counts are not remembered.
  CHECK_FALSE(obs.Observe(Res("vm:1", "vm", "v", "running"), at(5), t0, window)
                  .restarts_in_window.has_value());
  CHECK_FALSE(obs.Observe(Container("x"), State("running", {{"restart_count", "-1"}}), t0, window)
                  .restarts_in_window.has_value());
  CHECK_FALSE(obs.Observe(Container("y"), State("running", {{"restart_count", "9x"}}), t0, window)
                  .restarts_in_window.has_value());
  CHECK_FALSE(
      obs.Observe(Container("z"), State("running", {}), t0, window).restarts_in_window.has_value());
  CHECK(obs.size() == 1);
}

TEST_CASE("restart observations stay bounded", "[core][patrol][triage]") {
  core::RestartObservations obs;
  const absl::Duration window = absl::Minutes(30);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  const core::FleetStatus s = State("running", {{"restart_count", "1"}});
  for (std::size_t i = 0; i < core::RestartObservations::kMaxRestartResources + 10; ++i) {
    obs.Observe(Container("c" + std::to_string(i)), s, t0, window);
  }
  CHECK(obs.size() == core::RestartObservations::kMaxRestartResources);
  // An hour later the old ones are outside the window and make room.
  obs.Observe(Container("late"), s, t0 + absl::Hours(1), window);
  CHECK(obs.size() == 1);
  // Many samples of one container keep only the newest kMaxRestartSamples.
  const core::FleetResource web = Container("web");
  for (int i = 0; i < 100; ++i) {
    obs.Observe(web, State("running", {{"restart_count", std::to_string(i)}}),
                t0 + absl::Hours(1) + absl::Seconds(i), window);
  }
  CHECK(obs.Peek(web, State("running", {{"restart_count", "99"}}),
                 t0 + absl::Hours(1) + absl::Seconds(100), window)
            .restarts_in_window ==
        static_cast<std::int64_t>(core::RestartObservations::kMaxRestartSamples) - 1);
}

TEST_CASE("Patrol finds a crash loop on the second observation, heartbeats it, then resolves it",
          "[core][patrol][triage]") {
  Fixture f;
  core::PatrolServiceOptions options;
  options.restart_observations = &f.verifier.restart_observations();
  f.patrol = std::make_unique<core::PatrolService>(f.fleet, f.findings, f.actions, f.operator_state,
                                                   f.runs, f.history, f.clock, f.ids, std::nullopt,
                                                   std::move(options));
  core::FleetResource web = Container("web");
  f.fleet.PutResource(web);
  const std::string id = Fixture::Id("app-container:web", Category::kReliability,
                                     std::string(core::kTriageKeyContainerCrashLoop));
  f.SetFacts("app-container:web", "running", {{"restart_count", "3"}});
  f.Run();
  CHECK_FALSE(f.findings.Get(id).ok());  // one observation is no trend
  f.clock.Advance(absl::Minutes(15));
  f.SetFacts("app-container:web", "running", {{"restart_count", "8"}});
  core::PatrolRunRecord second = f.Run();
  CHECK(std::count(second.new_finding_ids.begin(), second.new_finding_ids.end(), id) == 1);
  f.clock.Advance(absl::Minutes(15));
  f.SetFacts("app-container:web", "running", {{"restart_count", "12"}});
  core::PatrolRunRecord third = f.Run();
  CHECK(std::count(third.existing_finding_ids.begin(), third.existing_finding_ids.end(), id) == 1);
  CHECK(third.new_finding_ids.empty());
  // It stays up: once the window holds no rise, the verifier confirms the signal is gone.
  f.clock.Advance(absl::Minutes(40));
  core::PatrolRunRecord quiet = f.Run();
  CHECK(std::count(quiet.resolved_finding_ids.begin(), quiet.resolved_finding_ids.end(), id) == 1);
  CHECK(f.findings.Get(id)->resolved_at.has_value());
}

}  // namespace
}  // namespace pulse::testing::patrol
