// Id prefixes against lists longer than a page (docs/cli.md "Ids"): pulse-cli follows each
// list's cursors, so a prefix names an id wherever it is in the list, an ambiguity across pages
// is reported, and when the lists are too long to read whole a prefix that matches one listed
// id is refused rather than guessed (another id beyond them may share it). The findings are
// written into the server's data dir before it starts.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli_harness.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::testing::e2e {
namespace {

core::Finding Stored(const std::string& id, core::Severity severity, absl::Time detected) {
  core::Finding f;
  f.id = id;
  f.key = "seeded-" + id;
  f.category = core::Category::kPerformance;
  f.severity = severity;
  f.resource_id = "vm:" + id;
  f.title = "seeded finding " + id;
  f.detected_at = detected;
  f.last_seen_at = detected;
  f.times_raised = 1;
  return f;
}

// Writes `count` warnings with ids 0000000000000000, 0000000000000001, ... (hex), each detected
// a second before the previous one, after the findings in `first`, into the data dir.
void Seed(const std::string& data_dir, const std::vector<core::Finding>& first, int from,
          int count) {
  absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> storage =
      adapters::storage::OpenSqliteStorage(data_dir);
  REQUIRE(storage.ok());
  const absl::Time now = absl::Now();
  std::vector<core::FindingWrite> batch;
  for (const core::Finding& f : first) {
    batch.push_back({f, 0});
  }
  for (int i = from; i < from + count; ++i) {
    batch.push_back({Stored(absl::StrFormat("%016x", i), core::Severity::kWarning,
                            now - absl::Hours(1) - absl::Seconds(i)),
                     0});
    if (batch.size() == 2000 || i + 1 == from + count) {
      auto written = (*storage)->findings->PutBatch(batch);
      REQUIRE(written.ok());
      for (const auto& w : *written) {
        REQUIRE(w.ok());
      }
      batch.clear();
    }
  }
}

TEST_CASE("an id prefix is resolved across every page of the list, and not guessed from a part",
          "[e2e][cli][first-hour]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  const absl::Time now = absl::Now();
  // Two findings share the prefix "abcd": one is the list's first (critical), the other its last
  // (the oldest warning, on the third page of 500). One more, "fedc", is only on the third page.
  const std::vector<core::Finding> marked = {
      Stored("abcd000000000001", core::Severity::kCritical, now - absl::Minutes(1)),
      Stored("abcd0000000000ff", core::Severity::kWarning, now - absl::Hours(48)),
      Stored("fedc000000000001", core::Severity::kWarning, now - absl::Hours(47)),
  };
  Seed(dir.path(), marked, 0, 1200);
  {
    ServerProcess server(dir.path());
    const auto cli = [&](std::vector<std::string> args) {
      std::vector<std::string> all = ServerArgs(server.port());
      all.insert(all.end(), args.begin(), args.end());
      return RunCli(all, {.env = {TokenEnv(token)}});
    };
    // Unique in the first page, but not in the list: an ambiguity, not the first page's one.
    const Captured ambiguous = cli({"findings", "ack", "abcd"});
    INFO(ambiguous.err);
    CHECK(ambiguous.exit_code == 2);
    CHECK(ambiguous.err.find("is ambiguous") != std::string::npos);
    CHECK(ambiguous.err.find("abcd0000000000ff") != std::string::npos);
    // A prefix of a finding on the third page names it (sent as typed, the server would answer
    // finding_not_found, exit 1).
    const Captured third = cli({"findings", "ack", "fedc"});
    INFO(third.err);
    CHECK(third.exit_code == 0);
    CHECK(cli({"findings", "ack", "fedd"}).exit_code == 1);
    server.Stop();
  }
  // More findings than the CLI reads (40 pages of 500): "abcd" matches one listed id (the first)
  // and one it never reads (the last); it is refused, and the whole id still works.
  Seed(dir.path(), {}, 1200, 19500);
  ServerProcess server(dir.path());
  const auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> all = ServerArgs(server.port());
    all.insert(all.end(), args.begin(), args.end());
    return RunCli(all, {.env = {TokenEnv(token)}});
  };
  const Captured cut = cli({"findings", "ack", "abcd"});
  INFO(cut.err);
  CHECK(cut.exit_code == 2);
  CHECK(cut.err.find("matches abcd000000000001 among the first 20000 findings listed, but more "
                     "exist and another may match too: give the whole id") != std::string::npos);
  CHECK(cli({"findings", "ack", "abcd000000000001"}).exit_code == 0);
}

}  // namespace
}  // namespace pulse::testing::e2e
