#include "pulse/core/findings/run_ledger.h"

#include <utility>

#include "fmt/format.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/findings/finding_errors.h"

namespace pulse::core {
namespace {

constexpr std::size_t kMaxListedMissing = 20;

absl::Status MissingVerdicts(const std::vector<std::string>& missing) {
  std::string listed;
  for (std::size_t i = 0; i < missing.size() && i < kMaxListedMissing; ++i) {
    if (i > 0) {
      listed.append(", ");
    }
    listed.append(missing[i]);
  }
  if (missing.size() > kMaxListedMissing) {
    listed.append(", ...");
  }
  return MakeFindingError(
      absl::StatusCode::kFailedPrecondition, AgentErrorCode::kFindingActionNotAllowed,
      fmt::format("{} presented finding(s) have no accepted verdict this run: {}", missing.size(),
                  listed),
      {{"missing_count", std::to_string(missing.size())}});
}

}  // namespace

absl::Status CheckAllAssessed(std::span<const std::string> presented_ids,
                              const VerdictMap& verdicts) {
  std::vector<std::string> missing;
  for (const std::string& id : presented_ids) {
    if (verdicts.find(id) == verdicts.end()) {
      missing.push_back(id);
    }
  }
  if (missing.empty()) {
    return absl::OkStatus();
  }
  return MissingVerdicts(missing);
}

void FindingRunLedger::AddSeeded(std::string_view finding_id) { seeded_.emplace(finding_id); }

void FindingRunLedger::AddPresented(std::string_view finding_id) {
  seeded_.emplace(finding_id);
  presented_.emplace(finding_id);
}

void FindingRunLedger::RecordReported(std::string_view finding_id, bool is_new) {
  reported_.emplace(finding_id);
  if (is_new) {
    reported_new_.emplace(finding_id);
  }
}

absl::Status FindingRunLedger::RecordVerdict(std::string_view finding_id, AssessVerdict verdict) {
  auto it = verdicts_.find(finding_id);
  if (it != verdicts_.end()) {
    return MakeFindingError(absl::StatusCode::kFailedPrecondition,
                            AgentErrorCode::kFindingActionNotAllowed,
                            fmt::format("finding {} already has the verdict '{}' this run",
                                        finding_id, ToString(it->second)),
                            {{"finding_id", std::string(finding_id)}});
  }
  verdicts_.emplace(std::string(finding_id), verdict);
  return absl::OkStatus();
}

bool FindingRunLedger::WasReported(std::string_view finding_id) const {
  return reported_.find(finding_id) != reported_.end();
}

bool FindingRunLedger::WasReportedNew(std::string_view finding_id) const {
  return reported_new_.find(finding_id) != reported_new_.end();
}

std::optional<AssessVerdict> FindingRunLedger::VerdictFor(std::string_view finding_id) const {
  auto it = verdicts_.find(finding_id);
  if (it == verdicts_.end()) {
    return std::nullopt;
  }
  return it->second;
}

absl::Status FindingRunLedger::CheckAllAssessed() const {
  VerdictMap effective = verdicts_;
  for (const std::string& id : reported_) {
    effective.emplace(id, AssessVerdict::kPresent);
  }
  const std::vector<std::string> presented(presented_.begin(), presented_.end());
  return pulse::core::CheckAllAssessed(presented, effective);
}

std::vector<std::string> FindingRunLedger::StaleCandidates() const {
  std::vector<std::string> out;
  for (const std::string& id : seeded_) {
    if (reported_.find(id) == reported_.end() && verdicts_.find(id) == verdicts_.end()) {
      out.push_back(id);
    }
  }
  return out;
}

}  // namespace pulse::core
