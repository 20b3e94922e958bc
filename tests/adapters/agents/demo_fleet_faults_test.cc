#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <stdexcept>
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

std::size_t CountLines(const std::vector<std::string>& lines, std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(),
                    [&](const std::string& l) { return l.find(text) != std::string::npos; }));
}

int RestartCount(core::Fleet& fleet, const std::string& id) {
  return std::stoi(MustStatus(fleet, id).facts.at("restart_count"));
}

// The shipped fleet file with `fault_json` declared first in its faults.
std::string ShippedFleetWithFault(const std::string& fault_json) {
  std::ifstream in(PULSE_DEMO_FLEET_PATH);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string anchor = "\"faults\": [";
  const std::size_t at = json.find(anchor);
  REQUIRE(at != std::string::npos);
  json.insert(at + anchor.size(), fault_json + ",");
  return json;
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
  CHECK(adapters::agents::ParseDemoFaultKind("dispatch_hangs") == DemoFaultKind::kDispatchHangs);
  CHECK(adapters::agents::ToString(DemoFaultKind::kDispatchHangs) == "dispatch_hangs");
}

TEST_CASE("every fault kind reads back from its name and near misses are refused",
          "[adapters][agents][faults]") {
  const std::vector<std::string> names = {"exited",         "crash_loop",   "high_memory",
                                          "backup_failed",  "action_fails", "dispatch_hangs",
                                          "dispatch_throws"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto kind = static_cast<DemoFaultKind>(i);
    INFO(names[i]);
    CHECK(adapters::agents::ToString(kind) == names[i]);
    CHECK(adapters::agents::ParseDemoFaultKind(names[i]) == kind);
    std::string upper = names[i];
    for (char& c : upper) {
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    for (const std::string& bad : {upper, names[i] + " ", " " + names[i], names[i].substr(1)}) {
      CHECK_FALSE(adapters::agents::ParseDemoFaultKind(bad).has_value());
    }
  }
  CHECK_FALSE(adapters::agents::ParseDemoFaultKind("").has_value());
  CHECK_FALSE(adapters::agents::ParseDemoFaultKind("unknown").has_value());
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

TEST_CASE("a dispatch_hangs fault applies the change once and then times out",
          "[adapters][agents][faults][dispatch_hangs]") {
  FakeClock clock;
  adapters::agents::DemoFleetOptions options = DemoOptions(clock);
  options.dispatch_timeout = absl::Seconds(7);
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> opened =
      adapters::agents::DemoFleet::Open(PULSE_DEMO_FLEET_PATH, options);
  REQUIRE(opened.ok());
  adapters::agents::DemoFleet& fleet = **opened;
  REQUIRE(fleet.InjectFault("vm:101", DemoFaultKind::kDispatchHangs).ok());
  CHECK(Contains(LogLines(fleet, "vm:101"), "answers are lost"));
  CHECK(MustStatus(fleet, "vm:101").facts.at("faults") == "dispatch_hangs");
  CHECK(CapabilityNames(fleet, "vm:101") == std::vector<std::string>{"restart", "stop"});
  const std::string revision = MustGet(fleet, "vm:101").revision;
  const int restarts = RestartCount(fleet, "vm:101");

  // The agent carries out the restart, but its answer never arrives: after the adapter's own
  // deadline (here 7 s of fake time) Dispatch reports DeadlineExceeded.
  const absl::Time dispatched_at = clock.Now();
  absl::StatusOr<core::DispatchReceipt> first =
      fleet.Dispatch(Dispatch("vm:101", "restart", "h1", R"({"mode":"reboot"})"));
  REQUIRE(absl::IsDeadlineExceeded(first.status()));
  CHECK(first.status().message() == "restart of vm:101: no answer from demo-agent:pve1 within 7s");
  CHECK(clock.Now() - dispatched_at == absl::Seconds(7));
  CHECK(CountLines(LogLines(fleet, "vm:101"), "restart requested by action act_test") == 1);
  CHECK(RestartCount(fleet, "vm:101") == restarts + 1);
  CHECK(MustGet(fleet, "vm:101").revision != revision);
  // The change really landed, so an observer confirms it.
  absl::StatusOr<core::PostconditionObservation> seen =
      fleet.ObservePostcondition(Postcondition("vm:101", "restart", dispatched_at));
  REQUIRE(seen.ok());
  CHECK(seen->status == core::VerificationStatus::kConfirmed);

  // The same attempt again never runs twice; while the fault lasts it is not answered either.
  const absl::Time repeated_at = clock.Now();
  absl::StatusOr<core::DispatchReceipt> again =
      fleet.Dispatch(Dispatch("vm:101", "restart", "h1", R"({"mode":"reboot"})"));
  CHECK(absl::IsDeadlineExceeded(again.status()));
  CHECK(clock.Now() - repeated_at == absl::Seconds(7));
  CHECK(CountLines(LogLines(fleet, "vm:101"), "restart requested by action") == 1);
  CHECK(RestartCount(fleet, "vm:101") == restarts + 1);

  // Once the answers flow again, the repeat gets the first attempt's receipt, still without
  // running it again; a new attempt runs normally.
  REQUIRE(fleet.ClearFault("vm:101", DemoFaultKind::kDispatchHangs).ok());
  CHECK(Contains(LogLines(fleet, "vm:101"), "executor answers again"));
  const absl::Time answered_at = clock.Now();
  again = fleet.Dispatch(Dispatch("vm:101", "restart", "h1", R"({"mode":"reboot"})"));
  REQUIRE(again.ok());
  CHECK(clock.Now() == answered_at);
  CHECK(again->status == core::ExecutionStatus::kSucceeded);
  CHECK(again->executor_id == "demo-agent:pve1");
  CHECK(again->summary == "restart of vm:101 accepted by demo-agent:pve1");
  CHECK(CountLines(LogLines(fleet, "vm:101"), "restart requested by action") == 1);
  CHECK(RestartCount(fleet, "vm:101") == restarts + 1);
  absl::StatusOr<core::DispatchReceipt> fresh =
      fleet.Dispatch(Dispatch("vm:101", "restart", "h2", R"({"mode":"reboot"})"));
  REQUIRE(fresh.ok());
  CHECK(clock.Now() == answered_at);
  CHECK(fresh->status == core::ExecutionStatus::kSucceeded);
  CHECK(RestartCount(fleet, "vm:101") == restarts + 2);
}

TEST_CASE("a dispatch_throws fault applies the change once and then throws",
          "[adapters][agents][faults][dispatch_throws]") {
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> opened =
      adapters::agents::DemoFleet::Open(PULSE_DEMO_FLEET_PATH, DemoOptions(clock));
  REQUIRE(opened.ok());
  adapters::agents::DemoFleet& fleet = **opened;
  CHECK(adapters::agents::ParseDemoFaultKind("dispatch_throws") == DemoFaultKind::kDispatchThrows);
  REQUIRE(fleet.InjectFault("vm:101", DemoFaultKind::kDispatchThrows).ok());
  CHECK(Contains(LogLines(fleet, "vm:101"), "fails with an exception"));
  const int restarts = RestartCount(fleet, "vm:101");
  // The agent carries out the restart; the adapter then fails the way a bug would.
  CHECK_THROWS_AS(fleet.Dispatch(Dispatch("vm:101", "restart", "t1", R"({"mode":"reboot"})")),
                  std::runtime_error);
  CHECK(CountLines(LogLines(fleet, "vm:101"), "restart requested by action act_test") == 1);
  CHECK(RestartCount(fleet, "vm:101") == restarts + 1);
  // The same attempt again never runs twice: it is answered with its receipt.
  absl::StatusOr<core::DispatchReceipt> again =
      fleet.Dispatch(Dispatch("vm:101", "restart", "t1", R"({"mode":"reboot"})"));
  REQUIRE(again.ok());
  CHECK(RestartCount(fleet, "vm:101") == restarts + 1);
  // A refused dispatch does not throw: nothing was applied.
  CHECK_FALSE(fleet.Dispatch(Dispatch("vm:101", "explode", "t2", "{}")).ok());
  REQUIRE(fleet.ClearFault("vm:101", DemoFaultKind::kDispatchThrows).ok());
  CHECK(fleet.Dispatch(Dispatch("vm:101", "restart", "t3", R"({"mode":"reboot"})")).ok());
}

TEST_CASE("a dispatch_hangs fault loses the answer of a refused or failed dispatch too",
          "[adapters][agents][faults][dispatch_hangs]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  REQUIRE(fleet->InjectFault("vm:102", DemoFaultKind::kDispatchHangs).ok());
  // What never reaches the agent is refused at once, as without the fault.
  absl::Time before = clock.Now();
  CHECK(absl::IsFailedPrecondition(fleet->Dispatch(Dispatch("vm:102", "start", "r1")).status()));
  CHECK(absl::IsInvalidArgument(
      fleet->Dispatch(Dispatch("vm:102", "stop", "r2", R"({"mode":"explode"})")).status()));
  CHECK(absl::IsNotFound(fleet->Dispatch(Dispatch("vm:999", "stop", "r3")).status()));
  CHECK(absl::IsInvalidArgument(fleet->Dispatch(Dispatch("vm:102", "stop", "")).status()));
  CHECK(clock.Now() == before);

  // With action_fails as well the agent fails without effect, and that answer is lost too.
  REQUIRE(fleet->InjectFault("vm:102", DemoFaultKind::kActionFails).ok());
  const core::FleetResource unchanged = MustGet(*fleet, "vm:102");
  absl::StatusOr<core::DispatchReceipt> failed = fleet->Dispatch(Dispatch("vm:102", "stop", "f1"));
  CHECK(absl::IsDeadlineExceeded(failed.status()));
  CHECK(clock.Now() - before == absl::Seconds(10));  // the default dispatch_timeout
  CHECK(MustGet(*fleet, "vm:102") == unchanged);
  CHECK(Contains(LogLines(*fleet, "vm:102"), "stop requested by action act_test failed"));
  REQUIRE(fleet->ClearFault("vm:102", DemoFaultKind::kDispatchHangs).ok());
  failed = fleet->Dispatch(Dispatch("vm:102", "stop", "f1"));
  REQUIRE(failed.ok());
  CHECK(failed->status == core::ExecutionStatus::kFailed);
  CHECK(failed->reason_code == "simulated_failure");
  CHECK(MustGet(*fleet, "vm:102").status == "running");
}

TEST_CASE("a hung dispatch does not block the rest of the fleet",
          "[adapters][agents][faults][dispatch_hangs]") {
  // Real time: the dispatch really waits while other callers use the fleet.
  adapters::agents::DemoFleetOptions options;
  options.dispatch_delay = absl::ZeroDuration();
  options.dispatch_timeout = absl::Milliseconds(1500);
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> opened =
      adapters::agents::DemoFleet::Open(PULSE_DEMO_FLEET_PATH, options);
  REQUIRE(opened.ok());
  adapters::agents::DemoFleet& fleet = **opened;
  REQUIRE(fleet.InjectFault("vm:101", DemoFaultKind::kDispatchHangs).ok());
  const int restarts = RestartCount(fleet, "vm:101");

  const auto started = std::chrono::steady_clock::now();
  std::future<absl::Status> hung = std::async(std::launch::async, [&fleet] {
    return fleet.Dispatch(Dispatch("vm:101", "restart", "slow")).status();
  });
  // The change is applied before the wait begins.
  bool applied = false;
  while (!applied && std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
    applied = Contains(LogLines(fleet, "vm:101"), "restart requested by action");
  }
  REQUIRE(applied);
  // Meanwhile reads and other dispatches go through and the dispatch is still waiting.
  CHECK(MustGet(fleet, "vm:101").status == "running");
  CHECK(RestartCount(fleet, "vm:101") == restarts + 1);
  absl::StatusOr<core::DispatchReceipt> other = fleet.Dispatch(Dispatch("vm:102", "stop", "fast"));
  REQUIRE(other.ok());
  CHECK(other->status == core::ExecutionStatus::kSucceeded);
  CHECK(MustGet(fleet, "vm:102").status == "stopped");
  CHECK(hung.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);

  const absl::Status status = hung.get();
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(absl::IsDeadlineExceeded(status));
  CHECK(status.message() == "restart of vm:101: no answer from demo-agent:pve1 within 1.5s");
  CHECK(took >= std::chrono::milliseconds(1500));
  CHECK(CountLines(LogLines(fleet, "vm:101"), "restart requested by action") == 1);
}

TEST_CASE("a dispatch_hangs fault is declared in the fleet file like the others",
          "[adapters][agents][faults][dispatch_hangs]") {
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> fleet =
      adapters::agents::DemoFleet::OpenFromJson(
          ShippedFleetWithFault(R"({"resource": "vm:101", "kind": "dispatch_hangs"})"),
          DemoOptions(clock));
  REQUIRE(fleet.ok());
  const std::vector<DemoFault> faults = (*fleet)->ActiveFaults();
  CHECK(std::count_if(faults.begin(), faults.end(), [](const DemoFault& f) {
          return f.resource_id == "vm:101" && f.kind == DemoFaultKind::kDispatchHangs &&
                 !f.persistent;
        }) == 1);
  const absl::Time before = clock.Now();
  CHECK(absl::IsDeadlineExceeded(
      (*fleet)->Dispatch(Dispatch("vm:101", "restart", "file-1")).status()));
  CHECK(clock.Now() - before == absl::Seconds(10));

  // It applies to what has capabilities, not to nodes or storage pools.
  for (const std::string target : {"node:pve1", "storage:pve1/local-zfs"}) {
    INFO(target);
    absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> refused =
        adapters::agents::DemoFleet::OpenFromJson(
            ShippedFleetWithFault(R"({"resource": ")" + target + R"(", "kind": "dispatch_hangs"})"),
            DemoOptions(clock));
    REQUIRE(absl::IsInvalidArgument(refused.status()));
    CHECK(refused.status().message().find("$.faults[0].kind") != std::string::npos);
    CHECK(refused.status().message().find("does not apply") != std::string::npos);
  }
  auto shipped = OpenDemo(clock);
  CHECK(absl::IsInvalidArgument(shipped->InjectFault("node:pve1", DemoFaultKind::kDispatchHangs)));
  CHECK(absl::IsInvalidArgument(
      shipped->InjectFault("storage:pve1/local-zfs", DemoFaultKind::kDispatchHangs)));
  CHECK(absl::IsNotFound(shipped->InjectFault("vm:999", DemoFaultKind::kDispatchHangs)));
  CHECK(absl::IsNotFound(shipped->ClearFault("vm:101", DemoFaultKind::kDispatchHangs)));
  for (const std::string target :
       {"app-container:web", "service:pve1/nginx", "backup-job:nightly"}) {
    INFO(target);
    CHECK(shipped->InjectFault(target, DemoFaultKind::kDispatchHangs).ok());
  }
  // An unknown kind names every kind there is.
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> unknown =
      adapters::agents::DemoFleet::OpenFromJson(
          ShippedFleetWithFault(R"({"resource": "vm:101", "kind": "dispatch_hang"})"),
          DemoOptions(clock));
  REQUIRE(absl::IsInvalidArgument(unknown.status()));
  CHECK(unknown.status().message().find(
            "unknown fault kind 'dispatch_hang' (exited, crash_loop, high_memory, backup_failed, "
            "action_fails, dispatch_hangs, dispatch_throws)") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::agents
