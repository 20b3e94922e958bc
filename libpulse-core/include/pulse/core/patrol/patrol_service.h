// PatrolService: one Patrol run, start to finish (docs/patrol.md). Begin reserves the
// scope's slot (one run at a time per scope), resolves the scope against the fleet and stores
// a `running` record; Execute then
//   1. seeds a FindingRunLedger with the active findings in scope;
//   2. snapshots every resource in scope and runs the deterministic triage (triage.h),
//      reporting through FindingsService (re-detection is a heartbeat) and stamping storage
//      forecasts;
//   3. when a model is configured (readiness gate; otherwise the record says why it did not
//      run), runs the Watch pass: an AgenticLoop under patrol_detection with a 4-turn budget and
//      a declining 7,000-output-token allowance (2,048 per turn, 1,024 for the summary; once
//      spent, the next turn is the tool-free final decision);
//      the finding tools record into the ledger, and a presented finding left without a
//      verdict makes the run an error;
//   4. after a successful full run, reconciles stale findings (performance|capacity by
//      absence, others only through the verifier);
//   5. at autonomy approval and above, investigates each new warning+ finding under
//      patrol_investigation (evidence budget from the settings, at most one proposal), plans
//      the proposal through ActionService and executes it only when the effective level admits
//      its auto-authorization class, the plan needs no approval, the resource has no
//      remediation lock and no maintenance window is active; everything else stays for a human.
//      Only an investigation that completed hands its proposal on (others record a
//      ProposalDropReason); the autonomy level, the acknowledgement, the lock and the window
//      are read again at admission and immediately before dispatch (a FixHoldReason when they
//      no longer admit it), never above the level the run started at;
//   6. stores the finished record (status healthy|issues_found|error).
// Thread-safety: every method may be called from any thread; runs of different scopes may
// proceed concurrently. Borrows every port; they must outlive the service.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/core/model/autonomy.h"
#include "pulse/core/model/model_route.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/id_source.h"
#include "pulse/core/ports/llm_provider.h"
#include "pulse/core/ports/metrics_history.h"
#include "pulse/core/ports/operator_state_store.h"
#include "pulse/core/ports/patrol_observer.h"
#include "pulse/core/ports/patrol_run_store.h"
#include "pulse/core/ports/session_store.h"
#include "pulse/core/ports/spend_guard.h"
#include "pulse/core/ports/task_runner.h"

