// Finding: one durable record of "what is wrong" on one resource (docs/architecture.md "Findings"),
// its append-only lifecycle log, and the predicates derived from it (docs/architecture.md
// "Findings"): whether it is active and which loop state it is in. Plain values, thread-compatible.
// State moves only through FindingsService, which appends exactly one lifecycle event per
// transition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "pulse/core/model/finding_types.h"
#include "pulse/core/model/forecast.h"

namespace pulse::core {

// The lifecycle log keeps only the newest events.
inline constexpr std::size_t kMaxLifecycleEvents = 50;

// Decoding limits (FindingFromJson) that every record the service writes stays within.
inline constexpr std::size_t kMaxFindingIdentifierBytes = 512;  // ids, names, keys, types
inline constexpr std::size_t kMaxFindingTextBytes = 16384;      // free text fields
inline constexpr std::size_t kMaxEventMetadataEntries = 16;
inline constexpr std::size_t kMaxEventMetadataKeyBytes = 64;
inline constexpr std::size_t kMaxEventMetadataValueBytes = 2048;

// The synthetic Patrol runtime finding (provider or credential failures) is a runtime
// condition, not an infrastructure problem: operators cannot acknowledge, snooze, dismiss,
// resolve or suppress it.
inline constexpr char kRuntimeFindingResourceId[] = "ai-service";
inline constexpr char kRuntimeFindingKey[] = "ai-patrol-error";
inline constexpr char kRuntimeFindingTitle[] = "Patrol cannot use its model";
inline constexpr char kRuntimeFindingSource[] = "patrol-runtime";

struct LifecycleEvent {
  absl::Time at;
  LifecycleEventType type = LifecycleEventType::kDetected;
  std::string message;
  // Loop state before and after, set when the event changed it.
  std::optional<LoopState> from;
  std::optional<LoopState> to;
  std::map<std::string, std::string> metadata;

  friend bool operator==(const LifecycleEvent&, const LifecycleEvent&) = default;
};

struct Finding {
  std::string id;   // FindingIdFor(resource_id, category, key)
  std::string key;  // the normalized dedupe key
  Severity severity = Severity::kWarning;
  Category category = Category::kGeneral;
  std::string resource_id;
  std::string resource_name;
  std::string resource_type;
  std::string resource_criticality;  // high|medium|low|"" (operator-set)
  std::string node;
  std::string title;
  std::string description;
  std::string impact;
  std::string previous_resolved_fix_summary;
  std::string recommendation;
  std::string evidence;
  std::string source;  // "ai-analysis" for model findings
  std::string failure_cause;
  absl::Time detected_at = absl::UnixEpoch();
  absl::Time last_seen_at = absl::UnixEpoch();
  std::optional<absl::Time> resolved_at;
  bool auto_resolved = false;
  std::string resolve_reason;
  std::optional<absl::Time> acknowledged_at;
  std::optional<absl::Time> snoozed_until;
  std::string alert_identifier;  // persisted; hidden from public JSON
  std::optional<DismissReason> dismissed_reason;
  std::string user_note;
  std::int64_t times_raised = 0;
  bool suppressed = false;
  std::optional<absl::Time> remind_at;
  std::int64_t remind_count = 0;
  std::string investigation_session_id;
  std::optional<InvestigationStatus> investigation_status;
  std::optional<InvestigationOutcome> investigation_outcome;
  std::optional<absl::Time> last_investigated_at;
  std::int64_t investigation_attempts = 0;
  // The governed action Patrol planned as this finding's fix ("" when none): the link the
  // action-store observer follows to project a human decision or an execution's verified
  // result onto investigation_outcome (patrol/fix_projection.h).
  std::string fix_action_id;
  // Owned by the investigation and objective features: kept as canonical JSON object text
  // (empty = absent) so this record round-trips them without interpreting them.
  std::string investigation_record_json;
  std::string objective_context_json;
  // The loop state as of the last write (DeriveLoopState at that time). Readers that need the
  // state now (a snooze may have lapsed since) call DeriveLoopState instead.
  std::optional<LoopState> loop_state;
  std::vector<LifecycleEvent> lifecycle;  // oldest first, at most kMaxLifecycleEvents
  std::int64_t regression_count = 0;
  std::optional<absl::Time> last_regression_at;
  std::optional<CapacityForecast> capacity_forecast;

  friend bool operator==(const Finding&, const Finding&) = default;
};

// now < snoozed_until (a snooze ending exactly now has lapsed).
bool IsSnoozed(const Finding& finding, absl::Time now);

// Active: not resolved, not snoozed, not suppressed, not dismissed.
bool IsActive(const Finding& finding, absl::Time now);

// The loop state, first match wins: suppressed, resolved (or fix_verified), snoozed,
// dismissed, investigating, needs_attention, remediation outcomes, timed_out, else detected.
LoopState DeriveLoopState(const Finding& finding, absl::Time now);

// Allowed loop-state moves: from resolved only to resolved|detected; from suppressed to
// suppressed|detected; from dismissed to dismissed|detected|suppressed|resolved; from snoozed to
// snoozed|detected|resolved|suppressed|dismissed; every other source is unrestricted and a
// state may always stay what it is.
bool IsLoopTransitionAllowed(LoopState from, LoopState to);

// Appends `event` and drops the oldest events beyond kMaxLifecycleEvents.
void AppendLifecycleEvent(Finding& finding, LifecycleEvent event);

// The newest event of `type`, or nullptr.
const LifecycleEvent* LatestEvent(const Finding& finding, LifecycleEventType type);

// True for the synthetic Patrol runtime finding (see kRuntimeFindingKey).
bool IsRuntimeFinding(const Finding& finding);

}  // namespace pulse::core
