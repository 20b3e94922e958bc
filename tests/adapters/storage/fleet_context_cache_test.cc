// The fleet context cache (core::FleetContextCache inside AgentViews) over real SQLite stores:
// every fleet context a views object serves, from its cache or not, is byte for byte the one a
// fresh views object (an empty cache) builds from the same stores and fleet at the same instant,
// across finding, action and operator-state writes, fleet changes, snoozes that end, plans that
// pass their TTL, maintenance windows that open and close, and a clock set back; and the store
// ports it relies on (SqliteActionStore and SqliteOperatorStateStore::WriteGeneration,
// SqliteFindingStore::CountActiveUntilChange); and ActionService::SweepExpired, which skips the
// store read while a quiet sweep is known to hold.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "contracts/action_store_contract.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/model/finding.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/forwarding_fleet.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/temp_dir.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

namespace contract = action_store_contract;
using adapters::storage::SqliteActionStore;
using adapters::storage::SqliteFindingStore;
using adapters::storage::SqliteOperatorStateStore;

core::FleetResource Vm(int n) {
  core::FleetResource r;
  r.id = "vm:" + std::to_string(n);
  r.type = "vm";
  r.name = "guest-" + std::to_string(n);
  r.status = "running";
  r.technology = "proxmox";
  r.attributes["os"] = "debian";
  return r;
}

// A data dir with the three stores, a fleet of vm:100..vm:103 and two sets of views over them:
// `cached` keeps its cache for the whole test, Fresh() builds the context with an empty one.
struct ContextCacheHarness {
  ContextCacheHarness()
      : db(MustOpen(dir.File("pulse.db"))), findings(*db), actions(*db), operator_state(*db) {
    clock.Set(contract::T0());
    for (int n = 100; n < 104; ++n) {
      fleet.PutResource(Vm(n));
    }
  }

  void PutFinding(const std::string& id, const std::string& resource, core::Severity severity,
                  std::optional<absl::Time> snoozed_until = std::nullopt) {
    core::Finding f;
    f.id = id;
    f.key = id;
    f.resource_id = resource;
    f.resource_name = resource;
    f.resource_type = "vm";
    f.severity = severity;
    f.category = core::Category::kPerformance;
    f.title = "Finding " + id;
    f.description = "What is wrong";
    f.detected_at = clock.Now() - absl::Hours(1);
    f.last_seen_at = clock.Now();
    f.times_raised = 1;
    f.snoozed_until = snoozed_until;
    absl::StatusOr<core::StoredFinding> stored = findings.Get(id);
    REQUIRE(findings.Put(f, stored.ok() ? stored->version : 0).ok());
  }

  std::string Context(core::AgentViews& views, const core::FleetContextQuery& query = {}) {
    absl::StatusOr<std::string> body = views.FleetContext(query);
    REQUIRE(body.ok());
    return *std::move(body);
  }

  // The cached views' context, required equal to a fresh read's.
  std::string Same(const core::FleetContextQuery& query = {}) {
    const std::string served = Context(cached, query);
    core::AgentViews fresh(fleet, findings, actions, action_service, operator_state, clock);
    CHECK(served == Context(fresh, query));
    return served;
  }

  std::uint64_t Hits() const { return cached.FleetContextCacheCounts().hits; }

  TempDir dir;
  FakeClock clock;
  std::unique_ptr<adapters::storage::SqliteDatabase> db;
  SqliteFindingStore findings;
  SqliteActionStore actions;
  SqliteOperatorStateStore operator_state;
  FakeFleet fleet;
  InMemoryAuditLog audit;
  core::ActionService action_service{actions, fleet, operator_state, audit, clock};
  core::AgentViews cached{fleet, findings, actions, action_service, operator_state, clock};
};

core::OperatorState Declared(const std::string& resource, absl::Time at) {
  core::OperatorState s;
  s.resource_id = resource;
  s.never_auto_remediate = true;
  s.set_at = at;
  s.set_by = "user:admin";
  return s;
}

