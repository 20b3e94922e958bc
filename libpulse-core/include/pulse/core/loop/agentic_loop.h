// AgenticLoop: the engine that lets a model investigate and act, bounded by construction
// (docs/architecture.md "The agentic loop"). Each provider turn offers the full projected manifest
// (no keyword routing, no forced tool choice) and processes the returned calls in three phases:
//   1. pre-check, sequential in provider order: advertised this turn (else
//      TOOL_NOT_ADVERTISED), classify, policy decision, budgets, and the batch-aware FSM gate
//      (BatchGate). A call repeating an earlier *denied* call (same name and canonical
//      arguments) terminates the run before anything of that turn executes; repeating a
//      successful read is fine;
//   2. execute through the TaskRunner, at most 4 at once; sequentially in provider order when
//      patrol_get_findings shares the turn with a finding lifecycle write; an admitted
//      pulse_question runs alone and its siblings get a SKIPPED result;
//   3. post-process, sequential in provider order: results, events, FSM transitions (through
//      BatchGate), self-verification, knowledge extraction.
// Budgets: turns (the last one offers no tools), provider calls, tokens, money (a metered
// route's cost; an unknown price with a money budget set fails closed), evidence calls
// (investigation), consecutive all-error turns, calls per turn. A final answer is refused while
// the FSM says a change is unverified (a user-role instruction asks for evidence); after tools
// ran a final answer needs text after the last tool result, else one tool-free summary call,
// else a deterministic fallback. pulse_control plans that need a decision suspend the run
// durably (SessionStore); Resume executes the decided action through ActionService and feeds
// the outcome to the stored call.
// Every provider request passes the outbound context policy (outbound_context.h) for the loop's
// route first, with the local-only resources read again for each run; the provider never sees
// the raw transcript unless the route is a local model server. Each provider call's usage and
// cost is recorded in the session (TurnUsage) and the run's totals are reported in `done`.
// Provider failures before visible output are retried within per-class caps: connect failures
// (Unavailable, DeadlineExceeded) and incomplete streams up to max_provider_attempts, rate
// limits (ResourceExhausted, or Unavailable with a retry-after) up to max_rate_limit_attempts
// honouring the retry-after up to max_retry_delay. A cancelled run (RunRequest::cancelled, or
// CancelledError from the provider) is never retried: it ends failed with reason `cancelled`.
//
// Thread-safety: Run and Resume may be called concurrently for different sessions; a session
// is claimed by compare-and-swap in the SessionStore, so a second concurrent run of the same
// session is refused (session_busy). The loop borrows every port; they must outlive it.
// Errors: a run that fails (provider, budget, repeated denial) is a RunOutcome with
// end == kFailed, after exactly one `error` event; a non-OK status means the run could not
// start or its result could not be saved (store unreachable, unknown or invalid session,
// nothing to resume). Every call, whatever happens, emits `done` exactly once, last.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/core/loop/transcript.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/model_route.h"
#include "pulse/core/model/session_record.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/event_sink.h"
#include "pulse/core/ports/id_source.h"
#include "pulse/core/ports/llm_provider.h"
#include "pulse/core/ports/session_store.h"
#include "pulse/core/ports/spend_guard.h"
#include "pulse/core/ports/task_runner.h"
#include "pulse/core/tools/tool_registry.h"

