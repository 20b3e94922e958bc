// The FindingStore paging contract (ListPage, CountActiveByResource, issue 29): the order is
// total, keyset pages neither repeat nor skip a finding while others are written between reads,
// the filters match IsActive, and the counts match the active findings. Usage as
// finding_store_contract.h: PULSE_FINDING_PAGE_CONTRACT("sqlite", MakeStore).
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "contracts/finding_store_contract.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::testing::contracts {

inline core::Finding PageFinding(const std::string& id, const std::string& resource,
                                 core::Severity severity, absl::Duration age) {
  core::Finding f = SimpleFinding(id, resource, core::Category::kPerformance);
  f.severity = severity;
  f.detected_at = kContractT0 - age;
  return f;
}

inline core::FindingPageQuery PageQuery(std::size_t limit) {
  core::FindingPageQuery q;
  q.now = kContractT0;
  q.limit = limit;
  return q;
}

// Reads every page of `q` (limit per page), continuing after the last finding of each.
template <class Store>
std::vector<std::string> AllPages(Store& store, core::FindingPageQuery q) {
  std::vector<std::string> ids;
  for (int guard = 0; guard < 1000; ++guard) {
    absl::StatusOr<std::vector<core::StoredFinding>> page = store.ListPage(q);
    REQUIRE(page.ok());
    for (const core::StoredFinding& s : *page) {
      ids.push_back(s.finding.id);
    }
    if (page->size() < q.limit) {
      break;
    }
    q.after = core::PagePositionOf(page->back().finding);
  }
  return ids;
}

template <class Store>
void PagesFollowSeverityThenNewestThenId(Store& store) {
  // equal timestamps: c-1, c-2 and c-3 are ordered by id alone
  for (const char* id : {"c-3", "c-1", "c-2"}) {
    REQUIRE(store.Put(PageFinding(id, "vm:1", core::Severity::kCritical, absl::Hours(1)), 0).ok());
  }
  REQUIRE(
      store.Put(PageFinding("c-new", "vm:2", core::Severity::kCritical, absl::Minutes(1)), 0).ok());
  REQUIRE(
      store.Put(PageFinding("w-old", "vm:1", core::Severity::kWarning, absl::Hours(9)), 0).ok());
  REQUIRE(
      store.Put(PageFinding("w-new", "vm:2", core::Severity::kWarning, absl::Hours(2)), 0).ok());
  REQUIRE(store.Put(PageFinding("watch", "vm:1", core::Severity::kWatch, absl::Hours(1)), 0).ok());
  REQUIRE(store.Put(PageFinding("info", "vm:1", core::Severity::kInfo, absl::Hours(1)), 0).ok());
  const std::vector<std::string> all = {"c-new", "c-1", "c-2", "c-3", "w-new", "w-old"};
  for (std::size_t limit : {1, 2, 3, 6, 7, 500}) {
    CHECK(AllPages(store, PageQuery(limit)) == all);
  }
  core::FindingPageQuery everything = PageQuery(100);
  everything.min_severity = core::Severity::kInfo;
  CHECK(AllPages(store, everything) ==
        std::vector<std::string>{"c-new", "c-1", "c-2", "c-3", "w-new", "w-old", "watch", "info"});
  core::FindingPageQuery one_resource = PageQuery(2);
  one_resource.resource_id = "vm:2";
  CHECK(AllPages(store, one_resource) == std::vector<std::string>{"c-new", "w-new"});
  CHECK(store.ListPage(PageQuery(0))->empty());
  // after a position that is not stored: the page starts at the next finding in the order
  core::FindingPageQuery after = PageQuery(10);
  after.after =
      core::FindingPagePosition{core::Severity::kCritical, kContractT0 - absl::Hours(1), "c-15"};
  CHECK(Ids(*store.ListPage(after)) == std::vector<std::string>{"c-2", "c-3", "w-new", "w-old"});
  after.after->id.clear();
  CHECK(store.ListPage(after).status().code() == absl::StatusCode::kInvalidArgument);
}

