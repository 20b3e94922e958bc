// The docker source at scale (issue 23's acceptance benchmark; docs/performance.md, "Docker
// fleet at 200 containers"). Starts a private dockerd (tests/adapters/docker/private_dockerd.h),
// creates N containers (`sleep` from the busybox image, --network none), opens a DockerFleet on
// it with its default settings, and measures, alternating with the baseline, A B A B:
//
//   B   list the containers with the Docker API directly (GET /containers/json?all=1, parsed)
//   A1  fleet-context (core::AgentViews::FleetContext over the DockerFleet, in-memory stores)
//   A2  a deterministic Patrol pass over the whole fleet (core::PatrolService, no model)
//   A3  fleet-context when the snapshot has expired (max_staleness 0: one listing per read)
//   A4  the read path before the snapshot: the listing plus an inspect of every container
//
// and prints each median, and its ratio to B's median, over the rounds. Usage:
//   docker_fleet_scale [containers=200] [rounds=7]
// Needs root and dockerd (as the `docker` ctest label does); exits 77 when no daemon can start.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "private_dockerd.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
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

namespace {

using pulse::docker::DockerFleet;
using pulse::docker::DockerFleetOptions;
using pulse::docker::testing::PrivateDockerd;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The core services a server puts around a fleet, over in-memory stores.
struct Services {
  explicit Services(pulse::core::Fleet& fleet)
      : verifier(fleet, history, clock),
        findings(finding_store, clock, verifier, history),
        actions(action_store, fleet, operator_state, audit, clock),
        views(fleet, finding_store, action_store, actions, operator_state, clock),
        patrol(fleet, findings, actions, operator_state, runs, history, clock, ids, std::nullopt) {}
  pulse::testing::FakeClock clock;
  pulse::testing::SequentialIdSource ids;
  pulse::testing::InMemoryMetricsHistory history;
  pulse::testing::InMemoryFindingStore finding_store;
  pulse::core::TriageFindingVerifier verifier;
  pulse::core::FindingsService findings;
  pulse::testing::InMemoryActionStore action_store;
  pulse::testing::InMemoryOperatorStateStore operator_state;
  pulse::testing::InMemoryAuditLog audit;
  pulse::testing::InMemoryPatrolRunStore runs;
  pulse::core::ActionService actions;
  pulse::core::AgentViews views;
  pulse::core::PatrolService patrol;
};

std::unique_ptr<DockerFleet> MustOpen(const PrivateDockerd& daemon, absl::Duration staleness) {
  DockerFleetOptions options;
  options.engine.endpoint = daemon.endpoint();
  options.max_staleness = staleness;
  auto fleet = DockerFleet::Open(options);
  if (!fleet.ok()) {
    std::fprintf(stderr, "DockerFleet::Open: %s\n", fleet.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(fleet);
}

void Must(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "failed: %s\n", what);
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int containers = argc > 1 ? std::atoi(argv[1]) : 200;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (containers < 1 || containers > 1000 || rounds < 1 || rounds > 100) {
    std::fprintf(stderr, "usage: docker_fleet_scale [containers 1..1000] [rounds 1..100]\n");
    return 2;
  }
  absl::StatusOr<std::unique_ptr<PrivateDockerd>> daemon = PrivateDockerd::Start();
  if (!daemon.ok()) {
    std::fprintf(stderr, "no Docker daemon can start here: %s\n",
                 daemon.status().ToString().c_str());
    return absl::IsUnavailable(daemon.status()) ? 77 : 1;
  }
  const absl::Time create_start = absl::Now();
  for (int i = 0; i < containers; ++i) {
    auto id = (*daemon)->Run(
        pulse::docker::testing::Command({"sleep", "100000"}, absl::StrFormat("bench-%03d", i)));
    Must(id.ok(), "creating a container");
  }
  std::printf("created %d containers in %.1f s\n", containers,
              absl::ToDoubleSeconds(absl::Now() - create_start));

  std::unique_ptr<DockerFleet> fleet = MustOpen(**daemon, absl::Seconds(2));  // the defaults
  std::unique_ptr<DockerFleet> expiring = MustOpen(**daemon, absl::ZeroDuration());
  Services services(*fleet);
  Services expiring_services(*expiring);
  const pulse::docker::EngineClient& engine = (*daemon)->client();

  const auto time_ms = [](const std::function<void()>& work) {
    const absl::Time start = absl::Now();
    work();
    return absl::ToDoubleMilliseconds(absl::Now() - start);
  };
  const auto list = [&] {
    auto listed = engine.ListContainers(true);
    Must(listed.ok() && static_cast<int>(listed->size()) == containers, "listing");
  };
  const std::string last = absl::StrFormat("app-container:bench-%03d", containers - 1);
  const auto fleet_context = [&] {
    auto body = services.views.FleetContext({});
    Must(body.ok() && body->find(last) != std::string::npos, "fleet-context");
  };
  const auto patrol = [&] {
    auto run = services.patrol.Run(pulse::core::PatrolScope{}, pulse::core::PatrolTrigger::kManual);
    Must(run.ok() && run->status != pulse::core::PatrolRunStatus::kError &&
             run->resources_checked == containers + 1,
         "patrol over every container and the node");
  };
  const auto expired_context = [&] {
    auto body = expiring_services.views.FleetContext({});
    Must(body.ok(), "fleet-context, snapshot expired");
  };
  const auto n_plus_one = [&] {
    auto listed = engine.ListContainers(true);
    Must(listed.ok(), "listing");
    for (const auto& c : *listed) {
      Must(engine.Inspect(c.id).ok(), "inspect");
    }
  };
  // Warm-up: the first reads, the samplers' first rounds.
  fleet_context();
  patrol();
  expired_context();
  absl::SleepFor(absl::Seconds(3));

  std::vector<double> b, a1, a2, a3, a4;
  const pulse::docker::DockerFleetCounters before = fleet->Counters();
  for (int r = 0; r < rounds; ++r) {
    b.push_back(time_ms(list));
    a1.push_back(time_ms(fleet_context));
    b.push_back(time_ms(list));
    a2.push_back(time_ms(patrol));
    b.push_back(time_ms(list));
    a3.push_back(time_ms(expired_context));
    b.push_back(time_ms(list));
    a4.push_back(time_ms(n_plus_one));
  }
  const pulse::docker::DockerFleetCounters after = fleet->Counters();
  const double base = Median(b);
  std::printf("%d containers, %d rounds, medians (ratio to B)\n", containers, rounds);
  std::printf("B  list via the Docker API          %8.2f ms  1.00\n", base);
  const auto row = [&](const char* name, const std::vector<double>& v) {
    std::printf("%s %8.2f ms  %.2f\n", name, Median(v), Median(v) / base);
  };
  row("A1 fleet-context                    ", a1);
  row("A2 Patrol pass (deterministic)      ", a2);
  row("A3 fleet-context, snapshot expired  ", a3);
  row("A4 list + inspect each (no snapshot)", a4);
  std::printf(
      "Engine calls by the default fleet's reads during the rounds: %llu (refreshes %llu, "
      "inspects %llu); samples taken %llu\n",
      static_cast<unsigned long long>(after.engine_calls - before.engine_calls),
      static_cast<unsigned long long>(after.refreshes - before.refreshes),
      static_cast<unsigned long long>(after.inspects - before.inspects),
      static_cast<unsigned long long>(after.samples - before.samples));
  return 0;
}
