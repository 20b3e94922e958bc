// Provider turns: the offered manifest and its brakes, request building, streaming with
// bounded per-class retries, the final-answer gate and the final-text guarantee.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/substitute.h"
#include "absl/time/time.h"
#include "loop_run.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_object.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/core/loop/transcript.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/policy/projection.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

bool Blank(std::string_view text) { return absl::StripAsciiWhitespace(ToAbsl(text)).empty(); }

std::string_view ReasonFor(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::kRateLimited:
      return kReasonProviderRateLimited;
    case LlmErrorKind::kUnavailable:
      return kReasonProviderUnavailable;
    case LlmErrorKind::kInvalidRequest:
      return kReasonProviderInvalidRequest;
    case LlmErrorKind::kIncompleteStream:
      return kReasonProviderIncomplete;
    case LlmErrorKind::kOther:
      return kReasonProviderFailed;
  }
  return kReasonProviderFailed;
}

std::string_view RetryMessage(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::kRateLimited:
      return "Selected route is rate limiting the request; retrying.";
    case LlmErrorKind::kIncompleteStream:
      return "Selected route ended the response early before any output; retrying.";
    default:
      return "Selected route failed before any output; retrying.";
  }
}

// A user-facing message: fixed per kind, plus the provider's text up to the first '{' or
// "http" (no raw payloads or endpoints), at most 160 bytes.
std::string SanitizedProviderMessage(LlmErrorKind kind, std::string_view detail) {
  std::string_view head = detail;
  for (std::string_view stop : {std::string_view("{"), std::string_view("http")}) {
    if (std::size_t at = head.find(stop); at != std::string_view::npos) {
      head = head.substr(0, at);
    }
  }
  std::string cut(absl::StripAsciiWhitespace(ToAbsl(head.substr(0, 160))));
  std::string base;
  switch (kind) {
    case LlmErrorKind::kRateLimited:
      base = "The AI provider is rate limiting requests. Please retry later.";
      break;
    case LlmErrorKind::kUnavailable:
      base = "The AI provider is unavailable or timed out. Please retry.";
      break;
    case LlmErrorKind::kInvalidRequest:
      base = "The AI provider refused the request (check the provider configuration).";
      break;
    case LlmErrorKind::kIncompleteStream:
      base = "AI response stream ended before completion. Please retry.";
      break;
    case LlmErrorKind::kOther:
      base = "AI response stream interrupted before completion. Please retry.";
      break;
  }
  return cut.empty() ? base : absl::StrCat(base, " (", cut, ")");
}

std::string LastWriteTarget(const SessionFsm& fsm) {
  std::string tool(absl::StripAsciiWhitespace(ToAbsl(fsm.LastWriteTool())));
  return tool.empty() ? std::string("the changed target") : tool;
}

}  // namespace

LoopRun::LoopRun(AgenticLoop& loop, loop_internal::Emitter& events, InvocationPolicy policy,
                 SessionRecord session, SessionFsm fsm,
                 std::shared_ptr<const std::atomic<bool>> cancelled)
    : loop_(loop),
      events_(events),
      cancelled_(std::move(cancelled)),
      policy_(policy),
      session_(std::move(session)),
      fsm_(std::move(fsm)),
      knowledge_(session_.facts) {}

void LoopRun::RestoreCounters(const SuspendedCall& suspended) {
  counters_ = suspended.counters;
  denied_.insert(suspended.denied_fingerprints.begin(), suspended.denied_fingerprints.end());
  first_turn_ = counters_.turns;
}

void LoopRun::Fail(std::string_view code, std::string_view reason, std::string_view message,
                   std::string_view tool_name) {
  events_.Error(code, reason, message, tool_name, counters_, loop_.options_.max_provider_calls);
  failure_reason_ = std::string(reason);
  end_ = RunEnd::kFailed;
}

void LoopRun::End(RunEnd end, std::string final_text) {
  end_ = end;
  final_text_ = std::move(final_text);
}

