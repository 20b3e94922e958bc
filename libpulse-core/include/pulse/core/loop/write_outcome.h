// The contract between an infrastructure-write tool handler and the agentic loop. A handler's
// successful result is JSON text; two optional top-level members tell the loop what happened:
//   "dispatched": false — nothing was handed to infrastructure (a plan only, a pending
//                         approval, a refusal); the session FSM then does not move to
//                         VERIFYING. Absent or anything but `false`: the loop assumes a
//                         mutation was dispatched and requires verification (fail safe).
//   "approval_needed": {"action_id": "...", "plan_hash": "..."} — pulse_control only: the
//                         plan awaits a decision; the loop suspends the run on it (after
//                         re-reading the action from the lifecycle, never trusting this text).
// Pure functions; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pulse::core {

inline constexpr std::string_view kResultDispatchedField = "dispatched";
inline constexpr std::string_view kResultApprovalNeededField = "approval_needed";

struct WriteOutcome {
  bool dispatched = true;
  // Set only when "approval_needed" holds non-empty action_id and plan_hash strings.
  std::optional<std::string> approval_action_id;
  std::optional<std::string> approval_plan_hash;
};

// Reads the members above from a result text that is one JSON object; any other text gives
// the fail-safe default {dispatched: true, no approval}.
WriteOutcome ParseWriteOutcome(std::string_view result_text);

}  // namespace pulse::core
