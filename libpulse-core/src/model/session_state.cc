#include "pulse/core/model/session_state.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<SessionState>, 4> kStates = {{
    {SessionState::kResolving, "RESOLVING"},
    {SessionState::kReading, "READING"},
    {SessionState::kWriting, "WRITING"},
    {SessionState::kVerifying, "VERIFYING"},
}};

}  // namespace

std::string_view ToString(SessionState state) { return WireNameOf(kStates, state, "UNKNOWN"); }

std::optional<SessionState> ParseSessionState(std::string_view text) {
  return WireValueOf(kStates, text);
}

}  // namespace pulse::core
