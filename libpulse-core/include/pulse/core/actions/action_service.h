// ActionService: the governed-action lifecycle — plan, decide, execute, verify — over the
// ActionStore, Fleet, OperatorStateStore, AuditLog and Clock ports. Every state change is one
// typed CAS in the store, so concurrent callers (two executes, a decision racing an expiry)
// resolve to exactly one winner and the others get a typed refusal; nothing is dispatched twice.
// Thread-safety: safe to call from any number of threads if the ports are; the service holds
// no mutable state besides an atomic counter. It borrows the ports, which must outlive it.
//
// Results: absl::StatusOr<Refusable<T>>. A refusal carries the closed AgentErrorCode of the
// surface (sets P, D and E of docs/api.md); a non-OK status means the engine could
// not decide (Unavailable / Internal from a port) and nothing was dispatched because of it.
// One exception, Execute after a dispatch whose result could not be recorded, is typed: see
// ExecuteDispatchedUnrecorded.
//
// Execute gates, in this order (the first that applies answers):
//   1. malformed id -> missing_id / invalid_id; no valid actor -> action_actor_unavailable;
//      unknown id -> action_not_found
//   2. planHash given and different -> action_plan_identity_mismatch
//   3. completed | failed -> the stored record, replayed (idempotent, never dispatched again)
//   4. executing -> action_already_executing
//   5. rejected | expired -> action_execution_final
//   6. now >= expires_at -> persisted expired, action_plan_expired
//   7. dry_run_only -> persisted failed "action_dry_run_only: ...", action_dry_run_only
//   8. pending_approval -> action_not_approved
//   9. planned, actor is an agent/policy other than the requester -> action_execution_forbidden
//  10. drift (plan rebuilt from the live resource, catalogue and relationships differs) ->
//      persisted failed "plan_drift: ...", action_plan_drift; fleet unreadable ->
//      action_execution_unavailable (nothing persisted; retry later)
//  11. remediation lock set -> persisted failed "resource_remediation_locked: ...",
//      resource_remediation_locked. The lock refuses every dispatch, human-approved or not
//      (operator state outranks approval). Lock state unreadable -> when the action is backed
//      by a human (an approval on record, or a human executing it) dispatch proceeds and the
//      degraded read is audited; otherwise persisted failed
//      "remediation_lock_state_unknown: ...", resource_remediation_locked (fail closed).
//  11b. the request's DispatchRecheck, when given, runs after every other gate and immediately
//      before admission into executing: a refusal (or an error) -> action_execution_forbidden
//      "dispatch_authority_withdrawn: ..." (nothing persisted, audited; the plan stays).
//  12. CAS into executing (+ event) BEFORE dispatch; losing it maps the winner's state as in
//      3-5.
//  13. Fleet::Dispatch once (attempt id "<action_id>.dispatch.1"); then, unless the executor
//      says it did not run, Fleet::ObservePostcondition; then CAS into completed (execution
//      succeeded) or failed (anything else) with the two-axis result. When that CAS cannot
//      commit, the dispatch has still happened: a store error is returned carrying
//      kActionDispatchedPayload (the record stays executing until
//      ReconcileInterruptedExecutions settles it), a lost CAS is the refusal
//      action_not_executing with `dispatched` set. The action never dispatches again either way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/actions/action_planner.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/ports/action_store.h"
#include "pulse/core/ports/audit_log.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::core {

struct DecideRequest {
  std::string action_id;
  DecisionOutcome outcome = DecisionOutcome::kRejected;
  std::string reason;                    // optional, at most kMaxActionTextBytes
  std::optional<std::string> plan_hash;  // when given, must equal the record's
  ActionActor actor;                     // the authenticated decider
};

// The caller's own authority, read again at dispatch time (gate 11b): nullopt admits; a
// message refuses (the plan stays as it is, for a human). A non-OK status fails closed the same
// way. Automation whose authority can be withdrawn while it works (Patrol: its autonomy level,
// the Autopilot acknowledgement, the remediation lock, the maintenance window) supplies one, so
// the authority that admitted a fix is the authority in force when it is dispatched.
using DispatchRecheck =
    std::function<absl::StatusOr<std::optional<std::string>>(const ActionRecord& record)>;

struct ExecuteRequest {
  std::string action_id;
  std::string reason;  // optional, recorded in the events
  std::optional<std::string> plan_hash;
  ActionActor actor;        // the authenticated executor (a human, or automation)
  DispatchRecheck recheck;  // optional; see DispatchRecheck
};

