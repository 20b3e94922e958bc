#include "pulse/core/model/finding_types.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

// One table per vocabulary: the single place its wire strings are spelled.
constexpr std::array<WireName<Severity>, 4> kSeverities = {{
    {Severity::kInfo, "info"},
    {Severity::kWatch, "watch"},
    {Severity::kWarning, "warning"},
    {Severity::kCritical, "critical"},
}};

constexpr std::array<WireName<Category>, 6> kCategories = {{
    {Category::kPerformance, "performance"},
    {Category::kCapacity, "capacity"},
    {Category::kReliability, "reliability"},
    {Category::kBackup, "backup"},
    {Category::kSecurity, "security"},
    {Category::kGeneral, "general"},
}};

constexpr std::array<WireName<LoopState>, 11> kLoopStates = {{
    {LoopState::kDetected, "detected"},
    {LoopState::kInvestigating, "investigating"},
    {LoopState::kRemediationPlanned, "remediation_planned"},
    {LoopState::kRemediating, "remediating"},
    {LoopState::kRemediationFailed, "remediation_failed"},
    {LoopState::kNeedsAttention, "needs_attention"},
    {LoopState::kTimedOut, "timed_out"},
    {LoopState::kResolved, "resolved"},
    {LoopState::kDismissed, "dismissed"},
    {LoopState::kSnoozed, "snoozed"},
    {LoopState::kSuppressed, "suppressed"},
}};

constexpr std::array<WireName<DismissReason>, 4> kDismissReasons = {{
    {DismissReason::kNotAnIssue, "not_an_issue"},
    {DismissReason::kExpectedBehavior, "expected_behavior"},
    {DismissReason::kWillFixLater, "will_fix_later"},
    {DismissReason::kSuppressed, "suppressed"},
}};

constexpr std::array<WireName<InvestigationStatus>, 5> kInvestigationStatuses = {{
    {InvestigationStatus::kPending, "pending"},
    {InvestigationStatus::kRunning, "running"},
    {InvestigationStatus::kCompleted, "completed"},
    {InvestigationStatus::kFailed, "failed"},
    {InvestigationStatus::kNeedsAttention, "needs_attention"},
}};

constexpr std::array<WireName<InvestigationOutcome>, 12> kInvestigationOutcomes = {{
    {InvestigationOutcome::kResolved, "resolved"},
    {InvestigationOutcome::kFixQueued, "fix_queued"},
    {InvestigationOutcome::kFixExecuted, "fix_executed"},
    {InvestigationOutcome::kFixFailed, "fix_failed"},
    {InvestigationOutcome::kFixRejected, "fix_rejected"},
    {InvestigationOutcome::kFixVerified, "fix_verified"},
    {InvestigationOutcome::kFixVerificationFailed, "fix_verification_failed"},
    {InvestigationOutcome::kFixVerificationUnknown, "fix_verification_unknown"},
    {InvestigationOutcome::kFixNotAdmitted, "fix_not_admitted"},
    {InvestigationOutcome::kNeedsAttention, "needs_attention"},
    {InvestigationOutcome::kCannotFix, "cannot_fix"},
    {InvestigationOutcome::kTimedOut, "timed_out"},
}};

constexpr std::array<WireName<LifecycleEventType>, 18> kEventTypes = {{
    {LifecycleEventType::kDetected, "detected"},
    {LifecycleEventType::kRegressed, "regressed"},
    {LifecycleEventType::kReminded, "reminded"},
    {LifecycleEventType::kSuppressionLifted, "suppression_lifted"},
    {LifecycleEventType::kSeenWhileSuppressed, "seen_while_suppressed"},
    {LifecycleEventType::kContentReplaced, "content_replaced"},
    {LifecycleEventType::kDuplicateMerged, "duplicate_merged"},
    {LifecycleEventType::kResolved, "resolved"},
    {LifecycleEventType::kAutoResolved, "auto_resolved"},
    {LifecycleEventType::kAcknowledged, "acknowledged"},
    {LifecycleEventType::kSnoozed, "snoozed"},
    {LifecycleEventType::kUnsnoozed, "unsnoozed"},
    {LifecycleEventType::kDismissed, "dismissed"},
    {LifecycleEventType::kUndismissed, "undismissed"},
    {LifecycleEventType::kSuppressed, "suppressed"},
    {LifecycleEventType::kUserNoteUpdated, "user_note_updated"},
    {LifecycleEventType::kInvestigationRecordUpdated, "investigation_record_updated"},
    {LifecycleEventType::kLoopTransitionViolation, "loop_transition_violation"},
}};

