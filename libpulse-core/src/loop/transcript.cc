#include "pulse/core/loop/transcript.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/substitute.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_object.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

constexpr std::array<std::string_view, 9> kParamPriority = {
    "type", "resource_id", "action", "host", "node", "instance", "query", "command", "period"};
constexpr JsonLimits kArgumentLimits{1 << 20, 64};

bool Blank(std::string_view text) { return absl::StripAsciiWhitespace(ToAbsl(text)).empty(); }

// Index of the first message that may not be compacted: the keep_turns-th assistant message
// from the end (0 when there are fewer, so nothing is eligible).
std::size_t CompactionBoundary(const std::vector<Message>& messages, int keep_turns) {
  if (keep_turns <= 0) {
    return messages.size();
  }
  int seen = 0;
  for (std::size_t i = messages.size(); i > 0; --i) {
    if (messages[i - 1].role == MessageRole::kAssistant && ++seen == keep_turns) {
      return i - 1;
    }
  }
  return 0;
}

}  // namespace

std::vector<Message> RefusedClaimsAsAssistantText(const std::vector<Message>& transcript) {
  std::vector<Message> out;
  out.reserve(transcript.size());
  for (std::size_t i = 0; i < transcript.size(); ++i) {
    const Message& m = transcript[i];
    if (m.role != MessageRole::kRefusedClaim) {
      out.push_back(m);
      continue;
    }
    if (Blank(m.content)) {
      continue;
    }
    if (i + 1 < transcript.size() && transcript[i + 1].role == MessageRole::kAssistant &&
        Blank(transcript[i + 1].content)) {
      // Text held beside calls that were then refused: it was that message's text.
      Message merged = transcript[++i];
      merged.content = m.content;
      out.push_back(std::move(merged));
      continue;
    }
    out.push_back(Message::Assistant(m.content));
  }
  return out;
}

std::size_t TranscriptChars(const std::vector<Message>& messages) {
  std::size_t n = 0;
  for (const Message& m : messages) {
    n += m.content.size();
    for (const ToolCall& call : m.tool_calls) {
      n += call.name.size() + call.arguments_json.size();
    }
  }
  return n;
}

std::vector<Message> RepairToolResults(const std::vector<Message>& messages) {
  std::vector<Message> out;
  out.reserve(messages.size());
  std::size_t i = 0;
  while (i < messages.size()) {
    const Message& m = messages[i];
    if (m.role == MessageRole::kTool) {
      ++i;  // a result answering no preceding call
      continue;
    }
    out.push_back(m);
    ++i;
    if (m.role != MessageRole::kAssistant || m.tool_calls.empty()) {
      continue;
    }
    absl::flat_hash_map<std::string, const Message*> results;
    while (i < messages.size() && messages[i].role == MessageRole::kTool) {
      results.try_emplace(messages[i].tool_call_id, &messages[i]);
      ++i;
    }
    for (const ToolCall& call : m.tool_calls) {
      auto it = results.find(call.id);
      if (it != results.end()) {
        out.push_back(*it->second);
      } else {
        out.push_back(Message::ToolResult(call.id, call.name, std::string(kOrphanResult), true));
      }
    }
  }
  return out;
}

std::string CompactionParams(std::string_view arguments_json) {
  absl::StatusOr<rapidjson::Document> args = ParseJson(arguments_json, kArgumentLimits);
  if (!args.ok() || !args->IsObject()) {
    return "";
  }
  std::vector<std::string> parts;
  for (std::string_view key : kParamPriority) {
    if (auto v = GetString(*args, key); v.has_value() && !v->empty()) {
      parts.push_back(absl::StrCat(ToAbsl(key), "=", ToAbsl(*v)));
    }
  }
  if (parts.empty()) {
    const rapidjson::Value& object = *args;
    for (const auto& member : object.GetObject()) {
      if (member.value.IsString() && member.value.GetStringLength() > 0) {
        parts.push_back(absl::StrCat(
            absl::string_view(member.name.GetString(), member.name.GetStringLength()), "=",
            absl::string_view(member.value.GetString(), member.value.GetStringLength())));
        if (parts.size() == 2) {
          break;
        }
      }
    }
  }
  return absl::StrJoin(parts, ", ");
}

std::string CompactedResultText(std::string_view tool, std::string_view params,
                                std::string_view facts_summary, std::string_view original) {
  const std::string call =
      params.empty() ? std::string(tool) : absl::StrCat(ToAbsl(tool), "(", ToAbsl(params), ")");
  if (!facts_summary.empty()) {
    return absl::StrCat("[Compacted: ", call, " — Key facts: ", ToAbsl(facts_summary), "]");
  }
  const std::size_t lines =
      1 + static_cast<std::size_t>(std::count(original.begin(), original.end(), '\n'));
  return absl::StrCat("[Tool result compacted: ", call, " — ", original.size(), " chars, ", lines,
                      " lines. Full data was provided to the model in an earlier turn and has "
                      "already been processed.]");
}

