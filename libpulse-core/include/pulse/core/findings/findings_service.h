// FindingsService: the only way a finding changes. Patrol reports, assesses and resolves;
// operators acknowledge, snooze, dismiss, suppress and resolve; end-of-run reconciliation and
// the reminder sweep run on schedule; capacity forecasts are computed and stamped. Every
// transition appends exactly one lifecycle event (a re-detection that regresses or wakes a
// finding and also replaces its title appends both events); a no-op (acknowledging
// twice, an identical re-detection) appends none. Refusals of illegal transitions follow
// docs/architecture.md "Findings".
//
// Thread-safety: thread-safe if its ports are. Each change is a read-modify-write under the
// store's optimistic concurrency and is re-read and re-applied on a version clash (at most
// kMaxCasAttempts times, then Aborted), so concurrent callers never lose each other's
// updates. The ports are borrowed and must outlive the service.
//
// Errors (see finding_errors.h for their surface codes): InvalidArgument for bad input
// (nothing is persisted), NotFound for an unknown id, FailedPrecondition for a transition the
// finding's state does not allow, Aborted when clashes persist, and store errors unchanged.
// Refusals that are domain outcomes (a resolve the verifier did not confirm, a report blocked
// by a suppression rule) are OK results with a typed reason, not errors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/findings/operator_suppression.h"
#include "pulse/core/findings/run_ledger.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/suppression_rule.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/finding_store.h"
#include "pulse/core/ports/finding_verifier.h"
#include "pulse/core/ports/metrics_history.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::core {

namespace findings_internal {
struct Transition;  // the change context of one mutation (implementation detail)
struct Mutation;    // its result
}  // namespace findings_internal

inline constexpr int kMaxCasAttempts = 16;
inline constexpr std::int64_t kMinSnoozeHours = 1;
inline constexpr std::int64_t kMaxSnoozeHours = 168;
inline constexpr absl::Duration kWillFixLaterRemindAfter = absl::Hours(24 * 7);
// Verifications the stale reconciliation may spend per run; the rest wait for the next run.
inline constexpr int kMaxVerifiedStaleResolvesPerRun = 3;
// Resolves by absence ReconcileStale writes in one transaction (FindingStore::PutBatch); it
// checks its cancellation flag between two batches.
inline constexpr std::size_t kStaleResolveBatch = 512;
inline constexpr absl::Duration kDefaultForecastWindow = absl::Hours(48);
inline constexpr char kDefaultFindingSource[] = "ai-analysis";
inline constexpr char kStaleResolveReason[] = "No longer detected by patrol";
inline constexpr char kVerifiedStaleResolveReason[] =
    "Deterministic verification confirmed the issue cleared";

// Input limits of reports and operator text (the patrol tool schemas' limits).
inline constexpr std::size_t kMaxReportIdentifierBytes = 256;  // resource id/name/type, node
inline constexpr std::size_t kMaxReportKeyBytes = 128;
inline constexpr std::size_t kMaxReportTitleBytes = 256;
inline constexpr std::size_t kMaxReportTextBytes = 4096;  // description, evidence, ...
inline constexpr std::size_t kMaxNoteBytes = 4096;        // operator notes and reasons

// One patrol_report_finding. Strings are trimmed of surrounding ASCII whitespace first.
struct FindingReport {
  std::string resource_id;  // required
  std::string resource_name;
  std::string resource_type;
  Category category = Category::kGeneral;
  Severity severity = Severity::kWarning;
  std::string key;             // optional; defaults to the normalized title
  std::string title;           // required
  std::string description;     // required
  std::string impact;          // optional, never synthesized
  std::string recommendation;  // required
  std::string evidence;        // required
  std::string node;
  std::string source = kDefaultFindingSource;
};