namespace pulse::core {

// Watch-pass budgets (docs/patrol.md).
inline constexpr int kWatchMaxTurns = 4;
inline constexpr std::int64_t kWatchTokenAllowance = 7000;
inline constexpr int kWatchMaxTokensPerTurn = 2048;
inline constexpr int kWatchSummaryMaxTokens = 1024;
// Investigation keeps full depth: bounded by turns and the evidence budget (an
// operator setting), not by a token allowance.
inline constexpr int kInvestigationMaxTurns = 8;
// Reasons the model pass did not run.
inline constexpr std::string_view kSkipNoProvider = "no_provider_configured";
inline constexpr std::string_view kSkipTriageErrors = "triage_failed";
// The monthly spend cap is reached (the model source says so before the run; a pass whose
// call is refused mid-run ends with the loop's spend_cap_reached).
inline constexpr std::string_view kSkipSpendCapReached = "spend_cap_reached";

// Consecutive model failures (runs whose model could not be used, or a failed model check)
// before Patrol reports its runtime finding "Patrol cannot use its model" (docs/patrol.md).
inline constexpr int kModelFailureThreshold = 3;

// What Patrol learned about its model from its latest runs and checks (ModelHealth). In memory:
// a restart starts the count afresh (the runtime finding itself is stored and stays until the
// model works again).
struct PatrolModelHealth {
  int consecutive_failures = 0;
  std::string last_failure;  // reason code of the newest failure ("" when none)
  std::string last_failure_detail;
  std::optional<absl::Time> last_failure_at;
  std::optional<absl::Time> last_success_at;
};

// The model side of Patrol; absent when no provider is configured.
struct PatrolModel {
  LlmProvider& provider;
  SessionStore& sessions;
  TaskRunner& runner;
  ModelRoute route;
  LocalOnlySource local_only;         // as LoopOptions::local_only
  SpendGuard* spend_guard = nullptr;  // as LoopOptions::spend_guard (the monthly spend cap)
};

// A run's model side: a model, or none and why. The model is held for the whole run, so a
// change of the source's answer reaches the next run only (runs in flight finish on theirs).
struct PatrolModelChoice {
  std::shared_ptr<const PatrolModel> model;  // null: deterministic checks only
  // With no model: the run record's model_pass_skipped_reason ("" = kSkipNoProvider).
  std::string skipped_reason;
};
// Asked once at the start of every run, with the run's trigger (a scheduled run may first
// check the model, docs/patrol.md). Called on the run's thread; must be thread-safe.
using PatrolModelSource = std::function<PatrolModelChoice(PatrolTrigger)>;

struct PatrolServiceOptions {
  TriageThresholds thresholds;
  // Nullable borrow: where triage records containers' restart counts across runs (share the
  // TriageFindingVerifier's, so its re-check sees them). Null: the service keeps its own.
  RestartObservations* restart_observations = nullptr;
  // The identity Patrol plans and executes actions as.
  ActionActor actor{ActorKind::kPolicy, "pulse-patrol"};
  // Nullable borrow: the action lifecycle Patrol plans and executes through while the
  // effective level is full (an acknowledged Autopilot) — the same stores, but an automatic
  // ceiling that admits elevated capabilities, so an approval-free elevated capability is
  // planned without a human approval. Null: full plans through `actions` like every other
  // level, and an elevated plan waits for a human.
  ActionService* autopilot_actions = nullptr;
  // New findings investigated per run (the rest wait for a later run).
  std::size_t max_investigations_per_run = 3;
  std::string watch_prompt;          // system prompt of the Watch pass ("" = built-in)
  std::string investigation_prompt;  // system prompt of investigations ("" = built-in)
  // Set: where each run gets its model, instead of the constructor's `model` (pulse-server's
  // runtime AI settings, which an operator changes without a restart).
  PatrolModelSource model_source;
  // Nullable borrow: told each phase a run enters and each event of its Watch pass (the
  // Patrol stream). Must outlive the service.
  PatrolObserver* observer = nullptr;
};

// A reserved run, from Begin to Execute.
struct PatrolTicket {
  std::string run_id;
  std::string scope_key;
  PatrolScope scope;
  PatrolTrigger trigger = PatrolTrigger::kScheduled;
  absl::Time started_at;
  std::vector<FleetResource> resources;  // the resolved scope
};

// Begin's answer: a ticket, or why not.
struct PatrolBegin {
  std::optional<PatrolTicket> ticket;
  // Set when a run of the same scope holds the slot (patrol_already_running).
  std::string running_run_id;
};

namespace patrol_internal {
class StatusMemory;  // src/patrol/watch_evidence.h
}  // namespace patrol_internal

class PatrolService {
 public:
  // `model` is nullable (no provider: deterministic checks only).
  PatrolService(Fleet& fleet, FindingsService& findings, ActionService& actions,
                OperatorStateStore& operator_state, PatrolRunStore& runs,
                const MetricsHistory& metrics, const Clock& clock, IdSource& ids,
                std::optional<PatrolModel> model, PatrolServiceOptions options = {});
  ~PatrolService();
  PatrolService(const PatrolService&) = delete;
  PatrolService& operator=(const PatrolService&) = delete;

  // Reserves the scope's slot and stores a `running` record. Errors (nothing reserved):
  // NotFound (patrol_scope_unresolved) when a requested resource id does not exist or the
  // scope selects no resource; Unavailable when the fleet or the store cannot be read.
  [[nodiscard]] absl::StatusOr<PatrolBegin> Begin(const PatrolScope& scope, PatrolTrigger trigger);

  // Runs a reserved run to the end, stores and returns its record, and frees the slot.
  // Never fails: problems are recorded in the record (status error).
  PatrolRunRecord Execute(PatrolTicket ticket);

  // Frees a reserved run that will not execute and stores it as an error with `reason`.
  void Abandon(PatrolTicket ticket, std::string_view reason);

  // Makes the model calls of runs in progress (and any later run) stop at their next
  // boundary, and their stale reconciliation before its next batch; their records say so, and
  // skip the fleet summary (which reads every finding). For shutdown; irreversible.
  void Cancel();
  // Stops every investigation that has run longer than the investigation timeout
  // (AutonomySettings::investigation_timeout_sec): its loop ends at the next boundary and a
  // provider call in flight is abandoned; the finding records `timed_out` and nothing it
  // proposed is planned. The core keeps no timer, so the deadline is checked at every event
  // of the investigation's loop and whenever this is called — pulse-server calls it about
  // once a second. Returns how many investigations it stopped now.
  std::size_t EnforceInvestigationDeadlines();

  // Begin + Execute. FailedPrecondition (with the running id in the message) when the slot is
  // taken.
  [[nodiscard]] absl::StatusOr<PatrolRunRecord> Run(const PatrolScope& scope,
                                                    PatrolTrigger trigger);

  // The autonomy settings (loaded from the store at first use; defaults when none saved).
  [[nodiscard]] absl::StatusOr<AutonomySettings> Autonomy() const;
  [[nodiscard]] absl::Status SetAutonomy(const AutonomySettings& settings);
  // Reads the settings, applies `update` and saves what it returns, under one lock, so two
  // concurrent changes (a PUT and an acknowledgement) never lose each other. `update` returns
  // the settings to save, nullopt to save nothing, or an error passed back as it is (nothing
  // saved). Returns the settings as they stand afterwards.
  using AutonomyUpdate =
      absl::FunctionRef<absl::StatusOr<std::optional<AutonomySettings>>(const AutonomySettings&)>;
  [[nodiscard]] absl::StatusOr<AutonomySettings> UpdateAutonomy(AutonomyUpdate update);

