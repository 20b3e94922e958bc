#include "pulse/core/findings/finding_types.h"

#include "pulse/core/ports/finding_verifier.h"

#include <array>
#include <cstddef>
#include <utility>

namespace pulse::core {
namespace {

template <typename E>
struct Entry {
  E value;
  std::string_view name;
};

// One table per vocabulary: the single place its wire strings are spelled.
constexpr std::array<Entry<Severity>, 4> kSeverities = {{
    {Severity::kInfo, "info"},
    {Severity::kWatch, "watch"},
    {Severity::kWarning, "warning"},
    {Severity::kCritical, "critical"},
}};

constexpr std::array<Entry<Category>, 6> kCategories = {{
    {Category::kPerformance, "performance"},
    {Category::kCapacity, "capacity"},
    {Category::kReliability, "reliability"},
    {Category::kBackup, "backup"},
    {Category::kSecurity, "security"},
    {Category::kGeneral, "general"},
}};

constexpr std::array<Entry<LoopState>, 11> kLoopStates = {{
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

constexpr std::array<Entry<DismissReason>, 4> kDismissReasons = {{
    {DismissReason::kNotAnIssue, "not_an_issue"},
    {DismissReason::kExpectedBehavior, "expected_behavior"},
    {DismissReason::kWillFixLater, "will_fix_later"},
    {DismissReason::kSuppressed, "suppressed"},
}};

constexpr std::array<Entry<InvestigationStatus>, 5> kInvestigationStatuses = {{
    {InvestigationStatus::kPending, "pending"},
    {InvestigationStatus::kRunning, "running"},
    {InvestigationStatus::kCompleted, "completed"},
    {InvestigationStatus::kFailed, "failed"},
    {InvestigationStatus::kNeedsAttention, "needs_attention"},
}};

constexpr std::array<Entry<InvestigationOutcome>, 11> kInvestigationOutcomes = {{
    {InvestigationOutcome::kResolved, "resolved"},
    {InvestigationOutcome::kFixQueued, "fix_queued"},
    {InvestigationOutcome::kFixExecuted, "fix_executed"},
    {InvestigationOutcome::kFixFailed, "fix_failed"},
    {InvestigationOutcome::kFixRejected, "fix_rejected"},
    {InvestigationOutcome::kFixVerified, "fix_verified"},
    {InvestigationOutcome::kFixVerificationFailed, "fix_verification_failed"},
    {InvestigationOutcome::kFixVerificationUnknown, "fix_verification_unknown"},
    {InvestigationOutcome::kNeedsAttention, "needs_attention"},
    {InvestigationOutcome::kCannotFix, "cannot_fix"},
    {InvestigationOutcome::kTimedOut, "timed_out"},
}};

constexpr std::array<Entry<LifecycleEventType>, 18> kEventTypes = {{
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

constexpr std::array<Entry<VerifierVerdict>, 3> kVerifierVerdicts = {{
    {VerifierVerdict::kSignalGone, "signal_gone"},
    {VerifierVerdict::kSignalPresent, "signal_present"},
    {VerifierVerdict::kInconclusive, "inconclusive"},
}};

constexpr std::array<Entry<AssessVerdict>, 3> kVerdicts = {{
    {AssessVerdict::kPresent, "present"},
    {AssessVerdict::kResolved, "resolved"},
    {AssessVerdict::kUncertain, "uncertain"},
}};

template <typename E, std::size_t N>
std::string_view NameOf(const std::array<Entry<E>, N>& table, E value) {
  for (const auto& entry : table) {
    if (entry.value == value) {
      return entry.name;
    }
  }
  return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> Parse(const std::array<Entry<E>, N>& table, std::string_view text) {
  for (const auto& entry : table) {
    if (entry.name == text) {
      return entry.value;
    }
  }
  return std::nullopt;
}

template <typename E, std::size_t N>
std::vector<E> ValuesOf(const std::array<Entry<E>, N>& table) {
  std::vector<E> out;
  out.reserve(N);
  for (const auto& entry : table) {
    out.push_back(entry.value);
  }
  return out;
}

}  // namespace

std::string_view ToString(Severity value) { return NameOf(kSeverities, value); }
std::string_view ToString(Category value) { return NameOf(kCategories, value); }
std::string_view ToString(LoopState value) { return NameOf(kLoopStates, value); }
std::string_view ToString(DismissReason value) { return NameOf(kDismissReasons, value); }
std::string_view ToString(InvestigationStatus value) {
  return NameOf(kInvestigationStatuses, value);
}
std::string_view ToString(InvestigationOutcome value) {
  return NameOf(kInvestigationOutcomes, value);
}
std::string_view ToString(LifecycleEventType value) { return NameOf(kEventTypes, value); }
std::string_view ToString(AssessVerdict value) { return NameOf(kVerdicts, value); }
std::string_view ToString(VerifierVerdict value) { return NameOf(kVerifierVerdicts, value); }

std::optional<Severity> ParseSeverity(std::string_view text) { return Parse(kSeverities, text); }
std::optional<Category> ParseCategory(std::string_view text) { return Parse(kCategories, text); }
std::optional<LoopState> ParseLoopState(std::string_view text) {
  return Parse(kLoopStates, text);
}
std::optional<DismissReason> ParseDismissReason(std::string_view text) {
  return Parse(kDismissReasons, text);
}
std::optional<DismissReason> ParseOperatorDismissReason(std::string_view text) {
  std::optional<DismissReason> reason = Parse(kDismissReasons, text);
  if (reason == DismissReason::kSuppressed) {
    return std::nullopt;
  }
  return reason;
}
std::optional<InvestigationStatus> ParseInvestigationStatus(std::string_view text) {
  return Parse(kInvestigationStatuses, text);
}
std::optional<InvestigationOutcome> ParseInvestigationOutcome(std::string_view text) {
  return Parse(kInvestigationOutcomes, text);
}
std::optional<LifecycleEventType> ParseLifecycleEventType(std::string_view text) {
  return Parse(kEventTypes, text);
}
std::optional<AssessVerdict> ParseAssessVerdict(std::string_view text) {
  return Parse(kVerdicts, text);
}
std::optional<VerifierVerdict> ParseVerifierVerdict(std::string_view text) {
  return Parse(kVerifierVerdicts, text);
}

const std::vector<Severity>& AllSeverities() {
  static const std::vector<Severity> values = ValuesOf(kSeverities);
  return values;
}
const std::vector<Category>& AllCategories() {
  static const std::vector<Category> values = ValuesOf(kCategories);
  return values;
}
const std::vector<LoopState>& AllLoopStates() {
  static const std::vector<LoopState> values = ValuesOf(kLoopStates);
  return values;
}
const std::vector<LifecycleEventType>& AllLifecycleEventTypes() {
  static const std::vector<LifecycleEventType> values = ValuesOf(kEventTypes);
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
