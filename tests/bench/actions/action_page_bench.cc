// Views at scale (issue 29): what one page of the action queue (GET /api/actions) and of the
// session list (GET /api/ai/sessions) costs with N = 1k, 10k and 100k stored actions (half in
// flight, half settled) and N sessions (one owner's among ten) in a real SQLite file database
// (WAL, synchronous=NORMAL). Through core::AgentViews over SqliteActionStore, as the route calls
// it, and SqliteSessionStore::List as the session route calls it:
//   BM_ActionFloor/N    - the baseline: one indexed 50-row read of a raw table that holds N
//                         action-sized rows (the audit JSON), and the parse and write of those 50
//                         (what a page must cost at least);
//   BM_PendingPage/N    - AgentViews::ActionListPage, view=pending, limit=50, read again with
//                         nothing written (the route's expiry sweep is remembered as quiet
//                         after the first read: ActionService::SweepExpired);
//   BM_PendingSwept/N   - the same page from a new ActionService each time, so each read runs
//                         the sweep of the 500 oldest in-flight actions (the first read after
//                         a write);
//   BM_SettledPage/N    - the same, view=settled;
//   BM_SettledPage2/N   - the settled page after it, through the first page's cursor;
//   BM_StorePage/N      - SqliteActionStore::ListPage alone, settled, 51 rows (the index range);
//   BM_OldSettled/N     - what the settled list read before: every settled state's oldest 1,000
//                         records (ListByState per state), sorted newest first, cut to 50;
//   BM_SessionPage/N    - SqliteSessionStore::List of one owner's 51 newest sessions, after the
//                         first page's position (a keyset page).
// Each N runs every benchmark twice in that order (A B A B), so work from other sessions weighs
// on all; the summary prints means as multiples of the floor. No pass/fail: the figures are for
// docs/performance.md ("Action and session lists").
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "contracts/action_store_contract.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_session_store.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/temp_dir.h"

