// Patrol's container triage (docs/patrol.md) over DockerFleet and the real private daemon: a
// container exiting 1 under --restart on-failure is found as crash-looping, one exiting non-zero
// without a restart policy as exited, one killed by the kernel for memory as OOM-killed, and one
// filling its own small memory limit as near its limit. PatrolService runs with the in-memory
// finding, action and run stores; the fleet is the real one.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "docker_test_support.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_finding_store.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/in_memory_patrol_run_store.h"
#include "pulse/testing/sequential_id_source.h"

namespace pulse::docker::testing {
namespace {

namespace t = ::pulse::testing;

// PatrolService over a real DockerFleet (read-only: no actions) with in-memory stores.
struct PatrolOverDocker {
  std::unique_ptr<DockerFleet> fleet;
  t::FakeClock clock;
  t::SequentialIdSource ids;
  t::InMemoryMetricsHistory history;
  t::InMemoryFindingStore finding_store;
  std::unique_ptr<core::TriageFindingVerifier> verifier;
  std::unique_ptr<core::FindingsService> findings;
  t::InMemoryActionStore action_store;
  t::InMemoryOperatorStateStore operator_state;
  t::InMemoryAuditLog audit;
  std::unique_ptr<core::ActionService> actions;
  t::InMemoryPatrolRunStore runs;
  std::unique_ptr<core::PatrolService> patrol;

  explicit PatrolOverDocker(const PrivateDockerd& daemon) {
    DockerFleetOptions options;
    options.engine.endpoint = daemon.endpoint();
    auto opened = DockerFleet::Open(options);
    REQUIRE(opened.ok());
    fleet = *std::move(opened);
    verifier = std::make_unique<core::TriageFindingVerifier>(*fleet, history, clock);
    findings = std::make_unique<core::FindingsService>(finding_store, clock, *verifier, history);
    actions =
        std::make_unique<core::ActionService>(action_store, *fleet, operator_state, audit, clock);
    core::PatrolServiceOptions patrol_options;
    patrol_options.restart_observations = &verifier->restart_observations();
    patrol = std::make_unique<core::PatrolService>(*fleet, *findings, *actions, operator_state,
                                                   runs, history, clock, ids, std::nullopt,
                                                   std::move(patrol_options));
  }

  // One Patrol run scoped to `resource_id`.
  core::PatrolRunRecord Run(const std::string& resource_id) {
    core::PatrolScope scope;
    scope.resource_ids = {resource_id};
    auto r = patrol->Run(scope, core::PatrolTrigger::kManual);
    REQUIRE(r.ok());
    return *r;
  }

