#include "pulse/core/model/loop_event.h"

#include <array>

namespace pulse::core {
namespace {

struct TypeName {
  LoopEventType type;
  std::string_view name;
};

constexpr std::array<TypeName, 10> kTypes = {{
    {LoopEventType::kSession, "session"},
    {LoopEventType::kWorkflowState, "workflow_state"},
    {LoopEventType::kContent, "content"},
    {LoopEventType::kToolStart, "tool_start"},
    {LoopEventType::kToolProgress, "tool_progress"},
    {LoopEventType::kToolEnd, "tool_end"},
    {LoopEventType::kApprovalNeeded, "approval_needed"},
    {LoopEventType::kQuestion, "question"},
    {LoopEventType::kError, "error"},
    {LoopEventType::kDone, "done"},
}};

}  // namespace

std::string_view ToString(LoopEventType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) {
      return t.name;
    }
  }
  return "done";
}

std::optional<LoopEventType> ParseLoopEventType(std::string_view text) {
  for (const TypeName& t : kTypes) {
    if (t.name == text) {
      return t.type;
    }
  }
  return std::nullopt;
}

}  // namespace pulse::core