int LoopRun::MaxTurns() const { return loop_.options_.max_turns + (repair_granted_ ? 1 : 0); }

std::vector<ToolDefinition> LoopRun::ToolsForTurn(int turn) {
  const LoopOptions& o = loop_.options_;
  std::vector<ToolDefinition> tools;
  const bool repair_only = repair_only_next_;
  repair_only_next_ = false;
  final_decision_turn_ = false;
  const bool final_turn = turn >= MaxTurns() - 1 && !repair_only;
  if (final_turn && !o.final_turn_lifecycle_tools) {
    return tools;  // the last allowed turn is tool-free
  }
  if (brake_next_turn_) {
    brake_next_turn_ = false;
    return tools;
  }
  if (o.output_token_allowance > 0 && counters_.output_tokens >= o.output_token_allowance) {
    return tools;  // the allowance is spent: the final decision, without tools
  }
  const bool evidence_spent = policy_.Profile() == ExecutionProfile::kPatrolInvestigation &&
                              counters_.evidence_calls >= o.max_evidence_calls;
  if (!projection_.has_value()) {
    // The policy and the registry are fixed for the run, so the projection is too.
    projection_ = loop_.executor_.Project(policy_);
  }
  for (const ProjectedTool& projected : *projection_) {
    const ToolTraits traits = TraitsOf(projected.name);
    if (evidence_spent && projected.action_mode == ActionMode::kRead && !traits.proposes_action) {
      continue;  // evidence tools are structurally removed once the budget is spent
    }
    if ((repair_only || final_turn) && traits.findings != FindingRole::kLifecycleWrite) {
      continue;  // the repair and final turns offer only the finding lifecycle tools
    }
    tools.push_back(
        ToolDefinition{projected.name, projected.description, projected.input_schema_json});
  }
  final_decision_turn_ = final_turn && !tools.empty();
  return tools;
}

namespace {

// kFinalDecisionInstructionFormat over the offered tools, each with the required arguments of
// its registered schema (never a hand-written copy of them).
std::string FinalDecisionInstruction(const std::vector<ToolDefinition>& tools) {
  std::vector<std::string> offered;
  for (const ToolDefinition& tool : tools) {
    std::vector<std::string> required;
    absl::StatusOr<rapidjson::Document> schema = ParseJson(tool.input_schema_json);
    const rapidjson::Value* list = schema.ok() ? GetMember(*schema, "required") : nullptr;
    if (list != nullptr && list->IsArray()) {
      for (const rapidjson::Value& name : list->GetArray()) {
        if (name.IsString()) {
          required.emplace_back(StringViewOf(name));
        }
      }
    }
    offered.push_back(required.empty() ? tool.name
                                       : absl::StrCat(tool.name, " (requires ",
                                                      absl::StrJoin(required, ", "), ")"));
  }
  return absl::Substitute(ToAbsl(kFinalDecisionInstructionFormat), absl::StrJoin(offered, "; "));
}

}  // namespace

std::string LoopRun::SystemPrompt() const {
  std::string prompt = loop_.options_.system_prompt;
  if (!prompt.empty()) {
    prompt += "\n\n";
  }
  absl::StrAppend(&prompt, ToAbsl(kUntrustedDataGuidance), "\n\n",
                  absl::Substitute(ToAbsl(kRunContextFormat), ToAbsl(ToString(policy_.Profile())),
                                   ToAbsl(ToString(policy_.EffectiveLevel())),
                                   absl::FormatTime(absl::RFC3339_sec, loop_.clock_.Now(),
                                                    absl::UTCTimeZone())));
  const std::string facts = knowledge_.Render();
  if (!facts.empty()) {
    absl::StrAppend(&prompt, "\n\n", facts);
  }
  return prompt;
}