struct PlanOutcome {
  ActionRecord record;
  bool created = false;  // false: an identical plan already existed and is returned as stored
};

struct DecideOutcome {
  ActionRecord record;
  bool replayed = false;  // the same actor already made this exact decision
};

struct ExecuteOutcome {
  ActionRecord record;
  bool replayed = false;    // the action was already terminal; nothing ran now
  bool dispatched = false;  // this call handed the capability to the executor
};

class ActionService {
 public:
  ActionService(ActionStore& store, Fleet& fleet, OperatorStateStore& operator_state,
                AuditLog& audit, const Clock& clock, ActionPolicyOptions options = {});

  ActionService(const ActionService&) = delete;
  ActionService& operator=(const ActionService&) = delete;

  // Plans `request` (request.actor is the authenticated requester). Refusals (set P):
  // action_actor_unavailable, invalid_action_request, resource_not_found, capability_not_found,
  // action_execution_unavailable (fleet unreadable or an invalid capability declaration).
  // An identical request against an unchanged resource yields the same action id and returns
  // the stored record (created=false) whatever its state now (expiry is materialized).
  // Initial events: planned ("Action plan created."), plus pending_approval when approval is
  // needed.
  [[nodiscard]] absl::StatusOr<Refusable<PlanOutcome>> Plan(const ActionRequest& request);

  // Records one decision. Order: id/actor checks; action_not_found; planHash ->
  // action_plan_identity_mismatch; the same actor's earlier decision -> identical outcome and
  // reason: the stored record (replayed), else action_decision_conflict; expiry -> persisted
  // expired, action_plan_expired; not pending_approval -> action_not_pending; a non-human ->
  // action_approval_forbidden; approvals only: mfa floor -> action_step_up_unavailable (no
  // step-up verifier exists yet), requester when separation is required ->
  // action_separation_required, drift -> action_plan_drift, remediation lock ->
  // resource_remediation_locked (neither persisted: the plan stays pending). A rejection is
  // terminal. An approval moves to approved once `quorum` distinct humans approved, else stays
  // pending_approval with the revision advanced. Concurrent decisions retry on the revision.
  [[nodiscard]] absl::StatusOr<Refusable<DecideOutcome>> Decide(const DecideRequest& request);

  // Executes an approved (or approval-free) plan; see the gate order above.
  [[nodiscard]] absl::StatusOr<Refusable<ExecuteOutcome>> Execute(const ExecuteRequest& request);

  // The record, with expiry materialized. Refusals: missing_id, invalid_id, action_not_found.
  [[nodiscard]] absl::StatusOr<Refusable<ActionRecord>> Get(std::string_view action_id);

  // The record's lifecycle events in order. Refusals as Get.
  [[nodiscard]] absl::StatusOr<Refusable<std::vector<ActionLifecycleEvent>>> Events(
      std::string_view action_id);

  // Moves up to `limit` plans past their TTL to expired. Returns how many moved.
  // When the store reports a WriteGeneration, a sweep that moved none is remembered: until the
  // generation changes, the clock reaches the earliest TTL among the plans it listed or goes
  // back, a sweep with at most its limit (any limit, when it listed every live plan) would list
  // the same plans and move none, so it returns 0 without reading the store (the views call it
  // on every read of action state, and it loads up to `limit` records).
  [[nodiscard]] absl::StatusOr<std::size_t> SweepExpired(std::size_t limit);

  // Drift of `record` against the live fleet, exactly as approval and execute check it:
  // nullopt when none, the plan_drift message when drifted (a resource that no longer exists
  // is drift); a non-OK status when the fleet could not be read. Reads only.
  [[nodiscard]] absl::StatusOr<std::optional<std::string>> CheckDrift(const ActionRecord& record);

  const ActionPolicyOptions& options() const { return options_; }

  // AuditLog appends that failed (the lifecycle events in the store remain the authoritative
  // history; a failed audit append never blocks or undoes a transition). For /metrics.
  std::uint64_t audit_failures() const { return audit_failures_.load(); }

 private:
  // What a gate decided: pass on to the next gate, answer the caller with a refusal, or re-read
  // the record and start over because a concurrent change won a CAS.
  struct Gate {
    enum class Verdict { kPass, kRefuse, kRetry };
    Verdict verdict = Verdict::kPass;
    std::optional<ActionRefusal> refusal;
  };