TEST_CASE("an unchanged fleet context is served from the cache with a new generatedAt",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  h.PutFinding("f-1", "vm:100", core::Severity::kCritical);
  const std::string first = h.Same();
  CHECK(h.Same() == first);
  CHECK(h.Hits() == 1);
  h.clock.Advance(absl::Seconds(30));
  const std::string later = h.Same();
  CHECK(h.Hits() == 2);
  CHECK(later != first);  // generatedAt is written for every reply
  CHECK(later.find("\"critical\":1") != std::string::npos);
  // Each filter is its own entry.
  core::FleetContextQuery critical;
  critical.severity = core::Severity::kCritical;
  const std::string only = h.Same(critical);
  CHECK(only.find("vm:101") == std::string::npos);
  h.Same(critical);
  CHECK(h.Hits() == 3);
  CHECK(h.cached.FleetContextCacheCounts().misses == 2);
}

TEST_CASE("finding, action and operator-state writes each make the next context read again",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  h.Same();
  h.PutFinding("f-1", "vm:101", core::Severity::kWarning);
  CHECK(h.Same().find("\"warning\":1") != std::string::npos);

  const core::ActionRecord pending = contract::NewRecord("p1", true, h.clock.Now());
  REQUIRE(h.actions.InsertIfAbsent(pending, contract::InitialEvents(pending)).ok());
  CHECK(h.Same().find("\"pendingApprovalCount\":1") != std::string::npos);
  REQUIRE(h.actions
              .Transition(contract::Decide(pending, {core::ActorKind::kHuman, "admin"},
                                           core::DecisionOutcome::kRejected,
                                           core::ActionState::kRejected, h.clock.Now()))
              .ok());
  CHECK(h.Same().find("\"pendingApprovalCount\":1") == std::string::npos);

  REQUIRE(h.operator_state.Set(Declared("vm:102", h.clock.Now())).ok());
  CHECK(h.Same().find("\"neverAutoRemediate\":true") != std::string::npos);
  REQUIRE(h.operator_state.Clear("vm:102").ok());
  CHECK(h.Same().find("\"neverAutoRemediate\":true") == std::string::npos);
  CHECK(h.Hits() == 0);
}

TEST_CASE("a change the fleet context shows misses, and one it does not show is served",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  h.Same();
  h.fleet.EditResource("vm:103", [](core::FleetResource& r) { r.status = "stopped"; });
  CHECK(h.Same().find("\"status\":\"stopped\"") != std::string::npos);
  h.fleet.EditResource("vm:103", [](core::FleetResource& r) { r.name = "renamed"; });
  CHECK(h.Same().find("\"resourceName\":\"renamed\"") != std::string::npos);
  h.fleet.PutResource(Vm(104));
  CHECK(h.Same().find("vm:104") != std::string::npos);
  h.fleet.RemoveResource("vm:100");
  CHECK(h.Same().find("vm:100") == std::string::npos);
  CHECK(h.Hits() == 0);
  // Attributes and revisions are not in the fleet context: the kept array still is the one.
  h.fleet.EditResource("vm:101", [](core::FleetResource& r) {
    r.attributes["os"] = "alpine";
    r.revision = "r2";
  });
  h.Same();
  CHECK(h.Hits() == 1);
}

TEST_CASE("a kept context expires when a snooze ends, a plan's TTL passes or a window edges",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  const absl::Time t0 = h.clock.Now();
  h.PutFinding("f-1", "vm:100", core::Severity::kCritical, t0 + absl::Minutes(10));
  // A snooze of a finding of an unlisted resource ends first and must not matter.
  h.PutFinding("f-2", "vm:999", core::Severity::kCritical, t0 + absl::Minutes(1));
  const std::string snoozed = h.Same();
  CHECK(snoozed.find("\"critical\":1") == std::string::npos);
  h.clock.Advance(absl::Minutes(10) - absl::Nanoseconds(1));
  h.Same();
  CHECK(h.Hits() == 1);
  h.clock.Advance(absl::Nanoseconds(1));
  CHECK(h.Same().find("\"critical\":1") != std::string::npos);
  CHECK(h.Hits() == 1);

  const core::ActionRecord pending = contract::NewRecord("p1", true, h.clock.Now());  // 5 min
  REQUIRE(h.actions.InsertIfAbsent(pending, contract::InitialEvents(pending)).ok());
  core::OperatorState window = Declared("vm:101", h.clock.Now());
  window.maintenance_start_at = h.clock.Now() + absl::Minutes(2);
  window.maintenance_end_at = h.clock.Now() + absl::Minutes(3);
  REQUIRE(h.operator_state.Set(window).ok());
  CHECK(h.Same().find("\"maintenanceWindowActive\":true") == std::string::npos);
  h.clock.Advance(absl::Minutes(2));
  CHECK(h.Same().find("\"maintenanceWindowActive\":true") != std::string::npos);
  h.clock.Advance(absl::Minutes(1));
  const std::string closed = h.Same();
  CHECK(closed.find("\"maintenanceWindowActive\":true") == std::string::npos);
  CHECK(closed.find("\"pendingApprovalCount\":1") != std::string::npos);
  h.clock.Advance(absl::Minutes(2));
  CHECK(h.Same().find("\"pendingApprovalCount\":1") == std::string::npos);
  CHECK(h.Hits() == 1);

  // A clock set back reads again.
  h.Same();
  CHECK(h.Hits() == 2);
  h.clock.Set(h.clock.Now() - absl::Seconds(1));
  h.Same();
  CHECK(h.Hits() == 2);
}

