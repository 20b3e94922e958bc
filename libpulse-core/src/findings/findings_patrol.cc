// FindingsService: Patrol verdicts, the deterministic resolve gate, end-of-run stale
// reconciliation, and capacity forecasts.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "findings_service_internal.h"
#include "fmt/format.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/finding_wire.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;
using findings_internal::CheckField;
using findings_internal::Trimmed;

constexpr char kVerificationConfirmed[] = "verifier_confirmed";
constexpr char kVerificationNotRequired[] = "not_required";

ResolveOutcome Refused(const Finding& f, ResolveRefusal refusal, std::string message) {
  ResolveOutcome out;
  out.finding_id = f.id;
  out.resolved = false;
  out.refusal = refusal;
  out.message = std::move(message);
  return out;
}

// A reconciliation resolve that lost a race (the finding was changed or removed meanwhile)
// is skipped, not an error: false. Other errors propagate.
absl::StatusOr<bool> Settled(const absl::StatusOr<ResolveOutcome>& result) {
  if (result.ok()) {
    return true;
  }
  if (absl::IsFailedPrecondition(result.status()) || absl::IsNotFound(result.status())) {
    return false;
  }
  return result.status();
}

bool TakesForecast(const Finding& f) {
  return f.category == Category::kCapacity || f.resource_type == "storage" ||
         f.resource_type == "physical_disk";
}

// Patrol's resolve of an active finding: resolved now, auto_resolved, the reason, and one
// `auto_resolved` event with how it was verified (and the evidence, if any).
absl::Status ResolveChange(findings_internal::Transition& tx, std::string_view reason,
                           std::string_view evidence, std::string_view verification) {
  Finding& f = tx.finding;
  if (!IsActive(f, tx.now)) {
    return FindingActionNotAllowed(f.id, "only an active finding can be resolved by Patrol");
  }
  f.resolved_at = tx.now;
  f.auto_resolved = true;
  f.resolve_reason = std::string(reason);
  std::map<std::string, std::string> metadata = {
      {std::string(w::kMetaVerification), std::string(verification)}};
  if (!evidence.empty()) {
    metadata.emplace(w::kMetaEvidence, std::string(evidence));
  }
  tx.Event(LifecycleEventType::kAutoResolved, reason, metadata);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AssessOutcome> FindingsService::Assess(std::string_view finding_id,
                                                      AssessVerdict verdict,
                                                      std::string_view evidence,
                                                      std::string_view reason) {
  const std::string clean_evidence = Trimmed(evidence);
  const std::string clean_reason = Trimmed(reason);
  PULSE_RETURN_IF_ERROR(CheckField(w::kEvidence, clean_evidence, kMaxReportTextBytes, true));
  PULSE_RETURN_IF_ERROR(CheckField(w::kReason, clean_reason, kMaxNoteBytes, false));
  if (ToString(verdict) == "unknown") {
    return InvalidFindingRequest("verdict must be present, resolved or uncertain",
                                 {{std::string(w::kVerdict), "unknown verdict"}});
  }
  PULSE_ASSIGN_OR_RETURN(Finding finding, Get(finding_id));
  if (!IsActive(finding, clock_.Now())) {
    return FindingActionNotAllowed(finding.id, "only an active finding can be assessed");
  }
  AssessOutcome out;
  out.finding_id = finding.id;
  out.verdict = verdict;
  switch (verdict) {
    case AssessVerdict::kUncertain:
      out.applied = true;  // accepted; it stays active and is protected from stale resolve
      return out;
    case AssessVerdict::kPresent: {
      PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(finding.id, [&](Transition& tx) {
                               if (!IsActive(tx.finding, tx.now)) {
                                 return FindingActionNotAllowed(
                                     tx.finding.id, "only an active finding can be assessed");
                               }
                               tx.dirty = true;
                               tx.finding.evidence = clean_evidence;
                               tx.finding.last_seen_at = tx.now;
                               ++tx.finding.times_raised;
                               return absl::OkStatus();
                             }));
      out.applied = m.written;
      return out;
    }
    case AssessVerdict::kResolved: {
      const std::string note =
          clean_reason.empty() ? std::string("Assessed as resolved by Patrol") : clean_reason;
      PULSE_ASSIGN_OR_RETURN(ResolveOutcome resolved,
                             ResolveByPatrol(finding.id, note, clean_evidence));
      out.applied = resolved.resolved;
      out.refusal = resolved.refusal;
      return out;
    }
  }
  return out;
}

