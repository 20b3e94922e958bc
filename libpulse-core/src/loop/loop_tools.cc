// One provider turn's tool calls: phase 1 pre-check (sequential, provider order), phase 2
// execution through the TaskRunner, phase 3 post-processing (sequential, provider order).
#include <sodium/crypto_hash_sha256.h>

#include <algorithm>
#include <array>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/substitute.h"
#include "loop_run.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_object.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/classify.h"

namespace pulse::core {
namespace {

using json_internal::JsonObject;

// Arguments are bounded again by the executor; this bound only caps the pre-check parse.
constexpr JsonLimits kArgumentLimits{256 * 1024, 64};

std::string ErrorJson(ToolErrorCode code, std::string message, bool blocked) {
  ToolError error;
  error.code = code;
  error.message = std::move(message);
  error.blocked = blocked;
  error.failed = !blocked;
  return error.ToJson();
}

// The fingerprint of a call: a digest of its trimmed name, NUL, canonical arguments. A digest,
// so the stored denied fingerprints of a suspended run never hold an argument (or a secret).
std::string Fingerprint(std::string_view tool, std::string_view canonical_args) {
  const std::string preimage =
      absl::StrCat(ToAbsl(tool), std::string(1, '\0'), ToAbsl(canonical_args));
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(preimage.data()),
                     preimage.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned char byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0x0f]);
  }
  return out;
}

// The result of a call whose handler started but did not return. For an infrastructure write
// it is marked dispatched: how far the handler got is unknown, so the change is taken as made
// and must be verified.
ToolResult InterruptedResult(std::string_view tool, InvocationClass invocation) {
  ToolError error;
  error.code = ToolErrorCode::kExecutionFailed;
  error.failed = true;
  const bool write = EffectOf(invocation) == FsmEffect::kWrite;
  error.message =
      write
          ? absl::StrCat("the tool call \"", ToAbsl(tool),
                         "\" failed after it started, so its change may have been made. Take "
                         "it as made: read the target's current state to verify it before "
                         "answering or changing anything else.")
          : absl::StrCat("the tool call \"", ToAbsl(tool), "\" failed before it returned a result");
  ToolResult result = ToolResult::Failure(std::move(error));
  if (write) {
    result.dispatched = true;
  }
  return result;
}

std::string_view ProgressMessage(const ToolTraits& traits, InvocationClass invocation) {
  if (!traits.progress.empty()) {
    return traits.progress;
  }
  if (IsInfrastructureWrite(invocation)) {
    return "Executing governed action.";
  }
  return "Running.";
}

}  // namespace

// One call of the turn, from pre-check to its result.
struct LoopRun::Slot {
  enum class State { kRefused, kCandidate, kSkipped, kBlocked, kQueued };

  ToolCall call;
  std::string tool;   // trimmed name
  ToolTraits traits;  // of the registered tool (default when it is unknown)
  rapidjson::Document args{rapidjson::kObjectType};
  std::string fingerprint;  // Fingerprint(trimmed name, canonical arguments)
  InvocationClass invocation = kFailClosedClass;
  State state = State::kRefused;
  std::size_t gate_index = 0;
  bool started = false;  // tool_start emitted
  std::string content;
  bool is_error = false;
  ToolCallOutcome outcome;

  void Refuse(std::string json) {
    state = State::kRefused;
    content = std::move(json);
    is_error = true;
  }
};

// What post-processing found that ends or shapes the turn.
struct LoopRun::TurnResult {
  bool any_success = false;
  std::optional<std::size_t> approval_slot;
  std::optional<ActionRecord> approval_record;
  std::size_t approval_transcript_index = 0;
  std::string question_id;
  std::string question_json;
  std::string question_tool;  // the tool that asked
};

bool LoopRun::IsEvidenceCall(const ToolTraits& traits, InvocationClass invocation) const {
  return policy_.Profile() == ExecutionProfile::kPatrolInvestigation &&
         (invocation.kind == ToolKind::kRead || invocation.kind == ToolKind::kResolve) &&
         invocation.mutation == MutationTarget::kNone && !traits.proposes_action;
}

ToolTraits LoopRun::TraitsOf(std::string_view tool) const { return loop_.registry_.Traits(tool); }

