#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agents_test_support.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::DemoFault;
using adapters::agents::DemoFaultKind;

bool Contains(const std::vector<std::string>& lines, std::string_view text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

TEST_CASE("injecting and clearing a fault shows in status, logs and metrics",
          "[adapters][agents][faults]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  clock.Advance(absl::Minutes(5));
  const core::FleetResource before = MustGet(*fleet, "vm:101");
  const double baseline = LatestMetric(*fleet, "vm:101", "memory", clock.Now());
  REQUIRE(baseline < 90);

  REQUIRE(fleet->InjectFault("vm:101", DemoFaultKind::kHighMemory).ok());
  const core::FleetStatus hot = MustStatus(*fleet, "vm:101");
  CHECK(hot.facts.at("faults") == "high_memory");
  CHECK(std::stod(hot.facts.at("memory_pct")) > 95);
  CHECK(hot.summary.find("memory pressure") != std::string::npos);
  CHECK(LatestMetric(*fleet, "vm:101", "memory", clock.Now()) > 95);
  CHECK(Contains(LogLines(*fleet, "vm:101"), "memory usage at 96.0%"));
  CHECK(MustGet(*fleet, "vm:101").revision != before.revision);  // plans made before now drift

  clock.Advance(absl::Minutes(1));
  REQUIRE(fleet->ClearFault("vm:101", DemoFaultKind::kHighMemory).ok());
  const core::FleetStatus cool = MustStatus(*fleet, "vm:101");
  CHECK(cool.facts.count("faults") == 0);
  CHECK(LatestMetric(*fleet, "vm:101", "memory", clock.Now()) == Approx(baseline));
  CHECK(Contains(LogLines(*fleet, "vm:101"), "back to normal"));
  CHECK(absl::IsNotFound(fleet->ClearFault("vm:101", DemoFaultKind::kHighMemory)));
}

TEST_CASE("faults change status and the catalogue of their resource",
          "[adapters][agents][faults]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  // An exited container offers start; clearing the fault brings it back.
  REQUIRE(fleet->InjectFault("app-container:api", DemoFaultKind::kExited).ok());
  CHECK(MustGet(*fleet, "app-container:api").status == "exited");
  CHECK(MustStatus(*fleet, "app-container:api").facts.at("exit_code") == "1");
  CHECK(CapabilityNames(*fleet, "app-container:api") == std::vector<std::string>{"start"});
  CHECK(LatestMetric(*fleet, "app-container:api", "up", clock.Now()) == 0);
  REQUIRE(fleet->ClearFault("app-container:api", DemoFaultKind::kExited).ok());
  CHECK(MustGet(*fleet, "app-container:api").status == "running");
  CHECK(LatestMetric(*fleet, "app-container:api", "up", clock.Now()) == 1);

  // A crash loop fails the unit; its restart counter keeps climbing while it lasts.
  REQUIRE(fleet->InjectFault("service:pve3/ssh", DemoFaultKind::kCrashLoop).ok());
  CHECK(MustGet(*fleet, "service:pve3/ssh").status == "failed");
  const int restarts = std::stoi(MustStatus(*fleet, "service:pve3/ssh").facts.at("restart_count"));
  clock.Advance(absl::Minutes(5));
  CHECK(std::stoi(MustStatus(*fleet, "service:pve3/ssh").facts.at("restart_count")) > restarts);
  CHECK(CapabilityNames(*fleet, "service:pve3/ssh") ==
        std::vector<std::string>{"restart", "start"});

  // A failed backup job shows the failure; clearing it is ok again.
  REQUIRE(fleet->InjectFault("backup-job:nightly", DemoFaultKind::kBackupFailed).ok());
  CHECK(MustStatus(*fleet, "backup-job:nightly").facts.at("last_result") == "failed");
  REQUIRE(fleet->ClearFault("backup-job:nightly", DemoFaultKind::kBackupFailed).ok());
  CHECK(MustGet(*fleet, "backup-job:nightly").status == "ok");

  // The staged faults from the file can be cleared too.
  REQUIRE(fleet->ClearFault("service:pve2/postfix", DemoFaultKind::kCrashLoop).ok());
  CHECK(MustGet(*fleet, "service:pve2/postfix").status == "active");
}

TEST_CASE("fault staging refuses unknown resources and inapplicable kinds",
          "[adapters][agents][faults]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  CHECK(absl::IsNotFound(fleet->InjectFault("vm:999", DemoFaultKind::kHighMemory)));
  CHECK(absl::IsInvalidArgument(fleet->InjectFault("vm:101", DemoFaultKind::kCrashLoop)));
  CHECK(absl::IsInvalidArgument(fleet->InjectFault("service:pve1/nginx", DemoFaultKind::kExited)));
  CHECK(absl::IsInvalidArgument(
      fleet->InjectFault("storage:pve1/local-zfs", DemoFaultKind::kActionFails)));
  CHECK(absl::IsNotFound(fleet->ClearFault("vm:101", DemoFaultKind::kHighMemory)));
  // Re-injecting an active fault changes only its persistence.
  REQUIRE(fleet->InjectFault("vm:105", DemoFaultKind::kHighMemory, true).ok());
  const std::vector<DemoFault> faults = fleet->ActiveFaults();
  CHECK(faults.size() == 4);
  auto vm105 = std::find_if(faults.begin(), faults.end(),
                            [](const DemoFault& f) { return f.resource_id == "vm:105"; });
  REQUIRE(vm105 != faults.end());
  CHECK(vm105->persistent);
  CHECK(adapters::agents::ParseDemoFaultKind("crash_loop") == DemoFaultKind::kCrashLoop);
  CHECK_FALSE(adapters::agents::ParseDemoFaultKind("meltdown").has_value());
  CHECK(adapters::agents::ToString(DemoFaultKind::kActionFails) == "action_fails");
}

TEST_CASE("a restart clears a transient fault but not a persistent one",
          "[adapters][agents][faults]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  clock.Advance(absl::Minutes(1));
  // The staged crash loop on postfix is transient: a restart ends it.
  absl::Time at = clock.Now();
  REQUIRE(fleet->Dispatch(Dispatch("service:pve2/postfix", "restart", "p1")).ok());
  absl::StatusOr<core::PostconditionObservation> obs =
      fleet->ObservePostcondition(Postcondition("service:pve2/postfix", "restart", at));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kConfirmed);
  CHECK(MustStatus(*fleet, "service:pve2/postfix").facts.count("faults") == 0);

  // A persistent crash loop survives the restart: the observer contradicts the executor.
  REQUIRE(fleet->InjectFault("service:pve1/nginx", DemoFaultKind::kCrashLoop, true).ok());
  clock.Advance(absl::Minutes(1));
  at = clock.Now();
  absl::StatusOr<core::DispatchReceipt> receipt =
      fleet->Dispatch(Dispatch("service:pve1/nginx", "restart", "p2"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  obs = fleet->ObservePostcondition(Postcondition("service:pve1/nginx", "restart", at));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kContradicted);
  CHECK(obs->reason_code == "postcondition_failed");
  CHECK(obs->summary.find("observed failed") != std::string::npos);
  CHECK(Contains(LogLines(*fleet, "service:pve1/nginx"), "status=1/FAILURE"));

  // A persistently exited container does not come up on start either.
  REQUIRE(fleet->InjectFault("app-container:redis", DemoFaultKind::kExited, true).ok());
  at = clock.Now();
  REQUIRE(fleet->Dispatch(Dispatch("app-container:redis", "start", "p3")).ok());
  obs = fleet->ObservePostcondition(Postcondition("app-container:redis", "start", at));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kContradicted);
}

TEST_CASE("an action_fails fault makes the executor fail without effect",
          "[adapters][agents][faults]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  REQUIRE(fleet->InjectFault("vm:102", DemoFaultKind::kActionFails).ok());
  const core::FleetResource before = MustGet(*fleet, "vm:102");
  absl::StatusOr<core::DispatchReceipt> receipt = fleet->Dispatch(Dispatch("vm:102", "stop", "f1"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kFailed);
  CHECK(receipt->reason_code == "simulated_failure");
  CHECK(MustGet(*fleet, "vm:102") == before);
  absl::StatusOr<core::PostconditionObservation> obs =
      fleet->ObservePostcondition(Postcondition("vm:102", "stop", clock.Now()));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kContradicted);
  REQUIRE(fleet->ClearFault("vm:102", DemoFaultKind::kActionFails).ok());
  receipt = fleet->Dispatch(Dispatch("vm:102", "stop", "f2"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  CHECK(MustGet(*fleet, "vm:102").status == "stopped");
}

}  // namespace
}  // namespace pulse::testing::agents