void CompactToolResults(std::vector<Message>& messages, const KnowledgeBase& knowledge,
                        int keep_turns, std::size_t min_chars) {
  const std::size_t boundary = CompactionBoundary(messages, keep_turns);
  absl::flat_hash_map<std::string, const ToolCall*> calls;
  for (std::size_t i = 0; i < boundary; ++i) {
    for (const ToolCall& call : messages[i].tool_calls) {
      calls.try_emplace(call.id, &call);
    }
  }
  for (std::size_t i = 0; i < boundary; ++i) {
    Message& m = messages[i];
    if (m.role != MessageRole::kTool || m.is_error || m.content.size() < min_chars) {
      continue;
    }
    auto it = calls.find(m.tool_call_id);
    const std::string tool = it != calls.end()     ? it->second->name
                             : m.tool_name.empty() ? std::string("unknown_tool")
                                                   : m.tool_name;
    const std::string params =
        it != calls.end() ? CompactionParams(it->second->arguments_json) : std::string();
    m.content =
        CompactedResultText(tool, params, knowledge.SummaryForCall(m.tool_call_id), m.content);
  }
}

std::vector<Message> BuildProviderMessages(const std::vector<Message>& transcript,
                                           const KnowledgeBase& knowledge,
                                           const ProviderViewOptions& options) {
  std::vector<Message> messages = RepairToolResults(RefusedClaimsAsAssistantText(transcript));
  if (TranscriptChars(messages) > options.compaction_budget_chars) {
    CompactToolResults(messages, knowledge, options.keep_turns, options.compaction_min_chars);
    if (TranscriptChars(messages) > options.compaction_budget_chars && options.keep_turns > 1) {
      CompactToolResults(messages, knowledge, 1, options.compaction_min_chars);
    }
  }
  for (Message& m : messages) {
    if (m.role != MessageRole::kTool) {
      continue;
    }
    if (m.content.size() > options.max_tool_result_chars) {
      const std::size_t cut =
          m.content.size() - TruncateUtf8(m.content, options.max_tool_result_chars).size();
      m.content.resize(m.content.size() - cut);
      absl::StrAppend(&m.content, absl::Substitute(ToAbsl(kTruncatedSuffixFormat), cut));
    }
    if (!m.is_error) {
      const std::string tool = m.tool_name.empty() ? std::string("a tool") : m.tool_name;
      m.content = absl::StrCat(ToAbsl(kUntrustedFramePrefix), tool, ToAbsl(kUntrustedFrameSuffix),
                               m.content);
    }
  }
  return messages;
}

bool HasFinalText(const std::vector<Message>& transcript) {
  std::size_t anchor = 0;
  bool has_anchor = false;
  for (std::size_t i = 0; i < transcript.size(); ++i) {
    const Message& m = transcript[i];
    if (m.role == MessageRole::kTool || (m.role == MessageRole::kUser && !Blank(m.content))) {
      anchor = i;
      has_anchor = true;
    }
  }
  for (std::size_t i = has_anchor ? anchor + 1 : 0; i < transcript.size(); ++i) {
    if (transcript[i].role == MessageRole::kAssistant && !Blank(transcript[i].content)) {
      return true;
    }
  }
  return false;
}

std::string FallbackSummary(const RunCounters& counters) {
  std::vector<std::pair<std::string, int>> ranked;
  int total = 0;
  for (const auto& [tool, n] : counters.tools_run) {
    if (n <= 0) {
      continue;
    }
    total += n;
    std::string name = tool;
    // Built-in names read without their "pulse_" prefix ("query, read").
    if (const std::string_view prefix = kReservedToolNamePrefixes[0]; name.rfind(prefix, 0) == 0) {
      name.erase(0, prefix.size());
    }
    ranked.emplace_back(std::move(name), n);
  }
  if (total == 0) {
    return std::string(kFallbackNoTools);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < ranked.size() && i < 4; ++i) {
    names.push_back(ranked[i].first);
  }
  std::string text = absl::Substitute(ToAbsl(kFallbackWithToolsFormat), total,
                                      total == 1 ? "check" : "checks", absl::StrJoin(names, ", "));
  if (counters.tool_errors > 0) {
    absl::StrAppend(&text,
                    absl::Substitute(ToAbsl(kFallbackErrorsFormat), counters.tool_errors,
                                     counters.tool_errors == 1 ? "tool error" : "tool errors"));
  }
  return text;
}

void RedactSessionSecrets(SessionRecord& record) {
  for (Message& m : record.transcript) {
    m.content = RedactSecrets(m.content);
    for (ToolCall& call : m.tool_calls) {
      call.arguments_json = RedactSecrets(call.arguments_json);
    }
  }
  if (record.suspended.has_value()) {
    record.suspended->arguments_json = RedactSecrets(record.suspended->arguments_json);
  }
  for (KnowledgeFact& fact : record.facts) {
    fact.value = RedactSecrets(fact.value);
  }
}

}  // namespace pulse::core