void LoopRun::RefuseTurn(std::vector<Slot>& slots, std::size_t culprit,
                         const std::string& culprit_content, const std::string& sibling_content) {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    if (i == culprit) {
      slot.Refuse(culprit_content);
    } else if (slot.state != Slot::State::kRefused || slot.content.empty()) {
      slot.Refuse(sibling_content);
    }
    ++counters_.tool_errors;
    events_.ToolStart(slot.call.id, slot.tool, slot.call.arguments_json);
    events_.ToolEnd(slot.call.id, slot.tool, slot.content, false);
    session_.transcript.push_back(Message::ToolResult(slot.call.id, slot.tool, slot.content, true));
  }
}

std::vector<LoopRun::Slot> LoopRun::OpenSlots(StreamedTurn& turn) {
  counters_.tool_calls += static_cast<int>(turn.calls.size());
  // Every call gets a unique id (the transcript pairs results by id).
  absl::flat_hash_set<std::string> ids;
  for (ToolCall& call : turn.calls) {
    if (call.id.empty() || !ids.insert(call.id).second) {
      call.id = absl::StrCat("call_", loop_.ids_.NewId());
      ids.insert(call.id);
    }
  }
  session_.transcript.push_back(Message::Assistant(turn.text, turn.calls));
  std::vector<Slot> slots(turn.calls.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    slots[i].call = turn.calls[i];
    slots[i].tool = std::string(TrimToolName(slots[i].call.name));
    slots[i].traits = TraitsOf(slots[i].tool);
  }
  return slots;
}

bool LoopRun::PreCheck(std::vector<Slot>& slots) {
  const LoopOptions& o = loop_.options_;
  const absl::flat_hash_set<std::string> advertised(advertised_.begin(), advertised_.end());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    const std::string_view raw = slot.call.arguments_json;
    const bool blank_args = absl::StripAsciiWhitespace(ToAbsl(raw)).empty();
    absl::StatusOr<rapidjson::Document> parsed =
        ParseJson(blank_args ? std::string_view("{}") : raw, kArgumentLimits);
    const bool args_ok = parsed.ok() && parsed->IsObject();
    if (args_ok) {
      slot.args = std::move(parsed).value();
    }
    slot.fingerprint =
        Fingerprint(slot.tool, args_ok ? CanonicalJson(slot.args) : std::string(raw));
    if (denied_.contains(slot.fingerprint)) {
      // The same denied call again: stop before anything of this turn runs.
      RefuseTurn(slots, i,
                 ErrorJson(ToolErrorCode::kLoopDetected,
                           absl::Substitute(ToAbsl(kRepeatedDeniedFormat), slot.tool), true),
                 ErrorJson(ToolErrorCode::kLoopDetected, std::string(kTerminatedSibling), true));
      Fail(kErrorCodeBoundedFailure, kReasonRepeatedDeniedCall,
           absl::StrCat("Pulse Assistant tool loop terminated after the provider repeated denied "
                        "tool \"",
                        slot.tool, "\" (", counters_.provider_calls, " provider calls)"),
           slot.tool);
      return false;
    }
    if (static_cast<int>(i) >= o.max_calls_per_turn) {
      slot.Refuse(ErrorJson(ToolErrorCode::kBudgetExhausted,
                            absl::Substitute(ToAbsl(kTurnCallCapFormat), o.max_calls_per_turn),
                            true));
      continue;
    }
    // Denials: a repeat of any of these terminates the run.
    if (!args_ok) {
      slot.Refuse(ErrorJson(
          ToolErrorCode::kInvalidInput,
          absl::StrCat("tool \"", slot.tool, "\": arguments must be one JSON object"), true));
      denied_.insert(slot.fingerprint);
      continue;
    }
    if (!advertised.contains(slot.tool)) {
      ToolError error;
      error.code = ToolErrorCode::kToolNotAdvertised;
      error.message = absl::Substitute(
          ToAbsl(kNotAdvertisedFormat), slot.tool,
          advertised_.empty() ? std::string("(no tools)") : absl::StrJoin(advertised_, ", "));
      error.blocked = true;
      error.details.emplace_back("tool", slot.tool);
      slot.Refuse(error.ToJson());
      denied_.insert(slot.fingerprint);
      continue;
    }
    const Decision decision = Decide(policy_, loop_.registry_, slot.tool, slot.args);
    if (!decision.allowed) {
      slot.Refuse(decision.ToToolError().ToJson());
      denied_.insert(slot.fingerprint);
      continue;
    }
    slot.invocation = decision.invocation_class;
    if (IsEvidenceCall(slot.traits, slot.invocation)) {
      // Attempts count, whatever happens to them later.
      if (counters_.evidence_calls >= o.max_evidence_calls) {
        slot.Refuse(ErrorJson(ToolErrorCode::kBudgetExhausted,
                              absl::Substitute(ToAbsl(kEvidenceBudgetFormat), o.max_evidence_calls),
                              true));
        continue;
      }
      ++counters_.evidence_calls;
    }
    slot.state = Slot::State::kCandidate;
  }
  return true;
}