TEST_CASE("SqliteActionStore and SqliteOperatorStateStore report every write, failed or not",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  const std::optional<std::uint64_t> start = h.actions.WriteGeneration();
  REQUIRE(start.has_value());
  CHECK(h.actions.WriteGeneration() == start);  // reads are not writes
  const core::ActionRecord pending = contract::NewRecord("p1", true, h.clock.Now());
  REQUIRE(h.actions.InsertIfAbsent(pending, contract::InitialEvents(pending)).ok());
  const std::optional<std::uint64_t> inserted = h.actions.WriteGeneration();
  CHECK(inserted != start);
  REQUIRE(h.actions.Get(pending.id()).ok());
  CHECK(h.actions.WriteGeneration() == inserted);
  core::ActionTransition stale =
      contract::Move(pending, core::ActionState::kExpired, h.clock.Now());
  stale.expected_plan_hash = "sha256:" + std::string(64, 'f');  // a lost compare
  CHECK_FALSE(h.actions.Transition(stale).ok());
  CHECK(h.actions.WriteGeneration() != inserted);

  const std::optional<std::uint64_t> before = h.operator_state.WriteGeneration();
  REQUIRE(before.has_value());
  REQUIRE(h.operator_state.Set(Declared("vm:100", h.clock.Now())).ok());
  const std::optional<std::uint64_t> set = h.operator_state.WriteGeneration();
  CHECK(set != before);
  REQUIRE(h.operator_state.Get("vm:100").ok());
  CHECK(h.operator_state.WriteGeneration() == set);
  core::OperatorState invalid = Declared("not a canonical id", h.clock.Now());
  CHECK_FALSE(h.operator_state.Set(invalid).ok());
  const std::optional<std::uint64_t> refused = h.operator_state.WriteGeneration();
  CHECK(refused != set);
  REQUIRE(h.operator_state.Clear("vm:100").ok());
  CHECK(h.operator_state.WriteGeneration() != refused);
}

// CountActiveUntilChange's snooze end, after checking that its counts are
// CountActiveByResource's at the same instant.
std::optional<absl::Time> NextSnoozeEnd(const SqliteFindingStore& store, absl::Time at,
                                        const std::vector<std::string>& ids) {
  absl::StatusOr<core::ActiveFindingCountsUntil> until = store.CountActiveUntilChange(at, ids);
  REQUIRE(until.ok());
  absl::StatusOr<std::vector<core::ActiveFindingCounts>> counts =
      store.CountActiveByResource(at, ids);
  REQUIRE(counts.ok());
  CHECK(until->counts == *counts);
  return until->next_snooze_end;
}

