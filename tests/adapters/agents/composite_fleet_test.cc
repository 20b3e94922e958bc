// CompositeFleet (adapters/agents/composite_fleet.h): the Fleet contract over several sources,
// the id scheme for colliding ids, dispatch routing and a source that goes down.
#include "pulse/adapters/agents/composite_fleet.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents_test_support.h"
#include "contracts/fleet_contract.h"
#include "pulse/adapters/agents/local_host_fleet.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::CompositeFleet;
using adapters::agents::CompositeSource;

// A real demo fleet behind a switch that makes it answer Unavailable, as a source whose
// agent or API is unreachable does.
class SwitchableFleet final : public core::Fleet {
 public:
  explicit SwitchableFleet(std::unique_ptr<core::Fleet> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> down{false};

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& q) override {
    return Gate() ? inner_->ListResources(q) : Down();
  }
  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override {
    return Gate() ? inner_->GetResource(id) : Down();
  }
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& q) override {
    return Gate() ? inner_->GetTopology(q) : Down();
  }
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override {
    return Gate() ? inner_->GetStatus(id) : Down();
  }
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& q) override {
    return Gate() ? inner_->ReadLogs(id, q) : Down();
  }
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override {
    return Gate() ? inner_->ReadConfig(id) : Down();
  }
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& q) override {
    return Gate() ? inner_->ReadMetricHistory(id, q) : Down();
  }
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override {
    return Gate() ? inner_->ListCapabilities(id) : Down();
  }
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& r) override {
    return Gate() ? inner_->Dispatch(r) : Down();
  }
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& q) override {
    return Gate() ? inner_->ObservePostcondition(q) : Down();
  }

 private:
  bool Gate() const { return !down.load(); }
  static absl::Status Down() { return absl::UnavailableError("connection refused"); }
  std::unique_ptr<core::Fleet> inner_;
};

CompositeSource Source(std::string name, std::unique_ptr<core::Fleet> fleet,
                       std::string kind = "demo") {
  return CompositeSource{std::move(name), std::move(kind), std::move(fleet)};
}

std::unique_ptr<CompositeFleet> MustCreate(std::vector<CompositeSource> sources) {
  absl::StatusOr<std::unique_ptr<CompositeFleet>> fleet =
      CompositeFleet::Create(std::move(sources));
  REQUIRE(fleet.ok());
  return *std::move(fleet);
}

// Two copies of the shipped demo fleet: every id of the second collides.
std::unique_ptr<CompositeFleet> TwoDemos(FakeClock& clock) {
  std::vector<CompositeSource> sources;
  sources.push_back(Source("a", OpenDemo(clock)));
  sources.push_back(Source("b", OpenDemo(clock)));
  return MustCreate(std::move(sources));
}

TEST_CASE("the composite of a demo fleet and this host honours the Fleet contract",
          "[adapters][agents][composite][contract]") {
  FakeClock clock;
  RunFleetContract([&clock] {
    std::vector<CompositeSource> sources;
    sources.push_back(Source("lab", OpenDemo(clock)));
    absl::StatusOr<std::unique_ptr<adapters::agents::LocalHostFleet>> local =
        adapters::agents::LocalHostFleet::Open();
    REQUIRE(local.ok());
    sources.push_back(Source("here", *std::move(local), "local"));
    FleetContractSubject subject;
    subject.fleet = MustCreate(std::move(sources));
    subject.metric_resource = "vm:101";
    subject.metric = "memory";
    subject.now = clock.Now();
    core::DispatchRequest restart;
    restart.resource_id = "app-container:web";
    restart.capability_name = "restart";
    restart.params_json = "{}";
    subject.dispatch = restart;
    return subject;
  });
}

TEST_CASE("the composite of two colliding demo fleets honours the Fleet contract",
          "[adapters][agents][composite][contract]") {
  FakeClock clock;
  RunFleetContract([&clock] {
    FleetContractSubject subject;
    subject.fleet = TwoDemos(clock);
    subject.metric_resource = "vm:@b/101";
    subject.metric = "memory";
    subject.now = clock.Now();
    core::DispatchRequest restart;
    restart.resource_id = "app-container:@b/web";
    restart.capability_name = "restart";
    restart.params_json = "{}";
    subject.dispatch = restart;
    return subject;
  });
}

