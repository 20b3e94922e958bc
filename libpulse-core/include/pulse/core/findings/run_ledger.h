// FindingRunLedger: what one Patrol run did with findings. It records which active findings
// the run started with (seeded), which it showed to the model (presented), which it reported
// and which verdicts it accepted, and answers the two end-of-run questions: did every
// presented finding get an accepted outcome (a missing verdict is a run error, never an
// all-clear), and which seeded findings went unmentioned (the stale-reconciliation
// candidates, docs/architecture.md "Findings"). A value owned by the run; not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/model/finding_types.h"

namespace pulse::core {

using VerdictMap = std::map<std::string, AssessVerdict, std::less<>>;

// OK when every presented id has a verdict. Otherwise FailedPrecondition (code
// finding_action_not_allowed) whose message lists up to 20 missing ids and whose details hold
// "missing_count".
[[nodiscard]] absl::Status CheckAllAssessed(std::span<const std::string> presented_ids,
                                            const VerdictMap& verdicts);

class FindingRunLedger {
 public:
  // An active finding in the run's context at its start.
  void AddSeeded(std::string_view finding_id);
  // A finding shown to the model; it now needs an accepted outcome this run. Presenting
  // also seeds it.
  void AddPresented(std::string_view finding_id);
  // An accepted patrol_report_finding that mapped to `finding_id`. A re-report of an existing
  // finding refreshes it exactly as a `present` verdict would, so it counts as its outcome.
  void RecordReported(std::string_view finding_id, bool is_new);
  // An accepted verdict. FailedPrecondition when the finding already has a verdict this run
  // (one verdict per finding per run); the first verdict stands.
  [[nodiscard]] absl::Status RecordVerdict(std::string_view finding_id, AssessVerdict verdict);

  // Whether a report in this run already mapped to the finding (a repeat is redundant).
  bool WasReported(std::string_view finding_id) const;
  // Whether the finding was created by a report in this run (its assessment is then moot).
  bool WasReportedNew(std::string_view finding_id) const;
  std::optional<AssessVerdict> VerdictFor(std::string_view finding_id) const;

  // CheckAllAssessed over the presented findings (re-reports count as `present`).
  [[nodiscard]] absl::Status CheckAllAssessed() const;

  // Seeded findings that were neither reported nor given any verdict, ordered by id. An
  // `uncertain` verdict protects a finding from the reconciliation.
  std::vector<std::string> StaleCandidates() const;

 private:
  std::set<std::string, std::less<>> seeded_;
  std::set<std::string, std::less<>> presented_;
  std::set<std::string, std::less<>> reported_;
  std::set<std::string, std::less<>> reported_new_;
  VerdictMap verdicts_;
};

}  // namespace pulse::core
