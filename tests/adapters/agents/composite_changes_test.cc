// CompositeFleet::ChangesSince (adapters/agents/composite_fleet.h, docs/fleet.md "Changes"): the
// sources' change feeds merged in time order, in the composite's ids (namespaced on a
// collision), with the source's name and the composite's own sequence, bounded; a source that
// is down holds up nobody.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agents_test_support.h"
#include "pulse/adapters/agents/composite_fleet.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::CompositeFleet;
using adapters::agents::CompositeSource;

// A real demo fleet with a change feed a test writes to (the demo fleet has none), behind a
// switch that makes every read answer Unavailable, as a source whose API is unreachable does.
// The feed answers from memory, as the port requires, whether the source is up or not.
class FeedFleet final : public core::Fleet {
 public:
  explicit FeedFleet(std::unique_ptr<core::Fleet> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> down{false};

  void Report(std::string resource_id, std::string kind, absl::Time at, std::string detail = "") {
    absl::MutexLock lock(&mu_);
    core::FleetChange c;
    c.seq = next_++;
    c.at = at;
    c.resource_id = std::move(resource_id);
    c.kind = std::move(kind);
    c.detail = std::move(detail);
    changes_.push_back(std::move(c));
  }

  std::vector<core::FleetChange> ChangesSince(std::uint64_t after, std::size_t max) override {
    absl::MutexLock lock(&mu_);
    std::vector<core::FleetChange> out;
    for (const core::FleetChange& c : changes_) {
      if (c.seq > after && out.size() < max) {
        out.push_back(c);
      }
    }
    return out;
  }

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
  absl::Mutex mu_;
  std::vector<core::FleetChange> changes_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
};

struct TwoFeeds {
  FeedFleet* a = nullptr;
  FeedFleet* b = nullptr;
  std::unique_ptr<CompositeFleet> fleet;
};

// Two copies of the shipped demo fleet (every id of b collides with a's), each with a feed.
TwoFeeds MakeTwoFeeds(FakeClock& clock) {
  TwoFeeds out;
  auto a = std::make_unique<FeedFleet>(OpenDemo(clock));
  auto b = std::make_unique<FeedFleet>(OpenDemo(clock));
  out.a = a.get();
  out.b = b.get();
  std::vector<CompositeSource> sources;
  sources.push_back(CompositeSource{"a", "demo", std::move(a)});
  sources.push_back(CompositeSource{"b", "docker", std::move(b)});
  absl::StatusOr<std::unique_ptr<CompositeFleet>> fleet =
      CompositeFleet::Create(std::move(sources));
  REQUIRE(fleet.ok());
  out.fleet = *std::move(fleet);
  return out;
}

TEST_CASE("the composite merges its sources' changes in time order with namespaced ids",
          "[adapters][agents][composite][changes]") {
  FakeClock clock;
  TwoFeeds f = MakeTwoFeeds(clock);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  CHECK(f.fleet->ChangesSince(0, 100).empty());

  f.a->Report("app-container:web", "die", t0 + absl::Seconds(2), "exit code 1");
  f.b->Report("app-container:web", "oom", t0 + absl::Seconds(1));
  f.b->Report("app-container:brand-new", "create", t0 + absl::Seconds(3));
  f.b->Report("app-container:@odd", "start", t0 + absl::Seconds(4));
  f.b->Report("", "events_lost", t0 + absl::Seconds(5));
  f.b->Report("App-Container:../etc", "die", t0 + absl::Seconds(6));  // not canonical: dropped
  f.b->Report("node:" + std::string(300, 'x'), "die", t0 + absl::Seconds(7));  // too long

  const std::vector<core::FleetChange> got = f.fleet->ChangesSince(0, 100);
  REQUIRE(got.size() == 5);
  // Time order across the sources, the composite's own sequence.
  CHECK(got[0].seq == 1);
  CHECK(got[0].source == "b");
  CHECK(got[0].kind == "oom");
  CHECK(got[0].resource_id == "app-container:@b/web");  // a holds the plain id
  CHECK(got[1].source == "a");
  CHECK(got[1].resource_id == "app-container:web");
  CHECK(got[1].detail == "exit code 1");
  CHECK(got[1].at == t0 + absl::Seconds(2));
  // A resource the composite has not listed yet keeps its plain id when nobody else holds it;
  // a local part starting with '@' is always namespaced.
  CHECK(got[2].resource_id == "app-container:brand-new");
  CHECK(got[3].resource_id == "app-container:@b/@odd");
  CHECK(got[4].kind == "events_lost");
  CHECK(got[4].resource_id.empty());
  CHECK(got[4].source == "b");
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].seq == i + 1);
  }

  // The cursor: only what is newer, at most `max`, and nothing taken twice from a source.
  CHECK(f.fleet->ChangesSince(5, 100).empty());
  CHECK(f.fleet->ChangesSince(3, 100).size() == 2);
  CHECK(f.fleet->ChangesSince(0, 2).size() == 2);
  CHECK(f.fleet->ChangesSince(0, 0).empty());
  f.a->Report("vm:101", "restart", t0 + absl::Seconds(8));
  const std::vector<core::FleetChange> next = f.fleet->ChangesSince(5, 100);
  REQUIRE(next.size() == 1);
  CHECK(next[0].seq == 6);
  CHECK(next[0].resource_id == "vm:101");
  CHECK(f.fleet->ChangesSince(0, 100).size() == 6);
}

