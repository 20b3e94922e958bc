#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agents_test_support.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/model/resource_id.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::DemoFleet;
using adapters::agents::DemoFleetMetricsHistory;

std::size_t CountStatus(const std::vector<core::FleetResource>& list, const std::string& status) {
  return static_cast<std::size_t>(std::count_if(
      list.begin(), list.end(), [&](const core::FleetResource& r) { return r.status == status; }));
}

TEST_CASE("the shipped demo fleet has the documented contents", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  CHECK(MustList(*fleet, "node").size() >= 3);
  CHECK(MustList(*fleet, "vm").size() >= 10);
  CHECK(MustList(*fleet, "app-container").size() >= 10);
  CHECK(MustList(*fleet, "storage").size() == 4);
  CHECK_FALSE(MustList(*fleet, "service").empty());
  const std::vector<core::FleetResource> backups = MustList(*fleet, "backup-job");
  CHECK(backups.size() == 3);
  CHECK(CountStatus(backups, "failed") == 1);
  // The staged faults: an exited container, a crash-looping service, a VM with high memory.
  CHECK(MustGet(*fleet, "app-container:worker").status == "exited");
  const core::FleetStatus postfix = MustStatus(*fleet, "service:pve2/postfix");
  CHECK(postfix.status == "failed");
  CHECK(postfix.facts.at("sub_state") == "auto-restart");
  const core::FleetStatus db = MustStatus(*fleet, "vm:105");
  CHECK(db.status == "running");
  CHECK(std::stod(db.facts.at("memory_pct")) > 90);
  CHECK(db.facts.at("faults") == "high_memory");
  CHECK(fleet->ActiveFaults().size() == 4);
}

TEST_CASE("resources have canonical ids, parents and relationships", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  const core::FleetResource vm = MustGet(*fleet, "vm:101");
  CHECK(vm.type == "vm");
  CHECK(vm.name == "web-01");
  CHECK(vm.parent_id == "node:pve1");
  CHECK(vm.technology == "proxmox");
  CHECK(MustGet(*fleet, "app-container:web").parent_id == "vm:103");
  CHECK(MustGet(*fleet, "service:pve1/nginx").parent_id == "node:pve1");
  CHECK(MustGet(*fleet, "storage:pve1/local-zfs").parent_id == "node:pve1");
  CHECK(MustGet(*fleet, "node:pve1").parent_id.empty());
  for (const core::FleetResource& r : MustList(*fleet)) {
    INFO(r.id);
    CHECK(core::IsCanonicalResourceId(r.id));
    CHECK(r.id.rfind(r.type + ":", 0) == 0);
    if (!r.parent_id.empty()) {
      CHECK(fleet->GetResource(r.parent_id).ok());
    }
  }
  core::FleetTopologyQuery q;
  q.root_id = "node:pve1";
  absl::StatusOr<core::FleetTopology> topo = fleet->GetTopology(q);
  REQUIRE(topo.ok());
  std::set<std::string> ids;
  for (const core::FleetResource& r : topo->resources) {
    ids.insert(r.id);
  }
  CHECK(ids.count("vm:101") == 1);
  CHECK(ids.count("service:pve1/nginx") == 1);
  CHECK(ids.count("storage:pve1/local-zfs") == 1);
  CHECK(ids.count("app-container:web") == 0);  // two edges away
  CHECK(std::find(topo->relationships.begin(), topo->relationships.end(),
                  core::FleetRelationship{"vm:101", "node:pve1", "runs_on"}) !=
        topo->relationships.end());
  q.depth = 2;
  topo = fleet->GetTopology(q);
  REQUIRE(topo.ok());
  CHECK(std::any_of(topo->resources.begin(), topo->resources.end(),
                    [](const core::FleetResource& r) { return r.id == "app-container:web"; }));
  q.root_id = "vm:999";
  CHECK(absl::IsNotFound(fleet->GetTopology(q).status()));
  q.root_id = "";
  q.depth = 9;
  CHECK(absl::IsInvalidArgument(fleet->GetTopology(q).status()));
}

