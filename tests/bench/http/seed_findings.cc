// seed_findings: reports synthetic Patrol findings straight into a pulse-server data dir, so
// cmake/bench-http.sh measures GET /api/ai/patrol/findings over a list of realistic size (a
// Patrol run over the demo fleet finds about 5). Run it before the server starts.
// Usage: seed_findings --data-dir DIR --count N
// Each finding has its own resource and key, so none merges into another; severities alternate
// between warning and critical, which the default (active, warning and above) list shows.
// Prints "seeded N findings" and exits 0, or names the failure on stderr and exits 1.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/testing/fake_finding_verifier.h"

namespace {

constexpr pulse::core::Category kCategories[] = {
    pulse::core::Category::kPerformance, pulse::core::Category::kCapacity,
    pulse::core::Category::kReliability, pulse::core::Category::kBackup,
    pulse::core::Category::kSecurity};

pulse::core::FindingReport Report(int i) {
  pulse::core::FindingReport report;
  report.resource_id = absl::StrCat("vm:", 1000 + i);
  report.resource_name = absl::StrCat("bench-vm-", i);
  report.resource_type = "vm";
  report.node = absl::StrCat("pve", 1 + i % 3);
  report.category = kCategories[i % 5];
  report.severity = i % 2 == 0 ? pulse::core::Severity::kWarning : pulse::core::Severity::kCritical;
  report.key = absl::StrCat("bench-", i);
  report.title = absl::StrCat("Memory pressure on bench-vm-", i);
  report.description = "Memory use has stayed above 90 % for the last six samples.";
  report.impact = "The guest may start swapping and answer slowly.";
  report.recommendation = "Give the VM more memory or move its heaviest service elsewhere.";
  report.evidence = absl::StrCat("memory_pct ", 90 + i % 10, " over 30 minutes");
  return report;
}

int Fail(std::string_view what) {
  std::fprintf(stderr, "seed_findings: %.*s\n", static_cast<int>(what.size()), what.data());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir;
  int count = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--data-dir") {
      data_dir = argv[i + 1];
    } else if (flag == "--count") {
      if (!absl::SimpleAtoi(argv[i + 1], &count)) {
        count = -1;
      }
    }
  }
  if (data_dir.empty() || count < 0 || argc != 5) {
    return Fail("usage: seed_findings --data-dir DIR --count N");
  }
  absl::StatusOr<std::unique_ptr<pulse::adapters::storage::SqliteStorage>> storage =
      pulse::adapters::storage::OpenSqliteStorage(data_dir);
  if (!storage.ok()) {
    return Fail(storage.status().ToString());
  }
  pulse::adapters::system::SystemClock clock;
  pulse::testing::FakeFindingVerifier verifier;  // no scripts: no finding is verifiable
  pulse::core::FindingsService findings(*(*storage)->findings, clock, verifier,
                                        *(*storage)->metrics);
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<pulse::core::ReportOutcome> outcome = findings.Report(Report(i));
    if (!outcome.ok()) {
      return Fail(outcome.status().ToString());
    }
    if (outcome->disposition != pulse::core::ReportDisposition::kCreated) {
      return Fail(absl::StrCat("finding ", i, " was not created but ",
                               std::string(pulse::core::ToString(outcome->disposition))));
    }
  }
  std::printf("seeded %d findings\n", count);
  return 0;
}
