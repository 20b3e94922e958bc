// AgenticLoop: claiming a session, starting and resuming runs, and persisting their result.
#include "pulse/core/loop/agentic_loop.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "loop_emitter.h"
#include "loop_run.h"
#include "pulse/core/json/json_object.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/core/loop/transcript.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

using json_internal::JsonObject;
using loop_internal::Emitter;

// Ends a call that never got a run: one error, then done.
absl::Status FailEarly(Emitter& events, std::string_view session_id, std::string_view code,
                       std::string_view reason, std::string_view outcome, absl::Status status,
                       int max_provider_calls) {
  const RunCounters none;
  const std::string message =
      status.message().empty() ? std::string(reason) : std::string(status.message());
  events.Error(code, reason, message, {}, none, max_provider_calls);
  events.Done(session_id, outcome, SessionState::kResolving, none);
  return status;
}

// A stored snapshot that cannot be restored never becomes a permissive state: the session
// starts over in RESOLVING, where writes are blocked until a target is established again.
SessionFsm RestoreFsm(const Clock& clock, const SessionSnapshot& snapshot) {
  absl::StatusOr<SessionFsm> restored = SessionFsm::Restore(clock, snapshot);
  return restored.ok() ? std::move(restored).value() : SessionFsm(clock);
}

// A new message supersedes a suspension: the plan stays in the lifecycle, but this
// conversation will not execute it.
void Supersede(SessionRecord& record) {
  const SuspendedCall& suspended = *record.suspended;
  Message& result = record.transcript[suspended.transcript_index];
  result.content = JsonObject()
                       .Str("status", "superseded")
                       .Bool("execution_requested", false)
                       .Bool("dispatched", false)
                       .Str("action_id", suspended.action_id)
                       .Str("message", kSupersededApproval)
                       .Finish();
  result.is_error = false;
  record.suspended.reset();
}

}  // namespace

std::string_view ToString(RunEnd end) {
  switch (end) {
    case RunEnd::kAnswered:
      return kOutcomeAnswered;
    case RunEnd::kFallbackSummary:
      return kOutcomeFallbackSummary;
    case RunEnd::kUnverified:
      return kOutcomeUnverified;
    case RunEnd::kAwaitingApproval:
      return kOutcomeAwaitingApproval;
    case RunEnd::kAwaitingInput:
      return kOutcomeAwaitingInput;
    case RunEnd::kFailed:
      return kOutcomeFailed;
  }
  return kOutcomeFailed;
}

SessionRecord LoopRun::SessionToPersist() const {
  SessionRecord record = session_;
  record.fsm = fsm_.Snapshot();
  record.facts = knowledge_.Facts();
  record.suspended.reset();
  record.status = SessionStatus::kIdle;
  if (end_ == RunEnd::kAwaitingApproval && suspended_.has_value()) {
    SuspendedCall suspended = *suspended_;
    suspended.counters = counters_;
    suspended.denied_fingerprints.assign(denied_.begin(), denied_.end());
    std::sort(suspended.denied_fingerprints.begin(), suspended.denied_fingerprints.end());
    record.suspended = std::move(suspended);
    record.status = SessionStatus::kAwaitingApproval;
  } else if (end_ == RunEnd::kAwaitingInput) {
    record.status = SessionStatus::kAwaitingInput;
  }
  record.updated_at = loop_.clock_.Now();
  RedactSessionSecrets(record);  // no stored or served copy of a session holds a secret
  return record;
}

std::string_view LoopRun::OutcomeName() const { return ToString(end_.value_or(RunEnd::kFailed)); }

RunOutcome LoopRun::Outcome() const {
  RunOutcome outcome;
  outcome.session_id = session_.id;
  outcome.end = end_.value_or(RunEnd::kFailed);
  outcome.final_text = final_text_;
  outcome.failure_reason = failure_reason_;
  outcome.counters = counters_;
  outcome.fsm_state = fsm_.State();
  return outcome;
}

AgenticLoop::AgenticLoop(LlmProvider& provider, const ToolRegistry& registry,
                         const ToolExecutor& executor, TaskRunner& runner, const Clock& clock,
                         SessionStore& sessions, ActionService& actions, IdSource& ids,
                         LoopOptions options)
    : provider_(provider),
      registry_(registry),
      executor_(executor),
      runner_(runner),
      clock_(clock),
      sessions_(sessions),
      actions_(actions),
      ids_(ids),
      options_(std::move(options)) {}

namespace {

// Persists the run's session (the CAS holds: the run claimed it) and closes the stream.
absl::StatusOr<RunOutcome> Finish(LoopRun& run, SessionStore& sessions, Emitter& events,
                                  int max_provider_calls) {
  absl::StatusOr<SessionRecord> saved = sessions.Update(run.SessionToPersist());
  if (!saved.ok()) {
    events.Error(kErrorCodeEngineError, kReasonSessionStore,
                 "The session could not be saved; this run's result is not persisted.", {},
                 run.counters(), max_provider_calls);
    events.Done(run.session().id, kOutcomeFailed, run.fsm().State(), run.counters());
    return saved.status();
  }
  events.Done(run.session().id, run.OutcomeName(), run.fsm().State(), run.counters());
  return run.Outcome();
}

}  // namespace