TEST_CASE("lists and searches filter exactly and bound the result", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  core::FleetResourceQuery q;
  q.text = "DOCKER";
  absl::StatusOr<std::vector<core::FleetResource>> found = fleet->ListResources(q);
  REQUIRE(found.ok());
  REQUIRE(found->size() == 2);
  CHECK((*found)[0].id == "vm:103");
  q = {};
  q.type = "vm";
  q.status = "stopped";
  found = fleet->ListResources(q);
  REQUIRE(found.ok());
  CHECK(found->size() == 2);
  q = {};
  q.limit = 3;
  found = fleet->ListResources(q);
  REQUIRE(found.ok());
  CHECK(found->size() == 3);
  CHECK(std::is_sorted(found->begin(), found->end(),
                       [](const auto& a, const auto& b) { return a.id < b.id; }));
  q.limit = 0;
  CHECK(absl::IsInvalidArgument(fleet->ListResources(q).status()));
  CHECK(absl::IsNotFound(fleet->GetResource("vm:999").status()));
  CHECK(absl::IsNotFound(fleet->GetStatus("nonsense").status()));
}

TEST_CASE("the catalogue follows each resource's current state", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  using Names = std::vector<std::string>;
  CHECK(CapabilityNames(*fleet, "vm:101") == Names{"restart", "stop"});
  CHECK(CapabilityNames(*fleet, "vm:108") == Names{"start"});
  CHECK(CapabilityNames(*fleet, "app-container:web") == Names{"restart", "stop"});
  CHECK(CapabilityNames(*fleet, "app-container:worker") == Names{"start"});
  CHECK(CapabilityNames(*fleet, "service:pve1/nginx") == Names{"reload", "restart", "stop"});
  CHECK(CapabilityNames(*fleet, "service:pve2/postfix") == Names{"restart", "start"});
  CHECK(CapabilityNames(*fleet, "service:pve1/zfs-scrub") == Names{"start"});
  CHECK(CapabilityNames(*fleet, "backup-job:db-hourly") == Names{"run-now"});
  CHECK(CapabilityNames(*fleet, "node:pve1").empty());
  CHECK(CapabilityNames(*fleet, "storage:pve1/local-zfs").empty());
  CHECK(absl::IsNotFound(fleet->ListCapabilities("vm:999").status()));

  // Every advertised declaration is valid, none is destructive, and the automatic classes
  // follow the risk: restarting a service is low_risk, stopping a VM is elevated.
  for (const core::FleetResource& r : MustList(*fleet)) {
    absl::StatusOr<std::vector<core::Capability>> caps = fleet->ListCapabilities(r.id);
    REQUIRE(caps.ok());
    for (const core::Capability& c : *caps) {
      INFO(r.id << " " << c.name);
      CHECK(core::ValidateCapability(c).ok());
      CHECK(std::set<std::string>{"start", "stop", "restart", "reload", "run-now"}.count(c.name) ==
            1);
      CHECK(c.minimum_approval != core::ApprovalLevel::kMfa);
    }
  }
  absl::StatusOr<std::vector<core::Capability>> nginx =
      fleet->ListCapabilities("service:pve1/nginx");
  REQUIRE(nginx.ok());
  CHECK(core::FindCapability(*nginx, "restart")->auto_authorization ==
        core::AutoAuthorization::kLowRisk);
  absl::StatusOr<std::vector<core::Capability>> vm = fleet->ListCapabilities("vm:101");
  REQUIRE(vm.ok());
  const core::Capability* stop = core::FindCapability(*vm, "stop");
  REQUIRE(stop != nullptr);
  CHECK(stop->auto_authorization == core::AutoAuthorization::kElevated);
  CHECK(stop->minimum_approval == core::ApprovalLevel::kAdmin);
  CHECK(stop->params.size() == 1);
  CHECK(stop->params[0].enum_values == std::vector<std::string>{"shutdown", "stop"});
}

// What each capability must visibly change.
void CheckLanded(core::Fleet& fleet, const std::string& id, const std::string& capability,
                 const core::FleetStatus& before, absl::Time now) {
  const core::FleetStatus after = MustStatus(fleet, id);
  INFO(id << " " << capability << ": " << before.status << " -> " << after.status);
  if (capability == "start") {
    CHECK((after.status == "running" || after.status == "active"));
  } else if (capability == "stop") {
    CHECK((after.status == "stopped" || after.status == "exited" || after.status == "inactive"));
  } else if (capability == "restart") {
    CHECK((after.status == "running" || after.status == "active"));
    CHECK(std::stoi(after.facts.at("restart_count")) > std::stoi(before.facts.at("restart_count")));
  } else if (capability == "reload") {
    CHECK(after.facts.at("reloaded_at") ==
          absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone()));
  } else if (capability == "run-now") {
    CHECK(after.status == "ok");
    CHECK(after.facts.at("last_result") == "ok");
  }
}

