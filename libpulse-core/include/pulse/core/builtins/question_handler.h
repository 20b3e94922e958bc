// The pulse_question tool handler. The question itself is delivered by the loop (a `question`
// event, then the run ends and the user's next message is the answer; no thread waits), so the
// handler only normalizes the validated arguments into {"question": ..., "options": [...]}.
// Stateless; thread-safe.
#pragma once

#include "pulse/core/policy/tool_executor.h"

namespace pulse::core {

class QuestionToolHandler final : public ToolHandler {
 public:
  // Trims the question and each option (blank options dropped). An all-blank question is
  // INVALID_INPUT.
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;
};

}  // namespace pulse::core