LlmRequest LoopRun::BuildRequest(std::vector<ToolDefinition> tools,
                                 std::vector<Message> extra) const {
  LlmRequest request;
  request.messages.push_back(Message::System(SystemPrompt()));
  const std::vector<Message>* transcript = &session_.transcript;
  std::vector<Message> sanitized;
  if (outbound_.has_value() && !outbound_->passes_through()) {
    // Whole tool results get the policy's structural pass here, before the provider view
    // truncates them (a cut JSON document no longer parses); CallProvider applies the full
    // policy to the finished request again.
    sanitized = session_.transcript;
    for (Message& m : sanitized) {
      if (m.role == MessageRole::kTool) {
        m.content = outbound_->SanitizeToolResult(m.content);
      }
    }
    transcript = &sanitized;
  }
  for (Message& m : BuildProviderMessages(*transcript, knowledge_, loop_.options_.view)) {
    request.messages.push_back(std::move(m));
  }
  for (Message& m : extra) {
    request.messages.push_back(std::move(m));
  }
  request.tools = std::move(tools);
  request.tool_choice = ToolChoice::kUnset;
  request.max_tokens = CapToAllowance(loop_.options_.max_tokens);
  request.cancelled = cancelled_;
  return request;
}

std::optional<int> LoopRun::CapToAllowance(std::optional<int> cap) const {
  const LoopOptions& o = loop_.options_;
  if (o.output_token_allowance <= 0) {
    return cap;
  }
  const std::int64_t left = std::clamp<std::int64_t>(
      o.output_token_allowance - counters_.output_tokens, kMinDecisionTokens, 1 << 30);
  const int remaining = static_cast<int>(left);
  return cap.has_value() ? std::min(*cap, remaining) : remaining;
}

std::optional<LoopRun::StreamedTurn> LoopRun::StreamTurn(const LlmRequest& request,
                                                         bool buffer_content) {
  const LoopOptions& o = loop_.options_;
  // Failed attempts so far, per class: connect failures and early stream ends share one cap,
  // rate limits have their own.
  int unavailable_failures = 0;
  int rate_limit_failures = 0;
  while (true) {
    if (counters_.provider_calls >= o.max_provider_calls) {
      Fail(kErrorCodeBoundedFailure, kReasonMaxProviderCalls,
           absl::StrCat("The run reached its maximum of ", o.max_provider_calls,
                        " provider calls."));
      return std::nullopt;
    }
    if (!AdmitProviderCall()) {
      return std::nullopt;
    }
    StreamedTurn turn;
    bool finished = false;
    const absl::Status status = CallProvider(request, [&](const LlmStreamEvent& event) {
      switch (event.kind) {
        case LlmStreamEvent::Kind::kContentDelta:
          turn.text += event.text;
          if (!buffer_content && !event.text.empty()) {
            events_.Content(event.text);
            turn.emitted_content = true;
          }
          break;
        case LlmStreamEvent::Kind::kToolCall:
          turn.calls.push_back(event.tool_call);
          break;
        case LlmStreamEvent::Kind::kFinish:
          finished = true;
          turn.finish = event.finish_reason;
          break;
        case LlmStreamEvent::Kind::kUsage:
          break;  // counted by CallProvider
      }
    });
    if (status.ok() && finished && turn.finish != FinishReason::kError) {
      return turn;
    }
    // A failed attempt's tool calls are discarded here: they are never executed.
    auto keep_partial_text = [&] {
      if (turn.emitted_content && !Blank(turn.text)) {
        session_.transcript.push_back(Message::Assistant(turn.text));
      }
    };
    if (absl::IsCancelled(status) || Cancelled()) {
      keep_partial_text();
      FailCancelled();
      return std::nullopt;
    }
    LlmErrorKind kind = LlmErrorKind::kOther;
    std::string detail;
    if (!status.ok()) {
      kind = ClassifyLlmError(status);
      detail = std::string(status.message());
    } else if (!finished) {
      kind = LlmErrorKind::kIncompleteStream;
    }
    const std::optional<absl::Duration> retry_after = RetryAfter(status);
    // An outage (a 503) that names a retry-after is the provider pacing us: a rate limit.
    const bool rate_limited = kind == LlmErrorKind::kRateLimited ||
                              (kind == LlmErrorKind::kUnavailable && retry_after.has_value());
    if (rate_limited) {
      kind = LlmErrorKind::kRateLimited;
    }
    const bool transient = rate_limited || kind == LlmErrorKind::kUnavailable ||
                           kind == LlmErrorKind::kIncompleteStream;
    int& failures = rate_limited ? rate_limit_failures : unavailable_failures;
    ++failures;
    const int max_attempts =
        std::max(1, rate_limited ? o.max_rate_limit_attempts : o.max_provider_attempts);
    const absl::Duration delay = retry_after.value_or(o.retry_base_delay * failures);
    if (!transient || turn.emitted_content || failures >= max_attempts ||
        delay > o.max_retry_delay) {
      keep_partial_text();
      Fail(kErrorCodeProviderError, ReasonFor(kind), SanitizedProviderMessage(kind, detail));
      return std::nullopt;
    }
    events_.ProviderRetry(failures + 1, max_attempts, absl::ToInt64Milliseconds(delay),
                          RetryMessage(kind), fsm_.State());
    if (!SleepUnlessCancelled(delay)) {
      FailCancelled();
      return std::nullopt;
    }
  }
}

