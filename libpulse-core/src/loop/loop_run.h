// Internal: the state of one run (or one resumed run) of the agentic loop and the steps it is
// made of. agentic_loop.cc owns session claiming, resuming and persistence; loop_turn.cc the
// provider turns, budgets and final text; loop_tools.cc the three-phase tool processing.
// One LoopRun lives on the stack of one Run/Resume call; only its phase-2 tasks run on other
// threads, and they touch nothing but their own call slot.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "loop_emitter.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/fsm/batch_gate.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/loop/knowledge.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/model/session_record.h"
#include "pulse/core/policy/projection.h"
#include "pulse/core/tools/tool_traits.h"

namespace pulse::core {

class LoopRun {
 public:
  // `cancelled` (nullable) is the run's cancellation flag.
  LoopRun(AgenticLoop& loop, loop_internal::Emitter& events, InvocationPolicy policy,
          SessionRecord session, SessionFsm fsm,
          std::shared_ptr<const std::atomic<bool>> cancelled);

  // Restores the budget counters and denied fingerprints of a suspended run.
  void RestoreCounters(const SuspendedCall& suspended);
  // Makes the next provider turn announce model_processing even if it is the first.
  void MarkContinuation() { first_turn_ = -1; }

  // Runs provider turns until the run ends (answer, suspension, question or failure).
  void RunTurns();

  // loop_resume.cc: feeds the decided action's outcome to the suspended call (executing it
  // through ActionService when approved). kRetryLater: the lifecycle could not be reached and
  // nothing changed (the caller keeps the session suspended); `error` says why.
  enum class DecisionResult { kApplied, kRetryLater };
  DecisionResult ApplyDecision(const SuspendedCall& suspended,
                               const Refusable<ActionRecord>& decided, const ActionActor& actor,
                               absl::Status& error);

  // Records a terminal failure: one `error` event, end = kFailed.
  void Fail(std::string_view code, std::string_view reason, std::string_view message,
            std::string_view tool_name = {});

  bool Ended() const { return end_.has_value(); }
  SessionRecord& session() { return session_; }
  SessionFsm& fsm() { return fsm_; }
  KnowledgeBase& knowledge() { return knowledge_; }
  RunCounters& counters() { return counters_; }
  loop_internal::Emitter& events() { return events_; }
  const InvocationPolicy& policy() const { return policy_; }

  // The session as it must be persisted now, and the outcome to return.
  SessionRecord SessionToPersist() const;
  RunOutcome Outcome() const;
  std::string_view OutcomeName() const;

 private:
  struct StreamedTurn {
    std::string text;
    std::vector<ToolCall> calls;
    FinishReason finish = FinishReason::kStop;
    bool emitted_content = false;
  };
  struct Slot;

  // --- loop_turn.cc ---
  std::vector<ToolDefinition> ToolsForTurn(int turn);
  // The turn budget: max_turns, plus one once the repair turn was granted.
  int MaxTurns() const;
  std::string SystemPrompt() const;
  LlmRequest BuildRequest(std::vector<ToolDefinition> tools, std::vector<Message> extra) const;
  // `cap` lowered to the unspent LoopOptions::output_token_allowance (never below
  // kMinDecisionTokens); unchanged without an allowance.
  std::optional<int> CapToAllowance(std::optional<int> cap) const;
  // One provider turn with bounded retries; nullopt after a terminal failure (recorded).
  std::optional<StreamedTurn> StreamTurn(const LlmRequest& request, bool buffer_content);
  // A turn without tool calls: the final-answer gate, then the final-text guarantee.
  void HandleAnswer(const StreamedTurn& turn, bool buffered);
  // Text the model sent beside calls while a change was unverified was held back. It is
  // released (streamed, kept in the assistant message at `assistant_index`) only when a call
  // of the turn ran (`ran`) and the change is verified now; otherwise it becomes a
  // refused_claim entry just before that message, whose text is cleared, and is never shown.
  void SettleHeldText(const std::string& text, std::size_t assistant_index, bool ran);
  // Final text after the last anchor, else one tool-free summary call, else the fallback.
  void EnsureFinalText();
  // The turn budget is spent.
  void FinishAtBudget();
  void End(RunEnd end, std::string final_text);

