// Bulk resolution (issue 29): what Patrol's end-of-run reconciliation costs when it resolves
// every stored finding by absence, in a real SQLite file database at the server's durability
// (WAL, synchronous=FULL: each commit is on stable storage before it returns).
//   BM_ResolveBatched/N  - FindingsService::ReconcileStale as it is: a read per finding, the
//                          resolves written kStaleResolveBatch to a transaction (PutBatch);
//   BM_ResolveOneByOne/N - the same reconciliation over a store whose PutBatch writes each
//                          finding in its own transaction (Put): the baseline, what it cost
//                          before batching.
// Both run at 2,000 findings, twice in alternation (A B A B), and the summary prints each one's
// findings/s and the ratio; the batched one also runs at 100,000 findings (the target:
// at least 20,000/s there). Every iteration starts from a copy of the same populated file and
// checks that every finding was resolved. No pass/fail: the figures are for
// docs/performance.md ("Bulk resolution").
#include <SQLiteCpp/Database.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/findings/run_ledger.h"
#include "pulse/core/model/finding.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "pulse/testing/temp_dir.h"

namespace {

using pulse::adapters::storage::SqliteDatabase;
using pulse::adapters::storage::SqliteFindingStore;
namespace core = pulse::core;
namespace testing = pulse::testing;

constexpr int kSmall = 2'000;
constexpr int kLarge = 100'000;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "bench_bulk_resolve: %s\n", what.c_str());
  std::abort();
}