namespace {

using pulse::adapters::storage::Durability;
using pulse::adapters::storage::SqliteActionStore;
using pulse::adapters::storage::SqliteDatabase;
using pulse::adapters::storage::SqliteFindingStore;
using pulse::adapters::storage::SqliteOptions;
using pulse::adapters::storage::SqliteSessionStore;
namespace core = pulse::core;
namespace testing = pulse::testing;
namespace asc = pulse::testing::action_store_contract;

constexpr int kPage = 50;
constexpr int kOwners = 10;

[[noreturn]] void Die(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  std::abort();
}

// Action i: created i seconds after the clock's start, good for a day; odd ones are settled
// (refused before dispatch), updated in an order that is not the creation order.
core::ActionRecord BenchAction(int i, absl::Time start) {
  core::ActionRecord r = asc::NewRecord("bench" + std::to_string(i), false,
                                        start - absl::Hours(30) + absl::Seconds(i));
  r.plan.expires_at = start + absl::Hours(24);
  return r;
}

// One populated data dir per N, built on first use and shared by the benchmarks of that N.
struct Populated {
  explicit Populated(int n) {
    SqliteOptions options;
    options.durability = Durability::kNormal;
    auto opened = SqliteDatabase::Open(dir.File("pulse.db"), options);
    if (!opened.ok()) {
      Die("open", opened.status());
    }
    db = *std::move(opened);
    actions = std::make_unique<SqliteActionStore>(*db);
    findings = std::make_unique<SqliteFindingStore>(*db);
    sessions = std::make_unique<SqliteSessionStore>(*db);
    raw = std::make_unique<SQLite::Database>(dir.File("raw.db"),
                                             SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 5000);
    raw->execAndGet("PRAGMA journal_mode = WAL");
    raw->exec("PRAGMA synchronous = NORMAL");
    raw->exec("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
    SQLite::Statement insert(*raw, "INSERT INTO t (id, body) VALUES (?, ?)");
    raw->exec("BEGIN");
    for (int i = 0; i < n; ++i) {
      const core::ActionRecord r = BenchAction(i, clock.Now());
      absl::StatusOr<core::ActionInsertOutcome> in =
          actions->InsertIfAbsent(r, asc::InitialEvents(r));
      if (!in.ok()) {
        Die("insert", in.status());
      }
      if (i % 2 == 1) {
        const absl::Time at = clock.Now() - absl::Hours(2) + absl::Seconds((i * 7919) % n);
        core::ActionTransition refuse = asc::Move(r, core::ActionState::kFailed, at);
        refuse.result = asc::Result(core::ExecutionStatus::kNotRun, at);
        refuse.result->dispatched = false;
        absl::StatusOr<core::ActionRecord> moved = actions->Transition(refuse);
        if (!moved.ok()) {
          Die("settle", moved.status());
        }
      }
      insert.bind(1, r.id());
      insert.bind(2, core::ActionRecordToJson(r));
      insert.exec();
      insert.reset();
    }
    raw->exec("COMMIT");
    for (int i = 0; i < n; ++i) {
      core::SessionRecord s;
      s.id = "ses_bench" + std::to_string(i);
      s.owner = {"tok_owner" + std::to_string(i % kOwners), "owner"};
      s.transcript = {core::Message::User("how is vm:101?"),
                      core::Message::Assistant("vm:101 is running and healthy.")};
      s.created_at = clock.Now() - absl::Hours(5) + absl::Seconds(i / 3);
      s.updated_at = s.created_at;
      if (absl::StatusOr<core::SessionRecord> made = sessions->Create(s); !made.ok()) {
        Die("session", made.status());
      }
    }
    action_service =
        std::make_unique<core::ActionService>(*actions, fleet, operator_state, audit, clock);
    views = std::make_unique<core::AgentViews>(fleet, *findings, *actions, *action_service,
                                               operator_state, clock);
  }

  testing::TempDir dir{"pulse-bench-action-page"};
  testing::FakeClock clock;
  std::unique_ptr<SqliteDatabase> db;
  std::unique_ptr<SqliteActionStore> actions;
  std::unique_ptr<SqliteFindingStore> findings;
  std::unique_ptr<SqliteSessionStore> sessions;
  std::unique_ptr<SQLite::Database> raw;
  testing::FakeFleet fleet;
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
  }
  return *p;
}

void ActionFloor(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  SQLite::Statement q(*p.raw, "SELECT body FROM t WHERE id > ? ORDER BY id LIMIT ?");
  for (auto _ : state) {
    q.bind(1, "act_bench5");
    q.bind(2, kPage);
    core::JsonWriter out;
    out.StartArray();
    while (q.executeStep()) {
      absl::StatusOr<rapidjson::Document> doc = core::ParseJson(q.getColumn(0).getString());
      if (!doc.ok()) {
        state.SkipWithError("parse");
        return;
      }
      out.Value(*doc);
    }
    out.EndArray();
    q.reset();
    benchmark::DoNotOptimize(out.Take());
  }
}

void ViewPage(benchmark::State& state, core::ActionListView view, bool second) {
  Populated& p = At(static_cast<int>(state.range(0)));
  core::ActionListQuery query;
  query.view = view;
  query.limit = kPage;
  if (second) {
    absl::StatusOr<core::ActionPage> first = p.views->ActionListPage(query);
    if (!first.ok() || !first->next_cursor.has_value()) {
      state.SkipWithError("no first page");
      return;
    }
    query.after = core::DecodeActionCursor(*first->next_cursor)->position;
  }
  for (auto _ : state) {
    absl::StatusOr<core::ActionPage> page = p.views->ActionListPage(query);
    if (!page.ok()) {
      state.SkipWithError(page.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(page->body);
  }
}

// The pending page as the first read after a write sees it: a new ActionService (no quiet
// sweep remembered), so the sweep lists and checks the oldest in-flight actions again.
void PendingSwept(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  core::ActionListQuery query;
  query.view = core::ActionListView::kPending;
  query.limit = kPage;
  for (auto _ : state) {
    core::ActionService service(*p.actions, p.fleet, p.operator_state, p.audit, p.clock);
    core::AgentViews views(p.fleet, *p.findings, *p.actions, service, p.operator_state, p.clock);
    absl::StatusOr<core::ActionPage> page = views.ActionListPage(query);
    if (!page.ok()) {
      state.SkipWithError(page.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(page->body);
  }
}

void StorePage(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  core::ActionPageQuery query;
  query.view = core::ActionPageView::kSettled;
  query.limit = kPage + 1;
  for (auto _ : state) {
    absl::StatusOr<std::vector<core::ActionRecord>> page = p.actions->ListPage(query);
    if (!page.ok()) {
      state.SkipWithError(page.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(page->data());
  }
}

void OldSettled(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::vector<core::ActionRecord> all;
    for (core::ActionState s : core::ActionPageStates(core::ActionPageView::kSettled)) {
      absl::StatusOr<std::vector<core::ActionRecord>> some = p.actions->ListByState({s}, 1000);
      if (!some.ok()) {
        state.SkipWithError(some.status().ToString().c_str());
        return;
      }
      all.insert(all.end(), some->begin(), some->end());
    }
    std::sort(all.begin(), all.end(), [](const core::ActionRecord& a, const core::ActionRecord& b) {
      return a.updated_at != b.updated_at ? a.updated_at > b.updated_at : a.id() < b.id();
    });
    all.resize(std::min<std::size_t>(all.size(), kPage));
    core::JsonWriter out;
    out.StartArray();
    for (const core::ActionRecord& r : all) {
      out.RawValue(core::ActionRecordToJson(r));
    }
    out.EndArray();
    benchmark::DoNotOptimize(out.Take());
  }
}

void SessionPage(benchmark::State& state) {
  Populated& p = At(static_cast<int>(state.range(0)));
  core::SessionListQuery query;
  query.kind = core::SessionKind::kChat;
  query.owner_token_id = "tok_owner3";
  query.limit = kPage + 1;
  absl::StatusOr<std::vector<core::SessionSummary>> first = p.sessions->List(query);
  if (!first.ok() || first->size() < 2) {
    state.SkipWithError("no first session page");
    return;
  }
  query.after = core::SessionPagePosition{(*first)[kPage - 1].updated_at, (*first)[kPage - 1].id};
  for (auto _ : state) {
    absl::StatusOr<std::vector<core::SessionSummary>> page = p.sessions->List(query);
    if (!page.ok()) {
      state.SkipWithError(page.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(page->data());
  }
}

// Mean real time per iteration of every run, by name without the round suffix.
class PageMeanReporter : public benchmark::ConsoleReporter {
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

const char* const kNames[] = {"BM_ActionFloor", "BM_PendingPage",  "BM_PendingSwept",
                              "BM_SettledPage", "BM_SettledPage2", "BM_StorePage",
                              "BM_OldSettled",  "BM_SessionPage"};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {1'000, 10'000, 100'000};
  if (const char* only = std::getenv("PULSE_BENCH_ACTION_SIZES"); only != nullptr) {
    sizes = {std::atoi(only)};  // one size, for a quick look
  }
  for (const int n : sizes) {
    for (int round = 1; round <= 2; ++round) {
      const std::string suffix = "/" + std::to_string(n) + "/round" + std::to_string(round);
      const auto add = [&](const char* name, auto fn) {
        benchmark::RegisterBenchmark((std::string(name) + suffix).c_str(), fn)
            ->Arg(n)
            ->Unit(benchmark::kMillisecond);
      };
      add(kNames[0], ActionFloor);
      add(kNames[1],
          [](benchmark::State& s) { ViewPage(s, core::ActionListView::kPending, false); });
      add(kNames[2], PendingSwept);
      add(kNames[3],
          [](benchmark::State& s) { ViewPage(s, core::ActionListView::kSettled, false); });
      add(kNames[4],
          [](benchmark::State& s) { ViewPage(s, core::ActionListView::kSettled, true); });
      add(kNames[5], StorePage);
      add(kNames[6], OldSettled);
      add(kNames[7], SessionPage);
    }
  }
  benchmark::Initialize(&argc, argv);
  PageMeanReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf(
      "\naction and session pages (SQLite file database, WAL, NORMAL; means of 2 rounds;"
      " ms, x floor):\n  %8s",
      "N");
  for (const char* name : kNames) {
    std::printf(" %20s", name + 3);
  }
  std::printf("\n");
  for (const int n : sizes) {
    const std::string arg = "/" + std::to_string(n);
    const double floor = reporter.MeanMs(std::string(kNames[0]) + arg);
    std::printf("  %8d", n);
    for (const char* name : kNames) {
      const double v = reporter.MeanMs(name + arg);
      std::printf(" %10.3f (x%6.1f)", v, floor > 0 ? v / floor : 0.0);
    }
    std::printf("\n");
  }
  benchmark::Shutdown();
  return 0;
}
