// The findings page cache (core::FindingPageCache inside AgentViews) over a real SQLite file:
// every page a views object serves, from its cache or not, is byte for byte the page a fresh
// views object (an empty cache) builds from the same store at the same instant, across writes,
// snoozes that end and a clock set back; and the store ports it relies on
// (SqliteFindingStore::WriteGeneration, NextSnoozeEnd).
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/model/finding.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/temp_dir.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::SqliteFindingStore;

// A data dir with a finding store and two sets of views over it: `cached` keeps its cache for
// the whole test, Fresh() builds the page with an empty one.
struct PageCacheHarness {
  PageCacheHarness() : db(MustOpen(dir.File("pulse.db"))), store(*db) {}

  core::Finding Make(int i, core::Severity severity, absl::Duration age) const {
    core::Finding f;
    f.id = "finding-" + std::to_string(100 + i);
    f.key = f.id;
    f.resource_id = "vm:" + std::to_string(100 + i % 4);
    f.resource_name = f.resource_id;
    f.resource_type = "vm";
    f.severity = severity;
    f.category = core::Category::kPerformance;
    f.title = "Finding " + f.id;
    f.description = "What is wrong";
    f.detected_at = clock.Now() - age;
    f.last_seen_at = clock.Now() - absl::Minutes(1);
    f.times_raised = 1;
    return f;
  }

  void Put(const core::Finding& f) {
    absl::StatusOr<core::StoredFinding> stored = store.Get(f.id);
    const std::int64_t version = stored.ok() ? stored->version : 0;
    REQUIRE(store.Put(f, version).ok());
  }

  core::Finding Get(const std::string& id) const {
    absl::StatusOr<core::StoredFinding> stored = store.Get(id);
    REQUIRE(stored.ok());
    return stored->finding;
  }

  // The page through `views` for `query`.
  static core::FindingPage Page(core::AgentViews& views, const core::FindingListQuery& query) {
    absl::StatusOr<core::FindingPage> page = views.FindingListPage(query);
    REQUIRE(page.ok());
    return *std::move(page);
  }

  core::FindingPage Fresh(const core::FindingListQuery& query) {
    core::AgentViews fresh(fleet, store, actions, action_service, operator_state, clock);
    return Page(fresh, query);
  }

  // The cached views' page, required equal (body and cursor) to a fresh read's.
  core::FindingPage Same(const core::FindingListQuery& query) {
    core::FindingPage served = Page(cached, query);
    core::FindingPage fresh = Fresh(query);
    CHECK(served.body == fresh.body);
    CHECK(served.next_cursor == fresh.next_cursor);
    return served;
  }

  TempDir dir;
  FakeClock clock;
  std::unique_ptr<adapters::storage::SqliteDatabase> db;
  SqliteFindingStore store;
  FakeFleet fleet;
  InMemoryActionStore actions;
  InMemoryOperatorStateStore operator_state;
  InMemoryAuditLog audit;
  core::ActionService action_service{actions, fleet, operator_state, audit, clock};
  core::AgentViews cached{fleet, store, actions, action_service, operator_state, clock};
};

// Active, snoozed (ending in 1 h and in 3 h), dismissed, suppressed and resolved findings.
void SeedMixedFindings(PageCacheHarness& h) {
  for (int i = 0; i < 12; ++i) {
    core::Finding f = h.Make(i, i % 3 == 0 ? core::Severity::kCritical : core::Severity::kWarning,
                             absl::Minutes(10 * (i + 1)));
    switch (i % 6) {
      case 1:
        f.snoozed_until = h.clock.Now() + absl::Hours(i < 6 ? 1 : 3);
        break;
      case 2:
        f.dismissed_reason = core::DismissReason::kNotAnIssue;
        break;
      case 3:
        f.suppressed = true;
        break;
      case 4:
        f.resolved_at = h.clock.Now() - absl::Minutes(5);
        break;
      default:
        break;
    }
    h.Put(f);
  }
}

