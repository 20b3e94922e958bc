// Storage throughput on a file database: finding upserts/s and action transitions/s through
// the SQLite adapters, against raw SQLite single-row insert transactions with the same
// durability settings (WAL, synchronous=FULL), measured in the same run on the same file
// system. The summary prints each adapter's rate as a fraction of the raw rate, and the cost of
// synchronous=FULL (raw FULL vs raw NORMAL). Every commit waits for the disk, so rates use wall
// time. The database lives in a fresh directory under $PULSE_BENCH_DIR (default /tmp).
// No pass/fail: numbers are for docs/storage.md and regressions spotted by a human.
//
// At scale (issue 13), with synchronous=NORMAL and N = 10k or 100k findings already stored
// (each on its own resource, written through SqliteFindingStore::Put before the timing; the
// same database serves every benchmark of one N):
//   BM_RawSqliteInsertAt/N      — the baseline: a single-row insert transaction into a raw
//                                 table that already holds N finding-sized rows;
//   BM_FindingPutAt/N           — SqliteFindingStore::Put of an existing finding at its version;
//   BM_FindingReportHeartbeat/N — FindingsService::Report of an active finding again (the
//                                 dedupe by id: Get, the heartbeat mutation, Put);
//   BM_FindingReportNew/N       — Report of a finding with a new id on a new resource: the
//                                 dedupe against equivalent active siblings (only the findings
//                                 on a related resource, FindingFilter::related_to), then the
//                                 create.
// These run a fixed number of iterations, so the N-row setup happens once per N.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/finding_json.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/action_transition.h"
#include "pulse/core/model/finding.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/in_memory_metrics_history.h"

namespace {

using pulse::adapters::storage::Durability;
using pulse::adapters::storage::SqliteActionStore;
using pulse::adapters::storage::SqliteDatabase;
using pulse::adapters::storage::SqliteFindingStore;
using pulse::adapters::storage::SqliteOptions;
namespace core = pulse::core;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

class BenchDir {
 public:
  BenchDir() {
    const char* base = getenv("PULSE_BENCH_DIR");
    std::string templ = std::string(base != nullptr ? base : "/tmp") + "/pulse-bench-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = templ;
  }
  ~BenchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::unique_ptr<SqliteDatabase> OpenOrDie(const std::string& path, Durability durability) {
  SqliteOptions options;
  options.durability = durability;
  auto db = SqliteDatabase::Open(path, options);
  if (!db.ok()) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), db.status().ToString().c_str());
    std::abort();
  }
  return *std::move(db);
}

core::Finding BenchFinding(int i) {
  core::Finding f;
  f.id = "finding-" + std::to_string(i);
  f.key = "disk-high";
  f.severity = core::Severity::kWarning;
  f.category = core::Category::kCapacity;
  f.resource_id = "storage:pve1:pool-" + std::to_string(i);
  f.resource_name = "pool-" + std::to_string(i);
  f.resource_type = "storage";
  f.node = "pve1";
  f.title = "Pool at 91% and filling";
  f.description = "Usage grew from 80% to 91% in two days; at this rate it is full in 2 days.";
  f.recommendation = "Prune snapshots or extend the pool.";
  f.evidence = "zpool list: 91% CAP";
  f.source = "patrol";
  f.detected_at = kT0;
  f.last_seen_at = kT0;
  f.times_raised = 1;
  return f;
}