absl::StatusOr<ResolveOutcome> FindingsService::ResolveByPatrol(std::string_view finding_id,
                                                                std::string_view reason,
                                                                std::string_view evidence) {
  const std::string clean_reason = Trimmed(reason);
  const std::string clean_evidence = Trimmed(evidence);
  PULSE_RETURN_IF_ERROR(CheckField(w::kResolutionNote, clean_reason, kMaxNoteBytes, true));
  PULSE_RETURN_IF_ERROR(CheckField(w::kEvidence, clean_evidence, kMaxReportTextBytes, true));
  PULSE_ASSIGN_OR_RETURN(Finding finding, Get(finding_id));
  if (!IsActive(finding, clock_.Now())) {
    return FindingActionNotAllowed(finding.id, "only an active finding can be resolved by Patrol");
  }
  // Every category: the model's evidence is a claim, the verifier's re-check is the proof.
  if (!verifier_.CanVerify(finding)) {
    return Refused(finding, ResolveRefusal::kNoVerifier,
                   fmt::format("refused: {} findings close only when a deterministic verifier "
                               "confirms the signal is gone, and none exists for key '{}'",
                               ToString(finding.category), finding.key));
  }
  absl::StatusOr<VerifierVerdict> verdict = verifier_.Verify(finding);
  if (!verdict.ok()) {
    return Refused(finding, ResolveRefusal::kVerifierError,
                   fmt::format("refused: the verifier failed ({}); treated as inconclusive",
                               std::string(verdict.status().message())));
  }
  switch (*verdict) {
    case VerifierVerdict::kSignalGone:
      return ResolveVerified(finding, clean_reason, clean_evidence, kVerificationConfirmed);
    case VerifierVerdict::kSignalPresent:
      return Refused(finding, ResolveRefusal::kSignalStillPresent,
                     "refused: the deterministic verifier still detects the problem");
    case VerifierVerdict::kInconclusive:
      break;
  }
  return Refused(finding, ResolveRefusal::kVerifierInconclusive,
                 "refused: the deterministic verification was inconclusive");
}

absl::StatusOr<ResolveOutcome> FindingsService::ResolveVerified(const Finding& finding,
                                                                std::string_view reason,
                                                                std::string_view evidence,
                                                                std::string_view verification) {
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(finding.id, [&](Transition& tx) {
                           return ResolveChange(tx, reason, evidence, verification);
                         }));
  ResolveOutcome out;
  out.finding_id = m.finding.id;
  out.resolved = true;
  out.message = "Finding marked as resolved";
  return out;
}