TEST_CASE("colliding ids of a later source are namespaced with parents and edges",
          "[adapters][agents][composite]") {
  FakeClock clock;
  const std::size_t single = MustList(*OpenDemo(clock)).size();
  auto fleet = TwoDemos(clock);
  const std::vector<core::FleetResource> all = MustList(*fleet);
  CHECK(all.size() == 2 * single);
  const core::FleetResource first = MustGet(*fleet, "vm:101");
  CHECK(first.parent_id == "node:pve1");
  CHECK(first.attributes.at("pulse.source") == "a");
  const core::FleetResource second = MustGet(*fleet, "vm:@b/101");
  CHECK(second.type == "vm");
  CHECK(second.name == first.name);
  CHECK(second.parent_id == "node:@b/pve1");
  CHECK(second.attributes.at("pulse.source") == "b");
  absl::StatusOr<std::pair<std::string, std::string>> owner = fleet->Locate("vm:@b/101");
  REQUIRE(owner.ok());
  CHECK(owner->first == "b");
  CHECK(owner->second == "vm:101");
  core::FleetTopologyQuery around;
  around.root_id = "node:@b/pve1";
  absl::StatusOr<core::FleetTopology> topology = fleet->GetTopology(around);
  REQUIRE(topology.ok());
  REQUIRE_FALSE(topology->relationships.empty());
  for (const core::FleetResource& r : topology->resources) {
    INFO(r.id);
    CHECK(r.attributes.at("pulse.source") == "b");
  }
  // A namespaced id of a source that does not exist, or of a resource it lacks, is unknown.
  CHECK(absl::IsNotFound(fleet->GetResource("vm:@c/101").status()));
  CHECK(absl::IsNotFound(fleet->GetResource("vm:@b/999").status()));
  CHECK(absl::IsNotFound(fleet->GetResource("vm:@a/101").status()));
}

