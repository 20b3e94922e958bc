// The FindingStore contract: what every implementation of the port must do, written once so
// the in-memory fake and the SQLite adapter run the identical suite. Usage, in a test file:
//
//   std::unique_ptr<pulse::core::FindingStore> MakeStore() { return ...; }
//   PULSE_FINDING_STORE_CONTRACT("sqlite", MakeStore)
//
// NAME is a string literal prefixed to every test name; FACTORY is a callable (a function
// name; a lambda with commas must be wrapped in parentheses) returning a
// std::unique_ptr<FindingStore> to a new, empty store on each call.
#pragma once

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/suppression_rule.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::testing::contracts {

inline const absl::Time kContractT0 = absl::FromUnixSeconds(1'800'000'000);

// A finding with every field set (so a store that drops one fails the round trip).
inline core::Finding FullFinding(const std::string& id) {
  core::Finding f;
  f.id = id;
  f.key = "disk-high";
  f.severity = core::Severity::kCritical;
  f.category = core::Category::kCapacity;
  f.resource_id = "storage:pve1:local-zfs";
  f.resource_name = "local-zfs";
  f.resource_type = "storage";
  f.resource_criticality = "high";
  f.node = "pve1";
  f.title = "Pool local-zfs at 91% — filling";
  f.description = "Usage grew from 80% to 91% in two days.";
  f.impact = "Guests on the pool stop when it is full.";
  f.previous_resolved_fix_summary = "Pruned old snapshots";
  f.recommendation = "Prune snapshots or extend the pool.";
  f.evidence = "zpool list: 91% CAP";
  f.source = "ai-analysis";
  f.failure_cause = "none";
  f.detected_at = kContractT0;
  f.last_seen_at = kContractT0 + absl::Minutes(15) + absl::Nanoseconds(250);
  f.resolved_at = kContractT0 + absl::Hours(1);
  f.auto_resolved = true;
  f.resolve_reason = "No longer detected by patrol";
  f.acknowledged_at = kContractT0 + absl::Minutes(5);
  f.snoozed_until = kContractT0 + absl::Hours(2);
  f.alert_identifier = "alert-7";
  f.dismissed_reason = core::DismissReason::kWillFixLater;
  f.user_note = "ticket OPS-12 \xE2\x9C\x93";
  f.times_raised = 7;
  f.suppressed = false;
  f.remind_at = kContractT0 + absl::Hours(24 * 7);
  f.remind_count = 2;
  f.investigation_session_id = "inv-1";
  f.investigation_status = core::InvestigationStatus::kCompleted;
  f.investigation_outcome = core::InvestigationOutcome::kFixQueued;
  f.last_investigated_at = kContractT0 + absl::Minutes(30);
  f.investigation_attempts = 1;
  f.fix_action_id = "act_0123456789abcdef0123456789abcdef";
  f.investigation_record_json = R"({"proposed_fix":{"description":"prune"},"steps":[1,2]})";
  f.objective_context_json = R"({"objective_id":"obj-1"})";
  f.loop_state = core::LoopState::kResolved;
  for (int i = 0; i < static_cast<int>(core::kMaxLifecycleEvents); ++i) {
    core::LifecycleEvent e;
    e.at = kContractT0 + absl::Seconds(i);
    e.type = core::AllLifecycleEventTypes()[static_cast<std::size_t>(i) %
                                            core::AllLifecycleEventTypes().size()];
    e.message = "event " + std::to_string(i);
    if (i % 3 == 0) {
      e.from = core::LoopState::kDetected;
      e.to = core::LoopState::kSnoozed;
    }
    if (i % 2 == 0) {
      e.metadata = {{"reason", "will_fix_later"}, {"until", "2027-01-01T00:00:00Z"}};
    }
    f.lifecycle.push_back(e);
  }
  f.regression_count = 3;
  f.last_regression_at = kContractT0 + absl::Minutes(45);
  core::CapacityForecast forecast;
  forecast.metric = "usage";
  forecast.reading = core::ForecastReading::kFilling;
  forecast.sample_count = 48;
  forecast.current_pct = 91.25;
  forecast.daily_change = 5.5;
  forecast.days_to_full = 2;
  f.capacity_forecast = forecast;
  return f;
}

// A plain active finding.
inline core::Finding SimpleFinding(const std::string& id, const std::string& resource,
                                   core::Category category) {
  core::Finding f;
  f.id = id;
  f.key = "k-" + id;
  f.category = category;
  f.resource_id = resource;
  f.title = "finding " + id;
  f.detected_at = kContractT0;
  f.last_seen_at = kContractT0;
  f.times_raised = 1;
  return f;
}

inline core::SuppressionRule Rule(const std::string& resource,
                                  std::optional<core::Category> category) {
  core::SuppressionRule r;
  r.id = core::SuppressionRuleIdFor(resource, category);
  r.resource_id = resource;
  r.resource_name = resource + "-name";
  r.category = category;
  r.description = "muted";
  r.created_at = kContractT0;
  r.created_from = core::SuppressionOrigin::kManual;
  return r;
}

inline std::vector<std::string> Ids(const std::vector<core::StoredFinding>& stored) {
  std::vector<std::string> ids;
  for (const auto& s : stored) {
    ids.push_back(s.finding.id);
  }
  return ids;
}

template <class Store>
void GetUnknownIsNotFound(Store& store) {
  auto got = store.Get("nope");
  REQUIRE_FALSE(got.ok());
  CHECK(absl::IsNotFound(got.status()));
}

// GetBatch: the findings among the ids asked for, in the order asked, each at its version;
// unknown ids are left out, a repeated id comes back each time, and none asked is none read.
template <class Store>
void GetBatchReadsTheStoredOnesInOrder(Store& store) {
  const core::Finding full = FullFinding("b-full");
  REQUIRE(store.Put(full, 0).ok());
  core::Finding simple = SimpleFinding("a-simple", "vm:1", core::Category::kGeneral);
  REQUIRE(store.Put(simple, 0).ok());
  simple.times_raised = 5;
  REQUIRE(store.Put(simple, 1).ok());
  auto got = store.GetBatch({"b-full", "missing", "a-simple", "", "b-full"});
  REQUIRE(got.ok());
  CHECK(Ids(*got) == std::vector<std::string>{"b-full", "a-simple", "b-full"});
  REQUIRE(got->size() == 3);
  CHECK((*got)[0].finding == full);
  CHECK((*got)[0].version == 1);
  CHECK((*got)[1].finding == simple);
  CHECK((*got)[1].version == 2);
  CHECK((*got)[2].finding == full);
  auto none = store.GetBatch({});
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto unknown = store.GetBatch({"x", "y"});
  REQUIRE(unknown.ok());
  CHECK(unknown->empty());
}

// The findings waiting for their fix's outcome, whatever else they are (resolved, snoozed),
// follow every kind of write: a create, a state-only update, a batch, and the update that ends
// the wait.
template <class Store>
void AwaitingFixOutcomeFollowsEveryWrite(Store& store) {
  auto fix = [](const std::string& id, std::optional<core::InvestigationOutcome> outcome,
                const std::string& action) {
    core::Finding f = SimpleFinding(id, "vm:1", core::Category::kPerformance);
    f.investigation_outcome = outcome;
    f.fix_action_id = action;
    return f;
  };
  auto none = store.ListAwaitingFixOutcome();
  REQUIRE(none.ok());
  CHECK(none->empty());
  REQUIRE(store.Put(fix("d-queued", core::InvestigationOutcome::kFixQueued, "a-1"), 0).ok());
  REQUIRE(store.Put(fix("a-executed", core::InvestigationOutcome::kFixExecuted, "a-2"), 0).ok());
  REQUIRE(store.Put(fix("b-rejected", core::InvestigationOutcome::kFixRejected, "a-3"), 0).ok());
  REQUIRE(store.Put(fix("c-unlinked", core::InvestigationOutcome::kFixQueued, ""), 0).ok());
  core::Finding resolved = fix("e-resolved", core::InvestigationOutcome::kFixQueued, "a-5");
  resolved.resolved_at = kContractT0;
  REQUIRE(store.Put(resolved, 0).ok());
  auto waiting = store.ListAwaitingFixOutcome();
  REQUIRE(waiting.ok());
  CHECK(Ids(*waiting) == std::vector<std::string>{"a-executed", "d-queued", "e-resolved"});
  REQUIRE(waiting->size() == 3);
  CHECK((*waiting)[0].finding ==
        fix("a-executed", core::InvestigationOutcome::kFixExecuted, "a-2"));
  CHECK((*waiting)[0].version == 1);

  // A state-only update ends one wait; a batch starts one and ends another.
  auto executed = *store.Get("a-executed");
  executed.finding.investigation_outcome = core::InvestigationOutcome::kFixVerified;
  REQUIRE(store.Put(executed.finding, executed.version).ok());
  auto rejected = *store.Get("b-rejected");
  rejected.finding.investigation_outcome = core::InvestigationOutcome::kFixExecuted;
  auto queued = *store.Get("d-queued");
  queued.finding.fix_action_id.clear();
  auto results = store.PutBatch({core::FindingWrite{rejected.finding, rejected.version},
                                 core::FindingWrite{queued.finding, queued.version}});
  REQUIRE(results.ok());
  for (const auto& r : *results) {
    REQUIRE(r.ok());
  }
  auto after = store.ListAwaitingFixOutcome();
  REQUIRE(after.ok());
  CHECK(Ids(*after) == std::vector<std::string>{"b-rejected", "e-resolved"});
  CHECK((*after)[0].version == 2);
}

// The active keys are the active findings' ids, resources and severities in id order, as a
// decode of every finding finds them, at any instant (a snooze lapses without a write).
template <class Store>
void ActiveKeysAreTheActiveFindings(Store& store) {
  auto none = store.ListActiveKeys(kContractT0);
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto put = [&store](const std::string& id, const std::string& resource, core::Severity severity,
                      auto&& change) {
    core::Finding f = SimpleFinding(id, resource, core::Category::kPerformance);
    f.severity = severity;
    change(f);
    REQUIRE(store.Put(f, 0).ok());
  };
  const auto as_is = [](core::Finding&) {};
  put("f-critical", "vm:2", core::Severity::kCritical, as_is);
  put("b-watch", "vm:1", core::Severity::kWatch, as_is);
  put("e-info", "vm:1", core::Severity::kInfo, as_is);
  put("a-resolved", "vm:1", core::Severity::kCritical,
      [](core::Finding& f) { f.resolved_at = kContractT0 - absl::Hours(1); });
  put("c-snoozed", "vm:3", core::Severity::kWarning,
      [](core::Finding& f) { f.snoozed_until = kContractT0 + absl::Hours(1); });
  put("d-dismissed", "vm:1", core::Severity::kWarning,
      [](core::Finding& f) { f.dismissed_reason = core::DismissReason::kNotAnIssue; });
  put("g-suppressed", "vm:2", core::Severity::kWarning,
      [](core::Finding& f) { f.suppressed = true; });
  using Key = core::ActiveFindingKey;
  auto keys = store.ListActiveKeys(kContractT0);
  REQUIRE(keys.ok());
  CHECK(*keys == std::vector<Key>{{"b-watch", "vm:1", core::Severity::kWatch},
                                  {"e-info", "vm:1", core::Severity::kInfo},
                                  {"f-critical", "vm:2", core::Severity::kCritical}});
  // Two hours on, the snooze has lapsed: the warning is active again, with no write.
  auto later = store.ListActiveKeys(kContractT0 + absl::Hours(2));
  REQUIRE(later.ok());
  CHECK(*later == std::vector<Key>{{"b-watch", "vm:1", core::Severity::kWatch},
                                   {"c-snoozed", "vm:3", core::Severity::kWarning},
                                   {"e-info", "vm:1", core::Severity::kInfo},
                                   {"f-critical", "vm:2", core::Severity::kCritical}});
  // A write that resolves one and escalates another is seen by the next read.
  auto watch = *store.Get("b-watch");
  watch.finding.severity = core::Severity::kCritical;
  REQUIRE(store.Put(watch.finding, watch.version).ok());
  auto info = *store.Get("e-info");
  info.finding.resolved_at = kContractT0;
  REQUIRE(store.Put(info.finding, info.version).ok());
  auto after = store.ListActiveKeys(kContractT0);
  REQUIRE(after.ok());
  CHECK(*after == std::vector<Key>{{"b-watch", "vm:1", core::Severity::kCritical},
                                   {"f-critical", "vm:2", core::Severity::kCritical}});
  // Exactly the decode-every-finding answer.
  core::FindingFilter active;
  active.active_at = kContractT0 + absl::Hours(2);
  auto listed = store.List(active);
  REQUIRE(listed.ok());
  std::vector<Key> decoded;
  for (const core::StoredFinding& s : *listed) {
    decoded.push_back(Key{s.finding.id, s.finding.resource_id, s.finding.severity});
  }
  CHECK(*store.ListActiveKeys(kContractT0 + absl::Hours(2)) == decoded);
}

template <class Store>
void CreateThenGetRoundTripsEveryField(Store& store) {
  const core::Finding f = FullFinding("f1");
  auto version = store.Put(f, 0);
  REQUIRE(version.ok());
  CHECK(*version == 1);
  auto got = store.Get("f1");
  REQUIRE(got.ok());
  CHECK(got->version == 1);
  CHECK(got->finding == f);
}

template <class Store>
void CreateOfExistingIdIsAbortedAndKeepsTheRecord(Store& store) {
  REQUIRE(store.Put(SimpleFinding("f1", "vm:1", core::Category::kGeneral), 0).ok());
  core::Finding other = SimpleFinding("f1", "vm:2", core::Category::kSecurity);
  auto clash = store.Put(other, 0);
  REQUIRE_FALSE(clash.ok());
  CHECK(absl::IsAborted(clash.status()));
  auto got = store.Get("f1");
  REQUIRE(got.ok());
  CHECK(got->finding.resource_id == "vm:1");
  CHECK(got->version == 1);
}

template <class Store>
void UpdateNeedsTheCurrentVersion(Store& store) {
  core::Finding f = SimpleFinding("f1", "vm:1", core::Category::kGeneral);
  REQUIRE(store.Put(f, 0).ok());
  f.times_raised = 2;
  auto v2 = store.Put(f, 1);
  REQUIRE(v2.ok());
  CHECK(*v2 == 2);
  f.times_raised = 99;
  auto stale = store.Put(f, 1);
  REQUIRE_FALSE(stale.ok());
  CHECK(absl::IsAborted(stale.status()));
  auto ahead = store.Put(f, 5);
  CHECK(absl::IsAborted(ahead.status()));
  auto got = store.Get("f1");
  REQUIRE(got.ok());
  CHECK(got->version == 2);
  CHECK(got->finding.times_raised == 2);
}

template <class Store>
void UpdateOfAMissingFindingIsAborted(Store& store) {
  auto put = store.Put(SimpleFinding("ghost", "vm:1", core::Category::kGeneral), 3);
  REQUIRE_FALSE(put.ok());
  CHECK(absl::IsAborted(put.status()));
  CHECK(absl::IsNotFound(store.Get("ghost").status()));
}

template <class Store>
void MalformedPutsAreInvalidArgument(Store& store) {
  CHECK(absl::IsInvalidArgument(
      store.Put(SimpleFinding("", "vm:1", core::Category::kGeneral), 0).status()));
  CHECK(absl::IsInvalidArgument(
      store.Put(SimpleFinding("f1", "vm:1", core::Category::kGeneral), -1).status()));
  CHECK(absl::IsNotFound(store.Get("f1").status()));
}

template <class Store>
void ListOrdersByIdAndFilters(Store& store) {
  const absl::Time now = kContractT0 + absl::Hours(10);
  core::Finding active = SimpleFinding("c-active", "vm:1", core::Category::kPerformance);
  core::Finding resolved = SimpleFinding("a-resolved", "vm:1", core::Category::kPerformance);
  resolved.resolved_at = now - absl::Hours(1);
  core::Finding dismissed = SimpleFinding("e-dismissed", "vm:2", core::Category::kBackup);
  dismissed.dismissed_reason = core::DismissReason::kExpectedBehavior;
  core::Finding suppressed = SimpleFinding("d-suppressed", "vm:2", core::Category::kBackup);
  suppressed.suppressed = true;
  core::Finding snoozed = SimpleFinding("b-snoozed", "vm:1", core::Category::kBackup);
  snoozed.snoozed_until = now + absl::Seconds(1);
  core::Finding lapsed = SimpleFinding("f-lapsed", "vm:2", core::Category::kPerformance);
  lapsed.snoozed_until = now;  // a snooze ending exactly now has lapsed
  for (const core::Finding* f : {&active, &resolved, &dismissed, &suppressed, &snoozed, &lapsed}) {
    REQUIRE(store.Put(*f, 0).ok());
  }
  auto all = store.List({});
  REQUIRE(all.ok());
  CHECK(Ids(*all) == std::vector<std::string>{"a-resolved", "b-snoozed", "c-active", "d-suppressed",
                                              "e-dismissed", "f-lapsed"});
  core::FindingFilter active_only;
  active_only.active_at = now;
  auto act = store.List(active_only);
  REQUIRE(act.ok());
  CHECK(Ids(*act) == std::vector<std::string>{"c-active", "f-lapsed"});
  core::FindingFilter by_resource;
  by_resource.resource_id = "vm:1";
  auto res = store.List(by_resource);
  REQUIRE(res.ok());
  CHECK(Ids(*res) == std::vector<std::string>{"a-resolved", "b-snoozed", "c-active"});
  core::FindingFilter combined;
  combined.resource_id = "vm:2";
  combined.category = core::Category::kPerformance;
  combined.active_at = now;
  auto comb = store.List(combined);
  REQUIRE(comb.ok());
  CHECK(Ids(*comb) == std::vector<std::string>{"f-lapsed"});
  for (const auto& s : *all) {
    CHECK(s.version == 1);
  }
}

template <class Store>
void ListFiltersByRelatedResource(Store& store) {
  const absl::Time now = kContractT0 + absl::Hours(10);
  core::Finding by_id = SimpleFinding("a-by-id", "vm:1", core::Category::kPerformance);
  core::Finding by_name = SimpleFinding("b-by-name", "vm:2", core::Category::kBackup);
  by_name.resource_name = "Web-01";
  core::Finding pve1 = SimpleFinding("c-pve1", "storage:pve1/local-zfs", core::Category::kCapacity);
  pve1.resource_name = "local-zfs";
  core::Finding pve2 = SimpleFinding("d-pve2", "storage:pve2/local-zfs", core::Category::kCapacity);
  pve2.resource_name = "local-zfs";
  core::Finding typed = SimpleFinding("e-typed", "dev:PVE1/Local/ZFS", core::Category::kCapacity);
  typed.resource_type = "storage";
  core::Finding not_storage = SimpleFinding("f-vm", "vm:pve1-local-zfs", core::Category::kGeneral);
  core::Finding resolved = SimpleFinding("g-resolved", "vm:1", core::Category::kPerformance);
  resolved.resolved_at = now - absl::Hours(1);
  core::Finding named_pool =
      SimpleFinding("h-pool", "dev:pve1/local/zfs", core::Category::kGeneral);
  named_pool.resource_name = "ZFS POOL";
  for (const core::Finding* f :
       {&by_id, &by_name, &pve1, &pve2, &typed, &not_storage, &resolved, &named_pool}) {
    REQUIRE(store.Put(*f, 0).ok());
  }
  // An update moves a finding out of (and into) the related set.
  named_pool.resource_name = "zfs";
  REQUIRE(store.Put(named_pool, 1).ok());
  not_storage.resource_type = "storage";
  REQUIRE(store.Put(not_storage, 1).ok());

  auto related = [&](core::RelatedResourceFilter r, bool active) {
    core::FindingFilter filter;
    filter.related_to = std::move(r);
    if (active) {
      filter.active_at = now;
    }
    auto listed = store.List(filter);
    REQUIRE(listed.ok());
    return Ids(*listed);
  };
  using V = std::vector<std::string>;
  CHECK(related({"vm:1", ""}, false) == V{"a-by-id", "g-resolved"});
  CHECK(related({"vm:1", ""}, true) == V{"a-by-id"});
  // An empty filter matches nothing; a name is never a filter (display names are no identity).
  CHECK(related({"", ""}, false).empty());
  CHECK(related({"Web-01", ""}, false).empty());
  // A storage identity: findings that may be on storage (type, or storage/pool/array in the id
  // or name) whose id holds every word, ASCII case-insensitively; pve2's pool is not pve1's.
  CHECK(related({"", "pve1-local-zfs"}, true) == V{"c-pve1", "e-typed", "f-vm"});
  CHECK(related({"", "pve2-local-zfs"}, true) == V{"d-pve2"});
  CHECK(related({"vm:1", "pve2-local-zfs"}, true) == V{"a-by-id", "d-pve2"});
  CHECK(related({"", "pve3-local-zfs"}, true).empty());
  // Every word counts, however many (a store may narrow by a few and re-check the rest); a
  // wildcard in the filter is a separator, never a pattern.
  const core::Category general = core::Category::kGeneral;
  core::Finding deep_a = SimpleFinding("i-deep", "storage:a/b/c/d/e/f/g/h/i/j", general);
  core::Finding deep_b = SimpleFinding("j-deep", "storage:a/b/c/d/e/f/g/h/i/k", general);
  REQUIRE(store.Put(deep_a, 0).ok());
  REQUIRE(store.Put(deep_b, 0).ok());
  CHECK(related({"", "a-b-c-d-e-f-g-h-i-j"}, true) == V{"i-deep"});
  CHECK(related({"", "a%b_c-d-e-f-g-h-i-k"}, true) == V{"j-deep"});
  CHECK(related({"", "%"}, true).empty());  // no word: no storage identity, nothing matches
  // Combined with the other filters.
  core::FindingFilter combined;
  combined.related_to = core::RelatedResourceFilter{"", "local-zfs"};
  combined.category = core::Category::kCapacity;
  auto comb = store.List(combined);
  REQUIRE(comb.ok());
  CHECK(Ids(*comb) == V{"c-pve1", "d-pve2", "e-typed"});
}

template <class Store>
void SuppressionRulesUpsertListAndDelete(Store& store) {
  auto empty = store.ListSuppressionRules();
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  core::SuppressionRule a = Rule("vm:1", core::Category::kBackup);
  core::SuppressionRule b = Rule("", std::nullopt);
  REQUIRE(store.PutSuppressionRule(a).ok());
  REQUIRE(store.PutSuppressionRule(b).ok());
  a.description = "changed";
  REQUIRE(store.PutSuppressionRule(a).ok());  // same id: replaces
  auto rules = store.ListSuppressionRules();
  REQUIRE(rules.ok());
  REQUIRE(rules->size() == 2);
  CHECK((*rules)[0].id < (*rules)[1].id);
  const core::SuppressionRule& stored_a = (*rules)[0].id == a.id ? (*rules)[0] : (*rules)[1];
  const core::SuppressionRule& stored_b = (*rules)[0].id == a.id ? (*rules)[1] : (*rules)[0];
  CHECK(stored_a == a);
  CHECK(stored_b == b);
  REQUIRE(store.DeleteSuppressionRule(a.id).ok());
  CHECK(absl::IsNotFound(store.DeleteSuppressionRule(a.id)));
  CHECK(absl::IsNotFound(store.DeleteSuppressionRule("sr-unknown")));
  core::SuppressionRule no_id = b;
  no_id.id.clear();
  CHECK(absl::IsInvalidArgument(store.PutSuppressionRule(no_id)));
  auto left = store.ListSuppressionRules();
  REQUIRE(left.ok());
  REQUIRE(left->size() == 1);
  CHECK(left->front().id == b.id);
}

// Two threads race a Put at the same expected version, round after round: exactly one wins
// each round and the version advances by exactly one per round.
template <class Store>
void ConcurrentPutsAtOneVersionHaveExactlyOneWinner(Store& store) {
  core::Finding f = SimpleFinding("race", "vm:1", core::Category::kGeneral);
  REQUIRE(store.Put(f, 0).ok());
  constexpr int kRounds = 200;
  int single_winner_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::int64_t expected = round + 1;
    std::atomic<int> go{0};
    std::atomic<int> wins{0};
    std::atomic<int> aborted{0};
    auto writer = [&](int who) {
      core::Finding mine = f;
      mine.title = "writer " + std::to_string(who);
      go.fetch_add(1);
      while (go.load() < 2) {
      }
      auto put = store.Put(mine, expected);
      if (put.ok()) {
        wins.fetch_add(1);
      } else if (absl::IsAborted(put.status())) {
        aborted.fetch_add(1);
      }
    };
    std::thread a(writer, 1);
    std::thread b(writer, 2);
    a.join();
    b.join();
    if (wins.load() == 1 && aborted.load() == 1) {
      ++single_winner_rounds;
    }
  }
  CHECK(single_winner_rounds == kRounds);
  auto got = store.Get("race");
  REQUIRE(got.ok());
  CHECK(got->version == kRounds + 1);
}

// Read-modify-write with retry from several threads loses no update.
template <class Store>
void RetriedReadModifyWriteLosesNoUpdate(Store& store) {
  REQUIRE(store.Put(SimpleFinding("counter", "vm:1", core::Category::kGeneral), 0).ok());
  constexpr int kThreads = 4;
  constexpr int kIncrements = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        for (;;) {
          auto got = store.Get("counter");
          if (!got.ok()) {
            failures.fetch_add(1);
            return;
          }
          core::Finding next = got->finding;
          ++next.times_raised;
          auto put = store.Put(next, got->version);
          if (put.ok()) {
            break;
          }
          if (!absl::IsAborted(put.status())) {
            failures.fetch_add(1);
            return;
          }
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(failures.load() == 0);
  auto got = store.Get("counter");
  REQUIRE(got.ok());
  CHECK(got->finding.times_raised == 1 + kThreads * kIncrements);
  CHECK(got->version == 1 + kThreads * kIncrements);
}

// PutBatch: each write lands or fails as Put would have, in order, and a failed one (a
// version clash, a malformed write) leaves the rest of the batch standing.
template <class Store>
void BatchWritesEachLandOrFailAsPutWould(Store& store) {
  core::Finding existing = SimpleFinding("c-existing", "vm:1", core::Category::kGeneral);
  REQUIRE(store.Put(existing, 0).ok());
  core::Finding stale = SimpleFinding("d-stale", "vm:1", core::Category::kGeneral);
  REQUIRE(store.Put(stale, 0).ok());
  REQUIRE(store.Put(stale, 1).ok());

  core::Finding a = FullFinding("a-new");
  core::Finding a_again = a;
  a_again.times_raised = 7;
  existing.times_raised = 3;
  stale.times_raised = 99;
  const std::vector<core::FindingWrite> writes = {
      {a, 0},                                                             // create
      {SimpleFinding("b-new", "vm:2", core::Category::kSecurity), 0},     // create
      {existing, 1},                                                      // update
      {stale, 1},                                                         // clash: at version 2
      {SimpleFinding("", "vm:1", core::Category::kGeneral), 0},           // malformed
      {SimpleFinding("e-new", "vm:1", core::Category::kGeneral), -1},     // malformed
      {a_again, 1},                                                       // sees the create
      {SimpleFinding("c-existing", "vm:9", core::Category::kGeneral), 0}  // create of existing
  };
  auto results = store.PutBatch(writes);
  REQUIRE(results.ok());
  REQUIRE(results->size() == writes.size());
  CHECK((*results)[0].ok());
  CHECK((*results)[0].value_or(0) == 1);
  CHECK((*results)[1].value_or(0) == 1);
  CHECK((*results)[2].value_or(0) == 2);
  CHECK(absl::IsAborted((*results)[3].status()));
  CHECK(absl::IsInvalidArgument((*results)[4].status()));
  CHECK(absl::IsInvalidArgument((*results)[5].status()));
  CHECK((*results)[6].value_or(0) == 2);
  CHECK(absl::IsAborted((*results)[7].status()));

  auto got_a = store.Get("a-new");
  REQUIRE(got_a.ok());
  CHECK(got_a->version == 2);
  CHECK(got_a->finding == a_again);
  auto got_b = store.Get("b-new");
  REQUIRE(got_b.ok());
  CHECK(got_b->finding.category == core::Category::kSecurity);
  auto got_existing = store.Get("c-existing");
  REQUIRE(got_existing.ok());
  CHECK(got_existing->version == 2);
  CHECK(got_existing->finding.times_raised == 3);
  CHECK(got_existing->finding.resource_id == "vm:1");
  auto got_stale = store.Get("d-stale");
  REQUIRE(got_stale.ok());
  CHECK(got_stale->version == 2);
  CHECK(got_stale->finding.times_raised != 99);
  CHECK(absl::IsNotFound(store.Get("e-new").status()));

  auto none = store.PutBatch({});
  REQUIRE(none.ok());
  CHECK(none->empty());
}

// A reader never sees part of a batch: every finding of it, or none.
template <class Store>
void BatchIsSeenWholeOrNotAtAll(Store& store) {
  constexpr int kFindings = 200;
  std::vector<core::FindingWrite> writes;
  for (int i = 0; i < kFindings; ++i) {
    writes.push_back(
        {SimpleFinding("batch-" + std::to_string(1000 + i), "vm:1", core::Category::kGeneral), 0});
  }
  std::atomic<bool> done{false};
  std::atomic<int> partial{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    do {
      auto listed = store.List(core::FindingFilter{});
      if (listed.ok() && !listed->empty() && listed->size() != kFindings) {
        partial.fetch_add(1);
      }
      reads.fetch_add(1);
    } while (!done.load());
  });
  while (reads.load() == 0) {
    std::this_thread::yield();  // the reader is reading before the batch starts
  }
  auto results = store.PutBatch(writes);
  done.store(true);
  reader.join();
  REQUIRE(results.ok());
  for (const auto& r : *results) {
    CHECK(r.value_or(0) == 1);
  }
  CHECK(partial.load() == 0);
  CHECK(reads.load() > 0);
  auto listed = store.List(core::FindingFilter{});
  REQUIRE(listed.ok());
  CHECK(listed->size() == static_cast<std::size_t>(kFindings));
}

}  // namespace pulse::testing::contracts

