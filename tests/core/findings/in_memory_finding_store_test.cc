// The FindingStore contract run against the in-memory fake, both as a persistence round trip
// (the default) and holding values directly.
#include "pulse/testing/in_memory_finding_store.h"

#include <catch2/catch.hpp>
#include <memory>

#include "contracts/finding_page_contract.h"
#include "contracts/finding_store_contract.h"

namespace {

std::unique_ptr<pulse::core::FindingStore> MakeJsonStore() {
  return std::make_unique<pulse::testing::InMemoryFindingStore>();
}

std::unique_ptr<pulse::core::FindingStore> MakeValueStore() {
  return std::make_unique<pulse::testing::InMemoryFindingStore>(
      pulse::testing::InMemoryFindingStore::Options{/*round_trip_json=*/false});
}

}  // namespace

PULSE_FINDING_STORE_CONTRACT("in-memory json", MakeJsonStore)
PULSE_FINDING_STORE_CONTRACT("in-memory value", MakeValueStore)
PULSE_FINDING_PAGE_CONTRACT("in-memory json", MakeJsonStore)

TEST_CASE("the in-memory store's injected failure hits only the named call", "[core][findings]") {
  pulse::testing::InMemoryFindingStore store;
  store.FailNext(absl::UnavailableError("down"), "Put");
  CHECK(absl::IsNotFound(store.Get("x").status()));
  CHECK(absl::IsUnavailable(store
                                .Put(pulse::testing::contracts::SimpleFinding(
                                         "x", "vm:1", pulse::core::Category::kGeneral),
                                     0)
                                .status()));
  CHECK(store
            .Put(pulse::testing::contracts::SimpleFinding("x", "vm:1",
                                                          pulse::core::Category::kGeneral),
                 0)
            .ok());
}