  // Loads a record or answers the id/not-found refusals.
  absl::StatusOr<Refusable<ActionRecord>> Load(std::string_view action_id);
  // Load, then the identity gate of Decide and Execute: a presented plan hash that is not the
  // record's is refused (and audited) as kActionPlanIdentityMismatch.
  absl::StatusOr<Refusable<ActionRecord>> LoadPresented(std::string_view action_id,
                                                        const std::optional<std::string>& plan_hash,
                                                        const ActionActor& actor);
  // Moves `record` to expired when its TTL has passed (a lost race re-reads and retries) and
  // returns the record as stored afterwards.
  absl::StatusOr<ActionRecord> MaterializeExpiry(const ActionRecord& record);
  // A refusal that changes nothing, audited.
  ActionRefusal RefuseAndAudit(const ActionRecord& record, AgentErrorCode code, std::string message,
                               const ActionActor& actor);
  // Persists a permanent pre-dispatch refusal as failed (not run) and refuses with `code`;
  // kRetry when a concurrent change won the CAS.
  absl::StatusOr<Gate> PersistRefusal(const ActionRecord& record, AgentErrorCode code,
                                      const std::string& message, const ActionActor& actor);
  // Reads the live plan inputs (resource, catalogue, relationships) of one resource.
  absl::StatusOr<PlanInputs> ReadPlanInputs(std::string_view resource_id);
  // The readiness an approval re-runs (drift, remediation lock); nullopt when ready.
  absl::StatusOr<std::optional<ActionRefusal>> ApprovalReadiness(const ActionRecord& record,
                                                                 const DecideRequest& request);
  // Execute gates 6-9 and 10-11 (see the order above).
  absl::StatusOr<Gate> LifecycleGates(const ActionRecord& record, const ExecuteRequest& request);
  absl::StatusOr<Gate> DriftAndLockGates(const ActionRecord& record, const ExecuteRequest& request);
  // Gate 13: dispatch once, observe, then record the terminal result.
  ActionExecutionResult RunDispatch(const ActionRecord& record, absl::Time started_at);
  absl::StatusOr<Refusable<ExecuteOutcome>> RecordResult(const ActionRecord& record,
                                                         const ActionExecutionResult& result,
                                                         const ExecuteRequest& request);
  void Audit(std::string_view event, std::string_view action_id, std::string_view resource_id,
             const ActionActor* actor, std::string_view code, std::string_view message);
  void AuditRefusal(const ActionRefusal& refusal, std::string_view action_id,
                    std::string_view resource_id, const ActionActor& actor);

  ActionStore& store_;
  Fleet& fleet_;
  OperatorStateStore& operator_state_;
  AuditLog& audit_;
  const Clock& clock_;
  const ActionPolicyOptions options_;
  std::atomic<std::uint64_t> audit_failures_{0};
  // The last sweep that saw every live plan and moved none (SweepExpired).
  struct QuietSweep {
    std::uint64_t generation = 0;     // the store's, read before that sweep's listing
    absl::Time at;                    // when it listed
    std::optional<absl::Time> until;  // the earliest TTL among the plans it listed
    std::size_t limit = 0;            // its limit
    bool complete = false;            // it listed fewer than its limit: every live plan
  };
  absl::Mutex sweep_mu_;
  std::optional<QuietSweep> quiet_sweep_ ABSL_GUARDED_BY(sweep_mu_);
};

// Type URL of the payload Execute attaches to a non-OK status returned after Fleet::Dispatch
// ran (the result could not be stored).
inline constexpr char kActionDispatchedPayload[] = "type.pulse.dev/pulse.core.ActionDispatched";

// True when an Execute answer says the capability WAS dispatched although its outcome could
// not be recorded: a non-OK status carrying kActionDispatchedPayload, or a refusal with
// `dispatched` set. The caller must take the change as made (verify it before concluding) and
// must not plan the same change again as if nothing had happened.
bool ExecuteDispatchedUnrecorded(const absl::StatusOr<Refusable<ExecuteOutcome>>& executed);

// Checks an action id as the surface does: empty -> missing_id; longer than 128 bytes or
// outside [A-Za-z0-9_-] -> invalid_id. nullopt when valid.
std::optional<ActionRefusal> ValidateActionIdSyntax(std::string_view action_id);

// The shape checks of a decide/execute call: the id (ValidateActionIdSyntax), the actor
// (action_actor_unavailable) and the optional reason (`invalid_reason_code` when longer than
// kMaxActionTextBytes or not clean UTF-8). nullopt when valid.
std::optional<ActionRefusal> CheckCallShape(std::string_view action_id, const ActionActor& actor,
                                            std::string_view reason,
                                            AgentErrorCode invalid_reason_code);

}  // namespace pulse::core
