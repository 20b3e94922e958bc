// seed_findings: reports synthetic Patrol findings straight into a pulse-server data dir, so
// cmake/bench-http.sh measures GET /api/ai/patrol/findings over a list of realistic size (a
// Patrol run over the demo fleet finds about 5). Run it before the server starts.
// Usage: seed_findings --data-dir DIR --count N [--bulk]
// --bulk (for 10k to 1M findings): the first finding is reported as above and the others are
// copies of it with their own id, key, resource, severity, category and detection time,
// written by FindingStore::PutBatch 2,000 at a time (a report per finding is a transaction per
// finding, about 4 minutes per 100k).
// Each finding has its own resource and key, so none merges into another; severities alternate
// between warning and critical, which the default (active, warning and above) list shows.
// Prints "seeded N findings" and exits 0, or names the failure on stderr and exits 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

// Finding i as a copy of `first` (finding 0, reported): what Report(i) would differ in.
pulse::core::Finding CopyOf(const pulse::core::Finding& first, int i) {
  const pulse::core::FindingReport report = Report(i);
  pulse::core::Finding f = first;
  f.id = absl::StrFormat("%016x", 0x5eed000000000000ULL + static_cast<unsigned>(i));
  f.key = report.key;
  f.resource_id = report.resource_id;
  f.resource_name = report.resource_name;
  f.node = report.node;
  f.category = report.category;
  f.severity = report.severity;
  f.title = report.title;
  f.evidence = report.evidence;
  const absl::Duration age = absl::Milliseconds(i);
  f.detected_at -= age;
  f.last_seen_at -= age;
  for (pulse::core::LifecycleEvent& e : f.lifecycle) {
    e.at -= age;
  }
  return f;
}

int Fail(std::string_view what) {
  std::fprintf(stderr, "seed_findings: %.*s\n", static_cast<int>(what.size()), what.data());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir;
  int count = -1;
  bool bulk = false;
  bool bad = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--bulk") {
      bulk = true;
      continue;
    }
    if (i + 1 >= argc) {
      bad = true;
      break;
    }
    if (flag == "--data-dir") {
      data_dir = argv[i + 1];
    } else if (flag == "--count") {
      if (!absl::SimpleAtoi(argv[i + 1], &count)) {
        count = -1;
      }
    } else {
      bad = true;
    }
    ++i;
  }
  if (bad || data_dir.empty() || count < 0) {
    return Fail("usage: seed_findings --data-dir DIR --count N [--bulk]");
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
  const int reported = bulk ? std::min(count, 1) : count;
  std::string first_id;
  for (int i = 0; i < reported; ++i) {
    absl::StatusOr<pulse::core::ReportOutcome> outcome = findings.Report(Report(i));
    if (!outcome.ok()) {
      return Fail(outcome.status().ToString());
    }
    if (outcome->disposition != pulse::core::ReportDisposition::kCreated) {
      return Fail(absl::StrCat("finding ", i, " was not created but ",
                               std::string(pulse::core::ToString(outcome->disposition))));
    }
    if (i == 0) {
      first_id = outcome->finding_id;
    }
  }
  if (reported < count) {
    absl::StatusOr<pulse::core::StoredFinding> first = (*storage)->findings->Get(first_id);
    if (!first.ok()) {
      return Fail(first.status().ToString());
    }
    std::vector<pulse::core::FindingWrite> batch;
    for (int i = reported; i < count; ++i) {
      batch.push_back(pulse::core::FindingWrite{CopyOf(first->finding, i), 0});
      if (batch.size() == 2000 || i + 1 == count) {
        absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> written =
            (*storage)->findings->PutBatch(batch);
        if (!written.ok()) {
          return Fail(written.status().ToString());
        }
        for (const absl::StatusOr<std::int64_t>& one : *written) {
          if (!one.ok()) {
            return Fail(one.status().ToString());
          }
        }
        batch.clear();
      }
    }
  }
  std::printf("seeded %d findings\n", count);
  return 0;
}