TEST_CASE("a dispatch goes to the source that owns the resource", "[adapters][agents][composite]") {
  FakeClock clock;
  auto fleet = TwoDemos(clock);
  REQUIRE(MustGet(*fleet, "app-container:worker").status == "exited");
  REQUIRE(MustGet(*fleet, "app-container:@b/worker").status == "exited");
  absl::StatusOr<core::DispatchReceipt> receipt =
      fleet->Dispatch(Dispatch("app-container:@b/worker", "start", "act_b.dispatch.1"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  CHECK(MustGet(*fleet, "app-container:@b/worker").status == "running");
  CHECK(MustGet(*fleet, "app-container:worker").status == "exited");
  absl::StatusOr<core::PostconditionObservation> seen =
      fleet->ObservePostcondition(Postcondition("app-container:@b/worker", "start", clock.Now()));
  REQUIRE(seen.ok());
  CHECK(seen->status == core::VerificationStatus::kConfirmed);
  // The same attempt again is answered from the owner's receipts, not run twice.
  absl::StatusOr<core::DispatchReceipt> again =
      fleet->Dispatch(Dispatch("app-container:@b/worker", "start", "act_b.dispatch.1"));
  REQUIRE(again.ok());
  CHECK(again->summary == receipt->summary);
}

TEST_CASE("a change in a source's listing shows in the next whole-fleet read",
          "[adapters][agents][composite]") {
  // The merged view is rebuilt only when a source's listing differs from the one before: a
  // listing read twice without a change answers the same, one read after a change answers it.
  FakeClock clock;
  auto fleet = TwoDemos(clock);
  const auto status_in = [](const std::vector<core::FleetResource>& listed, const std::string& id) {
    for (const core::FleetResource& r : listed) {
      if (r.id == id) {
        return r.status;
      }
    }
    return std::string("(not listed)");
  };
  const std::vector<core::FleetResource> first = MustList(*fleet);
  CHECK(MustList(*fleet) == first);
  CHECK(status_in(first, "app-container:@b/worker") == "exited");
  REQUIRE(
      fleet->Dispatch(Dispatch("app-container:@b/worker", "start", "act_list.dispatch.1")).ok());
  const std::vector<core::FleetResource> after = MustList(*fleet);
  CHECK(status_in(after, "app-container:@b/worker") == "running");
  CHECK(status_in(after, "app-container:worker") == "exited");
  CHECK(after.size() == first.size());
  absl::StatusOr<core::FleetTopology> topology = fleet->GetTopology({});
  REQUIRE(topology.ok());
  CHECK(status_in(topology->resources, "app-container:@b/worker") == "running");
  CHECK(MustList(*fleet) == after);
  const std::vector<core::FleetSourceStatus> states = fleet->SourceStatuses();
  REQUIRE(states.size() == 2);
  CHECK(states[0].resources + states[1].resources == after.size());
}

TEST_CASE("a source that is down keeps its resources as unknown and never fails the others",
          "[adapters][agents][composite]") {
  FakeClock clock;
  auto flaky = std::make_unique<SwitchableFleet>(OpenDemo(clock));
  SwitchableFleet* b = flaky.get();
  std::vector<CompositeSource> sources;
  sources.push_back(Source("a", OpenDemo(clock)));
  sources.push_back(Source("b", std::move(flaky)));
  auto fleet = MustCreate(std::move(sources));
  const std::size_t before = MustList(*fleet).size();
  b->down = true;
  const std::vector<core::FleetResource> all = MustList(*fleet);
  CHECK(all.size() == before);
  for (const core::FleetResource& r : all) {
    INFO(r.id);
    CHECK((r.attributes.at("pulse.source") == "b") == (r.status == "unknown"));
  }
  CHECK(MustGet(*fleet, "vm:@b/101").status == "unknown");
  CHECK(MustGet(*fleet, "vm:101").status == "running");
  CHECK(fleet->GetStatus("vm:101").ok());
  const absl::Status status = fleet->GetStatus("vm:@b/101").status();
  CHECK(absl::IsUnavailable(status));
  CHECK(std::string(status.message()).find("\"b\"") != std::string::npos);
  CHECK(absl::IsUnavailable(
      fleet->Dispatch(Dispatch("app-container:@b/worker", "start", "act_down.dispatch.1"))
          .status()));
  const std::vector<core::FleetSourceStatus> states = fleet->SourceStatuses();
  REQUIRE(states.size() == 2);
  CHECK(states[0].up);
  CHECK_FALSE(states[1].up);
  CHECK(states[1].error == "connection refused");
  CHECK(states[1].resources == before / 2);
  // Back up: its resources answer again under the same ids.
  b->down = false;
  CHECK(MustList(*fleet).size() == before);
  CHECK(MustGet(*fleet, "vm:@b/101").status == "running");
  CHECK(fleet->SourceStatuses()[1].up);
}

TEST_CASE("a source that is down from the start does not fail the fleet",
          "[adapters][agents][composite]") {
  FakeClock clock;
  auto flaky = std::make_unique<SwitchableFleet>(OpenDemo(clock));
  flaky->down = true;
  SwitchableFleet* b = flaky.get();
  std::vector<CompositeSource> sources;
  sources.push_back(Source("b", std::move(flaky)));
  sources.push_back(Source("a", OpenDemo(clock)));
  auto fleet = MustCreate(std::move(sources));
  // b lists nothing yet, so a's ids stay plain.
  CHECK(MustGet(*fleet, "vm:101").attributes.at("pulse.source") == "a");
  CHECK_FALSE(fleet->SourceStatuses()[0].up);
  CHECK(fleet->SourceStatuses()[0].resources == 0);
  // Once b answers, b is earlier in the list and claims the plain ids.
  b->down = false;
  MustList(*fleet);
  CHECK(MustGet(*fleet, "vm:101").attributes.at("pulse.source") == "b");
  CHECK(MustGet(*fleet, "vm:@a/101").attributes.at("pulse.source") == "a");
}

TEST_CASE("a composite refuses bad source lists", "[adapters][agents][composite]") {
  FakeClock clock;
  CHECK(absl::IsInvalidArgument(CompositeFleet::Create({}).status()));
  std::vector<CompositeSource> twice;
  twice.push_back(Source("a", OpenDemo(clock)));
  twice.push_back(Source("a", OpenDemo(clock)));
  CHECK(absl::IsInvalidArgument(CompositeFleet::Create(std::move(twice)).status()));
  for (const char* name :
       {"", "A", "-a", "a b", "a/b", "a@b", "averyveryveryveryverylongname-0123"}) {
    INFO(name);
    std::vector<CompositeSource> one;
    one.push_back(Source(name, OpenDemo(clock)));
    CHECK(absl::IsInvalidArgument(CompositeFleet::Create(std::move(one)).status()));
  }
  std::vector<CompositeSource> missing;
  missing.push_back(Source("a", nullptr));
  CHECK(absl::IsInvalidArgument(CompositeFleet::Create(std::move(missing)).status()));
}

}  // namespace
}  // namespace pulse::testing::agents
