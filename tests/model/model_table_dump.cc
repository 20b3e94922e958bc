// Prints the safety kernel's transition tables as the real C++ computes them, in exactly the
// enumeration order and row format of libpulse-core/model/tables.pml, which prints the same
// tables from the Promela model's inlines. tests/model/check-tables.sh diffs the two: a change
// to either the C++ (SessionFsm, EffectOf, BatchGate, the action graph and CAS) or the model
// that the other does not share fails with the differing rows.
//
// Inputs: every valid session snapshot x every event; every batch of 1..3 calls x every
// outcome of its admitted calls; every action state pair; every stored action record (state x
// revision) x every transition ActionService builds x the caller's plan hash and revision.
// A verdict or state that depends on the telemetry-only blocked-write counter is printed as an
// extra COUNTER_DEPENDENT row, which the model never prints.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/actions/action_planner.h"
#include "pulse/core/fsm/batch_gate.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/model/action_transition.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/testing/fake_clock.h"

namespace {

using pulse::core::ActionExecutionResult;
using pulse::core::ActionLifecycleEvent;
using pulse::core::ActionRecord;
using pulse::core::ActionState;
using pulse::core::ActionTransition;
using pulse::core::ActorKind;
using pulse::core::ApprovalRecord;
using pulse::core::BatchCall;
using pulse::core::BatchGate;
using pulse::core::DecisionOutcome;
using pulse::core::ExecutionStatus;
using pulse::core::FsmBlockedError;
using pulse::core::FsmEffect;
using pulse::core::InvocationClass;
using pulse::core::MutationTarget;
using pulse::core::SessionFsm;
using pulse::core::SessionSnapshot;
using pulse::core::SessionState;
using pulse::core::ToolKind;

enum class Effect { kRead = 0, kWrite = 1, kNone = 2 };

// A representative invocation class of each FSM effect (EffectOf maps them back; the
// `effect` rows pin that mapping for every class).
InvocationClass ClassOf(Effect effect) {
  switch (effect) {
    case Effect::kRead:
      return {ToolKind::kRead, MutationTarget::kNone};
    case Effect::kWrite:
      return {ToolKind::kWrite, MutationTarget::kInfrastructure};
    case Effect::kNone:
      return {ToolKind::kWrite, MutationTarget::kPulseState};
  }
  return {};
}

const char* EffectName(Effect effect) {
  switch (effect) {
    case Effect::kRead:
      return "read";
    case Effect::kWrite:
      return "write";
    case Effect::kNone:
      return "none";
  }
  return "?";
}

const char* EffectName(FsmEffect effect) {
  switch (effect) {
    case FsmEffect::kRead:
      return "read";
    case FsmEffect::kWrite:
      return "write";
    case FsmEffect::kNone:
      return "none";
  }
  return "?";
}

// The model's verdict names: the reason constant identifies R1/R2/R3.
std::string Verdict(const std::optional<FsmBlockedError>& block) {
  if (!block.has_value()) {
    return "ALLOW";
  }
  std::string name = "UNKNOWN_REASON";
  if (block->reason == pulse::core::kFsmReasonNoValidatedTarget) {
    name = "R1";
  } else if (block->reason == pulse::core::kFsmReasonWriteUnverified) {
    name = "R2";
  } else if (block->reason == pulse::core::kFsmReasonAnswerUnverified) {
    name = "R3";
  }
  if (!block->recoverable) {
    name += "_UNRECOVERABLE";
  }
  return name;
}

std::string Session(const SessionFsm& fsm) {
  return std::string(pulse::core::ToString(fsm.State())) +
         " raw=" + (fsm.ReadAfterWrite() ? "1" : "0") +
         " wrote=" + (fsm.WroteThisEpisode() ? "1" : "0");
}

struct SessionKey {
  SessionState state;
  bool raw;
  bool wrote;
};

// Every snapshot SessionFsm::Restore accepts, abstracted to (state, raw, wrote), in the
// model's order (state, then raw, then wrote).
std::vector<SessionKey> ValidSessions() {
  std::vector<SessionKey> out;
  for (SessionState state : {SessionState::kResolving, SessionState::kReading,
                             SessionState::kWriting, SessionState::kVerifying}) {
    for (bool raw : {false, true}) {
      for (bool wrote : {false, true}) {
        if (state == SessionState::kWriting) {
          continue;
        }
        if ((raw && state != SessionState::kVerifying) ||
            (state == SessionState::kVerifying && !wrote)) {
          continue;
        }
        out.push_back({state, raw, wrote});
      }
    }
  }
  return out;
}

SessionFsm Restore(const pulse::testing::FakeClock& clock, const SessionKey& key,
                   std::int64_t blocks) {
  SessionSnapshot snapshot;
  snapshot.state = std::string(pulse::core::ToString(key.state));
  snapshot.read_after_write = key.raw;
  snapshot.wrote_this_episode = key.wrote;
  snapshot.consecutive_verify_blocks = blocks;
  if (key.wrote) {
    snapshot.last_write_tool = "pulse_control";
    snapshot.last_write_at_unix_nanos = 1;
  }
  absl::StatusOr<SessionFsm> fsm = SessionFsm::Restore(clock, snapshot);
  if (!fsm.ok()) {
    std::printf("RESTORE_FAILED %s\n", fsm.status().ToString().c_str());
    return SessionFsm(clock);
  }
  return *std::move(fsm);
}

constexpr int kFsmEvents = 13;

// Applies event `ev` (the model's numbering) and returns "<event> -> <verdict>".
std::string ApplyEvent(SessionFsm& fsm, int ev) {
  std::optional<FsmBlockedError> verdict;
  std::string name;
  switch (ev) {
    case 0:
      name = "can_execute(read)";
      verdict = fsm.CanExecute(ClassOf(Effect::kRead), "t");
      break;
    case 1:
      name = "can_execute(write)";
      verdict = fsm.CanExecute(ClassOf(Effect::kWrite), "t");
      break;
    case 2:
      name = "can_execute(none)";
      verdict = fsm.CanExecute(ClassOf(Effect::kNone), "t");
      break;
    case 3:
      name = "succeeded(read)";
      fsm.OnToolSucceeded(ClassOf(Effect::kRead), "t", false);
      break;
    case 4:
      name = "succeeded(write,dispatched)";
      fsm.OnToolSucceeded(ClassOf(Effect::kWrite), "t", true);
      break;
    case 5:
      name = "succeeded(write,not_dispatched)";
      fsm.OnToolSucceeded(ClassOf(Effect::kWrite), "t", false);
      break;
    case 6:
      name = "succeeded(none)";
      fsm.OnToolSucceeded(ClassOf(Effect::kNone), "t", false);
      break;
    case 7:
      name = "self_verified";
      fsm.OnSelfVerified();
      break;
    case 8:
      name = "final_answer";
      verdict = fsm.CanFinalAnswer();
      break;
    case 9:
      name = "complete_verification";
      fsm.CompleteVerification();
      break;
    case 10:
      name = "reset";
      fsm.Reset();
      break;
    case 11:
      name = "reset_keep_progress";
      fsm.ResetKeepProgress();
      break;
    case 12:
      name = "target_established";
      fsm.OnTargetEstablished();
      break;
    default:
      break;
  }
  return name + " -> " + Verdict(verdict);
}

void DumpEffects() {
  for (int kind = 0; kind <= 3; ++kind) {
    for (int mutation = 0; mutation <= 2; ++mutation) {
      const InvocationClass invocation{static_cast<ToolKind>(kind),
                                       static_cast<MutationTarget>(mutation)};
      std::printf("effect kind=%d mutation=%d -> %s\n", kind, mutation,
                  EffectName(pulse::core::EffectOf(invocation)));
    }
  }
}

void DumpSessionEvents(const pulse::testing::FakeClock& clock) {
  for (const SessionKey& key : ValidSessions()) {
    for (int ev = 0; ev < kFsmEvents; ++ev) {
      SessionFsm fsm = Restore(clock, key, 0);
      const std::string before = Session(fsm);
      const std::string applied = ApplyEvent(fsm, ev);
      std::printf("fsm %s %s %s\n", before.c_str(), applied.c_str(), Session(fsm).c_str());
      // Repeated blocked attempts must not wear the gate down (docs/architecture.md "The session
      // state machine").
      SessionFsm worn = Restore(clock, key, 1'000'000);
      const std::string worn_applied = ApplyEvent(worn, ev);
      if (worn_applied != applied || Session(worn) != Session(fsm)) {
        std::printf("COUNTER_DEPENDENT fsm %s %s %s\n", before.c_str(), worn_applied.c_str(),
                    Session(worn).c_str());
      }
    }
  }
}

int Pow(int base, int exp) {
  int out = 1;
  for (int i = 0; i < exp; ++i) {
    out *= base;
  }
  return out;
}

constexpr int kBatchMax = 3;

void DumpBatches(const pulse::testing::FakeClock& clock) {
  for (const SessionKey& key : ValidSessions()) {
    for (int n = 1; n <= kBatchMax; ++n) {
      for (int ecode = 0; ecode < Pow(3, n); ++ecode) {
        std::vector<Effect> effects;
        for (int i = 0, rest = ecode; i < n; ++i, rest /= 3) {
          effects.push_back(static_cast<Effect>(rest % 3));
        }
        for (int ocode = 0; ocode < Pow(4, n); ++ocode) {
          SessionFsm fsm = Restore(clock, key, 0);
          const std::string before = Session(fsm);
          std::vector<BatchCall> calls;
          for (Effect e : effects) {
            calls.push_back(BatchCall{"t", ClassOf(e)});
          }
          BatchGate gate = BatchGate::Admit(fsm, calls);
          std::vector<int> digits;
          bool possible = true;
          for (int i = 0, rest = ocode; i < n; ++i, rest /= 4) {
            const int d = rest % 4;
            digits.push_back(d);
            const bool allowed = gate.Allowed(static_cast<std::size_t>(i));
            if ((!allowed && d != 0) || (allowed && effects[i] != Effect::kWrite && d > 1)) {
              possible = false;
            }
          }
          if (!possible) {
            continue;
          }
          std::string eff_list;
          std::string verdicts;
          std::string outcomes;
          for (int i = 0; i < n; ++i) {
            const auto idx = static_cast<std::size_t>(i);
            const char* sep = i > 0 ? "," : "";
            eff_list += std::string(sep) + EffectName(effects[idx]);
            verdicts += std::string(sep) + Verdict(gate.Verdicts()[idx]);
            static constexpr const char* kOutcome[] = {"fail", "ok", "dispatched", "verified"};
            outcomes += std::string(sep) + (gate.Allowed(idx) ? kOutcome[digits[idx]] : "-");
            if (digits[idx] >= 1) {
              gate.OnSucceeded(idx, digits[idx] >= 2).IgnoreError();  // possible by construction
            }
            if (digits[idx] == 3) {
              gate.OnSelfVerified(idx).IgnoreError();  // only a dispatched write, as above
            }
          }
          std::printf("batch %s [%s] -> [%s] [%s] -> %s\n", before.c_str(), eff_list.c_str(),
                      verdicts.c_str(), outcomes.c_str(), Session(fsm).c_str());
        }
      }
    }
  }
}

ActionState A(int s) { return static_cast<ActionState>(s); }

void DumpActionGraph() {
  for (int from = 0; from < 8; ++from) {
    std::printf("astate %s terminal=%d can_expire=%d\n",
                std::string(pulse::core::ToString(A(from))).c_str(),
                pulse::core::IsTerminal(A(from)) ? 1 : 0, pulse::core::CanExpire(A(from)) ? 1 : 0);
    for (int to = 0; to < 8; ++to) {
      if (pulse::core::IsLegalActionTransition(A(from), A(to))) {
        std::printf("edge %s -> %s\n", std::string(pulse::core::ToString(A(from))).c_str(),
                    std::string(pulse::core::ToString(A(to))).c_str());
      }
    }
  }
}

std::string Hash(int h) { return "sha256:" + std::to_string(h); }

pulse::core::ActionActor Human(int who) { return {ActorKind::kHuman, "h" + std::to_string(who)}; }

ActionExecutionResult Result(bool succeeded) {
  ActionExecutionResult r;
  r.execution.status = succeeded ? ExecutionStatus::kSucceeded : ExecutionStatus::kFailed;
  r.dispatched = true;
  return r;
}

// The stored record: identity plan hash 1; revision 1 means H0 approved it.
ActionRecord StoredRecord(int state, int rev) {
  ActionRecord r;
  r.plan.action_id = "act_1";
  r.plan.plan_hash = Hash(1);
  r.state = A(state);
  r.decision_revision = static_cast<std::uint32_t>(rev);
  if (rev == 1) {
    r.approvals.push_back(ApprovalRecord{Human(0), DecisionOutcome::kApproved, "", {}, Hash(1)});
  }
  if (r.state == ActionState::kCompleted || r.state == ActionState::kFailed) {
    r.result = Result(r.state == ActionState::kCompleted);
  }
  return r;
}

ActionLifecycleEvent Event(ActionState state) {
  ActionLifecycleEvent e;
  e.action_id = "act_1";
  e.state = state;
  return e;
}

// The transitions ActionService builds (action_service.cc, action_execute.cc,
// action_reconciler.cc, service_internal.h), by the model's request number.
ActionTransition Request(int q, int hash, int read_rev, std::string& name) {
  ActionTransition t;
  t.action_id = "act_1";
  t.expected_plan_hash = Hash(hash);
  const auto rev = static_cast<std::uint32_t>(read_rev);
  auto decide = [&](int who, DecisionOutcome outcome, ActionState next) {
    name = "decide(H" + std::to_string(who) + "," + std::string(pulse::core::ToString(outcome)) +
           "," + std::string(pulse::core::ToString(next)) + ")";
    t.expected_states = {ActionState::kPendingApproval};
    t.expected_decision_revision = rev;
    t.new_state = next;
    t.new_decision_revision = rev + 1;
    t.appended_approval = ApprovalRecord{Human(who), outcome, "", {}, Hash(hash)};
    ActionLifecycleEvent decision = Event(next);
    decision.kind = pulse::core::LifecycleEventKind::kDecision;
    t.events = {decision};
    if (next != ActionState::kPendingApproval) {
      t.events.push_back(Event(next));
    }
  };
  auto same_rev = [&](const char* label, ActionState from, ActionState to, bool result) {
    name = std::string(label) + "(" + std::string(pulse::core::ToString(from)) + ")";
    t.expected_states = {from};
    t.expected_decision_revision = rev;
    t.new_state = to;
    t.new_decision_revision = rev;
    if (result) {
      t.result = Result(to == ActionState::kCompleted);
    }
    t.events = {Event(to)};
  };
  switch (q) {
    case 0:
      decide(0, DecisionOutcome::kApproved, ActionState::kPendingApproval);
      break;
    case 1:
      decide(1, DecisionOutcome::kApproved, ActionState::kPendingApproval);
      break;
    case 2:
      decide(0, DecisionOutcome::kApproved, ActionState::kApproved);
      break;
    case 3:
      decide(1, DecisionOutcome::kApproved, ActionState::kApproved);
      break;
    case 4:
      decide(0, DecisionOutcome::kRejected, ActionState::kRejected);
      break;
    case 5:
      decide(1, DecisionOutcome::kRejected, ActionState::kRejected);
      break;
    case 6:
      name = "expire";
      t.expected_states = {ActionState::kPlanned, ActionState::kPendingApproval,
                           ActionState::kApproved};
      t.expected_decision_revision = rev;
      t.new_state = ActionState::kExpired;
      t.new_decision_revision = rev;
      t.events = {Event(ActionState::kExpired)};
      break;
    case 7:
      same_rev("admit", ActionState::kPlanned, ActionState::kExecuting, false);
      break;
    case 8:
      same_rev("admit", ActionState::kApproved, ActionState::kExecuting, false);
      break;
    case 9:
      same_rev("refuse", ActionState::kPlanned, ActionState::kFailed, true);
      break;
    case 10:
      same_rev("refuse", ActionState::kApproved, ActionState::kFailed, true);
      break;
    case 11:
      same_rev("finish", ActionState::kExecuting, ActionState::kCompleted, true);
      name = "finish(completed)";
      break;
    case 12:
      same_rev("finish", ActionState::kExecuting, ActionState::kFailed, true);
      name = "finish(failed)";
      break;
    default:
      break;
  }
  return t;
}

// ActionStore::Transition's order (in-memory and SQL stores): validate, compare, check, apply.
std::string Cas(ActionRecord& record, const ActionTransition& t) {
  if (absl::Status s = pulse::core::ValidateActionTransition(t); !s.ok()) {
    return absl::IsInvalidArgument(s) ? "INVALID" : "UNEXPECTED " + s.ToString();
  }
  if (absl::Status s = pulse::core::CheckCas(record, t); !s.ok()) {
    std::optional<pulse::core::ActionCasConflict> conflict = pulse::core::GetActionCasConflict(s);
    if (!conflict.has_value()) {
      return "UNEXPECTED " + s.ToString();
    }
    if (conflict->identity_mismatch) {
      return "CONFLICT_HASH";
    }
    if (std::find(t.expected_states.begin(), t.expected_states.end(), record.state) ==
        t.expected_states.end()) {
      return "CONFLICT_STATE";
    }
    return "CONFLICT_REV";
  }
  if (absl::Status s = pulse::core::CheckTransitionAgainst(record, t); !s.ok()) {
    return absl::IsFailedPrecondition(s) ? "PRECONDITION" : "UNEXPECTED " + s.ToString();
  }
  pulse::core::ApplyActionTransition(t, record);
  return "OK " + std::string(pulse::core::ToString(record.state)) +
         " rev=" + std::to_string(record.decision_revision);
}

void DumpCas() {
  for (int state = 0; state < 8; ++state) {
    for (int rev = 0; rev <= 1; ++rev) {
      for (int q = 0; q <= 12; ++q) {
        for (int h = 0; h <= 1; ++h) {
          for (int moved = 0; moved <= 1; ++moved) {
            ActionRecord record = StoredRecord(state, rev);
            std::string name;
            const int hash = h + 1;
            const int read_rev = rev + moved;
            const ActionTransition t = Request(q, hash, read_rev, name);
            const std::string result = Cas(record, t);
            std::printf("cas %s rev=%d %s hash=%d read_rev=%d -> %s\n",
                        std::string(pulse::core::ToString(A(state))).c_str(), rev, name.c_str(),
                        hash, read_rev, result.c_str());
          }
        }
      }
    }
  }
}

// Recorded approval (issue 20 item 4): ActionService::Plan's initial state from the real
// DeriveApprovalRequirement, over every floor x requester x eligible automatic class x session
// posture (the model's `plan` rows).
void DumpPlanStates() {
  for (int floor = 0; floor < 4; ++floor) {
    for (int agent = 0; agent <= 1; ++agent) {
      for (int eligible = 0; eligible <= 1; ++eligible) {
        for (int posture = 0; posture <= 1; ++posture) {
          pulse::core::Capability capability;
          capability.minimum_approval = static_cast<pulse::core::ApprovalLevel>(floor);
          capability.auto_authorization = eligible == 1 ? pulse::core::AutoAuthorization::kLowRisk
                                                        : pulse::core::AutoAuthorization::kNever;
          const pulse::core::ActionActor requester{
              agent == 1 ? ActorKind::kAgent : ActorKind::kHuman, "requester"};
          const pulse::core::ApprovalRequirement r = pulse::core::DeriveApprovalRequirement(
              capability, requester, pulse::core::ActionPolicyOptions{},
              posture == 1 ? "control_level:controlled" : "");
          const bool needs_approval = r.floor == pulse::core::ApprovalLevel::kAdmin ||
                                      r.floor == pulse::core::ApprovalLevel::kMfa;
          std::printf(
              "plan floor=%s requester=%d eligible=%d posture=%d -> %s\n",
              std::string(pulse::core::ToString(capability.minimum_approval)).c_str(), agent,
              eligible, posture,
              std::string(pulse::core::ToString(needs_approval ? ActionState::kPendingApproval
                                                               : ActionState::kPlanned))
                  .c_str());
        }
      }
    }
  }
}

}  // namespace

int main() {
  const pulse::testing::FakeClock clock;
  DumpEffects();
  DumpSessionEvents(clock);
  DumpBatches(clock);
  DumpActionGraph();
  DumpCas();
  DumpPlanStates();
  return 0;
}