TEST_CASE("every capability changes state and the independent observer confirms it",
          "[adapters][agents][demo]") {
  FakeClock clock;
  std::vector<std::pair<std::string, std::string>> pairs;
  {
    auto fleet = OpenDemo(clock);
    for (const core::FleetResource& r : MustList(*fleet)) {
      for (const std::string& c : CapabilityNames(*fleet, r.id)) {
        pairs.emplace_back(r.id, c);
      }
    }
  }
  REQUIRE(pairs.size() >= 40);
  std::set<std::string> kinds;
  for (const auto& [id, capability] : pairs) {
    INFO(id << " " << capability);
    auto fleet = OpenDemo(clock);  // a fresh world per capability
    clock.Advance(absl::Minutes(1));
    const absl::Time at = clock.Now();
    const core::FleetResource before = MustGet(*fleet, id);
    const core::FleetStatus before_status = MustStatus(*fleet, id);
    const std::size_t before_logs = LogLines(*fleet, id, 1000).size();
    absl::StatusOr<core::DispatchReceipt> receipt =
        fleet->Dispatch(Dispatch(id, capability, id + "." + capability));
    REQUIRE(receipt.ok());
    CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
    CHECK(receipt->executor_trust_domain.rfind("demo-agent:", 0) == 0);
    absl::StatusOr<core::PostconditionObservation> obs =
        fleet->ObservePostcondition(Postcondition(id, capability, at));
    REQUIRE(obs.ok());
    CHECK(obs->status == core::VerificationStatus::kConfirmed);
    CHECK_FALSE(obs->observer_trust_domain.empty());
    CHECK(obs->observer_trust_domain != receipt->executor_trust_domain);
    // The change shows in the resource, its status, its logs and its metrics.
    const core::FleetResource after = MustGet(*fleet, id);
    CHECK(after.revision != before.revision);
    CheckLanded(*fleet, id, capability, before_status, at);
    CHECK(LogLines(*fleet, id, 1000).size() > before_logs);
    core::FleetMetricQuery up;
    up.metric = "up";
    up.start = at;
    up.end = at + absl::Seconds(1);
    absl::StatusOr<core::FleetMetricSeries> series = fleet->ReadMetricHistory(id, up);
    REQUIRE(series.ok());
    CHECK(series->points.size() == 1);
    kinds.insert(after.type + "/" + capability);
  }
  CHECK(kinds.size() >= 11);
}

TEST_CASE("a capability outside the current catalogue is refused and changes nothing",
          "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  const core::FleetResource before = MustGet(*fleet, "vm:101");
  absl::StatusOr<core::DispatchReceipt> r = fleet->Dispatch(Dispatch("vm:101", "start", "a1"));
  CHECK(absl::IsFailedPrecondition(r.status()));
  CHECK(std::string(r.status().message()).find("running") != std::string::npos);
  CHECK(absl::IsFailedPrecondition(fleet->Dispatch(Dispatch("vm:101", "destroy", "a2")).status()));
  CHECK(
      absl::IsFailedPrecondition(fleet->Dispatch(Dispatch("node:pve1", "restart", "a3")).status()));
  CHECK(absl::IsInvalidArgument(
      fleet->Dispatch(Dispatch("vm:101", "stop", "a4", R"({"mode":"yank"})")).status()));
  CHECK(absl::IsInvalidArgument(
      fleet->Dispatch(Dispatch("vm:101", "stop", "a5", R"({"force":true})")).status()));
  CHECK(absl::IsInvalidArgument(
      fleet->Dispatch(Dispatch("app-container:web", "restart", "a6", R"({"timeout_seconds":9999})"))
          .status()));
  CHECK(absl::IsInvalidArgument(fleet->Dispatch(Dispatch("vm:101", "stop", "")).status()));
  CHECK(absl::IsNotFound(fleet->Dispatch(Dispatch("vm:999", "stop", "a7")).status()));
  CHECK(MustGet(*fleet, "vm:101") == before);
}

