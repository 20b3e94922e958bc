// The OperatorStateStore contract, as one reusable Catch2 suite for every adapter:
//
//   TEST_CASE("SqliteOperatorStateStore honours the contract", "[adapters][sqlite]") {
//     pulse::testing::RunOperatorStateStoreContract([] { return MakeSqliteStore(); });
//   }
//
// `make` returns a fresh, empty store as a pointer-like owner; each SECTION gets its own.
// Times carry millisecond parts: adapters must round-trip absl::Time exactly.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::testing {
namespace operator_state_contract {

inline core::OperatorState LockedState(std::string resource_id) {
  core::OperatorState s;
  s.resource_id = std::move(resource_id);
  s.never_auto_remediate = true;
  s.intentionally_offline = false;
  s.monitoring_mode = core::MonitoringMode::kMuted;
  s.lifecycle = core::ResourceLifecycle::kActive;
  s.maintenance_start_at = absl::FromUnixMillis(1'800'000'000'250);
  s.maintenance_end_at = absl::FromUnixMillis(1'800'003'600'750);
  s.maintenance_reason = "kernel upgrade — Wartung";
  s.criticality = core::Criticality::kHigh;
  s.note = "do not touch\nwithout asking ops";
  s.set_at = absl::FromUnixMillis(1'799'999'999'001);
  s.set_by = "alice@example.com";
  s.local_only = true;
  return s;
}

}  // namespace operator_state_contract

