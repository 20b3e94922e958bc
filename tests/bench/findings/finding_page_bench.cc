// Views at scale (issue 29): what one page of the findings list and one fleet-context summary
// cost with N = 1k, 10k and 100k findings in a real SQLite file database (WAL,
// synchronous=NORMAL), each finding on its own resource and the fleet holding the first 1,000 of
// those resources. Through core::AgentViews over SqliteFindingStore, as the HTTP routes call it:
//   BM_PageFloor/N    - the baseline: one indexed 50-row read of a raw table that holds N
//                       finding-sized rows, and the decoding of those 50 findings (what a page
//                       must cost at least);
//   BM_FindingPage/N  - AgentViews::FindingList with limit=50 (GET /api/ai/patrol/findings);
//   BM_FindingPage2/N - the page after it, through the first page's cursor;
//   BM_FleetContext/N - AgentViews::FleetContext (GET /api/agent/fleet-context);
//   BM_Status/N       - AgentViews::OperationsLoopStatus (GET /api/agent/patrol-control/status),
//                       whose finding counts are FindingStore::CountPatrolFindings;
//   BM_StatusBefore/N - those counts as they were computed before: every finding listed,
//                       decoded and tested (the reference the equivalence test checks against).
// Each N runs floor, page, page 2, fleet context, status, status before twice in that order
// (A B A B), so work from
// other sessions weighs on both; the summary prints each view's mean time as a multiple of the
// floor's. No pass/fail: the figures are for docs/performance.md ("Views at scale").
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/findings/finding_json.h"
#include "pulse/core/model/finding.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/temp_dir.h"