// The raw baseline: one INSERT of a finding-sized JSON row per transaction, same pragmas.
void RawInsert(benchmark::State& state, bool full) {
  BenchDir dir;
  SQLite::Database db(dir.File("raw.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 5000);
  db.execAndGet("PRAGMA journal_mode = WAL");
  db.exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  const std::string body = core::FindingToJson(BenchFinding(0));
  SQLite::Statement insert(db, "INSERT INTO t (id, body) VALUES (?, ?)");
  std::int64_t i = 0;
  for (auto _ : state) {
    db.exec("BEGIN IMMEDIATE");
    insert.bind(1, "row-" + std::to_string(i++));
    insert.bind(2, body);
    insert.exec();
    insert.reset();
    db.exec("COMMIT");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_RawSqliteInsert_Full(benchmark::State& state) { RawInsert(state, true); }
void BM_RawSqliteInsert_Normal(benchmark::State& state) { RawInsert(state, false); }

// Finding upserts: each iteration re-writes one of 256 findings at its current version (the
// patrol heartbeat path: a conditional UPDATE with the JSON round-trip check).
void FindingUpsert(benchmark::State& state, Durability durability) {
  BenchDir dir;
  auto db = OpenOrDie(dir.File("pulse.db"), durability);
  SqliteFindingStore store(*db);
  constexpr int kFindings = 256;
  std::vector<core::Finding> findings;
  std::vector<std::int64_t> versions;
  for (int i = 0; i < kFindings; ++i) {
    findings.push_back(BenchFinding(i));
    versions.push_back(*store.Put(findings.back(), 0));
  }
  std::size_t next = 0;
  for (auto _ : state) {
    core::Finding& f = findings[next];
    f.last_seen_at += absl::Minutes(5);
    ++f.times_raised;
    auto version = store.Put(f, versions[next]);
    if (!version.ok()) {
      state.SkipWithError(version.status().ToString().c_str());
      break;
    }
    versions[next] = *version;
    next = (next + 1) % findings.size();
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FindingUpsert_Full(benchmark::State& state) { FindingUpsert(state, Durability::kFull); }
void BM_FindingUpsert_Normal(benchmark::State& state) { FindingUpsert(state, Durability::kNormal); }

core::ActionRecord BenchAction(int i) {
  core::ActionRecord r;
  r.request.request_id = "req-" + std::to_string(i);
  r.request.resource_id = "vm:101";
  r.request.capability_name = "restart";
  r.request.params_json = R"({"mode":"graceful"})";
  r.request.reason = "kernel patch";
  r.request.actor = {core::ActorKind::kAgent, "assistant"};
  core::ActionPlan& p = r.plan;
  p.action_id = "act_" + std::to_string(i);
  p.request_id = r.request.request_id;
  p.resource_id = r.request.resource_id;
  p.capability_name = r.request.capability_name;
  p.params_json = r.request.params_json;
  p.allowed = true;
  p.requires_approval = false;
  p.approval_policy = core::ApprovalLevel::kNone;
  p.approval_requirement = {core::ApprovalLevel::kNone, 1, false};
  p.planned_at = kT0;
  p.expires_at = kT0 + absl::Minutes(5);
  p.resource_version = "resource:sha256:0123456789abcdef01234567";
  p.policy_version = "policy:sha256:0123456789abcdef01234567";
  p.plan_hash = "sha256:" + std::string(64, 'a');
  p.preflight.target = "vm:101";
  p.preflight.intended_change = "Restart vm:101";
  r.created_at = kT0;
  r.updated_at = kT0;
  r.state = core::ActionState::kPlanned;
  return r;
}

core::ActionTransition Step(const core::ActionRecord& r, core::ActionState to) {
  core::ActionTransition t;
  t.action_id = r.id();
  t.expected_states = {r.state};
  t.expected_plan_hash = r.plan.plan_hash;
  t.expected_decision_revision = r.decision_revision;
  t.new_state = to;
  t.new_decision_revision = r.decision_revision;
  t.updated_at = kT0 + absl::Seconds(1);
  core::ActionLifecycleEvent e;
  e.action_id = r.id();
  e.at = t.updated_at;
  e.state = to;
  e.message = "moved";
  t.events = {e};
  if (to == core::ActionState::kCompleted) {
    core::ActionExecutionResult result;
    result.execution.status = core::ExecutionStatus::kSucceeded;
    result.verification.status = core::VerificationStatus::kConfirmed;
    result.verification.evidence_class = core::EvidenceClass::kIndependent;
    result.dispatched = true;
    result.executor_id = "agent:pve1";
    result.finished_at = t.updated_at;
    t.result = result;
  }
  return t;
}

// Action transitions: planned -> executing (with its dispatch record) and executing ->
// completed (with its result), alternately; new actions are inserted outside the timing.
void ActionTransition(benchmark::State& state, Durability durability) {
  BenchDir dir;
  auto db = OpenOrDie(dir.File("pulse.db"), durability);
  SqliteActionStore store(*db);
  int created = 0;
  std::vector<core::ActionRecord> live;
  for (auto _ : state) {
    if (live.empty()) {
      state.PauseTiming();
      for (int i = 0; i < 64; ++i) {
        core::ActionRecord r = BenchAction(created++);
        core::ActionLifecycleEvent e;
        e.action_id = r.id();
        e.at = kT0;
        e.state = core::ActionState::kPlanned;
        e.message = "Action plan created.";
        auto inserted = store.InsertIfAbsent(r, {e});
        if (!inserted.ok()) {
          state.SkipWithError(inserted.status().ToString().c_str());
          return;
        }
        live.push_back(inserted->record);
      }
      state.ResumeTiming();
    }
    core::ActionRecord& r = live.back();
    const core::ActionState to = r.state == core::ActionState::kPlanned
                                     ? core::ActionState::kExecuting
                                     : core::ActionState::kCompleted;
    auto moved = store.Transition(Step(r, to));
    if (!moved.ok()) {
      state.SkipWithError(moved.status().ToString().c_str());
      break;
    }
    if (to == core::ActionState::kCompleted) {
      live.pop_back();
    } else {
      r = *moved;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ActionTransition_Full(benchmark::State& state) {
  ActionTransition(state, Durability::kFull);
}
void BM_ActionTransition_Normal(benchmark::State& state) {
  ActionTransition(state, Durability::kNormal);
}

// ---- at scale: N findings already stored ----

core::FindingReport ScaleReport(int i) {
  core::FindingReport report;
  report.resource_id = "vm:" + std::to_string(100000 + i);
  report.resource_name = "bench-vm-" + std::to_string(i);
  report.resource_type = "vm";
  report.node = "pve" + std::to_string(1 + i % 3);
  report.category = core::Category::kPerformance;
  report.severity = core::Severity::kWarning;
  report.key = "memory-high";
  report.title = "Memory pressure on bench-vm-" + std::to_string(i);
  report.description = "Memory use has stayed above 90 % for the last six samples.";
  report.recommendation = "Give the VM more memory or move its heaviest service elsewhere.";
  report.evidence = "memory_pct 93 over 30 minutes";
  return report;
}

// The finding FindingsService::Report(ScaleReport(i)) would have created.
core::Finding ScaleFinding(int i) {
  const core::FindingReport r = ScaleReport(i);
  core::Finding f;
  f.key = core::NormalizeFindingKey(r.key);
  f.id = core::FindingIdFor(r.resource_id, r.category, f.key);
  f.severity = r.severity;
  f.category = r.category;
  f.resource_id = r.resource_id;
  f.resource_name = r.resource_name;
  f.resource_type = r.resource_type;
  f.node = r.node;
  f.title = r.title;
  f.description = r.description;
  f.recommendation = r.recommendation;
  f.evidence = r.evidence;
  f.source = r.source;
  f.detected_at = kT0;
  f.last_seen_at = kT0;
  f.times_raised = 1;
  return f;
}

// A file database holding `n` findings and a raw table of `n` rows, built once per n.
struct Populated {
  explicit Populated(int n) : count(n) {
    db = OpenOrDie(dir.File("pulse.db"), Durability::kNormal);
    store = std::make_unique<SqliteFindingStore>(*db);
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<std::int64_t> v = store->Put(ScaleFinding(i), 0);
      if (!v.ok()) {
        std::fprintf(stderr, "populate: %s\n", v.status().ToString().c_str());
        std::abort();
      }
    }
    service = std::make_unique<core::FindingsService>(*store, clock, verifier, metrics);
    raw = std::make_unique<SQLite::Database>(dir.File("raw.db"),
                                             SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 5000);
    raw->execAndGet("PRAGMA journal_mode = WAL");
    raw->exec("PRAGMA synchronous = NORMAL");
    raw->exec("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
    const std::string body = core::FindingToJson(ScaleFinding(0));
    SQLite::Statement insert(*raw, "INSERT INTO t (id, body) VALUES (?, ?)");
    raw->exec("BEGIN");
    for (int i = 0; i < n; ++i) {
      insert.bind(1, "seed-" + std::to_string(i));
      insert.bind(2, body);
      insert.exec();
      insert.reset();
    }
    raw->exec("COMMIT");
  }

  int count;
  BenchDir dir;
  std::unique_ptr<SqliteDatabase> db;
  std::unique_ptr<SqliteFindingStore> store;
  pulse::testing::FakeClock clock;
  pulse::testing::FakeFindingVerifier verifier;
  pulse::testing::InMemoryMetricsHistory metrics;
  std::unique_ptr<core::FindingsService> service;
  std::unique_ptr<SQLite::Database> raw;
  int next_new = 0;               // new findings reported so far (on resources past `count`)
  std::int64_t next_raw_row = 0;  // rows inserted into the raw table by the baseline
};

// Owns the populated databases for the life of main(); removed before it returns.
std::map<int, std::unique_ptr<Populated>>& PopulatedCache() {
  static std::map<int, std::unique_ptr<Populated>> cache;
  return cache;
}

Populated& PopulatedAt(int n) {
  std::unique_ptr<Populated>& slot = PopulatedCache()[n];
  if (slot == nullptr) {
    std::fprintf(stderr, "storage_bench: storing %d findings (setup, not timed)...\n", n);
    slot = std::make_unique<Populated>(n);
  }
  return *slot;
}

void BM_RawSqliteInsertAt(benchmark::State& state) {
  Populated& p = PopulatedAt(static_cast<int>(state.range(0)));
  const std::string body = core::FindingToJson(ScaleFinding(0));
  SQLite::Statement insert(*p.raw, "INSERT INTO t (id, body) VALUES (?, ?)");
  for (auto _ : state) {
    p.raw->exec("BEGIN IMMEDIATE");
    insert.bind(1, "row-" + std::to_string(p.next_raw_row++));
    insert.bind(2, body);
    insert.exec();
    insert.reset();
    p.raw->exec("COMMIT");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FindingPutAt(benchmark::State& state) {
  Populated& p = PopulatedAt(static_cast<int>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const int index = (i++ * 7919) % p.count;
    absl::StatusOr<core::StoredFinding> stored = p.store->Get(ScaleFinding(index).id);
    if (!stored.ok()) {
      state.SkipWithError(stored.status().ToString().c_str());
      break;
    }
    core::Finding f = stored->finding;
    f.last_seen_at += absl::Minutes(5);
    ++f.times_raised;
    state.ResumeTiming();
    absl::StatusOr<std::int64_t> version = p.store->Put(f, stored->version);
    if (!version.ok()) {
      state.SkipWithError(version.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FindingReportHeartbeat(benchmark::State& state) {
  Populated& p = PopulatedAt(static_cast<int>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    const int index = (i++ * 7919) % p.count;
    absl::StatusOr<core::ReportOutcome> out = p.service->Report(ScaleReport(index));
    if (!out.ok() || out->disposition != core::ReportDisposition::kHeartbeat) {
      state.SkipWithError(out.ok() ? "not a heartbeat" : out.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_FindingReportNew(benchmark::State& state) {
  Populated& p = PopulatedAt(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<core::ReportOutcome> out =
        p.service->Report(ScaleReport(p.count + p.next_new++));
    if (!out.ok() || out->disposition != core::ReportDisposition::kCreated) {
      state.SkipWithError(out.ok() ? "not created" : out.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_RawSqliteInsert_Full)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingUpsert_Full)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ActionTransition_Full)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawSqliteInsert_Normal)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingUpsert_Normal)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ActionTransition_Normal)->UseRealTime()->Unit(benchmark::kMicrosecond);
// Fixed iterations: Google Benchmark calls a function once per run when the count is given,
// so the populated database is not rebuilt while it searches for an iteration count.
BENCHMARK(BM_RawSqliteInsertAt)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Iterations(3000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingPutAt)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Iterations(2000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingReportHeartbeat)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Iterations(2000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingReportNew)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Iterations(2000)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Prints the console report and remembers each benchmark's items/s for the summary.
class RateReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto it = run.counters.find("items_per_second");
      if (run.run_type == Run::RT_Iteration && it != run.counters.end()) {
        rates_[run.benchmark_name()] = it->second.value;
      }
    }
  }
  double Rate(const std::string& name) const {
    auto it = rates_.find(name + "/real_time");
    return it == rates_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> rates_;
};

void PrintSummary(const RateReporter& r) {
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double raw_full = r.Rate("BM_RawSqliteInsert_Full");
  const double raw_normal = r.Rate("BM_RawSqliteInsert_Normal");
  const double finding_full = r.Rate("BM_FindingUpsert_Full");
  const double finding_normal = r.Rate("BM_FindingUpsert_Normal");
  const double action_full = r.Rate("BM_ActionTransition_Full");
  const double action_normal = r.Rate("BM_ActionTransition_Normal");
  std::printf("\nstorage summary (file database, WAL, same run):\n");
  std::printf(
      "  synchronous=FULL   raw insert %9.0f/s | finding upsert %9.0f/s (%.2f of raw) | "
      "action transition %9.0f/s (%.2f of raw)\n",
      raw_full, finding_full, ratio(finding_full, raw_full), action_full,
      ratio(action_full, raw_full));
  std::printf(
      "  synchronous=NORMAL raw insert %9.0f/s | finding upsert %9.0f/s (%.2f of raw) | "
      "action transition %9.0f/s (%.2f of raw)\n",
      raw_normal, finding_normal, ratio(finding_normal, raw_normal), action_normal,
      ratio(action_normal, raw_normal));
  std::printf("  cost of FULL over NORMAL: raw x%.2f slower, findings x%.2f, actions x%.2f\n",
              ratio(raw_normal, raw_full), ratio(finding_normal, finding_full),
              ratio(action_normal, action_full));
  for (const int n : {10'000, 100'000}) {
    const std::string arg = "/" + std::to_string(n) + "/iterations:";
    const double raw = r.Rate("BM_RawSqliteInsertAt" + arg + "3000");
    const double put = r.Rate("BM_FindingPutAt" + arg + "2000");
    const double beat = r.Rate("BM_FindingReportHeartbeat" + arg + "2000");
    const double fresh = r.Rate("BM_FindingReportNew" + arg + "2000");
    if (raw <= 0) {
      continue;
    }
    std::printf(
        "  %6d stored, NORMAL: raw insert %8.0f/s | store Put %8.0f/s (%.2f of raw) | "
        "Report heartbeat %8.0f/s (%.2f of raw) | Report new id %8.0f/s (%.2f of raw)\n",
        n, raw, put, ratio(put, raw), beat, ratio(beat, raw), fresh, ratio(fresh, raw));
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(reporter);
  PopulatedCache().clear();
  benchmark::Shutdown();
  return 0;
}
