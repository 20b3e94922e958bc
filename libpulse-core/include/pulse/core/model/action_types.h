// Governed-action value types (docs/architecture.md "Governed actions"): the request and its actor,
// the plan with preflight and approval requirement, decisions, the two-axis result, the stored
// record and its append-only lifecycle events, and the lifecycle state graph.
// Plain values: copyable, comparable, no shared state, thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "pulse/core/model/capability.h"

namespace pulse::core {

// ---- lifecycle states -------------------------------------------------------------------

enum class ActionState {
  kPlanned,
  kPendingApproval,
  kApproved,
  kRejected,
  kExpired,
  kExecuting,
  kCompleted,
  kFailed,
};
// Wire: planned, pending_approval, approved, rejected, expired, executing, completed, failed.
std::string_view ToString(ActionState state);
std::optional<ActionState> ParseActionState(std::string_view text);
const std::vector<ActionState>& AllActionStates();

// rejected, expired, completed, failed: nothing ever leaves them.
bool IsTerminal(ActionState state);
// planned, pending_approval, approved: the states a plan's TTL applies to.
bool CanExpire(ActionState state);

// The lifecycle graph; every stored transition must be one of these edges:
//   planned          -> executing | expired | failed
//   pending_approval -> pending_approval (a decision below quorum) | approved | rejected |
//                       expired
//   approved         -> executing | expired | failed
//   executing        -> completed | failed
// `failed` from planned/approved is a permanent refusal before dispatch (drift, remediation
// lock, dry-run only); from executing it is a failed, inconclusive or interrupted execution.
bool IsLegalActionTransition(ActionState from, ActionState to);

// ---- actors and requests ----------------------------------------------------------------

// Who acts. Deliberately coarser than the wire's user|api_token|service|policy: a session
// user and a human's API token both act for a human (the credential is the auth layer's
// concern); an agent is software acting on its own judgement (Assistant, Patrol, an MCP
// client); a service is software acting for an operator's script (a service-kind token);
// policy is a standing automatic authorization. Only a human may approve.
enum class ActorKind { kHuman, kAgent, kPolicy, kService };
// Wire: human, agent, policy, service.
std::string_view ToString(ActorKind kind);
std::optional<ActorKind> ParseActorKind(std::string_view text);

struct ActionActor {
  ActorKind kind = ActorKind::kHuman;
  std::string id;  // stable subject id, 1..128 bytes of printable ASCII without spaces
  // A display label beside the id (the API token's name); "" when there is none. Not part of
  // the actor's identity: decisions, separation and plan identity compare kind and id only.
  std::string name{};

  friend bool operator==(const ActionActor&, const ActionActor&) = default;
};

// True when `a` and `b` are the same subject acting as the same kind (names are labels).
inline bool SameActor(const ActionActor& a, const ActionActor& b) {
  return a.kind == b.kind && a.id == b.id;
}

struct ActionRequest {
  std::string request_id;          // caller's idempotency key: [A-Za-z0-9._:-]{1,128}
  std::string resource_id;         // canonical, e.g. vm:101 (see resource_id.h)
  std::string capability_name;     // exact capability name
  std::string params_json = "{}";  // a JSON object; canonical after planning
  std::string reason;              // why; non-empty, at most kMaxActionTextBytes
  ActionActor actor;               // the authenticated requester (wire requestedBy = actor.id)
  // The requesting session's posture when it requires a human to approve every change it asks
  // for, whatever the capability's own floor (an Assistant session below autonomous), as a
  // stable token such as "control_level:controlled" (1..64 of [a-z0-9_:.-]). Empty: only the
  // capability's rule applies. Set by the server side (the pulse_control handler), never by a
  // client body; bound into the action id and plan hash when set.
  std::string approval_posture;

  friend bool operator==(const ActionRequest&, const ActionRequest&) = default;
};

inline constexpr std::size_t kMaxActionIdBytes = 128;
inline constexpr std::size_t kMaxActionTextBytes = 1024;

// ---- the plan ---------------------------------------------------------------------------

// The effective approval rule of one plan. It may strengthen the capability floor (never
// lower it).
struct ApprovalRequirement {
  ApprovalLevel floor = ApprovalLevel::kAdmin;
  int quorum = 1;                   // distinct approving humans needed, 1..16
  bool disallow_requester = false;  // the requester may not approve

  friend bool operator==(const ApprovalRequirement&, const ApprovalRequirement&) = default;
};

struct ActionPreflight {
  std::string target;           // the resource id
  std::string current_state;    // the resource status when planned
  std::string intended_change;  // one sentence: what will change
  bool dry_run_available = false;
  std::string dry_run_summary;
  std::vector<std::string> safety_checks;
  std::vector<std::string> verification_steps;

  friend bool operator==(const ActionPreflight&, const ActionPreflight&) = default;
};

struct ActionPlan {
  std::string action_id;  // "act_" + 32 hex, see action_identity.h
  std::string request_id;
  std::string resource_id;
  std::string capability_name;
  std::string params_json;  // validated, canonical
  bool allowed = false;     // executable in principle (false only for dry_run_only)
  bool requires_approval = true;
  ApprovalLevel approval_policy = ApprovalLevel::kAdmin;  // the capability's own floor
  ApprovalRequirement approval_requirement;               // the effective rule
  AutoAuthorization auto_authorization = AutoAuthorization::kNever;
  ActionRisk risk = ActionRisk::kMedium;
  std::vector<std::string> predicted_blast_radius;  // target first, then sorted neighbours
  bool rollback_available = false;
  std::string message;
  absl::Time planned_at;
  absl::Time expires_at;         // planned_at + TTL; expired when now >= expires_at
  std::string resource_version;  // "resource:sha256:" + 24 hex
  std::string policy_version;    // "policy:sha256:" + 24 hex
  std::string plan_hash;         // "sha256:" + 64 hex
  ActionPreflight preflight;

