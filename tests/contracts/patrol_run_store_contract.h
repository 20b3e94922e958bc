// The PatrolRunStore contract: every implementation (the in-memory fake, SqlitePatrolRunStore)
// must pass it. Usage: PULSE_PATROL_RUN_STORE_CONTRACT("name", "[tags]", factory) where
// factory() returns a std::unique_ptr<core::PatrolRunStore> over a fresh, empty store.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "pulse/core/ports/patrol_run_store.h"

namespace pulse::testing::contracts {

inline core::PatrolRunRecord ContractRun(std::string id, absl::Time started) {
  core::PatrolRunRecord r;
  r.id = std::move(id);
  r.trigger = core::PatrolTrigger::kManual;
  r.scope.resource_ids = {"vm:101"};
  r.scope.resource_types = {"storage"};
  r.effective_scope_resource_ids = {"vm:101", "storage:pve1/local-zfs"};
  r.started_at = started;
  r.completed_at = started + absl::Seconds(3);
  r.status = core::PatrolRunStatus::kIssuesFound;
  r.autonomy_level = "assisted";
  r.resources_checked = 2;
  r.new_findings = 1;
  r.new_finding_ids = {"0123456789abcdef"};
  r.finding_ids = {"0123456789abcdef"};
  r.findings_summary = "1 warning";
  r.model_pass_ran = true;
  r.assessments = {{"0123456789abcdef", "present"}};
  r.input_tokens = 1200;
  r.output_tokens = 300;
  r.tool_calls = {{"patrol_get_findings", R"({"resource_id":"vm:101"})", R"({"count":1})", true}};
  r.tool_call_count = 1;
  r.ai_analysis = "one \"quoted\" line\nand ünïcode";
  r.remediations = {{"0123456789abcdef", "fix_verified", "act_1", "completed", "succeeded",
                     "confirmed", "", std::nullopt, std::nullopt},
                    {"fedcba9876543210", "fix_queued", "act_2", "planned", "", "", "held",
                     std::nullopt, ::pulse::core::FixHoldReason::kAutonomyLowered},
                    {"00112233aabbccdd", "proposal_dropped", "", "", "", "", "",
                     ::pulse::core::ProposalDropReason::kProviderError, std::nullopt}};
  return r;
}

}  // namespace pulse::testing::contracts

#define PULSE_PATROL_RUN_STORE_CONTRACT(NAME, TAGS, FACTORY)                                     \
  TEST_CASE(NAME " stores a run record exactly and replaces it by id", TAGS) {                   \
    auto store = FACTORY();                                                                      \
    const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);                                  \
    ::pulse::core::PatrolRunRecord r = ::pulse::testing::contracts::ContractRun("run-a", t0);    \
    REQUIRE(store->Put(r).ok());                                                                 \
    absl::StatusOr<::pulse::core::PatrolRunRecord> got = store->Get("run-a");                    \
    REQUIRE(got.ok());                                                                           \
    CHECK(*got == r);                                                                            \
    r.status = ::pulse::core::PatrolRunStatus::kError;                                           \
    r.error_summary = "missing verdicts";                                                        \
    REQUIRE(store->Put(r).ok());                                                                 \
    CHECK(*store->Get("run-a") == r);                                                            \
    CHECK(store->List(100)->size() == 1);                                                        \
    CHECK(absl::IsNotFound(store->Get("run-b").status()));                                       \
    CHECK(absl::IsInvalidArgument(store->Put(::pulse::core::PatrolRunRecord{})));                \
    CHECK(absl::IsInvalidArgument(store->List(0).status()));                                     \
    CHECK(absl::IsInvalidArgument(store->List(101).status()));                                   \
  }                                                                                              \
  TEST_CASE(NAME " lists newest first and keeps only the newest 100", TAGS) {                    \
    auto store = FACTORY();                                                                      \
    const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);                                  \
    for (int i = 0; i < 105; ++i) {                                                              \
      REQUIRE(store                                                                              \
                  ->Put(::pulse::testing::contracts::ContractRun(absl::StrCat("run-", 1000 + i), \
                                                                 t0 + absl::Minutes(i)))         \
                  .ok());                                                                        \
    }                                                                                            \
    absl::StatusOr<std::vector<::pulse::core::PatrolRunRecord>> all = store->List(100);          \
    REQUIRE(all.ok());                                                                           \
    REQUIRE(all->size() == 100);                                                                 \
    CHECK(all->front().id == "run-1104");                                                        \
    CHECK(all->back().id == "run-1005");                                                         \
    CHECK(absl::IsNotFound(store->Get("run-1004").status()));                                    \
    CHECK(store->List(3)->size() == 3);                                                          \
  }                                                                                              \
  TEST_CASE(NAME " saves and loads the autonomy settings", TAGS) {                               \
    auto store = FACTORY();                                                                      \
    CHECK(absl::IsNotFound(store->LoadAutonomy().status()));                                     \
    ::pulse::core::AutonomySettings s;                                                           \
    s.level = ::pulse::core::AutonomyLevel::kFull;                                               \
    s.acknowledgement = ::pulse::core::AutopilotAcknowledgement{                                 \
        "ack-1", "tok_abc", absl::FromUnixSeconds(1'800'000'000)};                               \
    s.investigation_budget = 20;                                                                 \
    REQUIRE(store->SaveAutonomy(s).ok());                                                        \
    CHECK(*store->LoadAutonomy() == s);                                                          \
    s.level = ::pulse::core::AutonomyLevel::kMonitor;                                            \
    s.acknowledgement.reset();                                                                   \
    REQUIRE(store->SaveAutonomy(s).ok());                                                        \
    CHECK(*store->LoadAutonomy() == s);                                                          \
    /* A revoked acknowledgement leaves its revocation on record. */                             \
    s.last_revocation = ::pulse::core::AutopilotRevocation{                                      \
        "ack-1", "tok_def", absl::FromUnixSeconds(1'800'000'100), "change freeze"};              \
    REQUIRE(store->SaveAutonomy(s).ok());                                                        \
    CHECK(*store->LoadAutonomy() == s);                                                          \
  }                                                                                              \
  TEST_CASE(NAME " saves and loads the Patrol thresholds", TAGS) {                               \
    auto store = FACTORY();                                                                      \
    CHECK(absl::IsNotFound(store->LoadThresholds().status()));                                   \
    ::pulse::core::PatrolThresholdSettings t;                                                    \
    t.defaults.cpu = ::pulse::core::ThresholdLevels{70, 80.5};                                   \
    t.resource_types["vm"].memory = ::pulse::core::ThresholdLevels{60, 75};                      \
    t.resources["storage:pve1/local"].storage = ::pulse::core::ThresholdLevels{50, 99};          \
    t.updated_at = absl::FromUnixSeconds(1'800'000'000);                                         \
    t.updated_by = "tok_abc";                                                                    \
    REQUIRE(store->SaveThresholds(t).ok());                                                      \
    CHECK(*store->LoadThresholds() == t);                                                        \
    t.resources.clear();                                                                         \
    REQUIRE(store->SaveThresholds(t).ok());                                                      \
    CHECK(*store->LoadThresholds() == t);                                                        \
    /* The autonomy settings are a separate row. */                                              \
    CHECK(absl::IsNotFound(store->LoadAutonomy().status()));                                     \
  }
