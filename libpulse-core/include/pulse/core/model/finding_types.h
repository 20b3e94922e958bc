// The closed vocabularies of the finding lifecycle (docs/architecture.md "Findings"): severity,
// category, loop state, dismiss reason, investigation status and outcome, lifecycle event type,
// assess verdict. Each has one table in finding_types.cc mapping the enum to its exact wire string;
// parsing is exact-match (case and whitespace matter) and rejects anything else. Pure values.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace pulse::core {

// info < watch < warning < critical; the enum order is the rank.
enum class Severity { kInfo, kWatch, kWarning, kCritical };

enum class Category { kPerformance, kCapacity, kReliability, kBackup, kSecurity, kGeneral };

// The derived loop state (docs/architecture.md "Findings").
enum class LoopState {
  kDetected,
  kInvestigating,
  kRemediationPlanned,
  kRemediating,
  kRemediationFailed,
  kNeedsAttention,
  kTimedOut,
  kResolved,
  kDismissed,
  kSnoozed,
  kSuppressed,
};

// Why a finding was dismissed. kSuppressed is internal: only Suppress sets it, and the
// operator-facing parse (ParseOperatorDismissReason) refuses it.
enum class DismissReason { kNotAnIssue, kExpectedBehavior, kWillFixLater, kSuppressed };

enum class InvestigationStatus { kPending, kRunning, kCompleted, kFailed, kNeedsAttention };

enum class InvestigationOutcome {
  kResolved,
  kFixQueued,
  kFixExecuted,
  kFixFailed,
  kFixRejected,
  kFixVerified,
  kFixVerificationFailed,
  kFixVerificationUnknown,
  // The action lifecycle refused Patrol's own plan (refused at planning, or failed before
  // dispatch: drift, a remediation lock). Not a human's denial, which is kFixRejected.
  kFixNotAdmitted,
  kNeedsAttention,
  kCannotFix,
  kTimedOut,
};

// Lifecycle event types (docs/architecture.md "Findings"). The log is append-only and bounded (see
// finding.h).
enum class LifecycleEventType {
  kDetected,
  kRegressed,
  kReminded,
  kSuppressionLifted,
  kSeenWhileSuppressed,
  kContentReplaced,
  kDuplicateMerged,
  kResolved,
  kAutoResolved,
  kAcknowledged,
  kSnoozed,
  kUnsnoozed,
  kDismissed,
  kUndismissed,
  kSuppressed,
  kUserNoteUpdated,
  kInvestigationRecordUpdated,
  kLoopTransitionViolation,
};

// A Patrol verdict on an existing finding (patrol_assess_finding).
enum class AssessVerdict { kPresent, kResolved, kUncertain };

// Wire strings ("critical", "capacity", "remediation_planned", "will_fix_later",
// "needs_attention", "fix_verified", "content_replaced", "uncertain"). A value outside its
// enum yields "unknown".
std::string_view ToString(Severity value);
std::string_view ToString(Category value);
std::string_view ToString(LoopState value);
std::string_view ToString(DismissReason value);
std::string_view ToString(InvestigationStatus value);
std::string_view ToString(InvestigationOutcome value);
std::string_view ToString(LifecycleEventType value);
std::string_view ToString(AssessVerdict value);

// Exact-match parses; nullopt for anything else.
std::optional<Severity> ParseSeverity(std::string_view text);
std::optional<Category> ParseCategory(std::string_view text);
std::optional<LoopState> ParseLoopState(std::string_view text);
std::optional<DismissReason> ParseDismissReason(std::string_view text);
// Only the three reasons an operator may give; "suppressed" is nullopt here.
std::optional<DismissReason> ParseOperatorDismissReason(std::string_view text);
std::optional<InvestigationStatus> ParseInvestigationStatus(std::string_view text);
std::optional<InvestigationOutcome> ParseInvestigationOutcome(std::string_view text);
std::optional<LifecycleEventType> ParseLifecycleEventType(std::string_view text);
std::optional<AssessVerdict> ParseAssessVerdict(std::string_view text);

// Every value, in declaration order (for exhaustive tests and schema enums).
const std::vector<Severity>& AllSeverities();
const std::vector<Category>& AllCategories();
const std::vector<LoopState>& AllLoopStates();
const std::vector<LifecycleEventType>& AllLifecycleEventTypes();

// 0..3 for info..critical; -1 for a value outside the enum.
int SeverityRank(Severity severity);

// True only for the metric categories (performance, capacity), the only ones whose findings
// may be resolved by absence: by a stale reconciliation or by a Patrol resolve without a
// deterministic verifier. Every other category needs a verifier's affirmative confirmation.
bool CategorySupportsStaleAutoResolve(Category category);

// A deterministic re-check's answer (ports/finding_verifier.h).
enum class VerifierVerdict {
  kSignalGone,     // affirmatively confirmed: the problem is no longer there
  kSignalPresent,  // the problem is still there
  kInconclusive,   // could not tell
};

// Wire strings: signal_gone, signal_present, inconclusive.
std::string_view ToString(VerifierVerdict verdict);
std::optional<VerifierVerdict> ParseVerifierVerdict(std::string_view text);

}  // namespace pulse::core