template <class MakeStore>
void RunOperatorStateStoreContract(MakeStore make) {
  using operator_state_contract::LockedState;
  auto store = make();

  SECTION("a resource without state is NotFound") {
    CHECK(absl::IsNotFound(store->Get("vm:101").status()));
  }

  SECTION("Set then Get returns exactly the state that was set") {
    const core::OperatorState s = LockedState("vm:101");
    REQUIRE(store->Set(s).ok());
    absl::StatusOr<core::OperatorState> got = store->Get("vm:101");
    REQUIRE(got.ok());
    CHECK(*got == s);
  }

  SECTION("Set replaces the whole declaration") {
    REQUIRE(store->Set(LockedState("vm:101")).ok());
    core::OperatorState plain;
    plain.resource_id = "vm:101";
    plain.set_at = absl::FromUnixMillis(1'800'000'100'000);
    plain.set_by = "bob";
    REQUIRE(store->Set(plain).ok());
    absl::StatusOr<core::OperatorState> got = store->Get("vm:101");
    REQUIRE(got.ok());
    CHECK(*got == plain);
    CHECK_FALSE(got->never_auto_remediate);
    CHECK_FALSE(got->local_only);
    CHECK_FALSE(got->maintenance_start_at.has_value());
  }

  SECTION("an invalid state is refused and the stored one is kept") {
    const core::OperatorState good = LockedState("vm:101");
    REQUIRE(store->Set(good).ok());
    core::OperatorState half_window = good;
    half_window.maintenance_end_at.reset();
    core::OperatorState backwards = good;
    backwards.maintenance_end_at = *good.maintenance_start_at - absl::Seconds(1);
    core::OperatorState bad_id = good;
    bad_id.resource_id = "VM 101";
    core::OperatorState contradictory = good;
    contradictory.intentionally_offline = true;  // but monitoring mode is muted
    core::OperatorState anonymous = good;
    anonymous.set_by.clear();
    for (const core::OperatorState& bad :
         {half_window, backwards, bad_id, contradictory, anonymous}) {
      CHECK(absl::IsInvalidArgument(store->Set(bad)));
    }
    absl::StatusOr<core::OperatorState> got = store->Get("vm:101");
    REQUIRE(got.ok());
    CHECK(*got == good);
    CHECK(absl::IsNotFound(store->Get("VM 101").status()));
  }

  SECTION("GetMany answers the states of the asked resources that have one, sorted, once each") {
    absl::StatusOr<std::vector<core::OperatorState>> none = store->GetMany({"vm:101"});
    REQUIRE(none.ok());
    CHECK(none->empty());
    REQUIRE(store->Set(LockedState("vm:102")).ok());
    REQUIRE(store->Set(LockedState("node:pve1")).ok());
    core::OperatorState plain;
    plain.resource_id = "vm:101";
    plain.set_at = absl::FromUnixMillis(1'800'000'100'000);
    plain.set_by = "bob";
    REQUIRE(store->Set(plain).ok());
    REQUIRE(store->Set(LockedState("vm:999")).ok());  // stored, never asked for

    absl::StatusOr<std::vector<core::OperatorState>> got =
        store->GetMany({"vm:102", "vm:404", "vm:101", "node:pve1", "vm:102", ""});
    REQUIRE(got.ok());
    REQUIRE(got->size() == 3);
    CHECK((*got)[0] == LockedState("node:pve1"));
    CHECK((*got)[1] == plain);
    CHECK((*got)[2] == LockedState("vm:102"));
    // Each is exactly what Get answers.
    for (const core::OperatorState& s : *got) {
      absl::StatusOr<core::OperatorState> one = store->Get(s.resource_id);
      REQUIRE(one.ok());
      CHECK(*one == s);
    }

    REQUIRE(store->Clear("vm:102").ok());
    got = store->GetMany({"vm:102", "vm:101"});
    REQUIRE(got.ok());
    REQUIRE(got->size() == 1);
    CHECK((*got)[0] == plain);
    got = store->GetMany({});
    REQUIRE(got.ok());
    CHECK(got->empty());
  }

  SECTION("Clear removes the state and is idempotent") {
    REQUIRE(store->Set(LockedState("vm:101")).ok());
    REQUIRE(store->Clear("vm:101").ok());
    CHECK(absl::IsNotFound(store->Get("vm:101").status()));
    CHECK(store->Clear("vm:101").ok());
    CHECK(store->Clear("vm:999").ok());
  }

  SECTION("LocalOnlyResourceIds lists exactly the local-only resources, sorted") {
    absl::StatusOr<std::vector<std::string>> none = store->LocalOnlyResourceIds();
    REQUIRE(none.ok());
    CHECK(none->empty());
    REQUIRE(store->Set(LockedState("vm:102")).ok());
    REQUIRE(store->Set(LockedState("service:pve1/nginx")).ok());
    REQUIRE(store->Set(LockedState("node:pve1")).ok());
    core::OperatorState shared = LockedState("vm:101");
    shared.local_only = false;
    REQUIRE(store->Set(shared).ok());
    absl::StatusOr<std::vector<std::string>> ids = store->LocalOnlyResourceIds();
    REQUIRE(ids.ok());
    CHECK(*ids == std::vector<std::string>{"node:pve1", "service:pve1/nginx", "vm:102"});

    // Unmarking (a replacing Set) and clearing both take a resource off the list.
    core::OperatorState unmarked = LockedState("vm:102");
    unmarked.local_only = false;
    REQUIRE(store->Set(unmarked).ok());
    REQUIRE(store->Clear("node:pve1").ok());
    ids = store->LocalOnlyResourceIds();
    REQUIRE(ids.ok());
    CHECK(*ids == std::vector<std::string>{"service:pve1/nginx"});
  }

  SECTION("WithNotes lists exactly the states with a note, sorted, as stored") {
    absl::StatusOr<std::vector<core::OperatorState>> none = store->WithNotes();
    REQUIRE(none.ok());
    CHECK(none->empty());
    REQUIRE(store->Set(LockedState("vm:102")).ok());
    REQUIRE(store->Set(LockedState("node:pve1")).ok());
    core::OperatorState silent = LockedState("vm:101");
    silent.note.clear();
    REQUIRE(store->Set(silent).ok());
    absl::StatusOr<std::vector<core::OperatorState>> noted = store->WithNotes();
    REQUIRE(noted.ok());
    REQUIRE(noted->size() == 2);
    CHECK((*noted)[0] == LockedState("node:pve1"));
    CHECK((*noted)[1] == LockedState("vm:102"));
    REQUIRE(store->Clear("node:pve1").ok());
    noted = store->WithNotes();
    REQUIRE(noted.ok());
    REQUIRE(noted->size() == 1);
    CHECK((*noted)[0].resource_id == "vm:102");
  }

  SECTION("states of different resources are independent") {
    REQUIRE(store->Set(LockedState("vm:101")).ok());
    REQUIRE(store->Set(LockedState("service:pve1/nginx")).ok());
    REQUIRE(store->Clear("vm:101").ok());
    absl::StatusOr<core::OperatorState> other = store->Get("service:pve1/nginx");
    REQUIRE(other.ok());
    CHECK(other->resource_id == "service:pve1/nginx");
    CHECK(absl::IsNotFound(store->Get("vm:101").status()));
  }
}

}  // namespace pulse::testing