TEST_CASE("a repeated attempt id returns the first receipt and runs nothing twice",
          "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  absl::StatusOr<core::DispatchReceipt> first =
      fleet->Dispatch(Dispatch("app-container:web", "restart", "act_1.dispatch.1"));
  REQUIRE(first.ok());
  const core::FleetResource after_first = MustGet(*fleet, "app-container:web");
  absl::StatusOr<core::DispatchReceipt> second =
      fleet->Dispatch(Dispatch("app-container:web", "restart", "act_1.dispatch.1"));
  REQUIRE(second.ok());
  CHECK(second->summary == first->summary);
  CHECK(second->status == first->status);
  CHECK(MustGet(*fleet, "app-container:web") == after_first);
  CHECK(MustStatus(*fleet, "app-container:web").facts.at("restart_count") == "1");
}

TEST_CASE("a dispatched change lands after the configured delay", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock, absl::Seconds(3));
  REQUIRE(fleet->Dispatch(Dispatch("vm:108", "start", "d1")).ok());
  CHECK(MustGet(*fleet, "vm:108").status == "starting");
  CHECK(CapabilityNames(*fleet, "vm:108").empty());  // nothing is offered mid-operation
  CHECK(MustStatus(*fleet, "vm:108").facts.at("operation") == "start in progress");
  clock.Advance(absl::Seconds(2));
  CHECK(MustGet(*fleet, "vm:108").status == "starting");
  clock.Advance(absl::Seconds(1));
  CHECK(MustGet(*fleet, "vm:108").status == "running");
  CHECK(CapabilityNames(*fleet, "vm:108") == std::vector<std::string>{"restart", "stop"});
  CHECK(LatestMetric(*fleet, "vm:108", "up", clock.Now()) == 1);

  // The observer waits for a change still in flight.
  REQUIRE(fleet->Dispatch(Dispatch("vm:108", "stop", "d2")).ok());
  const absl::Time stop_at = clock.Now();
  absl::StatusOr<core::PostconditionObservation> obs =
      fleet->ObservePostcondition(Postcondition("vm:108", "stop", stop_at));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kConfirmed);
  CHECK(obs->observed_at >= stop_at + absl::Seconds(3));
  CHECK(obs->observed_at <= stop_at + absl::Seconds(4));
}

TEST_CASE("the observer is inconclusive when a change outlasts its patience",
          "[adapters][agents][demo]") {
  FakeClock clock;
  adapters::agents::DemoFleetOptions options = DemoOptions(clock, absl::Minutes(5));
  options.observe_timeout = absl::Seconds(10);
  absl::StatusOr<std::unique_ptr<DemoFleet>> fleet =
      DemoFleet::Open(PULSE_DEMO_FLEET_PATH, options);
  REQUIRE(fleet.ok());
  REQUIRE((*fleet)->Dispatch(Dispatch("service:pve1/nginx", "restart", "i1")).ok());
  absl::StatusOr<core::PostconditionObservation> obs =
      (*fleet)->ObservePostcondition(Postcondition("service:pve1/nginx", "restart", clock.Now()));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kInconclusive);
  CHECK(obs->reason_code == "still_in_progress");
  CHECK(absl::IsNotFound(
      (*fleet)->ObservePostcondition(Postcondition("vm:999", "start", clock.Now())).status()));

  // A clock that never moves cannot hang the observer either.
  FakeClock frozen;
  options = DemoOptions(frozen, absl::Minutes(5));
  options.sleep = [](absl::Duration) {};
  options.observe_timeout = absl::Seconds(2);
  options.observe_poll_interval = absl::Milliseconds(500);
  fleet = DemoFleet::Open(PULSE_DEMO_FLEET_PATH, options);
  REQUIRE(fleet.ok());
  REQUIRE((*fleet)->Dispatch(Dispatch("vm:101", "restart", "i2")).ok());
  obs = (*fleet)->ObservePostcondition(Postcondition("vm:101", "restart", frozen.Now()));
  REQUIRE(obs.ok());
  CHECK(obs->status == core::VerificationStatus::kInconclusive);
}