enum class ReportDisposition {
  kCreated,                   // a new finding: `detected`
  kHeartbeat,                 // already active: refreshed, no event
  kContentReplaced,           // same id, unrelated title: `content_replaced`
  kRegressed,                 // it had been resolved: `regressed` (+ content_replaced)
  kReactivated,               // dismissed/suppressed, woken by escalation or a due reminder
  kSeenWhileSuppressed,       // dismissed/suppressed and not woken
  kMerged,                    // a new id folded into an equivalent active sibling
  kBlockedBySuppressionRule,  // a new id a rule covers: nothing stored
  // Operator state keeps the resource quiet (OperatorStateProjection::SuppressionCause): the
  // finding is stored (new) or kept, dismissed as expected_behavior with the cause recorded.
  kDismissedByOperatorState,
};
// Wire strings: created, heartbeat, content_replaced, regressed, reactivated,
// seen_while_suppressed, merged, blocked_by_suppression_rule, dismissed_by_intent.
std::string_view ToString(ReportDisposition disposition);

struct ReportOutcome {
  // The finding that now carries the report: the sibling when merged, the would-be id (not
  // stored) when blocked by a suppression rule.
  std::string finding_id;
  std::string reported_id;  // FindingIdFor(resource, category, key) of the report itself
  bool is_new = false;      // true only for kCreated
  ReportDisposition disposition = ReportDisposition::kHeartbeat;
  std::vector<LifecycleEventType> events;  // appended by this report, in order
};

// Why a Patrol resolve was refused (a domain outcome; nothing is written).
enum class ResolveRefusal {
  kNoVerifier,          // the category needs a verifier and none exists for this finding
  kSignalStillPresent,  // the verifier still detects the problem
  kVerifierInconclusive,
  kVerifierError,  // the verifier failed; treated exactly like inconclusive
};
// Wire strings: no_deterministic_verifier, verifier_still_detects, verifier_inconclusive,
// verifier_error.
std::string_view ToString(ResolveRefusal refusal);

struct ResolveOutcome {
  std::string finding_id;
  bool resolved = false;
  std::optional<ResolveRefusal> refusal;  // set exactly when !resolved
  std::string message;                    // human text for the model or operator
};

struct AssessOutcome {
  std::string finding_id;
  AssessVerdict verdict = AssessVerdict::kUncertain;
  bool applied = false;                   // false only for a refused `resolved` verdict
  std::optional<ResolveRefusal> refusal;  // why a `resolved` verdict did not close it
};

struct SuppressOutcome {
  Finding finding;
  SuppressionRule rule;
};

struct SuppressionRuleRequest {
  std::string resource_id;  // empty = any resource (broad)
  std::string resource_name;
  std::optional<Category> category;  // nullopt = any category (broad)
  std::string description;           // required
  bool allow_broad_scope = false;    // required for a broad rule
};

struct FindingQuery {
  std::optional<std::string> resource_id;
  std::optional<Category> category;
  bool include_inactive = false;
};

struct StaleReconciliation {
  std::vector<std::string> resolved;           // performance|capacity, resolved by absence
  std::vector<std::string> verified_resolved;  // other categories, verifier confirmed
  std::vector<std::string> kept;               // still active (no verifier, or not confirmed)
  std::vector<std::string> deferred;           // over the per-run verification budget
  // Stopped early by its `cancelled` flag: the lists hold what was done before it stopped.
  bool cancelled = false;
};

class FindingsService {
 public:
  // `operator_state` (nullable borrow): where the operator's declarations about resources are
  // read (C-FND-7). Without it reports behave as if no resource had any (suppression by
  // operator state is opt-in).
  FindingsService(FindingStore& store, const Clock& clock, FindingVerifier& verifier,
                  const MetricsHistory& metrics, OperatorStateStore* operator_state = nullptr);

  // --- Patrol ---