  bool Active(const std::string& resource_id, core::Category category, std::string_view key) {
    auto f = findings->Get(core::FindingIdFor(resource_id, category, std::string(key)));
    return f.ok() && !f->resolved_at.has_value();
  }
};

// Removes the test's containers at the end, so other tests sharing the daemon (one process
// runs every case) see only their own.
struct Cleanup {
  PrivateDockerd& daemon;
  std::vector<std::string> ids;
  std::string Keep(const absl::StatusOr<std::string>& id) {
    REQUIRE(id.ok());
    ids.push_back(*id);
    return *id;
  }
  ~Cleanup() {
    for (const std::string& id : ids) {
      daemon.Remove(id).IgnoreError();
    }
  }
};

// Runs Patrol on `resource_id` every `every` (advancing the fake clock by as much) until the
// finding is active or about `seconds` passed.
bool PatrolFinds(PatrolOverDocker& p, const std::string& resource_id, core::Category category,
                 std::string_view key, int seconds, absl::Duration every = absl::Seconds(1)) {
  const absl::Time until = absl::Now() + absl::Seconds(seconds);
  while (absl::Now() < until) {
    p.Run(resource_id);
    if (p.Active(resource_id, category, key)) {
      return true;
    }
    absl::SleepFor(every);
    p.clock.Advance(every);
  }
  return false;
}

TEST_CASE("Patrol finds a container exiting 1 under restart on-failure as crash-looping",
          "[docker][patrol]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec = Command({"sh", "-c", "echo failing; exit 1"}, "triage-loop");
  spec.restart_policy = "on-failure";
  Cleanup cleanup{*daemon, {}};
  cleanup.Keep(daemon->Run(spec));
  PatrolOverDocker p(*daemon);
  CHECK(PatrolFinds(p, "app-container:triage-loop", core::Category::kReliability,
                    core::kTriageKeyContainerCrashLoop, 40));
  auto f =
      p.findings->Get(core::FindingIdFor("app-container:triage-loop", core::Category::kReliability,
                                         std::string(core::kTriageKeyContainerCrashLoop)));
  REQUIRE(f.ok());
  CHECK(f->severity == core::Severity::kCritical);
  CHECK(f->evidence.find("restart_count=") != std::string::npos);
  // Not also reported as a plain exited container while it keeps being restarted.
  CHECK_FALSE(p.Active("app-container:triage-loop", core::Category::kReliability,
                       core::kTriageKeyContainerExited));
}

TEST_CASE("Patrol finds a container that exited non-zero without a restart policy",
          "[docker][patrol]") {
  PULSE_NEED_DOCKERD(daemon);
  Cleanup cleanup{*daemon, {}};
  cleanup.Keep(daemon->Run(Command({"sh", "-c", "exit 3"}, "triage-exited")));
  cleanup.Keep(daemon->Run(Command({"sh", "-c", "exit 0"}, "triage-done")));
  PatrolOverDocker p(*daemon);
  CHECK(PatrolFinds(p, "app-container:triage-exited", core::Category::kReliability,
                    core::kTriageKeyContainerExited, 20));
  CHECK_FALSE(p.Active("app-container:triage-exited", core::Category::kReliability,
                       core::kTriageKeyContainerCrashLoop));
  // A job that finished with 0 is no finding at all.
  absl::SleepFor(absl::Seconds(1));
  core::PatrolRunRecord done = p.Run("app-container:triage-done");
  CHECK(done.new_findings == 0);
  CHECK(done.status == core::PatrolRunStatus::kHealthy);
}

TEST_CASE("Patrol finds an unhealthy container", "[docker][patrol]") {
  PULSE_NEED_DOCKERD(daemon);
  RunSpec spec = Command({"sleep", "600"}, "triage-sick");
  spec.healthcheck = {"false"};
  Cleanup cleanup{*daemon, {}};
  cleanup.Keep(daemon->Run(spec));
  PatrolOverDocker p(*daemon);
  CHECK(PatrolFinds(p, "app-container:triage-sick", core::Category::kReliability,
                    core::kTriageKeyContainerUnhealthy, 40));
}

TEST_CASE("Patrol finds OOM-killed containers and memory near a container's limit",
          "[docker][patrol]") {
  PULSE_NEED_DOCKERD(daemon);
  // busybox tail keeps the one endless line of /dev/zero in memory until the kernel kills it.
  // The pause first: containerd's shim watches the cgroup's OOM notifications only once the
  // task has started, and an OOM before that is reported by nothing. (When the daemon handles
  // the exit before the OOM, its flag stays false; the fleet reads the `oom` event then.)
  RunSpec oom =
      Command({"sh", "-c", "sleep 2; head -c 67108864 /dev/zero | tail; exit 137"}, "triage-oom");
  oom.memory_limit_bytes = 16 << 20;
  // 15 MiB in the container's tmpfs /dev/shm is charged to its 16 MiB limit.
  RunSpec full = Command({"sh", "-c", "head -c 15204352 /dev/zero > /dev/shm/fill && sleep 600"},
                         "triage-full");
  full.memory_limit_bytes = 16 << 20;
  Cleanup cleanup{*daemon, {}};
  cleanup.Keep(daemon->Run(oom));
  cleanup.Keep(daemon->Run(full));
  PatrolOverDocker p(*daemon);
  CHECK(PatrolFinds(p, "app-container:triage-oom", core::Category::kReliability,
                    core::kTriageKeyContainerOomKilled, 40));
  auto status = p.fleet->GetStatus("app-container:triage-oom");
  REQUIRE(status.ok());
  CHECK(status->facts.at("oom_killed") == "true");
  CHECK(PatrolFinds(p, "app-container:triage-full", core::Category::kPerformance,
                    core::kTriageKeyContainerMemoryLimit, 40));
  status = p.fleet->GetStatus("app-container:triage-full");
  REQUIRE(status.ok());
  CHECK(status->facts.at("memory_limit_bytes") == std::to_string(16 << 20));
  INFO("memory_bytes=" << status->facts["memory_bytes"]);
  // The generic memory rule does not report the same thing twice.
  CHECK_FALSE(p.Active("app-container:triage-full", core::Category::kPerformance,
                       core::kTriageKeyMemoryHigh));
}

}  // namespace
}  // namespace pulse::docker::testing