#define PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, WHAT, FN)      \
  TEST_CASE(NAME " finding store: " WHAT, "[contract][finding_store]") { \
    auto pulse_contract_store = (FACTORY)();                             \
    REQUIRE(pulse_contract_store != nullptr);                            \
    ::pulse::testing::contracts::FN(*pulse_contract_store);              \
  }

#define PULSE_FINDING_STORE_CONTRACT(NAME, FACTORY)                                              \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, "get of an unknown id is NotFound",          \
                                     GetUnknownIsNotFound)                                       \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "a created finding reads back whole at version 1",          \
                                     CreateThenGetRoundTripsEveryField)                          \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "a batch get reads the stored ones in the order asked",     \
                                     GetBatchReadsTheStoredOnesInOrder)                          \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "the findings awaiting their fix follow every write",       \
                                     AwaitingFixOutcomeFollowsEveryWrite)                        \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "the active keys are the active findings in id order",      \
                                     ActiveKeysAreTheActiveFindings)                             \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "creating an existing id is Aborted and changes nothing",   \
                                     CreateOfExistingIdIsAbortedAndKeepsTheRecord)               \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, "an update needs the current version",       \
                                     UpdateNeedsTheCurrentVersion)                               \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, "updating a missing finding is Aborted",     \
                                     UpdateOfAMissingFindingIsAborted)                           \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "an empty id or negative version is InvalidArgument",       \
                                     MalformedPutsAreInvalidArgument)                            \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "list is ordered by id and filters by resource, "           \
                                     "category and activity",                                    \
                                     ListOrdersByIdAndFilters)                                   \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, "list filters by related resource",          \
                                     ListFiltersByRelatedResource)                               \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "suppression rules upsert, list by id and delete",          \
                                     SuppressionRulesUpsertListAndDelete)                        \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "two concurrent puts at one version have one winner",       \
                                     ConcurrentPutsAtOneVersionHaveExactlyOneWinner)             \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "retried read-modify-write from threads loses no update",   \
                                     RetriedReadModifyWriteLosesNoUpdate)                        \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "each write of a batch lands or fails as Put would",        \
                                     BatchWritesEachLandOrFailAsPutWould)                        \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, "a reader sees a whole batch or none of it", \
                                     BatchIsSeenWholeOrNotAtAll)