template <class Store>
void PagesMatchActivityAndResolution(Store& store) {
  REQUIRE(
      store.Put(PageFinding("active", "vm:1", core::Severity::kWarning, absl::Hours(1)), 0).ok());
  core::Finding resolved =
      PageFinding("resolved", "vm:1", core::Severity::kWarning, absl::Hours(2));
  resolved.resolved_at = kContractT0 - absl::Minutes(5);
  REQUIRE(store.Put(resolved, 0).ok());
  core::Finding snoozed = PageFinding("snoozed", "vm:1", core::Severity::kCritical, absl::Hours(3));
  snoozed.snoozed_until = kContractT0 + absl::Hours(1);
  REQUIRE(store.Put(snoozed, 0).ok());
  core::Finding lapsed = PageFinding("lapsed", "vm:1", core::Severity::kWarning, absl::Hours(4));
  lapsed.snoozed_until = kContractT0;  // a snooze ending now no longer hides it
  REQUIRE(store.Put(lapsed, 0).ok());
  core::Finding dismissed =
      PageFinding("dismissed", "vm:2", core::Severity::kWarning, absl::Hours(5));
  dismissed.dismissed_reason = core::DismissReason::kNotAnIssue;
  REQUIRE(store.Put(dismissed, 0).ok());
  core::Finding suppressed =
      PageFinding("suppressed", "vm:2", core::Severity::kInfo, absl::Hours(6));
  suppressed.suppressed = true;
  REQUIRE(store.Put(suppressed, 0).ok());

  CHECK(AllPages(store, PageQuery(1)) == std::vector<std::string>{"active", "lapsed"});
  core::FindingPageQuery with_resolved = PageQuery(1);
  with_resolved.include_resolved = true;
  CHECK(AllPages(store, with_resolved) == std::vector<std::string>{"active", "resolved", "lapsed"});
  // hidden: snoozed, dismissed and suppressed (this one is below the warning floor)
  core::FindingPageQuery with_hidden = PageQuery(1);
  with_hidden.include_hidden = true;
  CHECK(AllPages(store, with_hidden) ==
        std::vector<std::string>{"snoozed", "active", "lapsed", "dismissed"});
  with_hidden.include_resolved = true;
  CHECK(AllPages(store, with_hidden) ==
        std::vector<std::string>{"snoozed", "active", "resolved", "lapsed", "dismissed"});
  with_hidden.min_severity = core::Severity::kInfo;
  with_hidden.include_resolved = false;
  CHECK(AllPages(store, with_hidden) ==
        std::vector<std::string>{"snoozed", "active", "lapsed", "dismissed", "suppressed"});

  // resolving moves a finding out of the active pages (the index columns follow each Put)
  absl::StatusOr<core::StoredFinding> got = store.Get("active");
  REQUIRE(got.ok());
  got->finding.resolved_at = kContractT0;
  REQUIRE(store.Put(got->finding, got->version).ok());
  CHECK(AllPages(store, PageQuery(5)) == std::vector<std::string>{"lapsed"});

  // the counts are the active findings of every severity, per resource
  REQUIRE(store.Put(PageFinding("info-2", "vm:2", core::Severity::kInfo, absl::Hours(1)), 0).ok());
  REQUIRE(
      store.Put(PageFinding("watch-2", "vm:2", core::Severity::kWatch, absl::Hours(1)), 0).ok());
  REQUIRE(
      store.Put(PageFinding("crit-3", "vm:3", core::Severity::kCritical, absl::Hours(1)), 0).ok());
  const std::vector<std::string> asked = {"vm:3", "vm:1", "vm:2", "vm:9", "vm:1"};
  absl::StatusOr<std::vector<core::ActiveFindingCounts>> counts =
      store.CountActiveByResource(kContractT0, asked);
  REQUIRE(counts.ok());
  CHECK(*counts ==
        std::vector<core::ActiveFindingCounts>{
            {.resource_id = "vm:1", .critical = 0, .warning = 1, .watch = 0, .info = 0},
            {.resource_id = "vm:2", .critical = 0, .warning = 0, .watch = 1, .info = 1},
            {.resource_id = "vm:3", .critical = 1, .warning = 0, .watch = 0, .info = 0}});
  // an hour later the snooze has lapsed too
  counts = store.CountActiveByResource(kContractT0 + absl::Hours(2), asked);
  REQUIRE(counts.ok());
  REQUIRE(counts->size() == 3);
  CHECK(counts->front().critical == 1);
  // only the resources asked about
  counts = store.CountActiveByResource(kContractT0, {"vm:2"});
  REQUIRE(counts.ok());
  REQUIRE(counts->size() == 1);
  CHECK(counts->front().resource_id == "vm:2");
  CHECK(store.CountActiveByResource(kContractT0, {})->empty());
}