namespace {

using pulse::adapters::storage::Durability;
using pulse::adapters::storage::SqliteDatabase;
using pulse::adapters::storage::SqliteFindingStore;
using pulse::adapters::storage::SqliteOptions;
namespace core = pulse::core;
namespace testing = pulse::testing;

constexpr int kFleetResources = 1000;
constexpr int kPage = 50;

std::string ResourceId(int i) { return "vm:" + std::to_string(100000 + i); }

// Half warning, a quarter critical, a quarter watch; detection times spread over ten days with
// many equal timestamps, so the order's tie-break on id is exercised.
core::Finding PageFinding(int i, absl::Time now) {
  core::Finding f;
  f.id = "finding-" + std::to_string(i);
  f.key = "memory-high";
  f.severity = i % 4 == 0 ? core::Severity::kCritical
                          : (i % 4 == 1 ? core::Severity::kWatch : core::Severity::kWarning);
  f.category = core::Category::kPerformance;
  f.resource_id = ResourceId(i);
  f.resource_name = "bench-vm-" + std::to_string(i);
  f.resource_type = "vm";
  f.node = "pve" + std::to_string(1 + i % 3);
  f.title = "Memory pressure on bench-vm-" + std::to_string(i);
  f.description = "Memory use has stayed above 90 % for the last six samples.";
  f.recommendation = "Give the VM more memory or move its heaviest service elsewhere.";
  f.evidence = "memory_pct 93 over 30 minutes";
  f.detected_at = now - absl::Minutes(i % 14'400);
  f.last_seen_at = now - absl::Minutes(1);
  f.times_raised = 1;
  return f;
}

// One populated data dir per N, built on first use and shared by the benchmarks of that N.
struct Populated {
  explicit Populated(int n) {
    SqliteOptions options;
    options.durability = Durability::kNormal;
    auto opened = SqliteDatabase::Open(dir.File("pulse.db"), options);
    if (!opened.ok()) {
      std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
      std::abort();
    }
    db = *std::move(opened);
    store = std::make_unique<SqliteFindingStore>(*db);
    for (int i = 0; i < n; ++i) {
      if (!store->Put(PageFinding(i, clock.Now()), 0).ok()) {
        std::fprintf(stderr, "populate failed at %d\n", i);
        std::abort();
      }
    }
    for (int i = 0; i < kFleetResources; ++i) {
      core::FleetResource r;
      r.id = ResourceId(i);
      r.type = "vm";
      r.name = "bench-vm-" + std::to_string(i);
      r.status = "running";
      fleet.PutResource(std::move(r));
    }
    raw = std::make_unique<SQLite::Database>(dir.File("raw.db"),
                                             SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 5000);
    raw->execAndGet("PRAGMA journal_mode = WAL");
    raw->exec("PRAGMA synchronous = NORMAL");
    raw->exec("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
    SQLite::Statement insert(*raw, "INSERT INTO t (id, body) VALUES (?, ?)");
    raw->exec("BEGIN");
    for (int i = 0; i < n; ++i) {
      insert.bind(1, "finding-" + std::to_string(i));
      insert.bind(2, core::FindingToJson(PageFinding(i, clock.Now())));
      insert.exec();
      insert.reset();
    }
    raw->exec("COMMIT");
  }

  testing::TempDir dir{"pulse-bench-page"};
  testing::FakeClock clock;
  std::unique_ptr<SqliteDatabase> db;
  std::unique_ptr<SqliteFindingStore> store;
  std::unique_ptr<SQLite::Database> raw;
  testing::FakeFleet fleet;
  testing::InMemoryActionStore actions;
  testing::InMemoryOperatorStateStore operator_state;
  testing::InMemoryAuditLog audit;
  std::unique_ptr<core::ActionService> action_service;
  std::unique_ptr<core::AgentViews> views;
};

Populated& At(int n) {
  static std::map<int, std::unique_ptr<Populated>> populated;
  std::unique_ptr<Populated>& p = populated[n];
  if (p == nullptr) {
    p = std::make_unique<Populated>(n);
    p->action_service = std::make_unique<core::ActionService>(
        p->actions, p->fleet, p->operator_state, p->audit, p->clock);
    p->views = std::make_unique<core::AgentViews>(p->fleet, *p->store, p->actions,
                                                  *p->action_service, p->operator_state, p->clock);
  }
  return *p;
}

void PageFloor(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  SQLite::Statement q(*p.raw, "SELECT body FROM t WHERE id > ? ORDER BY id LIMIT ?");
  for (auto _ : state) {
    q.bind(1, "finding-5");
    q.bind(2, kPage);
    std::vector<core::Finding> page;
    while (q.executeStep()) {
      absl::StatusOr<core::Finding> f = core::FindingFromJson(q.getColumn(0).getString());
      if (!f.ok()) {
        state.SkipWithError("decode");
        return;
      }
      page.push_back(*std::move(f));
    }
    q.reset();
    benchmark::DoNotOptimize(core::FindingListToJson(std::span<const core::Finding>(page), {}));
  }
}

void Page(benchmark::State& state, bool second) {
  Populated& p = At(static_cast<int>(state.range(0)));
  core::FindingListQuery query;
  query.limit = kPage;
  if (second) {
    absl::StatusOr<core::FindingPage> first = p.views->FindingListPage(query);
    if (!first.ok() || !first->next_cursor.has_value()) {
      state.SkipWithError("no first page");
      return;
    }
    query.cursor = *first->next_cursor;
  }
  for (auto _ : state) {
    // Views with an empty findings page cache, so each iteration reads, decodes and encodes
    // the page, as the first read after a write does (a repeated read is a cache hit).
    core::AgentViews views(p.fleet, *p.store, p.actions, *p.action_service, p.operator_state,
                           p.clock);
    absl::StatusOr<core::FindingPage> page = views.FindingListPage(query);
    if (!page.ok()) {
      state.SkipWithError(page.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(page->body);
  }
}

void FleetContext(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<std::string> body = p.views->FleetContext({});
    if (!body.ok()) {
      state.SkipWithError(body.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(*body);
  }
}

void Status(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<std::string> body = p.views->OperationsLoopStatus({});
    if (!body.ok()) {
      state.SkipWithError(body.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(*body);
  }
}

void StatusBefore(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  const absl::Time now = p.clock.Now();
  const absl::Time since = now - absl::Hours(24);
  for (auto _ : state) {
    absl::StatusOr<std::vector<core::StoredFinding>> all = p.store->List(core::FindingFilter{});
    if (!all.ok()) {
      state.SkipWithError(all.status().ToString().c_str());
      return;
    }
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
    benchmark::DoNotOptimize(c);
  }
}

// Mean real time per iteration of every run, by name without the round suffix.
class MeanReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) {
        continue;
      }
      std::string name = run.benchmark_name();
      name = name.substr(0, name.find("/round"));
      Sum& s = sums_[name];
      s.seconds += run.real_accumulated_time / static_cast<double>(run.iterations);
      ++s.runs;
    }
  }
  double MeanMs(const std::string& name) const {
    auto it = sums_.find(name);
    return it == sums_.end() || it->second.runs == 0 ? 0
                                                     : 1e3 * it->second.seconds / it->second.runs;
  }

 private:
  struct Sum {
    double seconds = 0;
    int runs = 0;
  };
  std::map<std::string, Sum> sums_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> sizes = {1'000, 10'000, 100'000};
  for (const int n : sizes) {
    for (int round = 1; round <= 2; ++round) {
      const std::string suffix = "/" + std::to_string(n) + "/round" + std::to_string(round);
      benchmark::RegisterBenchmark(("BM_PageFloor" + suffix).c_str(), PageFloor)
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_FindingPage" + suffix).c_str(),
                                   [](benchmark::State& s) { Page(s, false); })
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_FindingPage2" + suffix).c_str(),
                                   [](benchmark::State& s) { Page(s, true); })
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_FleetContext" + suffix).c_str(), FleetContext)
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_Status" + suffix).c_str(), Status)
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_StatusBefore" + suffix).c_str(), StatusBefore)
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  MeanReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nviews at scale (SQLite file database, WAL, NORMAL; means of 2 rounds):\n");
  std::printf("  %8s %12s %22s %22s %22s %22s %14s\n", "findings", "floor ms",
              "page(50) ms (x floor)", "page 2 ms (x floor)", "fleet-context ms (x)",
              "status ms (x floor)", "before ms");
  for (const int n : sizes) {
    const std::string arg = "/" + std::to_string(n);
    const double floor = reporter.MeanMs("BM_PageFloor" + arg);
    const double page = reporter.MeanMs("BM_FindingPage" + arg);
    const double page2 = reporter.MeanMs("BM_FindingPage2" + arg);
    const double fleet = reporter.MeanMs("BM_FleetContext" + arg);
    const double status = reporter.MeanMs("BM_Status" + arg);
    const double before = reporter.MeanMs("BM_StatusBefore" + arg);
    const auto x = [floor](double v) { return floor > 0 ? v / floor : 0.0; };
    std::printf(
        "  %8d %12.3f %13.3f (x%6.1f) %13.3f (x%6.1f) %13.3f (x%6.1f) %13.3f (x%6.1f) %14.3f\n", n,
        floor, page, x(page), page2, x(page2), fleet, x(fleet), status, x(status), before);
  }
  benchmark::Shutdown();
  return 0;
}