  // The utilization thresholds (docs/patrol.md "Thresholds"): the saved ones, or the
  // defaults when none were saved. Each run reads them when its triage starts, so a change
  // reaches the next run without a restart.
  [[nodiscard]] absl::StatusOr<PatrolThresholdSettings> Thresholds() const;
  [[nodiscard]] absl::Status SetThresholds(const PatrolThresholdSettings& settings);

  // Ids of the runs in progress (any scope), oldest first.
  std::vector<std::string> RunningIds() const;

  // The model's recent record (PatrolModelHealth).
  PatrolModelHealth ModelHealth() const;
  // Records one use of the model: ok resets the failure count and resolves the runtime
  // finding; a failure (`reason` a stable code, `detail` for the operator) counts, and the
  // kModelFailureThreshold-th consecutive one reports the runtime finding (a heartbeat after
  // that). Runs call it themselves; pulse-server calls it for a tool-call preflight (a
  // preflight that observed a tool call is ok; one that answered without calling the tool is
  // not). Finding-store errors are returned; the count is updated regardless.
  [[nodiscard]] absl::Status ObserveModel(bool ok, std::string_view reason,
                                          std::string_view detail);
  // Whether runs may have a model: a constructor model or a model source (which may still
  // answer none for a run).
  bool model_configured() const { return model_.has_value() || options_.model_source != nullptr; }

 private:
  struct Work;  // one run's state (patrol_service.cc)

  void Triage(Work& work);
  void WatchPass(Work& work);
  void Reconcile(Work& work);
  void Remediate(Work& work);
  void Investigate(Work& work, const Finding& finding);
  PatrolRemediation InvestigateOnce(Work& work, const Finding& finding, std::string& session_id);
  // The operators' notes on the run's resources in scope (only `resource_id`'s when it is not
  // empty) as a prompt paragraph, "" when there are none (docs/patrol.md "Operator notes").
  std::string OperatorNotes(const Work& work, std::string_view resource_id) const;
  void Finish(Work& work);
  // Feeds the run's model outcome (Work::model_failure) to ObserveModel.
  void TrackModelHealth(Work& work);
  void Release(const PatrolTicket& ticket);
  void ObservePhase(const Work& work, std::string_view phase) const;

  // The autonomy in force for a fix now: the settings read again, never above the level the
  // run started at; `withdrawn` says why when it is lower (or could not be read).
  struct FixAuthority {
    AutonomyLevel level = AutonomyLevel::kMonitor;
    std::optional<FixHoldReason> withdrawn;
  };
  FixAuthority AuthorityNow(const Work& work) const;
  // Why `record` must not be dispatched automatically now (the plan's state, the autonomy in
  // force against its auto-authorization class, the remediation lock, the maintenance window,
  // an unreadable lock state); nullopt when everything admits it. Asked at admission and again
  // by the action lifecycle immediately before dispatch (ExecuteRequest::recheck).
  struct FixHold {
    FixHoldReason reason;
    std::string note;
  };
  std::optional<FixHold> HoldFor(const Work& work, const ActionRecord& record) const;

  Fleet& fleet_;
  FindingsService& findings_;
  ActionService& actions_;
  OperatorStateStore& operator_state_;
  PatrolRunStore& runs_;
  const MetricsHistory& metrics_;
  const Clock& clock_;
  IdSource& ids_;
  std::optional<PatrolModel> model_;
  PatrolServiceOptions options_;
  RestartObservations own_restarts_;  // used when options_.restart_observations is null
  // Each resource's status at the previous run (the Watch evidence's state changes).
  std::unique_ptr<patrol_internal::StatusMemory> last_status_;

  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
  // An investigation in progress: its own cancellation flag and when it must end.
  struct InvestigationWatch {
    std::shared_ptr<std::atomic<bool>> cancelled;
    absl::Time deadline;
  };
  // Registers an investigation (its flag starts set when the service is cancelled already);
  // returns its key for Unwatch.
  std::uint64_t Watch(const InvestigationWatch& watch) ABSL_LOCKS_EXCLUDED(mu_);
  void Unwatch(std::uint64_t key) ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::uint64_t, InvestigationWatch> investigations_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_investigation_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::string> running_ ABSL_GUARDED_BY(mu_);  // scope key -> run id
  std::vector<std::string> running_order_ ABSL_GUARDED_BY(mu_);
  PatrolModelHealth model_health_ ABSL_GUARDED_BY(mu_);
  // Serializes read-modify-write of the autonomy settings (which live in the run store).
  absl::Mutex settings_mu_;
};

}  // namespace pulse::core