absl::StatusOr<StaleReconciliation> FindingsService::ReconcileStale(
    const FindingRunLedger& ledger, const std::atomic<bool>* cancelled) {
  PULSE_RETURN_IF_ERROR(ledger.CheckAllAssessed());
  StaleReconciliation out;
  const auto stop = [&] {
    if (cancelled != nullptr && cancelled->load()) {
      out.cancelled = true;
    }
    return out.cancelled;
  };
  // Resolves by absence are staged and written kStaleResolveBatch to a transaction.
  std::vector<FindingWrite> staged;
  const auto flush = [&]() -> absl::Status {
    if (staged.empty()) {
      return absl::OkStatus();
    }
    PULSE_ASSIGN_OR_RETURN(std::vector<absl::StatusOr<std::int64_t>> written,
                           store_.PutBatch(staged));
    if (written.size() != staged.size()) {
      return absl::InternalError(fmt::format("the finding store answered {} writes with {}",
                                             staged.size(), written.size()));
    }
    for (std::size_t i = 0; i < staged.size(); ++i) {
      const Finding& f = staged[i].finding;
      if (written[i].ok()) {
        out.resolved.push_back(f.id);
        continue;
      }
      if (!absl::IsAborted(written[i].status())) {
        return written[i].status();
      }
      // Changed since it was read: resolved alone, from a fresh read, if it is still active.
      PULSE_ASSIGN_OR_RETURN(bool resolved, Settled(ResolveVerified(f, kStaleResolveReason, {},
                                                                    kVerificationNotRequired)));
      if (resolved) {
        out.resolved.push_back(f.id);
      }
    }
    staged.clear();
    return absl::OkStatus();
  };
  int verifications = 0;
  // The candidates are read kStaleResolveBatch at a time (GetBatch: one read, not one per
  // finding). A finding changed between that read and its batch's write fails the version
  // check and is resolved alone from a fresh read (flush).
  const std::vector<std::string> candidates = ledger.StaleCandidates();
  std::vector<std::string> chunk;
  for (std::size_t start = 0; start < candidates.size(); start += kStaleResolveBatch) {
    // Before each write of a batch and each read of candidates (a batch stages at most the
    // kStaleResolveBatch resolves of the candidates read before it).
    if (stop()) {
      return out;  // the staged resolves are not written: nothing half-done
    }
    PULSE_RETURN_IF_ERROR(flush());
    if (stop()) {
      return out;
    }
    const std::size_t end = std::min(candidates.size(), start + kStaleResolveBatch);
    chunk.assign(candidates.begin() + static_cast<std::ptrdiff_t>(start),
                 candidates.begin() + static_cast<std::ptrdiff_t>(end));
    PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> read, store_.GetBatch(chunk));
    for (const StoredFinding& stored : read) {
      const Finding& f = stored.finding;
      const absl::Time now = clock_.Now();
      if (!IsActive(f, now)) {
        continue;
      }
      if (CategorySupportsStaleAutoResolve(f.category)) {
        absl::StatusOr<Mutation> m = findings_internal::ApplyChange(f, now, [](Transition& tx) {
          return ResolveChange(tx, kStaleResolveReason, {}, kVerificationNotRequired);
        });
        if (m.ok() && m->written) {
          staged.push_back(FindingWrite{std::move(m->finding), stored.version});
        } else if (!m.ok() && !absl::IsFailedPrecondition(m.status())) {
          return m.status();
        }
        continue;
      }
      if (!verifier_.CanVerify(f)) {
        out.kept.push_back(f.id);
        continue;
      }
      if (verifications >= kMaxVerifiedStaleResolvesPerRun) {
        out.deferred.push_back(f.id);
        continue;
      }
      if (stop()) {
        return out;
      }
      ++verifications;
      absl::StatusOr<VerifierVerdict> verdict = verifier_.Verify(f);
      if (verdict.ok() && *verdict == VerifierVerdict::kSignalGone) {
        PULSE_ASSIGN_OR_RETURN(
            bool resolved,
            Settled(ResolveVerified(f, kVerifiedStaleResolveReason, {}, kVerificationConfirmed)));
        if (resolved) {
          out.verified_resolved.push_back(f.id);
        }
      } else {
        out.kept.push_back(f.id);  // still present, inconclusive or failed: fail closed
      }
    }
  }
  if (stop()) {
    return out;
  }
  PULSE_RETURN_IF_ERROR(flush());
  return out;
}

absl::StatusOr<CapacityForecast> FindingsService::ForecastCapacity(
    std::string_view metrics_target_id, std::string_view metric, absl::Duration window) const {
  if (metrics_target_id.empty() || metric.empty()) {
    return InvalidFindingRequest("a forecast needs a metrics target and a metric");
  }
  if (window <= absl::ZeroDuration()) {
    return InvalidFindingRequest("the forecast window must be positive");
  }
  const absl::Time now = clock_.Now();
  PULSE_ASSIGN_OR_RETURN(std::vector<MetricSample> samples,
                         metrics_.Samples(metrics_target_id, metric, now - window, now));
  return ComputeCapacityForecast(metric, samples);
}