void LoopRun::IsolateQuestion(std::vector<Slot>& slots) {
  auto question = std::find_if(slots.begin(), slots.end(), [](const Slot& s) {
    return s.state == Slot::State::kCandidate && s.traits.asks_question;
  });
  if (question == slots.end()) {
    return;
  }
  const std::string skipped = JsonObject()
                                  .Bool("skipped", true)
                                  .Str("reason", "pulse_question_pending")
                                  .Str("message", kSkippedForQuestion)
                                  .Finish();
  for (auto it = slots.begin(); it != slots.end(); ++it) {
    if (it != question && it->state == Slot::State::kCandidate) {
      it->state = Slot::State::kSkipped;
      it->content = skipped;
      it->is_error = true;
    }
  }
}

BatchGate LoopRun::AdmitBatch(std::vector<Slot>& slots) {
  std::vector<BatchCall> batch;
  for (Slot& slot : slots) {
    if (slot.state == Slot::State::kCandidate) {
      slot.gate_index = batch.size();
      batch.push_back(BatchCall{slot.tool, slot.invocation});
    }
  }
  BatchGate gate = BatchGate::Admit(fsm_, std::move(batch));
  for (Slot& slot : slots) {
    if (slot.state != Slot::State::kCandidate) {
      continue;
    }
    if (const std::optional<FsmBlockedError>& block = gate.Verdicts()[slot.gate_index]) {
      slot.state = Slot::State::kBlocked;
      slot.content = block->ToToolError().ToJson();
      slot.is_error = true;
      if (block->recoverable) {
        fsm_.TrackPendingRecovery(ToString(ToolErrorCode::kFsmBlocked), slot.tool);
      }
    } else {
      slot.state = Slot::State::kQueued;
    }
  }
  return gate;
}

bool LoopRun::Execute(std::vector<Slot>& slots) {
  std::vector<Slot*> queued;
  bool any_write = false;
  bool has_findings_read = false;
  bool has_lifecycle_write = false;
  for (Slot& slot : slots) {
    if (slot.state != Slot::State::kQueued) {
      continue;
    }
    queued.push_back(&slot);
    events_.ToolStart(slot.call.id, slot.tool, slot.call.arguments_json);
    events_.ToolProgress(slot.call.id, slot.tool, "running",
                         ProgressMessage(slot.traits, slot.invocation));
    slot.started = true;
    any_write = any_write || IsInfrastructureWrite(slot.invocation);
    has_findings_read = has_findings_read || slot.traits.findings == FindingRole::kReadsFindings;
    has_lifecycle_write =
        has_lifecycle_write || slot.traits.findings == FindingRole::kLifecycleWrite;
  }
  if (queued.empty()) {
    return true;
  }
  if (any_write) {
    events_.WorkflowState("plan", "Planning governed action and safety checks before execution.",
                          fsm_.State());
  }
  events_.WorkflowState("execute",
                        any_write ? "Running the planned action through governed execution."
                                  : "Running infrastructure checks.",
                        fsm_.State());
  // A findings read beside a lifecycle write establishes the write's precondition, so that
  // batch runs in provider order (never reordered); otherwise up to the cap run at once.
  const std::size_t cap =
      std::clamp<std::size_t>(loop_.options_.max_concurrency, std::size_t{1}, kMaxToolConcurrency);
  const std::size_t concurrency =
      (has_findings_read && has_lifecycle_write) ? 1 : std::min(cap, queued.size());
  std::vector<std::function<void()>> tasks;
  tasks.reserve(queued.size());
  const ToolExecutor& executor = loop_.executor_;
  const InvocationPolicy& policy = policy_;
  for (Slot* slot : queued) {
    // Until the task writes its outcome the call counts as started and failed, so a task a
    // runner could not finish can never look like a success.
    ToolError unfinished;
    unfinished.code = ToolErrorCode::kExecutionFailed;
    unfinished.message = "the tool call did not complete";
    unfinished.failed = true;
    slot->outcome.tool_name = slot->tool;
    slot->outcome.invocation_class = slot->invocation;
    slot->outcome.dispatched = true;
    slot->outcome.result = ToolResult::Failure(std::move(unfinished));
    tasks.emplace_back([slot, &executor, &policy] {
      // The handler starts now. If it never returns (it threw and the runner swallowed the
      // exception), a write may have dispatched its mutation before failing: it counts as a
      // dispatched, unverified change, never as a call that did nothing.
      slot->outcome.result = InterruptedResult(slot->tool, slot->invocation);
      slot->outcome = executor.Execute(policy, slot->tool, slot->args);
    });
  }
  if (absl::Status s = loop_.runner_.RunAll(tasks, concurrency); !s.ok()) {
    for (Slot* slot : queued) {
      slot->content = ErrorJson(ToolErrorCode::kExecutionFailed,
                                "not run: the task runner is unavailable", false);
      slot->is_error = true;
      slot->state = Slot::State::kRefused;
    }
    return false;
  }
  return true;
}