SessionKind SessionKindFor(const InvocationPolicy& policy) {
  const ExecutionProfile profile = policy.Profile();
  return profile == ExecutionProfile::kPatrolDetection ||
                 profile == ExecutionProfile::kPatrolInvestigation
             ? SessionKind::kPatrol
             : SessionKind::kChat;
}

absl::StatusOr<std::size_t> TrimSessions(SessionStore& sessions, SessionKind kind,
                                         std::size_t keep) {
  SessionListQuery query;
  query.kind = kind;
  query.limit = kMaxSessionListLimit;
  PULSE_ASSIGN_OR_RETURN(std::vector<SessionSummary> listed, sessions.List(query));
  std::size_t deleted = 0;
  for (std::size_t i = keep; i < listed.size(); ++i) {
    if (listed[i].status == SessionStatus::kRunning) {
      continue;  // a run holds it; a later trim takes it
    }
    const absl::Status s = sessions.Delete(listed[i].id);
    if (!s.ok() && !absl::IsNotFound(s)) {  // NotFound: deleted concurrently
      return s;
    }
    deleted += s.ok() ? 1 : 0;
  }
  return deleted;
}

absl::StatusOr<SessionRecord> AgenticLoop::ClaimForRun(const std::string& id,
                                                       const RunRequest& request, absl::Time now) {
  const SessionKind kind = SessionKindFor(request.policy);
  // An id this run just drew names no stored session: it is created without a read first (on
  // the unheard-of collision, Create's AlreadyExists refuses it as busy).
  absl::StatusOr<SessionRecord> existing =
      request.session_id.empty() ? absl::NotFoundError("a new session") : sessions_.Get(id);
  if (absl::IsNotFound(existing.status())) {
    SessionRecord fresh;
    fresh.id = id;
    fresh.status = SessionStatus::kRunning;
    fresh.kind = kind;
    fresh.owner = kind == SessionKind::kPatrol ? SessionOwner{} : request.owner;
    fresh.fsm = SessionFsm(clock_).Snapshot();
    fresh.created_at = now;
    fresh.updated_at = now;
    // AlreadyExists: a concurrent run created it first.
    absl::StatusOr<SessionRecord> created = sessions_.Create(fresh);
    if (created.ok() && kind == SessionKind::kPatrol && options_.patrol_session_retention > 0) {
      // Retention is housekeeping: a failed trim must not fail the run; the next run retries.
      TrimSessions(sessions_, kind, options_.patrol_session_retention).status().IgnoreError();
    }
    return created;
  }
  if (!existing.ok()) {
    return existing.status();
  }
  // Only the owner continues a session, and only a run of its kind (a Patrol session is never
  // continued): to anyone else it does not exist.
  // (An embedder without tokens runs every session with the empty owner, which matches.)
  if (existing->kind != kind || kind == SessionKind::kPatrol ||
      existing->owner.token_id != request.owner.token_id) {
    return absl::NotFoundError("no session of this caller has this id");
  }
  // A run that died with its process leaves `running` behind; it may be claimed once stale.
  const bool stale = now - existing->updated_at >= options_.stale_run_after;
  if (existing->status == SessionStatus::kRunning && !stale) {
    return absl::FailedPreconditionError("a run of this session is in progress");
  }
  SessionRecord next = std::move(existing).value();
  if (next.suspended.has_value()) {
    Supersede(next);
  }
  next.status = SessionStatus::kRunning;
  next.updated_at = now;
  return sessions_.Update(next);  // Aborted: a concurrent run claimed it first
}

absl::StatusOr<RunOutcome> AgenticLoop::Run(const RunRequest& request, EventSink& sink) {
  Emitter events(sink, options_.route);
  const int max_calls = options_.max_provider_calls;
  const std::string id =
      request.session_id.empty() ? absl::StrCat("ses_", ids_.NewId()) : request.session_id;
  if (absl::Status s = ValidateSessionId(id); !s.ok()) {
    events.Session("");
    return FailEarly(events, "", kErrorCodeEngineError, kReasonInvalidSession, kOutcomeFailed, s,
                     max_calls);
  }
  events.Session(id);
  const absl::Time now = clock_.Now();

  // A claim failure is `busy` (another run holds the session) or the store's own error.
  auto refuse = [&](absl::Status status) -> absl::Status {
    if (absl::IsNotFound(status)) {
      return FailEarly(events, id, kErrorCodeEngineError, kReasonInvalidSession, kOutcomeFailed,
                       std::move(status), max_calls);
    }
    const bool busy = absl::IsAborted(status) || absl::IsAlreadyExists(status) ||
                      absl::IsFailedPrecondition(status);
    return FailEarly(events, id, kErrorCodeEngineError,
                     busy ? kReasonSessionBusy : kReasonSessionStore, kOutcomeFailed,
                     busy ? absl::FailedPreconditionError("a run of this session is in progress")
                          : std::move(status),
                     max_calls);
  };
  absl::StatusOr<SessionRecord> claimed = ClaimForRun(id, request, now);
  if (!claimed.ok()) {
    return refuse(claimed.status());
  }

  SessionFsm fsm = RestoreFsm(clock_, claimed->fsm);
  events.WorkflowState("prepare", "Preparing Pulse context.", fsm.State());
  claimed->transcript.push_back(Message::User(request.user_message));
  LoopRun run(*this, events, request.policy, std::move(claimed).value(), std::move(fsm),
              request.cancelled);
  run.RunTurns();
  return Finish(run, sessions_, events, max_calls);
}