  // --- provider calls (loop_provider_call.cc) ---
  // True when the run's cancellation flag is set.
  bool Cancelled() const;
  // Builds the run's outbound context policy once, reading the local-only resources unless
  // the route is a local model server. False after recording the terminal failure.
  bool PrepareOutbound();
  // The gates every provider call passes first: cancellation, the outbound policy (built from
  // the local-only resources on first use) and the money budget. False after recording the
  // terminal failure.
  bool AdmitProviderCall();
  // Sends `request` through the outbound context policy, counts the call and records its
  // usage and cost; usage events are consumed here, every other event goes to `on_event`.
  absl::Status CallProvider(const LlmRequest& request,
                            absl::FunctionRef<void(const LlmStreamEvent&)> on_event);
  // Waits `delay` through the TaskRunner, in slices while a cancellation flag is present.
  // False when the run was cancelled (the wait is cut short).
  bool SleepUnlessCancelled(absl::Duration delay);
  // Records the `cancelled` failure.
  void FailCancelled();

  // --- loop_tools.cc ---
  struct TurnResult;
  // True when at least one call of the turn passed the pre-check and ran.
  bool ProcessToolCalls(StreamedTurn turn);
  // Gives each call a unique id, records the assistant message and opens one slot per call.
  std::vector<Slot> OpenSlots(StreamedTurn& turn);
  // Phase 1. False when a repeated denial terminated the run.
  bool PreCheck(std::vector<Slot>& slots);
  // An admitted call of a tool that asks a question (pulse_question) runs alone: every other
  // candidate is skipped.
  void IsolateQuestion(std::vector<Slot>& slots);
  // The batch-aware FSM gate over the remaining candidates.
  BatchGate AdmitBatch(std::vector<Slot>& slots);
  // Phase 2. False when the runner could not run the batch (nothing ran).
  bool Execute(std::vector<Slot>& slots);
  // Phase 3, in provider order: results, events, FSM transitions, facts, transcript.
  TurnResult PostProcess(std::vector<Slot>& slots, BatchGate& gate);
  void PostProcessExecuted(Slot& slot, BatchGate& gate, std::size_t index, TurnResult& result,
                           bool& announce_verify);
  // All-error accounting, then a suspension on an approval or a question.
  void FinishTurn(const std::vector<Slot>& slots, const TurnResult& result);
  // Gives every call of the turn a refusal result (repeated denial, token allowance): nothing
  // of the turn executes. The caller ends the run.
  void RefuseTurn(std::vector<Slot>& slots, std::size_t culprit, const std::string& culprit_content,
                  const std::string& sibling_content);
  bool IsEvidenceCall(const ToolTraits& traits, InvocationClass invocation) const;
  // The traits of the registered tool `tool` (default for an unknown one).
  ToolTraits TraitsOf(std::string_view tool) const;

  AgenticLoop& loop_;
  loop_internal::Emitter& events_;
  std::shared_ptr<const std::atomic<bool>> cancelled_;
  std::optional<OutboundContextPolicy> outbound_;  // built before the run's first call
  InvocationPolicy policy_;
  SessionRecord session_;
  SessionFsm fsm_;
  KnowledgeBase knowledge_;
  RunCounters counters_;
  absl::flat_hash_set<std::string> denied_;
  std::vector<std::string> advertised_;                   // tool names offered on the current turn
  std::optional<std::vector<ProjectedTool>> projection_;  // computed on the first turn
  int first_turn_ = 0;
  bool brake_next_turn_ = false;
  // The one repair turn was granted (the turn budget grows by one), and whether the
  // next turn is that repair-only turn.
  bool repair_granted_ = false;
  bool repair_only_next_ = false;
  // The current turn is the last one and offers only the lifecycle tools
  // (LoopOptions::final_turn_lifecycle_tools): its request carries the final-decision
  // instruction.
  bool final_decision_turn_ = false;

  std::optional<RunEnd> end_;
  std::string final_text_;
  std::string failure_reason_;
  std::optional<SuspendedCall> suspended_;
};

}  // namespace pulse::core