namespace pulse::core {

// The most calls of one turn that ever run at the same time.
inline constexpr std::size_t kMaxToolConcurrency = 4;
// The smallest completion cap a declining output allowance ever leaves a request.
inline constexpr int kMinDecisionTokens = 256;

struct LoopOptions {
  std::string system_prompt;    // the operator's base prompt, frozen for the loop's life
  int max_turns = 20;           // provider turns per run; the last one offers no tools
  int max_provider_calls = 30;  // every provider request, retries and the summary included
  // Attempts per turn when the provider cannot be reached (Unavailable, DeadlineExceeded) or
  // its stream ends early, before any visible output: 2 is exactly one retry.
  int max_provider_attempts = 2;
  // Attempts per turn when the provider rate limits (ResourceExhausted, or Unavailable with a
  // retry-after, as a 503 with Retry-After), before any visible output.
  int max_rate_limit_attempts = 3;
  // The wait before retry n of a class is the failure's retry-after, else this × n.
  absl::Duration retry_base_delay = absl::Milliseconds(200);
  // A longer retry-after is terminal at once (provider_rate_limited), without sleeping.
  absl::Duration max_retry_delay = absl::Seconds(30);
  std::int64_t max_total_tokens = 0;  // input + output per run; 0 means no allowance
  // Money per run in US dollars, for a metered route (others have no per-token cost and are
  // not bounded by it). Checked before every provider call: a spent budget fails the run with
  // cost_budget_exhausted, an unknown price with cost_unknown (no call is made). Unset: none.
  std::optional<double> max_cost_usd;
  // Money per session in US dollars, for a metered route: the session's whole priced cost, its
  // earlier runs included (SessionRecord::usage_totals), so a chat continued turn after turn
  // stops at the operator's per-session cap (cost_budget_exhausted). Unset: none.
  std::optional<double> max_session_cost_usd;
  // Nullable borrow, outliving the loop: a cap shared by every run (the monthly spend cap),
  // asked before each metered provider call and told each priced call's cost. A refusal fails
  // the run with spend_cap_reached before the call is made.
  SpendGuard* spend_guard = nullptr;
  std::optional<int> max_tokens;  // completion cap per turn
  int summary_max_tokens = 1024;  // completion cap of the tool-free summary call
  // A declining allowance of output tokens per run (Patrol's Watch economy); 0 means
  // none. Every request's completion cap (max_tokens, or the summary's) is lowered to what is
  // left of it, never below kMinDecisionTokens; once it is spent the next turn offers no tools,
  // so high prior usage ends the run with a final answer instead of aborting it. Input tokens
  // are not counted here (max_total_tokens bounds them, when set).
  std::int64_t output_token_allowance = 0;
  // Patrol's Watch: after a turn whose parallel finding-lifecycle batch
  // (patrol_report/assess/resolve_finding) had both accepted and rejected calls, the run gets
  // one extra turn — once per run — that offers only those lifecycle tools, to repair the
  // rejected ones. Off: the turn budget is fixed.
  bool lifecycle_repair_turn = false;
  // Patrol's Watch: the last allowed turn offers exactly the finding-lifecycle tools
  // (patrol_report/assess_finding as the profile projects them) instead of none, with a
  // final-decision instruction that renders each one's required arguments from its registered
  // schema, so a model that read on every earlier turn can still record its verdicts; a write
  // there is followed by the tool-free summary call. The spent-allowance and error-brake turns
  // stay tool-free. Off: the last turn offers no tools.
  bool final_turn_lifecycle_tools = false;
  int max_evidence_calls = 12;                        // patrol_investigation only
  int max_consecutive_error_turns = 3;                // then the next turn offers no tools
  int max_calls_per_turn = 16;                        // later calls of a turn are refused, not run
  std::size_t max_concurrency = kMaxToolConcurrency;  // clamped to 1..kMaxToolConcurrency
  ProviderViewOptions view;                           // tool-result truncation and compaction
  // A session left `running` longer than this (its run died with the process) may be claimed
  // again; a live run never holds a session that long.
  absl::Duration stale_run_after = absl::Minutes(30);
  // Patrol (system) sessions kept: when a Patrol run creates its session, older Patrol sessions
  // beyond this many are deleted (TrimSessions). 0 keeps them all.
  std::size_t patrol_session_retention = kDefaultPatrolSessionRetention;
  // The route every provider call of this loop takes. It selects the outbound context policy
  // (only kLocalModelServer sees unsanitized context) and prices usage. The default is a
  // metered API with an unknown price: sanitized, and fail-closed under a money budget.
  ModelRoute route;
  // The resources to withhold from a non-local model, read at the start of every run (wiring
  // typically binds LoadLocalOnlyResources over the OperatorStateStore and the Fleet). Unset:
  // none. An error fails the run (local_only_state_unavailable) before any provider call,
  // unless the route is a local model server, which never asks.
  LocalOnlySource local_only;
};

struct RunRequest {
  std::string session_id;  // empty: a new session with a fresh id
  std::string user_message;
  InvocationPolicy policy;  // the authority this run executes with
  // Set to true by whoever gives up on the run (the client left, the operator stopped it):
  // checked at every turn boundary, before every provider call and during retry waits, and
  // handed to the provider with every request. Null: the run cannot be cancelled.
  std::shared_ptr<std::atomic<bool>> cancelled = nullptr;
  // The token the run acts for. A new session belongs to it; an existing one is continued only
  // when it belongs to exactly this owner and is of this run's kind (SessionKindFor), else the
  // run fails as if the session did not exist (NotFound). Patrol runs have no owner.
  SessionOwner owner = {};
};

struct ResumeRequest {
  std::string session_id;
  InvocationPolicy policy;  // the resuming caller's authority (re-checked before executing)
  ActionActor actor;        // who executes the decided action
  std::shared_ptr<std::atomic<bool>> cancelled = nullptr;  // as RunRequest::cancelled
  // The resuming token: only the session's owner resumes it (else NotFound); a Patrol session
  // is never resumed.
  SessionOwner owner = {};
};

// The kind of session a run under `policy` works on: Patrol profiles run Patrol (system)
// sessions, everything else chat sessions.
SessionKind SessionKindFor(const InvocationPolicy& policy);

// Deletes every session of `kind` except the `keep` most recently updated and any a run holds
// now (status running). Returns how many were deleted; stops at the first store error.
absl::StatusOr<std::size_t> TrimSessions(SessionStore& sessions, SessionKind kind,
                                         std::size_t keep);

enum class RunEnd {
  kAnswered,          // the model gave a final answer
  kFallbackSummary,   // no final text from the model: the deterministic summary was used
  kUnverified,        // the budget ran out while a change was unverified
  kAwaitingApproval,  // suspended on an action decision
  kAwaitingInput,     // a question was shown to the user
  kFailed,            // terminated: see failure_reason
};
std::string_view ToString(RunEnd end);

struct RunOutcome {
  std::string session_id;
  RunEnd end = RunEnd::kFailed;
  std::string final_text;      // the final assistant text, when there is one
  std::string failure_reason;  // a stable reason from loop_event.h when kFailed
  RunCounters counters;
  SessionState fsm_state = SessionState::kResolving;
};

class AgenticLoop {
 public:
  // Borrows everything. `executor` must be bound over `registry` (the loop classifies and
  // decides against the registry, and executes through the executor).
  AgenticLoop(LlmProvider& provider, const ToolRegistry& registry, const ToolExecutor& executor,
              TaskRunner& runner, const Clock& clock, SessionStore& sessions,
              ActionService& actions, IdSource& ids, LoopOptions options = {});

