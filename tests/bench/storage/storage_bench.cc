// Storage throughput on a file database: finding upserts/s and action transitions/s through
// the SQLite adapters, against raw SQLite single-row insert transactions with the same
// durability settings (WAL, synchronous=FULL), measured in the same run on the same file
// system. The summary prints each adapter's rate as a fraction of the raw rate, and the cost of
// synchronous=FULL (raw FULL vs raw NORMAL). Every commit waits for the disk, so rates use wall
// time. The database lives in a fresh directory under $PULSE_BENCH_DIR (default /tmp).
// No pass/fail: numbers are for docs/storage.md and regressions spotted by a human.
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
#include "pulse/core/actions/action_transition.h"
#include "pulse/core/findings/finding.h"
#include "pulse/core/findings/finding_json.h"

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

BENCHMARK(BM_RawSqliteInsert_Full)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingUpsert_Full)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ActionTransition_Full)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RawSqliteInsert_Normal)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FindingUpsert_Normal)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ActionTransition_Normal)->UseRealTime()->Unit(benchmark::kMicrosecond);

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
  benchmark::Shutdown();
  return 0;
}