TEST_CASE("a source that is down does not stop the changes of the others",
          "[adapters][agents][composite][changes]") {
  FakeClock clock;
  TwoFeeds f = MakeTwoFeeds(clock);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  f.a->down = true;
  // Reads go through the down source's listing first (its resources read unknown).
  REQUIRE(f.fleet->ListResources({}).ok());
  REQUIRE(f.fleet->SourceStatuses().front().up == false);

  f.b->Report("app-container:web", "die", t0, "exit code 137");
  std::vector<core::FleetChange> got = f.fleet->ChangesSince(0, 100);
  REQUIRE(got.size() == 1);
  CHECK(got[0].source == "b");
  CHECK(got[0].resource_id == "app-container:@b/web");  // a's remembered resources keep theirs

  // What the down source reported still arrives, in its remembered ids.
  f.a->Report("app-container:web", "die", t0 + absl::Seconds(1));
  f.b->Report("app-container:web", "start", t0 + absl::Seconds(2));
  got = f.fleet->ChangesSince(1, 100);
  REQUIRE(got.size() == 2);
  CHECK(got[0].source == "a");
  CHECK(got[0].resource_id == "app-container:web");
  CHECK(got[1].source == "b");
  CHECK(got[1].kind == "start");
}

TEST_CASE(
    "the composite's change stream keeps the newest changes and a fleet without a feed adds "
    "none",
    "[adapters][agents][composite][changes]") {
  FakeClock clock;
  TwoFeeds f = MakeTwoFeeds(clock);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  const std::size_t total = core::kFleetMaxChanges + 250;
  for (std::size_t i = 0; i < total; ++i) {
    f.b->Report("vm:101", "restart", t0 + absl::Milliseconds(static_cast<std::int64_t>(i)));
  }
  // More than one feed answer's worth is drained in one pull.
  const std::vector<core::FleetChange> got = f.fleet->ChangesSince(0, core::kFleetMaxChanges);
  REQUIRE(got.size() == core::kFleetMaxChanges);
  CHECK(got.front().seq == total - core::kFleetMaxChanges + 1);
  CHECK(got.back().seq == total);
  CHECK(got.back().resource_id == "vm:@b/101");

  // Demo sources alone: the port's default feed is empty.
  std::vector<CompositeSource> sources;
  sources.push_back(CompositeSource{"lab", "demo", OpenDemo(clock)});
  absl::StatusOr<std::unique_ptr<CompositeFleet>> demo = CompositeFleet::Create(std::move(sources));
  REQUIRE(demo.ok());
  CHECK((*demo)->ChangesSince(0, 100).empty());
  CHECK(OpenDemo(clock)->ChangesSince(0, 100).empty());
}

}  // namespace
}  // namespace pulse::testing::agents