TEST_CASE("SqliteFindingStore counts active findings with the next snooze end among them",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  const absl::Time t0 = h.clock.Now();
  CHECK_FALSE(NextSnoozeEnd(h.findings, t0, {"vm:100"}).has_value());
  h.PutFinding("a", "vm:100", core::Severity::kInfo, t0 + absl::Minutes(30));
  h.PutFinding("b", "vm:100", core::Severity::kCritical, t0 + absl::Minutes(20));
  h.PutFinding("c", "vm:101", core::Severity::kWarning, t0 + absl::Minutes(5));
  h.PutFinding("d", "vm:100", core::Severity::kWarning, t0 - absl::Minutes(5));  // ended
  h.PutFinding("e", "vm:100", core::Severity::kWatch);                           // never
  h.PutFinding("f", "vm:100", core::Severity::kCritical, t0 + absl::Minutes(1));
  {
    absl::StatusOr<core::StoredFinding> f = h.findings.Get("f");
    REQUIRE(f.ok());
    core::Finding resolved = f->finding;
    resolved.resolved_at = t0;
    REQUIRE(h.findings.Put(resolved, f->version).ok());  // a resolved finding never counts
  }
  CHECK(NextSnoozeEnd(h.findings, t0, {"vm:100"}) == t0 + absl::Minutes(20));
  CHECK(NextSnoozeEnd(h.findings, t0, {"vm:100", "vm:101", "vm:100"}) == t0 + absl::Minutes(5));
  CHECK(NextSnoozeEnd(h.findings, t0 + absl::Minutes(20), {"vm:100", "vm:101"}) ==
        t0 + absl::Minutes(30));
  // The counts beside it: at t0, vm:100 has d (its snooze over) and e active; vm:101 none.
  absl::StatusOr<core::ActiveFindingCountsUntil> at_t0 =
      h.findings.CountActiveUntilChange(t0, {"vm:101", "vm:100"});
  REQUIRE(at_t0.ok());
  REQUIRE(at_t0->counts.size() == 1);
  CHECK(at_t0->counts[0] ==
        core::ActiveFindingCounts{.resource_id = "vm:100", .warning = 1, .watch = 1});
}

// The SQLite action store, counting the listings a sweep makes.
class CountingActionStore final : public core::ActionStore {
 public:
  explicit CountingActionStore(core::ActionStore& inner) : inner_(inner) {}
  absl::StatusOr<core::ActionInsertOutcome> InsertIfAbsent(
      const core::ActionRecord& record,
      const std::vector<core::ActionLifecycleEvent>& initial_events) override {
    return inner_.InsertIfAbsent(record, initial_events);
  }
  absl::StatusOr<core::ActionRecord> Get(std::string_view id) override { return inner_.Get(id); }
  absl::StatusOr<core::ActionRecord> Transition(const core::ActionTransition& t) override {
    return inner_.Transition(t);
  }
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> ListEvents(std::string_view id) override {
    return inner_.ListEvents(id);
  }
  absl::StatusOr<std::vector<core::ActionRecord>> ListByState(
      const std::vector<core::ActionState>& states, std::size_t limit) override {
    ++listings;
    return inner_.ListByState(states, limit);
  }
  absl::StatusOr<std::vector<core::ActionRecord>> ListPage(
      const core::ActionPageQuery& query) override {
    return inner_.ListPage(query);
  }
  std::optional<std::uint64_t> WriteGeneration() const override {
    return reports_generation ? inner_.WriteGeneration() : std::nullopt;
  }

  int listings = 0;
  bool reports_generation = true;

 private:
  core::ActionStore& inner_;
};

std::size_t Sweep(core::ActionService& service, std::size_t limit = 500) {
  absl::StatusOr<std::size_t> moved = service.SweepExpired(limit);
  REQUIRE(moved.ok());
  return *moved;
}

TEST_CASE("a sweep that moved nothing is not repeated until a write, a TTL or a clock set back",
          "[storage][actions][sweep]") {
  ContextCacheHarness h;
  CountingActionStore counted(h.actions);
  core::ActionService service(counted, h.fleet, h.operator_state, h.audit, h.clock);
  const core::ActionRecord a = contract::NewRecord("a", true, h.clock.Now());  // TTL 5 min
  REQUIRE(h.actions.InsertIfAbsent(a, contract::InitialEvents(a)).ok());
  CHECK(Sweep(service) == 0);
  CHECK(Sweep(service) == 0);
  CHECK(counted.listings == 1);
  // A new plan (its TTL 2 min from now, sooner than a's) is a write: the next sweep lists.
  h.clock.Advance(absl::Minutes(1));
  const core::ActionRecord b = contract::NewRecord("b", false, h.clock.Now() - absl::Minutes(3));
  REQUIRE(h.actions.InsertIfAbsent(b, contract::InitialEvents(b)).ok());
  CHECK(Sweep(service) == 0);
  CHECK(counted.listings == 2);
  h.clock.Advance(absl::Minutes(2) - absl::Nanoseconds(1));
  CHECK(Sweep(service) == 0);
  CHECK(counted.listings == 2);
  // b's TTL: listed and moved; then a quiet sweep is remembered again.
  h.clock.Advance(absl::Nanoseconds(1));
  CHECK(Sweep(service) == 1);
  CHECK(h.actions.Get(b.id())->state == core::ActionState::kExpired);
  CHECK(Sweep(service) == 0);
  CHECK(Sweep(service) == 0);
  CHECK(counted.listings == 4);
  // A clock set back lists again.
  h.clock.Set(h.clock.Now() - absl::Seconds(1));
  CHECK(Sweep(service) == 0);
  CHECK(counted.listings == 5);
  // a's TTL, 5 min after its creation.
  h.clock.Set(contract::T0() + absl::Minutes(5));
  CHECK(Sweep(service) == 1);
  CHECK(h.actions.Get(a.id())->state == core::ActionState::kExpired);
  CHECK(counted.listings == 6);
}