core::FindingListQuery PageQuery(std::size_t limit, std::optional<std::string> cursor = {}) {
  core::FindingListQuery q;
  q.limit = limit;
  q.cursor = std::move(cursor);
  return q;
}

TEST_CASE("a cached findings page is the page a fresh read builds, and is served from the cache",
          "[storage][findings][page-cache]") {
  PageCacheHarness h;
  SeedMixedFindings(h);
  const core::FindingPage whole = h.Same(PageQuery(0));
  const core::FindingPage again = h.Same(PageQuery(0));
  CHECK(again.body == whole.body);
  CHECK(h.cached.FindingPageCacheCounts().hits == 1);
  // Pages through the cursor, and one resource's page, come from the cache the second time.
  const core::FindingPage first = h.Same(PageQuery(2));
  REQUIRE(first.next_cursor.has_value());
  h.Same(PageQuery(2, first.next_cursor));
  h.Same(PageQuery(2, first.next_cursor));
  core::FindingListQuery one = PageQuery(0);
  one.resource_id = "vm:100";
  h.Same(one);
  h.Same(one);
  CHECK(h.cached.FindingPageCacheCounts().hits == 3);
  // Lists with hidden or resolved findings are built every time.
  core::FindingListQuery widened = PageQuery(0);
  widened.include_hidden = true;
  widened.include_resolved = true;
  h.Same(widened);
  h.Same(widened);
  CHECK(h.cached.FindingPageCacheCounts().hits == 3);
}

TEST_CASE("every finding write makes the next page read the store again",
          "[storage][findings][page-cache]") {
  PageCacheHarness h;
  SeedMixedFindings(h);
  const core::FindingPage before = h.Same(PageQuery(0));
  REQUIRE(before.body.find("finding-100") != std::string::npos);
  core::Finding f = h.Get("finding-100");
  f.dismissed_reason = core::DismissReason::kNotAnIssue;
  h.Put(f);
  const core::FindingPage dismissed = h.Same(PageQuery(0));
  CHECK(dismissed.body.find("finding-100") == std::string::npos);
  // An acknowledgement changes a member of a listed finding, not the list's membership.
  f = h.Get("finding-106");
  f.acknowledged_at = h.clock.Now();
  h.Put(f);
  const core::FindingPage acknowledged = h.Same(PageQuery(0));
  CHECK(acknowledged.body != dismissed.body);
  // A batch write (PutBatch, as Patrol's reconcile) misses too.
  f = h.Get("finding-106");
  core::Finding g = f;
  g.resolved_at = h.clock.Now();
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> batch =
      h.store.PutBatch({core::FindingWrite{g, h.store.Get(f.id)->version}});
  REQUIRE(batch.ok());
  const core::FindingPage resolved = h.Same(PageQuery(0));
  CHECK(resolved.body.find("finding-106") == std::string::npos);
  CHECK(h.cached.FindingPageCacheCounts().hits == 0);
}

TEST_CASE("a cached page expires when a snooze in its range ends, and when the clock goes back",
          "[storage][findings][page-cache]") {
  PageCacheHarness h;
  SeedMixedFindings(h);  // finding-101 snoozed for 1 h, finding-107 for 3 h
  const core::FindingPage now = h.Same(PageQuery(0));
  CHECK(now.body.find("finding-101") == std::string::npos);
  h.clock.Advance(absl::Hours(1) - absl::Nanoseconds(1));
  CHECK(h.Same(PageQuery(0)).body == now.body);
  CHECK(h.cached.FindingPageCacheCounts().hits == 1);
  h.clock.Advance(absl::Nanoseconds(1));
  const core::FindingPage woke = h.Same(PageQuery(0));
  CHECK(woke.body.find("finding-101") != std::string::npos);
  CHECK(woke.body.find("finding-107") == std::string::npos);
  h.clock.Advance(absl::Hours(2));
  const core::FindingPage both = h.Same(PageQuery(0));
  CHECK(both.body.find("finding-107") != std::string::npos);
  // Back before the snoozes ended: both findings are snoozed again.
  h.clock.Advance(-absl::Hours(3));
  const core::FindingPage back = h.Same(PageQuery(0));
  CHECK(back.body == now.body);
  CHECK(h.cached.FindingPageCacheCounts().hits == 1);
}

