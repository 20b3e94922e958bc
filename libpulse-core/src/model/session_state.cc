#include "pulse/core/model/session_state.h"

namespace pulse::core {
namespace {

constexpr SessionState kAllStates[] = {SessionState::kResolving, SessionState::kReading,
                                       SessionState::kWriting, SessionState::kVerifying};

}  // namespace

std::string_view ToString(SessionState state) {
  switch (state) {
    case SessionState::kResolving:
      return "RESOLVING";
    case SessionState::kReading:
      return "READING";
    case SessionState::kWriting:
      return "WRITING";
    case SessionState::kVerifying:
      return "VERIFYING";
  }
  return "UNKNOWN";
}

std::optional<SessionState> ParseSessionState(std::string_view text) {
  for (SessionState state : kAllStates) {
    if (ToString(state) == text) {
      return state;
    }
  }
  return std::nullopt;
}

}  // namespace pulse::core