TEST_CASE("a remembered sweep holds for a limit it covered, and only when the store counts writes",
          "[storage][actions][sweep]") {
  ContextCacheHarness h;
  CountingActionStore counted(h.actions);
  core::ActionService service(counted, h.fleet, h.operator_state, h.audit, h.clock);
  for (const char* id : {"a", "b"}) {
    const core::ActionRecord r = contract::NewRecord(id, true, h.clock.Now());
    REQUIRE(h.actions.InsertIfAbsent(r, contract::InitialEvents(r)).ok());
  }
  CHECK(Sweep(service, 2) == 0);  // as many as its limit: there may be more live plans
  CHECK(Sweep(service, 2) == 0);  // the same listing again
  CHECK(Sweep(service, 1) == 0);  // a prefix of it
  CHECK(counted.listings == 1);
  CHECK(Sweep(service, 3) == 0);  // more than it listed
  CHECK(counted.listings == 2);
  CHECK(Sweep(service, 1000) == 0);  // that one saw every live plan: any limit
  CHECK(counted.listings == 2);
  counted.reports_generation = false;
  CHECK(Sweep(service) == 0);
  CHECK(Sweep(service) == 0);
  CHECK(counted.listings == 4);
}

// The harness's fake fleet behind a listing generation the test sets (nullopt: it cannot
// tell), counting the whole-fleet listings.
class GenerationFleet final : public ForwardingFleet {
 public:
  using ForwardingFleet::ForwardingFleet;
  std::optional<std::uint64_t> generation = 1;
  int listings = 0;

  std::optional<std::uint64_t> ListingGeneration() override { return generation; }
  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& q) override {
    ++listings;
    return ForwardingFleet::ListResources(q);
  }
};

TEST_CASE("a fleet that tells its listing generation is not listed while the generation holds",
          "[storage][agent][fleet-context-cache]") {
  ContextCacheHarness h;
  GenerationFleet fleet(h.fleet);
  core::AgentViews views(fleet, h.findings, h.actions, h.action_service, h.operator_state, h.clock);
  h.PutFinding("f-1", "vm:100", core::Severity::kCritical);
  // Every reply equals a fresh read over the plain fake fleet (h.Same()'s fresh views).
  const auto served_fresh = [&] {
    const std::string served = h.Context(views);
    core::AgentViews fresh(h.fleet, h.findings, h.actions, h.action_service, h.operator_state,
                           h.clock);
    CHECK(served == h.Context(fresh));
    return served;
  };
  served_fresh();
  CHECK(fleet.listings == 1);
  served_fresh();
  h.clock.Advance(absl::Seconds(5));
  served_fresh();
  CHECK(fleet.listings == 1);  // kept, and the fleet was not even listed
  CHECK(views.FleetContextCacheCounts().hits == 2);
  CHECK(views.FleetContextCacheCounts().misses == 1);  // one lookup per read

  // The fleet changes and says so: listed again, and the change shows.
  h.fleet.EditResource("vm:103", [](core::FleetResource& r) { r.status = "stopped"; });
  fleet.generation = 2;
  CHECK(served_fresh().find("\"status\":\"stopped\"") != std::string::npos);
  CHECK(fleet.listings == 2);
  served_fresh();
  CHECK(fleet.listings == 2);

  // A store write misses under the same generation (the fleet is listed, the array rebuilt).
  h.PutFinding("f-2", "vm:101", core::Severity::kWarning);
  CHECK(served_fresh().find("\"warning\":1") != std::string::npos);
  CHECK(fleet.listings == 3);

  // A fleet that cannot tell is listed for every read and compared, as before.
  fleet.generation = std::nullopt;
  served_fresh();
  served_fresh();
  CHECK(fleet.listings == 5);
}

}  // namespace
}  // namespace pulse::testing::storage
