// How the action lifecycle says "no". A refusal is a domain result, not an error status: it
// carries the closed AgentErrorCode the surface answers with (the HTTP layer turns it into the
// agent error envelope via ToAgentError), a message, and the record as stored after the
// refusal when one exists (e.g. the failed record a plan-drift refusal persisted).
// ActionService returns absl::StatusOr<Refusable<T>>: a non-OK status means the engine could
// not decide (a store or port failed); a refusal means it decided no. Plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "pulse/core/errors/agent_error.h"
#include "pulse/core/model/action_types.h"

namespace pulse::core {

// Stable prefixes of persisted refusal messages (ActionExecutionResult::error_message and the
// refusal message). Agents and alert rules branch on them, never on the prose after them.
inline constexpr std::string_view kPlanDriftPrefix = "plan_drift:";
inline constexpr std::string_view kRemediationLockedPrefix = "resource_remediation_locked:";
inline constexpr std::string_view kLockStateUnknownPrefix = "remediation_lock_state_unknown:";
inline constexpr std::string_view kDryRunOnlyPrefix = "action_dry_run_only:";
inline constexpr std::string_view kExecutionInterruptedPrefix = "execution_interrupted:";
// The executor's own authority was withdrawn before dispatch (ExecuteRequest::recheck).
inline constexpr std::string_view kDispatchAuthorityWithdrawnPrefix =
    "dispatch_authority_withdrawn:";

struct ActionRefusal {
  AgentErrorCode code = AgentErrorCode::kInvalidActionRequest;
  std::string message;
  std::map<std::string, std::string> details;  // field -> reason for validation refusals
  std::optional<ActionRecord> record;
  // Execute only: Fleet::Dispatch ran before this refusal was decided (the finishing CAS was
  // lost, action_not_executing), so the change must be taken as made. Everywhere else false:
  // a refusal otherwise means nothing was dispatched.
  bool dispatched = false;

  // The agent error envelope value (code, message, details).
  AgentError ToAgentError() const { return AgentError{code, message, details}; }
};

// Either a T or an ActionRefusal.
template <class T>
class Refusable {
 public:
  Refusable(T value) : v_(std::move(value)) {}                  // NOLINT: implicit by design
  Refusable(ActionRefusal refusal) : v_(std::move(refusal)) {}  // NOLINT: implicit by design

  bool refused() const { return std::holds_alternative<ActionRefusal>(v_); }
  // Requires refused() (unchecked, like an optional's operator*).
  const ActionRefusal& refusal() const { return *std::get_if<ActionRefusal>(&v_); }
  // Requires !refused() (unchecked).
  const T& value() const { return *std::get_if<T>(&v_); }
  T& value() { return *std::get_if<T>(&v_); }

 private:
  std::variant<T, ActionRefusal> v_;
};

inline ActionRefusal Refuse(AgentErrorCode code, std::string message,
                            std::optional<ActionRecord> record = std::nullopt) {
  ActionRefusal refusal;
  refusal.code = code;
  refusal.message = std::move(message);
  refusal.record = std::move(record);
  return refusal;
}

}  // namespace pulse::core