constexpr std::array<WireName<VerifierVerdict>, 3> kVerifierVerdicts = {{
    {VerifierVerdict::kSignalGone, "signal_gone"},
    {VerifierVerdict::kSignalPresent, "signal_present"},
    {VerifierVerdict::kInconclusive, "inconclusive"},
}};

constexpr std::array<WireName<AssessVerdict>, 3> kVerdicts = {{
    {AssessVerdict::kPresent, "present"},
    {AssessVerdict::kResolved, "resolved"},
    {AssessVerdict::kUncertain, "uncertain"},
}};

}  // namespace

std::string_view ToString(Severity value) { return WireNameOf(kSeverities, value); }
std::string_view ToString(Category value) { return WireNameOf(kCategories, value); }
std::string_view ToString(LoopState value) { return WireNameOf(kLoopStates, value); }
std::string_view ToString(DismissReason value) { return WireNameOf(kDismissReasons, value); }
std::string_view ToString(InvestigationStatus value) {
  return WireNameOf(kInvestigationStatuses, value);
}
std::string_view ToString(InvestigationOutcome value) {
  return WireNameOf(kInvestigationOutcomes, value);
}
std::string_view ToString(LifecycleEventType value) { return WireNameOf(kEventTypes, value); }
std::string_view ToString(AssessVerdict value) { return WireNameOf(kVerdicts, value); }
std::string_view ToString(VerifierVerdict value) { return WireNameOf(kVerifierVerdicts, value); }

std::optional<Severity> ParseSeverity(std::string_view text) {
  return WireValueOf(kSeverities, text);
}
std::optional<Category> ParseCategory(std::string_view text) {
  return WireValueOf(kCategories, text);
}
std::optional<LoopState> ParseLoopState(std::string_view text) {
  return WireValueOf(kLoopStates, text);
}
std::optional<DismissReason> ParseDismissReason(std::string_view text) {
  return WireValueOf(kDismissReasons, text);
}
std::optional<DismissReason> ParseOperatorDismissReason(std::string_view text) {
  std::optional<DismissReason> reason = WireValueOf(kDismissReasons, text);
  if (reason == DismissReason::kSuppressed) {
    return std::nullopt;
  }
  return reason;
}
std::optional<InvestigationStatus> ParseInvestigationStatus(std::string_view text) {
  return WireValueOf(kInvestigationStatuses, text);
}
std::optional<InvestigationOutcome> ParseInvestigationOutcome(std::string_view text) {
  return WireValueOf(kInvestigationOutcomes, text);
}
std::optional<LifecycleEventType> ParseLifecycleEventType(std::string_view text) {
  return WireValueOf(kEventTypes, text);
}
std::optional<AssessVerdict> ParseAssessVerdict(std::string_view text) {
  return WireValueOf(kVerdicts, text);
}
std::optional<VerifierVerdict> ParseVerifierVerdict(std::string_view text) {
  return WireValueOf(kVerifierVerdicts, text);
}

const std::vector<Severity>& AllSeverities() {
  static const std::vector<Severity> values = WireValues(kSeverities);
  return values;
}
const std::vector<Category>& AllCategories() {
  static const std::vector<Category> values = WireValues(kCategories);
  return values;
}
const std::vector<LoopState>& AllLoopStates() {
  static const std::vector<LoopState> values = WireValues(kLoopStates);
  return values;
}
const std::vector<LifecycleEventType>& AllLifecycleEventTypes() {
  static const std::vector<LifecycleEventType> values = WireValues(kEventTypes);
  return values;
}

int SeverityRank(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return 0;
    case Severity::kWatch:
      return 1;
    case Severity::kWarning:
      return 2;
    case Severity::kCritical:
      return 3;
  }
  return -1;
}

bool CategorySupportsStaleAutoResolve(Category category) {
  return category == Category::kPerformance || category == Category::kCapacity;
}

}  // namespace pulse::core