  // Records a detection (docs/architecture.md "Findings"): validates (InvalidArgument, nothing
  // stored), then updates the finding with the same id (heartbeat, content_replaced, regressed,
  // woken or seen_while_suppressed), or, for a new id, drops it when a suppression rule covers
  // resource + category, merges it into the best equivalent active sibling
  // (SiblingEquivalence; `duplicate_merged` once per duplicate id), or creates it.
  // Operator state (one OperatorStateProjectionFor read per report, docs/patrol.md "Operator
  // intent and maintenance"): the finding is stamped with the resource's criticality; while a
  // suppression cause holds, a new finding is created dismissed (expected_behavior, `detected`
  // then `dismissed` carrying operator_state_cause and, for a window, maintenance_end_at) and
  // an active one is dismissed the same way (kDismissedByOperatorState); a finding whose latest
  // dismissal carries a cause stays dismissed while one holds (no escalation wakes it) and
  // wakes with `suppression_lifted` (kReactivated) once none does. An operator's own later
  // dismissal is never woken this way. When the state cannot be read, nothing of this applies.
  [[nodiscard]] absl::StatusOr<ReportOutcome> Report(const FindingReport& report);

  // One verdict on an active finding: present refreshes evidence and last_seen_at (no
  // event); resolved goes through ResolveByPatrol; uncertain changes nothing. InvalidArgument
  // for empty evidence, NotFound for an unknown id, FailedPrecondition when not active. The
  // run records the verdict in its FindingRunLedger.
  [[nodiscard]] absl::StatusOr<AssessOutcome> Assess(std::string_view finding_id,
                                                     AssessVerdict verdict,
                                                     std::string_view evidence,
                                                     std::string_view reason = {});

  // Patrol's resolve (an assessment of "resolved"): in every category, only when the
  // FindingVerifier affirmatively reports kSignalGone (for performance|capacity, the
  // deterministic re-check of the metric); the model's evidence alone never closes a finding
  // (no verifier, still present, inconclusive or an error: refused with the reason, nothing
  // written). Resolving sets auto_resolved and appends `auto_resolved`. InvalidArgument for
  // empty reason or evidence; NotFound; FailedPrecondition when not active.
  [[nodiscard]] absl::StatusOr<ResolveOutcome> ResolveByPatrol(std::string_view finding_id,
                                                               std::string_view reason,
                                                               std::string_view evidence);

  // End-of-run reconciliation (docs/architecture.md "Findings"): for each of the ledger's
  // StaleCandidates still active, performance|capacity resolve by absence
  // (kStaleResolveReason); other categories only when the verifier confirms the signal is
  // gone (kVerifiedStaleResolveReason, at most kMaxVerifiedStaleResolvesPerRun verifications;
  // the rest are deferred); otherwise they stay active. Call it only after a successful full
  // run: it refuses (FailedPrecondition, nothing resolved) when ledger.CheckAllAssessed()
  // fails, since a missing verdict is a run error, never an all-clear.
  // The candidates are read kStaleResolveBatch at a time (FindingStore::GetBatch), and
  // resolves by absence are written kStaleResolveBatch to a transaction (a finding changed
  // meanwhile is resolved alone from a fresh read, if still active). When `cancelled` is set
  // and becomes true, it stops before the next batch or verification and returns what it did
  // (StaleReconciliation::cancelled); a staged batch is dropped, never half-written.
  [[nodiscard]] absl::StatusOr<StaleReconciliation> ReconcileStale(
      const FindingRunLedger& ledger, const std::atomic<bool>* cancelled = nullptr);

  // Records what a Patrol investigation of the finding came to: status, outcome (nullopt:
  // none yet), the investigation's session id, last_investigated_at = now, attempts + 1, and one
  // `investigation_record_updated` event carrying the outcome. The derived loop state follows
  // the outcome (fix_queued -> remediation_planned, fix_verified -> resolved, ...).
  // `fix_action_id` becomes the finding's fix link ("" clears it: this investigation planned
  // nothing). NotFound for an unknown id.
  [[nodiscard]] absl::StatusOr<Finding> RecordInvestigation(
      std::string_view finding_id, InvestigationStatus status,
      std::optional<InvestigationOutcome> outcome, std::string_view session_id,
      std::string_view fix_action_id = {});

