#include "pulse/core/model/loop_event.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<LoopEventType>, 10> kTypes = {{
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

std::string_view ToString(LoopEventType type) { return WireNameOf(kTypes, type, "done"); }

std::optional<LoopEventType> ParseLoopEventType(std::string_view text) {
  return WireValueOf(kTypes, text);
}

}  // namespace pulse::core
