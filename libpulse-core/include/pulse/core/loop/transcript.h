// The transcript as the model sees it, and the final-text rules. The persisted transcript keeps
// every result in full; BuildProviderMessages derives the provider-bound copy: orphaned tool
// calls repaired, results in call order, old results compacted when the transcript exceeds its
// budget (keeping the latest turns and the facts extracted from each result, never reducing a
// result to punctuation), oversized results truncated with a notice, and successful results
// framed as untrusted data. Pure functions; thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/loop/knowledge.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/model/session_record.h"

namespace pulse::core {

struct ProviderViewOptions {
  std::size_t max_tool_result_chars = 16000;    // per result, model side only
  std::size_t compaction_budget_chars = 60000;  // compact when the transcript is larger
  int keep_turns = 2;                           // assistant turns kept intact at the end
  std::size_t compaction_min_chars = 300;       // shorter results are never compacted
};

// The model's side of refused claims: each kRefusedClaim entry becomes the assistant text it
// was — merged into the following assistant message when that one has no text (text held
// beside calls that were then refused), else an assistant message of its own (a refused final
// answer, which a user-role verification instruction follows). Blank entries are dropped.
std::vector<Message> RefusedClaimsAsAssistantText(const std::vector<Message>& transcript);

// Characters of content, tool-call names and arguments: the size estimate budgets use.
std::size_t TranscriptChars(const std::vector<Message>& messages);

// Every assistant message with tool calls is followed by exactly one result per call, in call
// order: a missing result becomes kOrphanResult (an error), a result answering no call of the
// preceding assistant message is dropped.
std::vector<Message> RepairToolResults(const std::vector<Message>& messages);

// The replacement text of a compacted result: "[Compacted: <tool>(<params>) — Key facts:
// <facts>]" when facts were extracted from it, else "[Tool result compacted: <tool>(<params>)
// — <n> chars, <m> lines. Full data was provided to the model in an earlier turn and has
// already been processed.]". `(<params>)` is omitted when there are none.
std::string CompactedResultText(std::string_view tool, std::string_view params,
                                std::string_view facts_summary, std::string_view original);

// The key=value rendering of a call's arguments used in compaction text: the non-empty string
// values of type, resource_id, action, host, node, instance, query, command, period in that
// order, else the first two non-empty string values; "" for unparsable arguments.
std::string CompactionParams(std::string_view arguments_json);

// Replaces non-error tool results of at least `min_chars` before the `keep_turns`-th assistant
// message from the end. Assistant and user messages are never changed.
void CompactToolResults(std::vector<Message>& messages, const KnowledgeBase& knowledge,
                        int keep_turns, std::size_t min_chars);

// The provider-bound copy of `transcript` (see the file comment), refused claims first turned
// back into assistant text (RefusedClaimsAsAssistantText). Compaction runs only when
// TranscriptChars exceeds the budget: first keeping `keep_turns` turns, then, if still over,
// keeping only the latest turn.
std::vector<Message> BuildProviderMessages(const std::vector<Message>& transcript,
                                           const KnowledgeBase& knowledge,
                                           const ProviderViewOptions& options);

// True when an assistant message with non-blank text follows the last anchor (a tool result,
// or a user message with non-blank text).
bool HasFinalText(const std::vector<Message>& transcript);

// The deterministic summary when the model gave no final text: the number of checks and the
// (at most four) most-run tools with any "pulse_" prefix stripped, most runs first then by
// name, plus the error count; kFallbackNoTools when nothing ran. Never includes call ids or
// raw tool output.
std::string FallbackSummary(const RunCounters& counters);

// Applies RedactSecrets (the outbound policy's redaction) to every text of `record` that
// echoes a person, the model or a tool: message content, tool-call arguments, the suspended
// call's arguments and fact values. Tool-call provider_state (opaque provider bytes) is kept.
// The loop persists sessions only in this form, so neither the store nor any route serving a
// transcript ever holds a recognised secret; the model then sees its earlier calls redacted,
// as a non-local model would anyway. Idempotent.
void RedactSessionSecrets(SessionRecord& record);

}  // namespace pulse::core