// Findings inserted and resolved between page reads: every finding that stays listed from the
// first read to the last is seen exactly once, whatever lands before or after the cursor.
template <class Store>
void PagesNeitherRepeatNorSkipUnderWrites(Store& store) {
  for (int i = 0; i < 40; ++i) {
    REQUIRE(store
                .Put(PageFinding("base-" + std::to_string(i), "vm:1",
                                 i % 2 == 0 ? core::Severity::kCritical : core::Severity::kWarning,
                                 absl::Minutes(i % 5)),
                     0)
                .ok());
  }
  core::FindingPageQuery q = PageQuery(7);
  std::vector<std::string> seen;
  int inserted = 0;
  for (int guard = 0; guard < 100; ++guard) {
    absl::StatusOr<std::vector<core::StoredFinding>> page = store.ListPage(q);
    REQUIRE(page.ok());
    for (const core::StoredFinding& s : *page) {
      seen.push_back(s.finding.id);
    }
    if (page->size() < q.limit) {
      break;
    }
    q.after = core::PagePositionOf(page->back().finding);
    // between reads: new findings both ahead of the cursor (newest critical) and behind it
    // (oldest warning), with timestamps equal to existing ones
    REQUIRE(store
                .Put(PageFinding("new-" + std::to_string(inserted++), "vm:2",
                                 core::Severity::kCritical, absl::Minutes(0)),
                     0)
                .ok());
    REQUIRE(store
                .Put(PageFinding("new-" + std::to_string(inserted++), "vm:2",
                                 core::Severity::kWarning, absl::Minutes(4)),
                     0)
                .ok());
  }
  const std::set<std::string> unique(seen.begin(), seen.end());
  CHECK(unique.size() == seen.size());  // no duplicate
  for (int i = 0; i < 40; ++i) {        // no gap among the findings listed throughout
    CHECK(unique.count("base-" + std::to_string(i)) == 1);
  }
}

// The operations-loop status counts as AgentViews computed them before the store counted them:
// every finding decoded and tested (the reference for CountPatrolFindings).
template <class Store>
core::PatrolFindingCounts PatrolCountsByDecodingEvery(Store& store, absl::Time since,
                                                      absl::Time now) {
  absl::StatusOr<std::vector<core::StoredFinding>> all = store.List(core::FindingFilter{});
  REQUIRE(all.ok());
  core::PatrolFindingCounts c;
  for (const core::StoredFinding& s : *all) {
    const core::Finding& f = s.finding;
    if (core::IsRuntimeFinding(f)) {
      continue;
    }
    const bool issue =
        core::SeverityRank(f.severity) >= core::SeverityRank(core::Severity::kWarning);
    if (f.last_seen_at >= since) {
      ++c.seen_since;
      c.issues_seen_since += issue ? 1 : 0;
    }
    c.active_issues += core::IsActive(f, now) && issue ? 1 : 0;
  }
  return c;
}

template <class Store>
void PatrolCountsFollowWindowActivityAndSeverity(Store& store) {
  const absl::Time since = kContractT0 - absl::Hours(24);
  const auto put = [&](core::Finding f) { REQUIRE(store.Put(f, 0).ok()); };
  core::Finding recent =
      PageFinding("recent-warning", "vm:1", core::Severity::kWarning, absl::Hours(30));
  recent.last_seen_at = since;  // the window's first instant counts
  put(recent);
  core::Finding old =
      PageFinding("old-critical", "vm:1", core::Severity::kCritical, absl::Hours(40));
  old.last_seen_at = since - absl::Nanoseconds(1);  // seen before the window, still active
  put(old);
  core::Finding watch = PageFinding("recent-watch", "vm:2", core::Severity::kWatch, absl::Hours(1));
  put(watch);  // seen in the window, not an issue
  core::Finding resolved =
      PageFinding("resolved", "vm:2", core::Severity::kCritical, absl::Hours(2));
  resolved.resolved_at = kContractT0 - absl::Minutes(5);
  put(resolved);  // seen in the window, an issue, not active
  core::Finding snoozed = PageFinding("snoozed", "vm:3", core::Severity::kWarning, absl::Hours(2));
  snoozed.snoozed_until = kContractT0 + absl::Hours(1);
  put(snoozed);
  core::Finding lapsed = PageFinding("lapsed", "vm:3", core::Severity::kWarning, absl::Hours(2));
  lapsed.snoozed_until = kContractT0;  // a snooze ending now no longer hides it
  put(lapsed);
  core::Finding runtime = PageFinding("runtime", core::kRuntimeFindingResourceId,
                                      core::Severity::kCritical, absl::Hours(1));
  runtime.key = core::kRuntimeFindingKey;
  put(runtime);  // never counted
  core::Finding same_resource = PageFinding("ai-other", core::kRuntimeFindingResourceId,
                                            core::Severity::kWarning, absl::Hours(1));
  put(same_resource);  // the runtime resource with another key counts

  auto counts = store.CountPatrolFindings(since, kContractT0);
  REQUIRE(counts.ok());
  // seen: recent-warning, recent-watch, resolved, snoozed, lapsed, ai-other
  CHECK(counts->seen_since == 6);
  CHECK(counts->issues_seen_since == 5);
  // active issues: recent-warning, old-critical, lapsed, ai-other
  CHECK(counts->active_issues == 4);
  CHECK(*counts == PatrolCountsByDecodingEvery(store, since, kContractT0));

  // An update that moves a finding out of the counts is counted at once.
  recent.resolved_at = kContractT0;
  recent.last_seen_at = since - absl::Hours(1);
  REQUIRE(store.Put(recent, 1).ok());
  auto after = store.CountPatrolFindings(since, kContractT0);
  REQUIRE(after.ok());
  CHECK(after->seen_since == 5);
  CHECK(after->issues_seen_since == 4);
  CHECK(after->active_issues == 3);
  // Later, the snooze has lapsed too.
  auto later = store.CountPatrolFindings(since, kContractT0 + absl::Hours(2));
  REQUIRE(later.ok());
  CHECK(later->active_issues == 4);
}