absl::StatusOr<RunOutcome> AgenticLoop::Resume(const ResumeRequest& request, EventSink& sink) {
  Emitter events(sink, options_.route);
  const int max_calls = options_.max_provider_calls;
  const std::string& id = request.session_id;
  if (absl::Status s = ValidateSessionId(id); !s.ok()) {
    events.Session("");
    return FailEarly(events, "", kErrorCodeResumeRefused, kReasonInvalidSession, kOutcomeFailed, s,
                     max_calls);
  }
  events.Session(id);
  absl::StatusOr<SessionRecord> existing = sessions_.Get(id);
  if (!existing.ok()) {
    const bool missing = absl::IsNotFound(existing.status());
    return FailEarly(events, id, missing ? kErrorCodeResumeRefused : kErrorCodeEngineError,
                     missing ? kReasonInvalidSession : kReasonSessionStore, kOutcomeFailed,
                     existing.status(), max_calls);
  }
  // Only the owner resumes a session; to anyone else it does not exist. Patrol sessions are
  // system sessions and never resume.
  if (existing->owner.token_id != request.owner.token_id) {
    return FailEarly(events, id, kErrorCodeResumeRefused, kReasonInvalidSession, kOutcomeFailed,
                     absl::NotFoundError("no session of this caller has this id"), max_calls);
  }
  if (existing->kind != SessionKind::kChat) {
    return FailEarly(events, id, kErrorCodeResumeRefused, kReasonNothingToResume, kOutcomeFailed,
                     absl::FailedPreconditionError("a Patrol session is never resumed"), max_calls);
  }
  if (existing->status != SessionStatus::kAwaitingApproval || !existing->suspended.has_value()) {
    return FailEarly(events, id, kErrorCodeResumeRefused, kReasonNothingToResume, kOutcomeFailed,
                     absl::FailedPreconditionError("the session has no call awaiting a decision"),
                     max_calls);
  }
  // Claim it: a concurrent resume of the same session loses this compare-and-swap.
  SessionRecord next = std::move(existing).value();
  next.status = SessionStatus::kRunning;
  next.updated_at = clock_.Now();
  const SuspendedCall suspended = *next.suspended;
  next.suspended.reset();
  absl::StatusOr<SessionRecord> updated = sessions_.Update(next);
  if (!updated.ok()) {
    const bool busy = absl::IsAborted(updated.status());
    return FailEarly(events, id, kErrorCodeEngineError,
                     busy ? kReasonSessionBusy : kReasonSessionStore, kOutcomeFailed,
                     busy ? absl::FailedPreconditionError("the session is being resumed already")
                          : updated.status(),
                     max_calls);
  }
  SessionRecord claimed = std::move(updated).value();

  // Puts the suspension back when the decision cannot be applied now.
  auto keep_suspended = [&](std::string_view code, std::string_view reason,
                            absl::Status status) -> absl::Status {
    SessionRecord back = claimed;
    back.status = SessionStatus::kAwaitingApproval;
    back.suspended = suspended;
    back.updated_at = clock_.Now();
    absl::StatusOr<SessionRecord> restored = sessions_.Update(back);
    if (!restored.ok()) {
      status = restored.status();
    }
    return FailEarly(events, id, code, reason, kOutcomeAwaitingApproval, std::move(status),
                     max_calls);
  };

  absl::StatusOr<Refusable<ActionRecord>> decided = actions_.Get(suspended.action_id);
  if (!decided.ok()) {
    return keep_suspended(kErrorCodeEngineError, kReasonActionService, decided.status());
  }
  if (!decided->refused() && decided->value().state == ActionState::kPendingApproval) {
    return keep_suspended(kErrorCodeResumeRefused, kReasonApprovalPending,
                          absl::FailedPreconditionError("the action has no decision yet"));
  }

  SessionFsm fsm = RestoreFsm(clock_, claimed.fsm);
  LoopRun run(*this, events, request.policy, std::move(claimed), std::move(fsm), request.cancelled);
  run.RestoreCounters(suspended);
  run.MarkContinuation();
  absl::Status apply_error;
  if (run.ApplyDecision(suspended, *decided, request.actor, apply_error) ==
      LoopRun::DecisionResult::kRetryLater) {
    claimed = run.session();
    return keep_suspended(kErrorCodeEngineError, kReasonActionService, apply_error);
  }
  run.RunTurns();
  return Finish(run, sessions_, events, max_calls);
}

}  // namespace pulse::core