void LoopRun::RunTurns() {
  const LoopOptions& o = loop_.options_;
  if (!PrepareOutbound()) {
    return;
  }
  while (!end_.has_value()) {
    if (Cancelled()) {
      FailCancelled();
      return;
    }
    if (counters_.turns >= MaxTurns()) {
      FinishAtBudget();
      return;
    }
    if (o.max_total_tokens > 0 &&
        counters_.input_tokens + counters_.output_tokens >= o.max_total_tokens) {
      Fail(kErrorCodeBoundedFailure, kReasonTokenAllowance,
           absl::StrCat("The run used its token allowance of ", o.max_total_tokens, " tokens."));
      return;
    }
    const int turn = counters_.turns;
    std::vector<ToolDefinition> tools = ToolsForTurn(turn);
    advertised_.clear();
    for (const ToolDefinition& tool : tools) {
      advertised_.push_back(tool.name);
    }
    const bool offered_tools = !tools.empty();
    std::vector<Message> extra;
    if (final_decision_turn_) {
      extra.push_back(Message::User(FinalDecisionInstruction(tools)));
    }
    const LlmRequest request = BuildRequest(std::move(tools), std::move(extra));
    if (turn > first_turn_) {
      events_.WorkflowState("model_processing",
                            "Working on the response with the gathered results.", fsm_.State());
    }
    // While a change is unverified a final answer would be refused, so the text of this turn
    // is held back until the turn turns out to call tools (then it is only a preamble).
    const bool buffer = fsm_.CanFinalAnswer().has_value();
    std::optional<StreamedTurn> streamed = StreamTurn(request, buffer);
    if (!streamed.has_value()) {
      return;
    }
    ++counters_.turns;
    if (!offered_tools) {
      streamed->calls.clear();  // a tool-free turn never executes calls the model still sent
    }
    if (streamed->calls.empty()) {
      HandleAnswer(*streamed, buffer);
      continue;
    }
    const std::string held = buffer ? streamed->text : std::string();
    const std::size_t assistant_index = session_.transcript.size();  // OpenSlots appends it
    const bool ran = ProcessToolCalls(std::move(*streamed));
    if (buffer) {
      SettleHeldText(held, assistant_index, ran);
    }
  }
}

