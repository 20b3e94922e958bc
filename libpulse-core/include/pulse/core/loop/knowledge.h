// The knowledge accumulator: structured facts (states, exit codes, health, error codes) pulled
// deterministically from tool results, kept within a budget, rendered into every turn's system
// prompt and used by compaction so that an old result can shrink without losing what it said.
// No model is involved. Not thread-safe: one run owns it (the loop's post-process phase, which
// is sequential, is the only writer).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/model/session_record.h"
#include "rapidjson/document.h"

namespace pulse::core {

inline constexpr std::size_t kMaxFactValueBytes = 200;
inline constexpr std::size_t kMaxFactsPerResult = 24;

struct KnowledgeBudget {
  std::size_t max_entries = 60;
  std::size_t max_chars = 2000;  // sum of key + value bytes
};

// The facts in one tool result. Error results yield "<tool>:<subject>:error" = the stable
// code. A JSON object result yields, for the root and every object nested up to three levels
// below it (array elements included), "<subject>:<field>" for each scalar field named status,
// state, health, exit_code, restart_count, verdict or severity; the subject is that object's
// "resource_id" or "id" string, else the nearest enclosing one, else the call's resource_id /
// finding_id / action_id argument, else the tool name. Anything else (prose, arrays at the
// root, unparsable text) yields nothing. Values are cut to kMaxFactValueBytes; at most
// kMaxFactsPerResult facts, in document order.
std::vector<KnowledgeFact> ExtractFacts(std::string_view tool, const rapidjson::Value& args,
                                        std::string_view content, bool is_error,
                                        std::string_view tool_call_id, int turn);

class KnowledgeBase {
 public:
  explicit KnowledgeBase(std::vector<KnowledgeFact> facts = {}, KnowledgeBudget budget = {});

  // Inserts or replaces by key (a replaced fact keeps its position). Empty keys or values are
  // ignored. Then evicts the oldest facts while over budget, never one observed in
  // `current_turn` or the turn before (so it may stay over budget when everything is recent).
  void Upsert(KnowledgeFact fact, int current_turn);

  // "key = value" of the facts from one call, joined by "; " ("" when none).
  std::string SummaryForCall(std::string_view tool_call_id) const;

  // The system-prompt block ("" when empty): a heading that marks the values as untrusted data
  // collected by tools, then "- [key] value" lines in insertion order.
  std::string Render() const;

  const std::vector<KnowledgeFact>& Facts() const { return facts_; }

 private:
  void Evict(int current_turn);

  std::vector<KnowledgeFact> facts_;
  KnowledgeBudget budget_;
};

}  // namespace pulse::core