TEST_CASE("SqliteFindingStore reports its writes and the snooze ends of a page range",
          "[storage][findings][page-cache]") {
  PageCacheHarness h;
  const std::optional<std::uint64_t> start = h.store.WriteGeneration();
  REQUIRE(start.has_value());
  core::Finding a = h.Make(0, core::Severity::kCritical, absl::Minutes(5));
  h.Put(a);
  const std::optional<std::uint64_t> after_put = h.store.WriteGeneration();
  CHECK(after_put != start);
  // A refused write (version clash) counts too: a cache may only miss more, never less.
  CHECK(absl::IsAborted(h.store.Put(a, 7).status()));
  CHECK(h.store.WriteGeneration() != after_put);
  const std::optional<std::uint64_t> before_batch = h.store.WriteGeneration();
  REQUIRE(
      h.store
          .PutBatch({core::FindingWrite{h.Make(1, core::Severity::kWarning, absl::Minutes(10)), 0}})
          .ok());
  CHECK(h.store.WriteGeneration() != before_batch);

  core::FindingPageQuery q;
  q.now = h.clock.Now();
  absl::StatusOr<std::optional<absl::Time>> none = h.store.NextSnoozeEnd(q, std::nullopt);
  REQUIRE(none.ok());
  CHECK(!none->has_value());
  // The order: finding-100 (critical), then 102 (1 min old, snoozed 2 h), 104 (2 min, its
  // snooze over), 101 (10 min) and 103 (30 min, snoozed 1 h).
  core::Finding early = h.Make(3, core::Severity::kWarning, absl::Minutes(30));
  early.snoozed_until = h.clock.Now() + absl::Hours(1);
  h.Put(early);
  core::Finding late = h.Make(2, core::Severity::kWarning, absl::Minutes(1));
  late.snoozed_until = h.clock.Now() + absl::Hours(2);
  h.Put(late);
  core::Finding lapsed = h.Make(4, core::Severity::kWarning, absl::Minutes(2));
  lapsed.snoozed_until = h.clock.Now() - absl::Hours(1);
  h.Put(lapsed);
  absl::StatusOr<std::optional<absl::Time>> all = h.store.NextSnoozeEnd(q, std::nullopt);
  REQUIRE(all.ok());
  CHECK(*all == h.clock.Now() + absl::Hours(1));
  // Up to finding-101 (before finding-103 in the order): only finding-102's snooze is in range.
  const core::FindingPagePosition through = core::PagePositionOf(h.Get("finding-101"));
  absl::StatusOr<std::optional<absl::Time>> head = h.store.NextSnoozeEnd(q, through);
  REQUIRE(head.ok());
  CHECK(*head == h.clock.Now() + absl::Hours(2));
  // After finding-103: nothing snoozed is left.
  q.after = core::PagePositionOf(h.Get("finding-103"));
  absl::StatusOr<std::optional<absl::Time>> tail = h.store.NextSnoozeEnd(q, std::nullopt);
  REQUIRE(tail.ok());
  CHECK(!tail->has_value());
  // One resource: vm:102 holds finding-102 only.
  q.after.reset();
  q.resource_id = "vm:102";
  absl::StatusOr<std::optional<absl::Time>> one = h.store.NextSnoozeEnd(q, std::nullopt);
  REQUIRE(one.ok());
  CHECK(*one == h.clock.Now() + absl::Hours(2));
  q.include_hidden = true;
  CHECK(absl::IsInvalidArgument(h.store.NextSnoozeEnd(q, std::nullopt).status()));
}

}  // namespace
}  // namespace pulse::testing::storage