void LoopRun::SettleHeldText(const std::string& text, std::size_t assistant_index, bool ran) {
  if (Blank(text) || assistant_index >= session_.transcript.size()) {
    return;
  }
  if (ran && !fsm_.CanFinalAnswer().has_value()) {
    events_.Content(text);  // the turn's calls ran and the change is verified now
    return;
  }
  // Refused with its turn: typed, never an assistant message, never streamed.
  session_.transcript[assistant_index].content.clear();
  session_.transcript.insert(
      session_.transcript.begin() + static_cast<std::ptrdiff_t>(assistant_index),
      Message::RefusedClaim(text));
  if (suspended_.has_value() && suspended_->transcript_index >= assistant_index) {
    ++suspended_->transcript_index;  // the suspended call's result moved by one
  }
}

void LoopRun::HandleAnswer(const StreamedTurn& turn, bool buffered) {
  counters_.consecutive_error_turns = 0;
  if (fsm_.CanFinalAnswer().has_value()) {
    // Refused: never streamed (it was buffered), never an assistant message. It is kept as a
    // typed refused_claim entry, which the model's view shows as its own text, and a user-role
    // instruction follows it (never an assistant prefill).
    if (!Blank(turn.text)) {
      session_.transcript.push_back(Message::RefusedClaim(turn.text));
    }
    session_.transcript.push_back(Message::User(
        absl::Substitute(ToAbsl(kVerificationInstructionFormat), LastWriteTarget(fsm_))));
    events_.WorkflowState("verify", "Verification evidence is required before the answer.",
                          fsm_.State());
    return;
  }
  session_.transcript.push_back(Message::Assistant(turn.text));
  if (buffered) {
    events_.Content(turn.text);
  }
  EnsureFinalText();
}

void LoopRun::EnsureFinalText() {
  std::vector<Message>& transcript = session_.transcript;
  if (HasFinalText(transcript)) {
    End(RunEnd::kAnswered, transcript.back().role == MessageRole::kAssistant
                               ? transcript.back().content
                               : std::string());
    return;
  }
  while (!transcript.empty() && transcript.back().role == MessageRole::kAssistant &&
         transcript.back().tool_calls.empty() && Blank(transcript.back().content)) {
    transcript.pop_back();
  }
  const LoopOptions& o = loop_.options_;
  if (counters_.provider_calls < o.max_provider_calls) {
    // The summary call passes the same gates as a turn: a cancelled run or a spent money
    // budget ends the run here instead.
    if (!AdmitProviderCall()) {
      return;
    }
    LlmRequest request = BuildRequest({}, {Message::User(std::string(kSummaryInstruction))});
    request.max_tokens = CapToAllowance(o.summary_max_tokens);
    std::string text;
    bool finished = false;
    const absl::Status status = CallProvider(request, [&](const LlmStreamEvent& event) {
      if (event.kind == LlmStreamEvent::Kind::kContentDelta) {
        text += event.text;
        events_.Content(event.text);
      } else if (event.kind == LlmStreamEvent::Kind::kFinish) {
        finished = event.finish_reason != FinishReason::kError;
      }
    });
    if (status.ok() && finished && !Blank(text)) {
      transcript.push_back(Message::Assistant(text));
      End(RunEnd::kAnswered, std::move(text));
      return;
    }
    if (absl::IsCancelled(status) || Cancelled()) {
      if (!Blank(text)) {
        transcript.push_back(Message::Assistant(text));
      }
      FailCancelled();
      return;
    }
  }
  std::string fallback = FallbackSummary(counters_);
  events_.Content(fallback);
  transcript.push_back(Message::Assistant(fallback));
  End(RunEnd::kFallbackSummary, std::move(fallback));
}

void LoopRun::FinishAtBudget() {
  if (fsm_.CanFinalAnswer().has_value()) {
    std::string text = absl::Substitute(ToAbsl(kUnverifiedEndFormat), LastWriteTarget(fsm_));
    events_.Content(text);
    session_.transcript.push_back(Message::Assistant(text));
    End(RunEnd::kUnverified, std::move(text));
    return;
  }
  EnsureFinalText();
}

}  // namespace pulse::core
