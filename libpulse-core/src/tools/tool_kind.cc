#include "pulse/core/tools/tool_kind.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<ToolKind>, 4> kKinds = {{
    {ToolKind::kResolve, "resolve"},
    {ToolKind::kRead, "read"},
    {ToolKind::kWrite, "write"},
    {ToolKind::kUserInput, "user_input"},
}};

constexpr std::array<WireName<MutationTarget>, 3> kTargets = {{
    {MutationTarget::kNone, "none"},
    {MutationTarget::kPulseState, "pulse_state"},
    {MutationTarget::kInfrastructure, "infrastructure"},
}};

}  // namespace

std::string_view ToString(ToolKind kind) { return WireNameOf(kKinds, kind); }
std::string_view ToString(MutationTarget target) { return WireNameOf(kTargets, target); }

std::optional<ToolKind> ParseToolKind(std::string_view text) { return WireValueOf(kKinds, text); }
std::optional<MutationTarget> ParseMutationTarget(std::string_view text) {
  return WireValueOf(kTargets, text);
}

}  // namespace pulse::core