void LoopRun::PostProcessExecuted(Slot& slot, BatchGate& gate, std::size_t index,
                                  TurnResult& result, bool& announce_verify) {
  const ToolCallOutcome& outcome = slot.outcome;
  slot.content = outcome.result.content;
  slot.is_error = !outcome.result.Ok();
  if (!outcome.dispatched) {
    denied_.insert(slot.fingerprint);  // refused by the executor before any handler ran
  } else {
    ++counters_.tools_run[slot.tool];
  }
  const bool infra_write = EffectOf(slot.invocation) == FsmEffect::kWrite;
  const ToolResult& typed = outcome.result;
  if (!typed.Ok()) {
    if (infra_write && outcome.dispatched && typed.dispatched.value_or(false)) {
      // The call failed after its mutation was dispatched (its outcome was not recorded). A
      // dispatched mutation is a write transition whatever its result, as on resume: it must be
      // verified before the model may answer or write again. Never self-verified.
      gate.OnSucceeded(slot.gate_index, true).IgnoreError();  // cannot fail: admitted, once
      announce_verify = fsm_.State() == SessionState::kVerifying;
    }
    return;
  }
  result.any_success = true;
  bool dispatched = outcome.dispatched;
  if (infra_write) {
    dispatched = dispatched && typed.dispatched.value_or(true);
    if (slot.traits.requests_approval && typed.approval.has_value()) {
      // The stream and the suspension use the lifecycle's record, never the handler's result.
      absl::StatusOr<Refusable<ActionRecord>> record =
          loop_.actions_.Get(typed.approval->action_id);
      if (record.ok() && !record->refused() &&
          record->value().plan.plan_hash == typed.approval->plan_hash) {
        result.approval_slot = index;
        result.approval_record = record->value();
      } else {
        slot.content = ErrorJson(ToolErrorCode::kExecutionFailed,
                                 "the planned action could not be read back from the action "
                                 "lifecycle; nothing was executed",
                                 false);
        slot.is_error = true;
      }
    }
  }
  // Neither call can fail: the index was admitted and is reported once.
  gate.OnSucceeded(slot.gate_index, dispatched).IgnoreError();
  if (infra_write && dispatched && typed.verified.value_or(false)) {
    gate.OnSelfVerified(slot.gate_index).IgnoreError();
  }
  fsm_.CheckRecoverySuccess(slot.tool);
  announce_verify = infra_write && dispatched && fsm_.State() == SessionState::kVerifying;
  if (slot.traits.asks_question && typed.question.has_value()) {
    result.question_json = *typed.question;
    result.question_id = absl::StrCat("q_", loop_.ids_.NewId());
    result.question_tool = slot.tool;
    slot.content = JsonObject()
                       .Str("status", "asked")
                       .Str("question_id", result.question_id)
                       .Raw("question", result.question_json)
                       .Str("message", kQuestionAskedMessage)
                       .Finish();
  }
}

