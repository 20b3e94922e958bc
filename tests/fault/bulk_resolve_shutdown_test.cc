// SIGTERM while Patrol's end-of-run reconciliation resolves a mass of stale findings (issue
// 29): pulse-server exits 0 within a second, since the reconciliation checks its cancellation
// between two batches of kStaleResolveBatch, and nothing is half-written: the file passes
// integrity_check, every finding is either resolved whole (version 2, resolved, its last event
// auto_resolved) or untouched (version 1, active), and the resolved ones are whole batches. A
// restarted server's next run resolves the rest.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "fault_support.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/core/findings/finding_json.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/finding.h"

namespace pulse::testing::fault {
namespace {

using e2e::MintToken;
using e2e::Reply;

constexpr bool kSanitized = e2e::kSanitizedBuild;

// The figure; a sanitized build (ASan+UBSan at -O0, about eight times slower here) seeds
// 4,000 (8 batches): every pass over the findings (start-up fix reconciliation, triage, the
// reconciliation) decodes each one, and 10,000 took 97-123 s of the case's 120 s here.
constexpr int kStale = kSanitized ? 4'000 : 100'000;
// The acceptance bound on the exit; ASan+UBSan at -O0 writes a batch several times slower.
constexpr auto kExitBound = kSanitized ? std::chrono::seconds(5) : std::chrono::seconds(1);

// Stale performance and capacity findings on the demo fleet's VMs (so a full Patrol run seeds
// them into its ledger), detected two hours ago, each with its own key, written straight into
// the data dir's database before the server starts.
void SeedStale(const std::string& data_dir) {
  auto db = adapters::storage::SqliteDatabase::Open(DatabasePath(data_dir));
  REQUIRE(db.ok());
  adapters::storage::SqliteFindingStore store(**db);
  const absl::Time detected = absl::Now() - absl::Hours(2);
  std::vector<core::FindingWrite> writes;
  for (int i = 0; i < kStale; ++i) {
    core::Finding f;
    f.id = "bulk-" + std::to_string(1'000'000 + i);
    f.key = "bulk-" + std::to_string(i);
    f.severity = core::Severity::kWarning;
    f.category = i % 2 == 0 ? core::Category::kPerformance : core::Category::kCapacity;
    f.resource_id = "vm:" + std::to_string(101 + i % 10);
    f.resource_name = "vm-" + std::to_string(101 + i % 10);
    f.resource_type = "vm";
    f.title = "Synthetic pressure " + std::to_string(i);
    f.description = "A finding no Patrol check reports again, so the run resolves it as stale.";
    f.detected_at = detected;
    f.last_seen_at = detected;
    f.times_raised = 1;
    core::LifecycleEvent event;
    event.at = detected;
    event.type = core::LifecycleEventType::kDetected;
    f.lifecycle.push_back(event);
    writes.push_back({std::move(f), 0});
    if (writes.size() == 5'000 || i == kStale - 1) {
      auto put = store.PutBatch(writes);
      REQUIRE(put.ok());
      for (const auto& one : *put) {
        REQUIRE(one.ok());
      }
      writes.clear();
    }
  }
}

std::int64_t ResolvedBulk(const std::string& data_dir) {
  return CountRows(data_dir,
                   "SELECT count(*) FROM findings WHERE id LIKE 'bulk-%' AND is_resolved = 1");
}

// Open findings, counted from the partial index findings_open_page alone (a few MB), where
// ResolvedBulk reads every row (100 MB at 100,000 findings): the poll that waits for the first
// batch must not take the CPU the server's reconciliation needs.
std::int64_t OpenFindings(const std::string& data_dir) {
  return CountRows(data_dir, "SELECT count(*) FROM findings WHERE is_open = 1");
}

TEST_CASE("SIGTERM during a bulk stale resolve exits at once and leaves only whole batches",
          "[fault][server]") {
  e2e::TempDir dir;
  const std::string token = MintToken(dir.path(), "ai:execute,monitoring:read", "patrol");
  SeedStale(dir.path());
  INFO(kStale << " stale findings");

  std::int64_t resolved_at_stop = 0;
  {
    e2e::ServerProcess server(dir.path());
    const Reply started = e2e::Send(server.port(), "POST", "/api/ai/patrol/run", token, "{}");
    INFO(started.body);
    REQUIRE((started.status == 200 || started.status == 409));  // 409: a scheduled run is on
    // Stop as soon as the first batch is durable: the reconciliation is under way. The run's
    // own new findings on the demo fleet (a few dozen) raise the open count; a batch of
    // kStaleResolveBatch resolves takes it below where it started.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (OpenFindings(dir.path()) >= kStale && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(ResolvedBulk(dir.path()) > 0);
    const auto stopping = std::chrono::steady_clock::now();
    CHECK(server.Stop() == "exited 0");
    const auto took = std::chrono::steady_clock::now() - stopping;
    INFO(server.Log());
    CHECK(took < kExitBound);
    resolved_at_stop = ResolvedBulk(dir.path());
  }

  CHECK(IntegrityCheck(dir.path()) == "ok");
  INFO(resolved_at_stop << " resolved when the server stopped");
  CHECK(resolved_at_stop < kStale);  // it stopped part-way
  CHECK(resolved_at_stop % static_cast<std::int64_t>(core::kStaleResolveBatch) == 0);
  CHECK(CountRows(dir.path(),
                  "SELECT count(*) FROM findings WHERE id LIKE 'bulk-%' AND "
                  "((is_resolved = 1 AND version != 2) OR (is_resolved = 0 AND version != 1))") ==
        0);
  // A sample of each side decodes, resolved whole or untouched.
  for (const std::string& json :
       TextRows(dir.path(),
                "SELECT record_json FROM findings WHERE id LIKE 'bulk-%' AND is_resolved = 1 "
                "ORDER BY random() LIMIT 20")) {
    absl::StatusOr<core::Finding> f = core::FindingFromJson(json);
    REQUIRE(f.ok());
    CHECK(f->auto_resolved);
    CHECK(f->resolve_reason == core::kStaleResolveReason);
    REQUIRE_FALSE(f->lifecycle.empty());
    CHECK(f->lifecycle.back().type == core::LifecycleEventType::kAutoResolved);
  }
  for (const std::string& json :
       TextRows(dir.path(),
                "SELECT record_json FROM findings WHERE id LIKE 'bulk-%' AND is_resolved = 0 "
                "ORDER BY random() LIMIT 20")) {
    absl::StatusOr<core::Finding> f = core::FindingFromJson(json);
    REQUIRE(f.ok());
    CHECK_FALSE(f->resolved_at.has_value());
    REQUIRE(f->lifecycle.size() == 1);
    CHECK(f->lifecycle.back().type == core::LifecycleEventType::kDetected);
  }

  // The next run of a restarted server resolves the rest.
  e2e::ServerProcess server(dir.path());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (ResolvedBulk(dir.path()) < kStale && std::chrono::steady_clock::now() < deadline) {
    const Reply run = e2e::Send(server.port(), "POST", "/api/ai/patrol/run", token, "{}");
    CHECK((run.status == 200 || run.status == 409));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  CHECK(ResolvedBulk(dir.path()) == kStale);
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::fault