TEST_CASE("logs are bounded, newest last, and served per source", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  const std::vector<std::string> all = LogLines(*fleet, "service:pve2/postfix");
  REQUIRE(all.size() >= 3);
  core::FleetLogQuery q;
  q.max_lines = 2;
  absl::StatusOr<core::FleetLogExcerpt> two = fleet->ReadLogs("service:pve2/postfix", q);
  REQUIRE(two.ok());
  CHECK(two->truncated);
  CHECK(two->lines == std::vector<std::string>(all.end() - 2, all.end()));
  CHECK(two->lines.back().find("restart counter") != std::string::npos);
  q.max_lines = 200;
  q.source = "postfix.service";
  absl::StatusOr<core::FleetLogExcerpt> via_node = fleet->ReadLogs("node:pve2", q);
  REQUIRE(via_node.ok());
  CHECK(via_node->lines == all);
  q.source = "nope";
  CHECK(absl::IsNotFound(fleet->ReadLogs("node:pve2", q).status()));
  q.source = "";
  q.max_lines = core::kFleetMaxLogLines + 1;
  CHECK(absl::IsInvalidArgument(fleet->ReadLogs("node:pve2", q).status()));
  q.max_lines = 10;
  q.since = clock.Now() + absl::Hours(1);
  absl::StatusOr<core::FleetLogExcerpt> none = fleet->ReadLogs("node:pve2", q);
  REQUIRE(none.ok());
  CHECK(none->lines.empty());
}

TEST_CASE("configs are JSON with secrets redacted", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  absl::StatusOr<core::FleetConfig> vm = fleet->ReadConfig("vm:101");
  REQUIRE(vm.ok());
  CHECK(vm->format == "json");
  CHECK(vm->redacted);
  CHECK(vm->content.find("s3cr3t") == std::string::npos);
  CHECK(vm->content.find("\"cipassword\": \"***\"") != std::string::npos);
  CHECK(vm->content.find("\"memory\": 8192") != std::string::npos);
  absl::StatusOr<core::FleetConfig> node = fleet->ReadConfig("node:pve3");
  REQUIRE(node.ok());
  CHECK_FALSE(node->redacted);
  CHECK(absl::IsNotFound(fleet->ReadConfig("vm:999").status()));
}

TEST_CASE("metric history is windowed and downsampled", "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  core::FleetMetricQuery q;
  q.metric = "usage";
  q.start = clock.Now() - absl::Hours(24 * 31);
  q.end = clock.Now() + absl::Seconds(1);
  q.max_points = core::kFleetMaxMetricPoints;
  absl::StatusOr<core::FleetMetricSeries> full =
      fleet->ReadMetricHistory("storage:pve1/local-zfs", q);
  REQUIRE(full.ok());
  CHECK(full->points.size() == 720);  // 30 days, hourly
  CHECK(full->unit == "percent");
  CHECK(std::is_sorted(full->points.begin(), full->points.end(),
                       [](const auto& a, const auto& b) { return a.at < b.at; }));
  CHECK(full->points.back().at - full->points.front().at == absl::Hours(719));
  q.max_points = 100;
  absl::StatusOr<core::FleetMetricSeries> small =
      fleet->ReadMetricHistory("storage:pve1/local-zfs", q);
  REQUIRE(small.ok());
  CHECK(small->points.size() == 100);
  CHECK(small->points.back().at == full->points.back().at);
  q.start = clock.Now() - absl::Hours(24);
  q.max_points = 5000;
  absl::StatusOr<core::FleetMetricSeries> day =
      fleet->ReadMetricHistory("storage:pve1/local-zfs", q);
  REQUIRE(day.ok());
  CHECK(day->points.size() == 25);
  q.metric = "iops";
  CHECK(absl::IsNotFound(fleet->ReadMetricHistory("storage:pve1/local-zfs", q).status()));
  q.metric = "usage";
  q.end = q.start;
  CHECK(absl::IsInvalidArgument(fleet->ReadMetricHistory("storage:pve1/local-zfs", q).status()));
}