  AgenticLoop(const AgenticLoop&) = delete;
  AgenticLoop& operator=(const AgenticLoop&) = delete;

  // Appends the user message to the session (created when new or unnamed) and runs turns until
  // a final answer, a suspension or a terminal failure. A session suspended on an approval is
  // superseded: its plan stays in the lifecycle but this conversation no longer executes it.
  // Status errors: InvalidArgument (bad session id), FailedPrecondition (session busy), and
  // any SessionStore error.
  absl::StatusOr<RunOutcome> Run(const RunRequest& request, EventSink& events);

  // Continues a run suspended on an approval after the decision: an approved plan (one with a
  // recorded human approval of the stored plan hash; resuming is never itself an approval) is
  // re-checked against the policy and the FSM and then executed through ActionService bound to
  // the stored plan hash; a plan with no approval record is refused, a rejected or expired plan
  // yields a non-error result and leaves the FSM unchanged. The outcome becomes the stored
  // call's result and the run goes on. Status errors: NotFound (unknown session),
  // FailedPrecondition (nothing suspended, or no decision yet: the session stays suspended),
  // and any SessionStore or ActionService error.
  absl::StatusOr<RunOutcome> Resume(const ResumeRequest& request, EventSink& events);

  const LoopOptions& options() const { return options_; }

 private:
  friend class LoopRun;

  // Loads or creates the session and moves it to `running` by compare-and-swap (superseding a
  // suspension). FailedPrecondition, Aborted or AlreadyExists: another run holds it. NotFound:
  // it exists but is not `request`'s (another owner, or another kind).
  absl::StatusOr<SessionRecord> ClaimForRun(const std::string& id, const RunRequest& request,
                                            absl::Time now);

  LlmProvider& provider_;
  const ToolRegistry& registry_;
  const ToolExecutor& executor_;
  TaskRunner& runner_;
  const Clock& clock_;
  SessionStore& sessions_;
  ActionService& actions_;
  IdSource& ids_;
  LoopOptions options_;
};

}  // namespace pulse::core
