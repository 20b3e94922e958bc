// Reading aimock's request journal back: what the mock understood of each request our
// providers sent. aimock normalizes every wire format to one chat-completions shape (OpenAI's
// request as sent; Anthropic's `system`, tool_use and tool_result blocks, Gemini's
// systemInstruction, functionCall and functionResponse parts, and Ollama's messages all become
// messages with roles system/user/assistant/tool), so one set of checks serves every format.
// Plain functions over a parsed journal; Catch2 assertions report the mismatches.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/model/llm_types.h"
#include "rapidjson/document.h"

namespace pulse::testing {

// What a journal entry must show for one request of one wire format.
struct ExpectedRequest {
  std::string path;               // as the mock saw it, query included
  std::string credential_header;  // lower case; the mock recorded it (value redacted)
  std::string model;
  std::string system_prompt;
  std::string user_text;                            // the last user message
  std::string fixture_user_message;                 // match.userMessage of the fixture
  bool fixture_has_tool_result = false;             // match.hasToolResult, when present
  std::vector<core::ToolDefinition> tools;          // empty: the request offered none
  bool schemas_drop_additional_properties = false;  // Gemini strips the key
  std::string max_tokens_field;                     // "" when the request set no cap
  int max_tokens = 0;
  std::vector<core::ToolCall> assistant_calls;  // replayed tool calls, in order
  bool call_ids_on_wire = true;                 // the format carries call ids
  std::vector<std::string> tool_result_texts;   // substrings, one per tool message
};

// Checks one journal entry against `expected`.
void CheckJournalEntry(const rapidjson::Value& entry, const ExpectedRequest& expected);

// The text of a normalized message content: a string, or the text parts of an array.
std::string MessageText(const rapidjson::Value& content);

// `json` parsed and re-serialized with sorted keys; "<invalid JSON>" when it does not parse.
std::string Canonical(std::string_view json);

}  // namespace pulse::testing