// CountPatrolFindings against the decode-every-finding computation on a randomised store:
// random severities, last-seen times, resolves, snoozes, dismissals and suppressions, the
// runtime finding among them, then random updates (some keeping the indexed columns, some
// changing severity or resource), compared at several windows and instants.
template <class Store>
void PatrolCountsEqualTheDecodedCountOnARandomStore(Store& store) {
  std::mt19937 rng(29);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const core::Severity severities[] = {core::Severity::kCritical, core::Severity::kWarning,
                                       core::Severity::kWatch, core::Severity::kInfo};
  const auto randomise = [&](core::Finding& f) {
    f.severity = severities[pick(4)];
    f.last_seen_at = kContractT0 - absl::Minutes(pick(72 * 60));
    f.resolved_at.reset();
    f.snoozed_until.reset();
    f.dismissed_reason.reset();
    f.suppressed = false;
    switch (pick(6)) {
      case 0:
        f.resolved_at = f.last_seen_at;
        break;
      case 1:
        f.snoozed_until = kContractT0 + absl::Minutes(pick(240) - 120);
        break;
      case 2:
        f.dismissed_reason = core::DismissReason::kNotAnIssue;
        break;
      case 3:
        f.suppressed = true;
        break;
      default:
        break;
    }
  };
  constexpr int kFindings = 300;
  std::vector<std::int64_t> versions(kFindings, 0);
  std::vector<core::Finding> findings;
  for (int i = 0; i < kFindings; ++i) {
    const bool runtime = i % 50 == 0;
    core::Finding f =
        PageFinding("rand-" + std::to_string(1000 + i),
                    runtime ? core::kRuntimeFindingResourceId : "vm:" + std::to_string(pick(20)),
                    core::Severity::kWarning, absl::Hours(80));
    if (runtime) {
      f.key = core::kRuntimeFindingKey;
    }
    randomise(f);
    auto v = store.Put(f, 0);
    REQUIRE(v.ok());
    versions[static_cast<std::size_t>(i)] = *v;
    findings.push_back(f);
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kFindings; i += 1 + pick(3)) {
      core::Finding& f = findings[static_cast<std::size_t>(i)];
      const core::Severity before = f.severity;
      randomise(f);
      if (pick(2) == 0) {
        f.severity = before;  // keeps every indexed column but the state
      }
      if (pick(10) == 0 && !core::IsRuntimeFinding(f)) {
        f.resource_id = "vm:" + std::to_string(pick(20));
      }
      auto v = store.Put(f, versions[static_cast<std::size_t>(i)]);
      REQUIRE(v.ok());
      versions[static_cast<std::size_t>(i)] = *v;
    }
    for (const absl::Duration window : {absl::Hours(24), absl::Hours(1), absl::Hours(100)}) {
      for (const absl::Duration later : {absl::ZeroDuration(), absl::Minutes(61)}) {
        const absl::Time now = kContractT0 + later;
        auto counts = store.CountPatrolFindings(now - window, now);
        REQUIRE(counts.ok());
        CHECK(*counts == PatrolCountsByDecodingEvery(store, now - window, now));
      }
    }
  }
}

}  // namespace pulse::testing::contracts

#define PULSE_FINDING_PAGE_CONTRACT(NAME, FACTORY)                                               \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY, "pages follow severity then newest then id", \
                                     PagesFollowSeverityThenNewestThenId)                        \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "pages and counts follow activity and resolution",          \
                                     PagesMatchActivityAndResolution)                            \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "pages neither repeat nor skip while findings are written", \
                                     PagesNeitherRepeatNorSkipUnderWrites)                       \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "status counts follow the window, activity and severity",   \
                                     PatrolCountsFollowWindowActivityAndSeverity)                \
  PULSE_FINDING_STORE_CONTRACT_CASE_(NAME, FACTORY,                                              \
                                     "status counts equal the decoded count on a random store",  \
                                     PatrolCountsEqualTheDecodedCountOnARandomStore)
