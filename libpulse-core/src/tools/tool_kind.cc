#include "pulse/core/tools/tool_kind.h"

namespace pulse::core {

std::string_view ToString(ToolKind kind) {
  switch (kind) {
    case ToolKind::kResolve:
      return "resolve";
    case ToolKind::kRead:
      return "read";
    case ToolKind::kWrite:
      return "write";
    case ToolKind::kUserInput:
      return "user_input";
  }
  return "unknown";
}

std::string_view ToString(MutationTarget target) {
  switch (target) {
    case MutationTarget::kNone:
      return "none";
    case MutationTarget::kPulseState:
      return "pulse_state";
    case MutationTarget::kInfrastructure:
      return "infrastructure";
  }
  return "unknown";
}

std::optional<ToolKind> ParseToolKind(std::string_view text) {
  for (ToolKind kind :
       {ToolKind::kResolve, ToolKind::kRead, ToolKind::kWrite, ToolKind::kUserInput}) {
    if (ToString(kind) == text) {
      return kind;
    }
  }
  return std::nullopt;
}

std::optional<MutationTarget> ParseMutationTarget(std::string_view text) {
  for (MutationTarget target :
       {MutationTarget::kNone, MutationTarget::kPulseState, MutationTarget::kInfrastructure}) {
    if (ToString(target) == text) {
      return target;
    }
  }
  return std::nullopt;
}

}  // namespace pulse::core