  // Projects what became of the finding's fix (patrol/fix_projection.h) onto
  // investigation_outcome, with one `investigation_record_updated` event (metadata outcome,
  // action_id, action_state). Idempotent: nothing is written when the finding's fix link is not
  // `action_id` (an older plan, or none) or the outcome is already `outcome`. Returns whether
  // it wrote. NotFound for an unknown id; FailedPrecondition when the loop state may not move.
  [[nodiscard]] absl::StatusOr<bool> ProjectFixOutcome(std::string_view finding_id,
                                                       std::string_view action_id,
                                                       InvestigationOutcome outcome,
                                                       std::string_view action_state);

  // --- The Patrol runtime finding (kRuntimeFindingKey on kRuntimeFindingResourceId) ---
  // Reports it (source patrol-runtime, reliability, warning) with `evidence` saying what
  // failed; a heartbeat while it is active. InvalidArgument for empty evidence.
  [[nodiscard]] absl::StatusOr<ReportOutcome> ReportRuntimeFailure(std::string_view evidence);
  // Resolves it when active (auto_resolved, `reason`); returns whether it did.
  [[nodiscard]] absl::StatusOr<bool> ResolveRuntimeFailure(std::string_view reason);

  // --- Operator operations (each returns the finding as written) ---

  // Sets acknowledged_at; no state change. Acknowledging an acknowledged finding is a no-op.
  [[nodiscard]] absl::StatusOr<Finding> Acknowledge(std::string_view finding_id);
  // snoozed_until = now + hours; a non-empty note becomes user_note in the same write
  // (user_note_updated). InvalidArgument outside [kMinSnoozeHours, kMaxSnoozeHours] or for a
  // note over kMaxNoteBytes; FailedPrecondition for a resolved, dismissed or suppressed finding.
  [[nodiscard]] absl::StatusOr<Finding> Snooze(std::string_view finding_id,
                                               std::int64_t duration_hours,
                                               std::string_view note = {});
  // FailedPrecondition unless currently snoozed.
  [[nodiscard]] absl::StatusOr<Finding> Unsnooze(std::string_view finding_id);
  // not_an_issue also sets suppressed (no rule); will_fix_later sets remind_at = now + 7
  // days; expected_behavior clears remind_at. Acknowledges; keeps `note` when non-empty.
  // InvalidArgument for kSuppressed (use Suppress); FailedPrecondition when resolved or
  // suppressed (undismiss first).
  [[nodiscard]] absl::StatusOr<Finding> Dismiss(std::string_view finding_id, DismissReason reason,
                                                std::string_view note);
  // Clears dismissal, suppression, acknowledgement and remind_at; keeps the note. Rules are
  // not touched. FailedPrecondition when not dismissed or suppressed.
  [[nodiscard]] absl::StatusOr<Finding> Undismiss(std::string_view finding_id);
  // Operator resolve (no verifier gate: an operator's action is the evidence). A non-empty
  // note becomes user_note. FailedPrecondition when already resolved or suppressed.
  [[nodiscard]] absl::StatusOr<Finding> Resolve(std::string_view finding_id, std::string_view note);
  // Permanently suppresses the finding and adds the rule for its resource + category.
  // Idempotent. FailedPrecondition when resolved.
  [[nodiscard]] absl::StatusOr<SuppressOutcome> Suppress(std::string_view finding_id);
  // Replaces user_note (empty clears it); `user_note_updated`. Unchanged text is a no-op.
  [[nodiscard]] absl::StatusOr<Finding> SetNote(std::string_view finding_id, std::string_view note);