LoopRun::TurnResult LoopRun::PostProcess(std::vector<Slot>& slots, BatchGate& gate) {
  const int turn_number = counters_.turns;
  TurnResult result;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    bool announce_verify = false;
    if (slot.state == Slot::State::kQueued) {
      PostProcessExecuted(slot, gate, i, result, announce_verify);
      for (KnowledgeFact& fact : ExtractFacts(slot.tool, slot.args, slot.content, slot.is_error,
                                              slot.call.id, turn_number)) {
        knowledge_.Upsert(std::move(fact), turn_number);
      }
    }
    if (slot.is_error) {
      ++counters_.tool_errors;
    }
    if (!slot.started) {
      events_.ToolStart(slot.call.id, slot.tool, slot.call.arguments_json);
    }
    if (result.approval_slot == i) {
      events_.WorkflowState("approve", "Waiting for approval before executing the planned action.",
                            fsm_.State(), slot.tool);
      events_.ToolProgress(slot.call.id, slot.tool, "waiting", "Waiting for approval.");
      result.approval_transcript_index = session_.transcript.size();
    }
    events_.ToolEnd(slot.call.id, slot.tool, slot.content, !slot.is_error);
    if (announce_verify) {
      events_.WorkflowState("verify", "Verifying the write before the Assistant responds.",
                            fsm_.State(), slot.tool);
    }
    session_.transcript.push_back(
        Message::ToolResult(slot.call.id, slot.tool, slot.content, slot.is_error));
  }
  return result;
}

void LoopRun::FinishTurn(const std::vector<Slot>& slots, const TurnResult& result) {
  const LoopOptions& o = loop_.options_;
  if (o.lifecycle_repair_turn && !repair_granted_) {
    int accepted = 0;
    int rejected = 0;
    for (const Slot& slot : slots) {
      if (slot.traits.findings == FindingRole::kLifecycleWrite) {
        (slot.is_error ? rejected : accepted)++;
      }
    }
    if (accepted > 0 && rejected > 0) {
      repair_granted_ = true;  // once per run: one more turn, lifecycle tools only
      repair_only_next_ = true;
    }
  }
  if (result.any_success) {
    counters_.consecutive_error_turns = 0;
  } else if (++counters_.consecutive_error_turns >= o.max_consecutive_error_turns) {
    brake_next_turn_ = true;  // the next turn is tool-free: answer with what is known
    counters_.consecutive_error_turns = 0;
  }
  if (result.approval_record.has_value()) {
    const Slot& slot = slots[*result.approval_slot];
    events_.ApprovalNeeded(*result.approval_record, slot.call.id, slot.tool);
    SuspendedCall suspended;
    suspended.tool_call_id = slot.call.id;
    suspended.tool_name = slot.tool;
    suspended.arguments_json = slot.call.arguments_json;
    suspended.action_id = result.approval_record->id();
    suspended.plan_hash = result.approval_record->plan.plan_hash;
    suspended.transcript_index = result.approval_transcript_index;
    suspended.suspended_at = loop_.clock_.Now();
    suspended_ = std::move(suspended);
    End(RunEnd::kAwaitingApproval, "");
    return;
  }
  if (!result.question_id.empty()) {
    events_.WorkflowState("clarify", "Waiting for your answer before continuing.", fsm_.State(),
                          result.question_tool);
    events_.Question(session_.id, result.question_id, result.question_json);
    End(RunEnd::kAwaitingInput, "");
  }
}

bool LoopRun::ProcessToolCalls(StreamedTurn turn) {
  const LoopOptions& o = loop_.options_;
  std::vector<Slot> slots = OpenSlots(turn);
  if (o.max_total_tokens > 0 &&
      counters_.input_tokens + counters_.output_tokens > o.max_total_tokens) {
    const std::string refusal =
        ErrorJson(ToolErrorCode::kBudgetExhausted, std::string(kTokenAllowanceMessage), true);
    RefuseTurn(slots, 0, refusal, refusal);
    Fail(kErrorCodeBoundedFailure, kReasonTokenAllowance,
         absl::StrCat("The run used its token allowance of ", o.max_total_tokens, " tokens."));
    return false;
  }
  // Phase 1: pre-check in provider order; a repeated denial ends the run here.
  if (!PreCheck(slots)) {
    return false;
  }
  IsolateQuestion(slots);
  BatchGate gate = AdmitBatch(slots);
  const bool admitted = std::any_of(slots.begin(), slots.end(), [](const Slot& slot) {
    return slot.state == Slot::State::kQueued;
  });
  // Phase 2: execute.
  const bool ran = Execute(slots);
  // Phase 3: post-process in provider order.
  const TurnResult result = PostProcess(slots, gate);
  if (!ran) {
    Fail(kErrorCodeEngineError, kReasonTaskRunner,
         "The tool calls of this turn could not be run; nothing was executed.");
    return false;
  }
  FinishTurn(slots, result);
  return admitted;
}

}  // namespace pulse::core