  friend bool operator==(const ActionPlan&, const ActionPlan&) = default;
};

// ---- decisions --------------------------------------------------------------------------

enum class DecisionOutcome { kApproved, kRejected };
// Wire: approved, rejected.
std::string_view ToString(DecisionOutcome outcome);
std::optional<DecisionOutcome> ParseDecisionOutcome(std::string_view text);

struct ApprovalRecord {
  ActionActor actor;
  DecisionOutcome outcome = DecisionOutcome::kRejected;
  std::string reason;
  absl::Time at;
  std::string plan_hash;  // the exact plan this decision binds to

  friend bool operator==(const ApprovalRecord&, const ApprovalRecord&) = default;
};

// ---- the two-axis result ----------------------------------------------------------------

enum class ExecutionStatus { kNotRun, kSucceeded, kFailed, kInconclusive };
// Wire: not_run, succeeded, failed, inconclusive.
std::string_view ToString(ExecutionStatus status);
std::optional<ExecutionStatus> ParseExecutionStatus(std::string_view text);

enum class VerificationStatus { kNotAttempted, kConfirmed, kContradicted, kInconclusive };
// Wire: not_attempted, confirmed, contradicted, inconclusive.
std::string_view ToString(VerificationStatus status);
std::optional<VerificationStatus> ParseVerificationStatus(std::string_view text);

enum class EvidenceClass { kNone, kAgentAttested, kIndependent };
// Wire: none, agent_attested, independent.
std::string_view ToString(EvidenceClass value);
std::optional<EvidenceClass> ParseEvidenceClass(std::string_view text);

struct ExecutionAxis {
  ExecutionStatus status = ExecutionStatus::kNotRun;
  std::string reason_code;  // stable snake_case token, empty when none
  std::string summary;

  friend bool operator==(const ExecutionAxis&, const ExecutionAxis&) = default;
};

struct VerificationAxis {
  VerificationStatus status = VerificationStatus::kNotAttempted;
  EvidenceClass evidence_class = EvidenceClass::kNone;
  std::string reason_code;
  std::string summary;
  std::string observer_id;  // empty when nothing observed
  std::optional<absl::Time> observed_at;

  friend bool operator==(const VerificationAxis&, const VerificationAxis&) = default;
};

// The canonical terminal truth of an action (ActionResultV2 without compensation). Written
// once, with the transition into completed or failed.
struct ActionExecutionResult {
  ExecutionAxis execution;
  VerificationAxis verification;
  // Human text; for refusals before dispatch it starts with a stable token such as
  // "plan_drift:" (see action_refusal.h).
  std::string error_message;
  bool dispatched = false;               // the capability was handed to the executor
  std::string executor_id;               // who ran it, empty when not dispatched
  std::optional<absl::Time> started_at;  // admission into executing
  absl::Time finished_at;

  friend bool operator==(const ActionExecutionResult&, const ActionExecutionResult&) = default;
};

// Only a succeeded execution confirmed by an independent observer verifies a fix.
bool IsVerifiedFix(const ActionExecutionResult& result);

// The legacy single-outcome projection (wire verificationOutcome.status): unknown (not
// attempted, or execution did not succeed), verified (confirmed), unverified (inconclusive),
// failed (contradicted). Derived, never stored.
std::string_view LegacyVerificationOutcome(const std::optional<ActionExecutionResult>& result);

// ---- the stored record and its events ---------------------------------------------------

struct ActionRecord {
  // Immutable identity: written once by ActionStore::InsertIfAbsent, never changed.
  ActionRequest request;
  ActionPlan plan;
  absl::Time created_at;
  // Mutable columns: changed only by ActionStore::Transition, one CAS at a time.
  ActionState state = ActionState::kPlanned;
  std::uint32_t decision_revision = 0;          // == approvals.size()
  std::vector<ApprovalRecord> approvals;        // append-only
  std::optional<ActionExecutionResult> result;  // set once, with a terminal state
  absl::Time updated_at;

  const std::string& id() const { return plan.action_id; }

  friend bool operator==(const ActionRecord&, const ActionRecord&) = default;
};

// The attempt id of an action's one dispatch, "<action_id>.dispatch.1": the idempotency key
// the fleet receives (ports/fleet.h DispatchRequest) and the key a store records the admission
// into `executing` under. An action is dispatched at most once, so there is no attempt 2.
std::string DispatchAttemptId(std::string_view action_id);

enum class LifecycleEventKind { kTransition, kDecision };
// Wire: transition, decision.
std::string_view ToString(LifecycleEventKind kind);
std::optional<LifecycleEventKind> ParseLifecycleEventKind(std::string_view text);

// One append-only lifecycle event. A transition event names the state entered; a decision
// event names the state after the decision and carries the decision.
struct ActionLifecycleEvent {
  std::string action_id;
  std::int64_t sequence = 0;  // assigned by the store: 1, 2, ... per action
  absl::Time at;
  ActionState state = ActionState::kPlanned;
  LifecycleEventKind kind = LifecycleEventKind::kTransition;
  std::optional<std::uint32_t> decision_revision;
  std::optional<DecisionOutcome> decision;
  std::optional<ActionActor> actor;
  std::string message;

  friend bool operator==(const ActionLifecycleEvent&, const ActionLifecycleEvent&) = default;
};

}  // namespace pulse::core