  // --- Reads ---
  [[nodiscard]] absl::StatusOr<Finding> Get(std::string_view finding_id) const;
  // The resource's operator state projected at now (C-FND-21): the one read suppression and
  // the investigation context share. A resource without state, or a service without the
  // store, projects to the defaults. Unavailable (or the store's error) when it cannot be read.
  [[nodiscard]] absl::StatusOr<OperatorStateProjection> OperatorStateProjectionFor(
      std::string_view resource_id) const;
  // Ordered by id; active only unless include_inactive.
  [[nodiscard]] absl::StatusOr<std::vector<Finding>> List(const FindingQuery& query) const;
  // The active findings that wait for their Patrol fix's outcome (AwaitsFixOutcome), by id,
  // read without decoding the rest of the store (FindingStore::ListAwaitingFixOutcome).
  [[nodiscard]] absl::StatusOr<std::vector<Finding>> ListAwaitingFixOutcome() const;
  // The findings active now as their keys (id, resource, severity), by id, read without
  // decoding a finding (FindingStore::ListActiveKeys).
  [[nodiscard]] absl::StatusOr<std::vector<ActiveFindingKey>> ListActiveKeys() const;
  // The findings among `ids` that exist, in the order of `ids`, read in one snapshot
  // (FindingStore::GetBatch); an unknown id is left out.
  [[nodiscard]] absl::StatusOr<std::vector<Finding>> GetMany(
      const std::vector<std::string>& ids) const;

  // --- Suppression rules ---
  // Creates (or returns the existing) rule for the scope, created_from manual.
  // InvalidArgument without a description, or for a broad scope without allow_broad_scope.
  [[nodiscard]] absl::StatusOr<SuppressionRule> AddSuppressionRule(
      const SuppressionRuleRequest& request);
  [[nodiscard]] absl::StatusOr<std::vector<SuppressionRule>> ListSuppressionRules() const;
  [[nodiscard]] absl::Status DeleteSuppressionRule(std::string_view rule_id);

  // --- Schedules ---
  // Re-surfaces will_fix_later findings whose remind_at has come (now >= remind_at):
  // dismissal cleared, remind_count + 1, `reminded`. Returns their ids, ordered.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> SweepReminders();

  // --- Capacity forecast ---
  // Samples of `metric` under `metrics_target_id` over [now - window, now] -> forecast.
  [[nodiscard]] absl::StatusOr<CapacityForecast> ForecastCapacity(
      std::string_view metrics_target_id, std::string_view metric,
      absl::Duration window = kDefaultForecastWindow) const;
  // Stores `forecast` as capacity_forecast on the active findings of `resource_id` (the
  // canonical id) whose category is capacity or whose resource type is storage or
  // physical_disk. No lifecycle event (a forecast is not a transition); unchanged findings
  // are not rewritten. Returns the ids written, ordered.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> StampCapacityForecast(
      std::string_view resource_id, const CapacityForecast& forecast);

 private:
  using Transition = findings_internal::Transition;
  using Mutation = findings_internal::Mutation;
  using Change = absl::FunctionRef<absl::Status(Transition&)>;

  // Read-modify-write of one finding under optimistic concurrency (see the class comment).
  absl::StatusOr<Mutation> Mutate(std::string_view finding_id, Change change);
  absl::StatusOr<Finding> MutateOperator(std::string_view finding_id, Change change);

  // `op`: the resource's operator state, nullopt when it could not be read.
  absl::StatusOr<std::optional<ReportOutcome>> ReportOnce(
      const Finding& incoming, const std::optional<OperatorStateProjection>& op);
  absl::StatusOr<ReportOutcome> ReportExisting(const Finding& incoming,
                                               const std::optional<OperatorStateProjection>& op);
  absl::StatusOr<std::optional<ReportOutcome>> MergeIntoSibling(const Finding& incoming,
                                                                absl::Time now);
  absl::StatusOr<bool> BlockedByRule(const Finding& incoming) const;
  absl::StatusOr<ResolveOutcome> ResolveVerified(const Finding& finding, std::string_view reason,
                                                 std::string_view evidence,
                                                 std::string_view verification);

  FindingStore& store_;
  const Clock& clock_;
  FindingVerifier& verifier_;
  const MetricsHistory& metrics_;
  OperatorStateStore* operator_state_;  // nullable: no operator state is read
};

}  // namespace pulse::core