TEST_CASE("the demo storage pools drive the capacity forecast through MetricsHistory",
          "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  DemoFleetMetricsHistory history(*fleet);
  auto forecast = [&](const std::string& target) {
    absl::StatusOr<std::vector<core::MetricSample>> samples =
        history.Samples(target, "usage", clock.Now() - absl::Hours(24 * 30), clock.Now());
    REQUIRE(samples.ok());
    return core::ComputeCapacityForecast("usage", *samples);
  };
  const core::CapacityForecast filling = forecast("storage:pve1/local-zfs");
  CHECK(filling.reading == core::ForecastReading::kFilling);
  REQUIRE(filling.days_to_full.has_value());
  CHECK(*filling.days_to_full > 3);
  CHECK(*filling.days_to_full < 30);
  CHECK(forecast("storage:pve2/local-zfs").reading == core::ForecastReading::kNoFillTrend);
  CHECK(forecast("storage:pve3/backup-nfs").reading == core::ForecastReading::kNoHistory);
  CHECK(forecast("storage:pve3/local-zfs").reading == core::ForecastReading::kStable);
  // A unique provider reference works as a target; unknown and ambiguous ones have no history.
  CHECK(forecast("backup-nfs").reading == core::ForecastReading::kNoHistory);
  CHECK(forecast("local-zfs").sample_count == 0);
  CHECK(forecast("storage:nowhere/x").sample_count == 0);
  CHECK(absl::IsInvalidArgument(history.Samples("", "usage", clock.Now(), clock.Now()).status()));
  CHECK(absl::IsInvalidArgument(
      history.Samples("vm:101", "usage", clock.Now(), clock.Now() - absl::Hours(1)).status()));
}

TEST_CASE("provider references resolve to canonical ids only when unique",
          "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  auto resolves_to = [&](std::string_view ref) {
    absl::StatusOr<std::string> id = fleet->ResolveReference(ref);
    INFO(std::string(ref) << " -> " << id.status().ToString());
    REQUIRE(id.ok());
    return *id;
  };
  CHECK(resolves_to("vm:101") == "vm:101");
  CHECK(resolves_to("web-01") == "vm:101");
  CHECK(resolves_to("WEB-01") == "vm:101");
  CHECK(resolves_to("101") == "vm:101");
  CHECK(resolves_to("worker") == "app-container:worker");
  CHECK(resolves_to("postfix") == "service:pve2/postfix");
  CHECK(resolves_to("postfix.service") == "service:pve2/postfix");
  CHECK(resolves_to("pve1/nginx") == "service:pve1/nginx");
  CHECK(resolves_to("pve3") == "node:pve3");
  CHECK(resolves_to("backup-nfs") == "storage:pve3/backup-nfs");
  CHECK(resolves_to("nightly") == "backup-job:nightly");

  CHECK(absl::IsNotFound(fleet->ResolveReference("web-99").status()));
  CHECK(absl::IsNotFound(fleet->ResolveReference("vm:999").status()));
  absl::Status ambiguous = fleet->ResolveReference("nginx").status();
  CHECK(absl::IsFailedPrecondition(ambiguous));
  CHECK(std::string(ambiguous.message()).find("service:pve1/nginx, service:pve2/nginx") !=
        std::string::npos);
  CHECK(absl::IsFailedPrecondition(fleet->ResolveReference("local-zfs").status()));
  CHECK(absl::IsFailedPrecondition(fleet->ResolveReference("nginx.service").status()));
  CHECK(absl::IsInvalidArgument(fleet->ResolveReference("").status()));
  CHECK(absl::IsInvalidArgument(fleet->ResolveReference("web 01").status()));
  CHECK(absl::IsInvalidArgument(fleet->ResolveReference(std::string(300, 'a')).status()));
}

TEST_CASE("the demo fleet is safe under concurrent readers and writers",
          "[adapters][agents][demo]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock, absl::Seconds(1));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        core::FleetResourceQuery q;
        q.limit = 1000;
        if (!fleet->ListResources(q).ok() || !fleet->GetStatus("vm:101").ok() ||
            !fleet->ListCapabilities("service:pve1/nginx").ok()) {
          ++failures;
        }
        if (t == 0 && i % 20 == 0) {
          fleet
              ->Dispatch(Dispatch("app-container:web", i % 40 == 0 ? "stop" : "start",
                                  "c" + std::to_string(i)))
              .status()
              .IgnoreError();  // refused while the previous change is in flight: expected
          clock.Advance(absl::Seconds(1));
        }
        if (t == 1 && i % 10 == 0) {
          fleet->InjectFault("vm:102", adapters::agents::DemoFaultKind::kHighMemory).IgnoreError();
          fleet->ClearFault("vm:102", adapters::agents::DemoFaultKind::kHighMemory)
              .IgnoreError();  // may race with the injection above: either outcome is fine
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(failures.load() == 0);
}

}  // namespace
}  // namespace pulse::testing::agents