core::Finding StaleFinding(int i, absl::Time now) {
  core::Finding f;
  f.id = "finding-" + std::to_string(100000 + i);
  f.key = "memory-high";
  f.severity = i % 2 == 0 ? core::Severity::kWarning : core::Severity::kCritical;
  f.category = i % 3 == 0 ? core::Category::kCapacity : core::Category::kPerformance;
  f.resource_id = "vm:" + std::to_string(100000 + i);
  f.resource_name = "bench-vm-" + std::to_string(i);
  f.resource_type = "vm";
  f.node = "pve" + std::to_string(1 + i % 3);
  f.title = "Memory pressure on bench-vm-" + std::to_string(i);
  f.description = "Memory use has stayed above 90 % for the last six samples.";
  f.recommendation = "Give the VM more memory or move its heaviest service elsewhere.";
  f.evidence = "memory_pct 93 over 30 minutes";
  f.detected_at = now - absl::Hours(2) - absl::Seconds(i % 3'600);
  f.last_seen_at = now - absl::Hours(1);
  f.times_raised = 1;
  core::LifecycleEvent detected;
  detected.at = f.detected_at;
  detected.type = core::LifecycleEventType::kDetected;
  detected.message = "Detected by patrol";
  f.lifecycle.push_back(detected);
  return f;
}

// The baseline: PutBatch as a Put (one transaction, one sync) per write.
class OneByOneStore final : public core::FindingStore {
 public:
  explicit OneByOneStore(core::FindingStore& inner) : inner_(inner) {}
  absl::StatusOr<core::StoredFinding> Get(std::string_view id) const override {
    return inner_.Get(id);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> GetBatch(
      const std::vector<std::string>& ids) const override {
    return inner_.GetBatch(ids);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> List(
      const core::FindingFilter& filter) const override {
    return inner_.List(filter);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> ListPage(
      const core::FindingPageQuery& query) const override {
    return inner_.ListPage(query);
  }
  absl::StatusOr<std::vector<core::ActiveFindingCounts>> CountActiveByResource(
      absl::Time now, const std::vector<std::string>& resource_ids) const override {
    return inner_.CountActiveByResource(now, resource_ids);
  }
  absl::StatusOr<std::vector<core::ActiveFindingKey>> ListActiveKeys(
      absl::Time now) const override {
    return inner_.ListActiveKeys(now);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> ListAwaitingFixOutcome() const override {
    return inner_.ListAwaitingFixOutcome();
  }
  absl::StatusOr<core::PatrolFindingCounts> CountPatrolFindings(absl::Time since,
                                                                absl::Time now) const override {
    return inner_.CountPatrolFindings(since, now);
  }

  absl::StatusOr<std::int64_t> Put(const core::Finding& finding,
                                   std::int64_t expected_version) override {
    return inner_.Put(finding, expected_version);
  }
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> PutBatch(
      const std::vector<core::FindingWrite>& writes) override {
    std::vector<absl::StatusOr<std::int64_t>> out;
    out.reserve(writes.size());
    for (const core::FindingWrite& w : writes) {
      out.push_back(inner_.Put(w.finding, w.expected_version));
    }
    return out;
  }
  absl::StatusOr<std::vector<core::SuppressionRule>> ListSuppressionRules() const override {
    return inner_.ListSuppressionRules();
  }
  absl::Status PutSuppressionRule(const core::SuppressionRule& rule) override {
    return inner_.PutSuppressionRule(rule);
  }
  absl::Status DeleteSuppressionRule(std::string_view id) override {
    return inner_.DeleteSuppressionRule(id);
  }

 private:
  core::FindingStore& inner_;
};

// A populated database file per N, written once (in batches) and copied for every iteration.
struct Template {
  explicit Template(int n) : count(n) {
    path = dir.File("template.db");
    {
      auto db = SqliteDatabase::Open(path);
      if (!db.ok()) {
        Die("open: " + db.status().ToString());
      }
      SqliteFindingStore store(**db);
      std::vector<core::FindingWrite> writes;
      for (int i = 0; i < n; ++i) {
        writes.push_back({StaleFinding(i, clock.Now()), 0});
        if (writes.size() == 5'000 || i == n - 1) {
          auto put = store.PutBatch(writes);
          if (!put.ok()) {
            Die("populate: " + put.status().ToString());
          }
          writes.clear();
        }
      }
    }
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");  // the whole database in the main file
  }

  testing::TempDir dir{"pulse-bench-bulk"};
  testing::FakeClock clock;
  std::string path;
  int count;
};

Template& TemplateOf(int n) {
  static std::map<int, std::unique_ptr<Template>> templates;
  std::unique_ptr<Template>& t = templates[n];
  if (t == nullptr) {
    t = std::make_unique<Template>(n);
  }
  return *t;
}

void Resolve(benchmark::State& state, bool batched) {
  Template& t = TemplateOf(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    const std::string copy = t.dir.File("run.db");
    std::filesystem::remove(copy);
    std::filesystem::remove(copy + "-wal");
    std::filesystem::remove(copy + "-shm");
    std::filesystem::copy_file(t.path, copy);
    auto db = SqliteDatabase::Open(copy);
    if (!db.ok()) {
      Die("open copy: " + db.status().ToString());
    }
    SqliteFindingStore sqlite(**db);
    OneByOneStore one_by_one(sqlite);
    core::FindingStore& store = batched ? static_cast<core::FindingStore&>(sqlite) : one_by_one;
    testing::FakeFindingVerifier verifier;
    testing::InMemoryMetricsHistory metrics;
    core::FindingsService service(store, t.clock, verifier, metrics);
    core::FindingRunLedger ledger;
    for (int i = 0; i < t.count; ++i) {
      ledger.AddSeeded("finding-" + std::to_string(100000 + i));
    }
    state.ResumeTiming();
    auto result = service.ReconcileStale(ledger);
    state.PauseTiming();
    if (!result.ok() || result->resolved.size() != static_cast<std::size_t>(t.count)) {
      Die("reconcile: " + (result.ok() ? std::to_string(result->resolved.size()) + " resolved"
                                       : result.status().ToString()));
    }
    state.ResumeTiming();
  }
  state.counters["findings/s"] =
      benchmark::Counter(static_cast<double>(t.count) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

// Mean findings/s of every run, by name without the round suffix.
class RateReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto it = run.counters.find("findings/s");
      if (run.run_type != Run::RT_Iteration || it == run.counters.end()) {
        continue;
      }
      std::string name = run.benchmark_name();
      name = name.substr(0, name.find("/round"));
      Sum& s = sums_[name];
      s.rate += it->second.value;
      ++s.runs;
    }
  }
  double MeanRate(const std::string& name) const {
    auto it = sums_.find(name);
    return it == sums_.end() || it->second.runs == 0 ? 0 : it->second.rate / it->second.runs;
  }

 private:
  struct Sum {
    double rate = 0;
    int runs = 0;
  };
  std::map<std::string, Sum> sums_;
};

}  // namespace

int main(int argc, char** argv) {
  for (int round = 1; round <= 2; ++round) {
    const std::string suffix = "/" + std::to_string(kSmall) + "/round" + std::to_string(round);
    benchmark::RegisterBenchmark(("BM_ResolveBatched" + suffix).c_str(),
                                 [](benchmark::State& s) { Resolve(s, true); })
        ->Arg(kSmall)
        ->Iterations(3)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ResolveOneByOne" + suffix).c_str(),
                                 [](benchmark::State& s) { Resolve(s, false); })
        ->Arg(kSmall)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark(("BM_ResolveBatched/" + std::to_string(kLarge) + "/round1").c_str(),
                               [](benchmark::State& s) { Resolve(s, true); })
      ->Arg(kLarge)
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double batched = reporter.MeanRate("BM_ResolveBatched/" + std::to_string(kSmall));
  const double one_by_one = reporter.MeanRate("BM_ResolveOneByOne/" + std::to_string(kSmall));
  const double large = reporter.MeanRate("BM_ResolveBatched/" + std::to_string(kLarge));
  std::printf("\nbulk resolution (SQLite file database, WAL, FULL; means of the rounds):\n");
  std::printf("  %d findings: batched %.0f/s, one transaction each %.0f/s (x%.1f)\n", kSmall,
              batched, one_by_one, one_by_one > 0 ? batched / one_by_one : 0.0);
  std::printf("  %d findings: batched %.0f/s\n", kLarge, large);
  benchmark::Shutdown();
  return 0;
}