absl::StatusOr<std::vector<std::string>> FindingsService::StampCapacityForecast(
    std::string_view resource_id, const CapacityForecast& forecast) {
  FindingFilter filter;
  filter.resource_id = std::string(resource_id);
  filter.active_at = clock_.Now();
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, store_.List(filter));
  std::vector<std::string> stamped;
  for (const StoredFinding& s : stored) {
    if (!TakesForecast(s.finding) || s.finding.capacity_forecast == forecast) {
      continue;
    }
    PULSE_ASSIGN_OR_RETURN(
        Mutation m, Mutate(s.finding.id, [&](Transition& tx) {
          if (IsActive(tx.finding, tx.now) && tx.finding.capacity_forecast != forecast) {
            tx.finding.capacity_forecast = forecast;
            tx.dirty = true;
          }
          return absl::OkStatus();
        }));
    if (m.written) {
      stamped.push_back(m.finding.id);
    }
  }
  return stamped;
}

absl::StatusOr<bool> FindingsService::ProjectFixOutcome(std::string_view finding_id,
                                                        std::string_view action_id,
                                                        InvestigationOutcome outcome,
                                                        std::string_view action_state) {
  if (action_id.empty()) {
    return false;
  }
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(finding_id, [&](Transition& tx) {
                           Finding& f = tx.finding;
                           if (f.fix_action_id != action_id || f.investigation_outcome == outcome) {
                             return absl::OkStatus();  // not its fix, or already projected
                           }
                           f.investigation_outcome = outcome;
                           tx.Event(LifecycleEventType::kInvestigationRecordUpdated,
                                    "Patrol fix outcome projected from its action",
                                    {{"outcome", std::string(ToString(outcome))},
                                     {"action_id", std::string(action_id)},
                                     {"action_state", std::string(action_state)}});
                           return absl::OkStatus();
                         }));
  return m.written;
}

absl::StatusOr<ReportOutcome> FindingsService::ReportRuntimeFailure(std::string_view evidence) {
  FindingReport report;
  report.resource_id = kRuntimeFindingResourceId;
  report.resource_name = "Pulse Patrol";
  report.resource_type = "ai-service";
  report.category = Category::kReliability;
  report.severity = Severity::kWarning;
  report.key = kRuntimeFindingKey;
  report.title = std::string(kRuntimeFindingTitle);
  report.description =
      "Patrol's model calls keep failing, so Patrol runs only its deterministic checks: the "
      "Watch pass and investigations do not run.";
  report.impact = "Problems that only the model would notice go unreported.";
  report.recommendation =
      "Check the provider, key and Patrol model in the AI settings (Settings > AI: provider "
      "and models; the Patrol model must be able to call tools). The finding clears by "
      "itself when Patrol's model works again.";
  report.evidence = TruncateUtf8(evidence, kMaxReportTextBytes);
  report.source = std::string(kRuntimeFindingSource);
  return Report(report);
}

absl::StatusOr<bool> FindingsService::ResolveRuntimeFailure(std::string_view reason) {
  const std::string id =
      FindingIdFor(kRuntimeFindingResourceId, Category::kReliability, kRuntimeFindingKey);
  absl::StatusOr<StoredFinding> stored = store_.Get(id);
  if (absl::IsNotFound(stored.status())) {
    return false;
  }
  PULSE_RETURN_IF_ERROR(stored.status());
  if (!IsActive(stored->finding, clock_.Now())) {
    return false;
  }
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(id, [&](Transition& tx) -> absl::Status {
                           if (!IsActive(tx.finding, tx.now)) {
                             return absl::OkStatus();
                           }
                           return ResolveChange(tx, reason, {}, kVerificationNotRequired);
                         }));
  return m.written;
}

}  // namespace pulse::core
