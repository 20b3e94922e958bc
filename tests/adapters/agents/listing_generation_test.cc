// Fleet::ListingGeneration over the real demo fleet, the host agents' source and the composite:
// a listing that changed always comes with a new generation (the fleet context serves its kept
// array while the generation holds, without listing), across every kind of change the demo
// makes: a dispatch accepted, a change landing when its time comes, a fault injected or cleared;
// the composite knows its generation only when every source does.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agents_test_support.h"
#include "pulse/adapters/agents/composite_fleet.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/testing/fake_fleet.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::CompositeFleet;
using adapters::agents::CompositeSource;
using adapters::agents::DemoFaultKind;

// Everything a listing shows of every resource, as one text.
std::string Shown(core::Fleet& fleet) {
  std::string out;
  for (const core::FleetResource& r : MustList(fleet)) {
    absl::StrAppend(&out, r.id, "|", r.type, "|", r.name, "|", r.status, "|", r.technology, "|",
                    r.parent_id, "|", r.revision, "|");
    for (const auto& [key, value] : r.attributes) {
      absl::StrAppend(&out, key, "=", value, ",");
    }
    out += "\n";
  }
  return out;
}

std::uint64_t Generation(core::Fleet& fleet) {
  const std::optional<std::uint64_t> generation = fleet.ListingGeneration();
  REQUIRE(generation.has_value());
  return *generation;
}

// Follows a fleet: each Step() fails when the listing changed but the generation did not.
class Follower {
 public:
  explicit Follower(core::Fleet& fleet)
      : fleet_(fleet), generation_(Generation(fleet)), shown_(Shown(fleet)) {}
  // Whether the listing changed since the last step (checked: then the generation did too).
  bool Step() {
    const std::uint64_t generation = Generation(fleet_);
    std::string shown = Shown(fleet_);
    const bool changed = shown != shown_;
    if (changed) {
      CHECK(generation != generation_);
    }
    generation_ = generation;
    shown_ = std::move(shown);
    return changed;
  }
  std::uint64_t generation() const { return generation_; }

 private:
  core::Fleet& fleet_;
  std::uint64_t generation_;
  std::string shown_;
};

TEST_CASE("the demo's listing generation moves with every change a listing shows",
          "[adapters][agents][listing-generation]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock, absl::Seconds(3));
  Follower follower(*fleet);
  const std::uint64_t first = follower.generation();
  clock.Advance(absl::Minutes(5));
  CHECK_FALSE(follower.Step());
  CHECK(follower.generation() == first);  // time alone, with nothing due, changes nothing

  REQUIRE(fleet->Dispatch(Dispatch("app-container:web", "restart", "att-1")).ok());
  CHECK(follower.Step());  // restarting
  clock.Advance(absl::Seconds(3));
  CHECK(follower.Step());  // landed: running again, a new revision
  REQUIRE(fleet->InjectFault("app-container:api", DemoFaultKind::kExited).ok());
  CHECK(follower.Step());
  REQUIRE(fleet->ClearFault("app-container:api", DemoFaultKind::kExited).ok());
  CHECK(follower.Step());
  const std::uint64_t settled = follower.generation();
  CHECK_FALSE(follower.Step());
  CHECK(follower.generation() == settled);
}

TEST_CASE("a random walk of the demo never changes a listing under the same generation",
          "[adapters][agents][listing-generation]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock, absl::Seconds(2));
  Follower follower(*fleet);
  const std::vector<core::FleetResource> all = MustList(*fleet);
  const std::vector<std::string> capabilities = {"start", "stop", "restart", "reload"};
  const std::vector<DemoFaultKind> faults = {DemoFaultKind::kExited, DemoFaultKind::kCrashLoop,
                                             DemoFaultKind::kHighMemory,
                                             DemoFaultKind::kActionFails};
  std::mt19937 random(29);
  int changes = 0;
  for (int step = 0; step < 400; ++step) {
    const core::FleetResource& target = all[random() % all.size()];
    switch (random() % 4) {
      case 0:  // refused ones (not offered in this state) change nothing, which is checked too
        (void)fleet->Dispatch(Dispatch(target.id, capabilities[random() % capabilities.size()],
                                       absl::StrCat("walk-", step)));
        break;
      case 1:
        (void)fleet->InjectFault(target.id, faults[random() % faults.size()]);
        break;
      case 2:
        (void)fleet->ClearFault(target.id, faults[random() % faults.size()]);
        break;
      default:
        clock.Advance(absl::Seconds(1));
        break;
    }
    changes += follower.Step() ? 1 : 0;
  }
  CHECK(changes > 50);  // the walk did change the fleet, often
}

TEST_CASE("the composite knows its listing generation only when every source does",
          "[adapters][agents][listing-generation]") {
  FakeClock clock;
  std::vector<CompositeSource> sources;
  sources.push_back(CompositeSource{"lab", "demo", OpenDemo(clock, absl::Seconds(1))});
  sources.push_back(CompositeSource{"lab2", "demo", OpenDemo(clock, absl::Seconds(1))});
  absl::StatusOr<std::unique_ptr<CompositeFleet>> created =
      CompositeFleet::Create(std::move(sources));
  REQUIRE(created.ok());
  CompositeFleet& composite = **created;
  Follower follower(composite);
  CHECK_FALSE(follower.Step());
  // The second source's vm:101 is vm:@lab2/101 in the composite.
  REQUIRE(composite.Dispatch(Dispatch("vm:@lab2/101", "restart", "att-1")).ok());
  CHECK(follower.Step());
  clock.Advance(absl::Seconds(1));
  CHECK(follower.Step());
  CHECK_FALSE(follower.Step());

  // A source that cannot tell (a fake fleet: the port's default) makes the composite list.
  std::vector<CompositeSource> mixed;
  mixed.push_back(CompositeSource{"lab", "demo", OpenDemo(clock)});
  auto fake = std::make_unique<FakeFleet>();
  core::FleetResource vm;
  vm.id = "vm:900";
  vm.type = "vm";
  vm.name = "other";
  vm.status = "running";
  fake->PutResource(vm);
  mixed.push_back(CompositeSource{"other", "fake", std::move(fake)});
  absl::StatusOr<std::unique_ptr<CompositeFleet>> listed = CompositeFleet::Create(std::move(mixed));
  REQUIRE(listed.ok());
  CHECK_FALSE((*listed)->ListingGeneration().has_value());
}

}  // namespace
}  // namespace pulse::testing::agents
