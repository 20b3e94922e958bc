// Shared fixtures of the FSM tests: the reference reason texts (spelled out independently of
// the production header, so a silent edit to a reason fails the tests), the invocation classes
// the loop feeds in, and sessions in the two interesting starting states.
#pragma once

#include <string_view>

#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/testing/fake_clock.h"

namespace pulse::testing::fsm {

// The exact reference texts (docs/architecture.md "The session state machine").
inline constexpr std::string_view kR1 =
    "POLICY_BLOCKED: state-changing tools require a validated target/resource context. "
    "Establish the target from current context or available tools, then retry only if the "
    "requested action still fits.";
inline constexpr std::string_view kR2 =
    "POLICY_BLOCKED: the previous state-changing tool call still needs current verification "
    "evidence. Gather evidence for the changed target, then retry only if another action is "
    "still needed.";
inline constexpr std::string_view kR3 =
    "POLICY_BLOCKED: the previous state-changing tool call needs current verification evidence "
    "before responding about the result.";

inline constexpr core::InvocationClass kResolveCall{core::ToolKind::kResolve,
                                                    core::MutationTarget::kNone};
inline constexpr core::InvocationClass kReadCall{core::ToolKind::kRead,
                                                 core::MutationTarget::kNone};
inline constexpr core::InvocationClass kInfraWrite{core::ToolKind::kWrite,
                                                   core::MutationTarget::kInfrastructure};
inline constexpr core::InvocationClass kFindingWrite{core::ToolKind::kWrite,
                                                     core::MutationTarget::kPulseState};
inline constexpr core::InvocationClass kQuestion{core::ToolKind::kUserInput,
                                                 core::MutationTarget::kNone};

// A session with an established target.
inline core::SessionFsm Reading(const FakeClock& clock) {
  core::SessionFsm fsm(clock);
  fsm.OnToolSuccess(core::ToolKind::kResolve, "pulse_query");
  return fsm;
}

// A session whose last write has not been verified.
inline core::SessionFsm Verifying(const FakeClock& clock) {
  core::SessionFsm fsm = Reading(clock);
  fsm.OnToolSuccess(core::ToolKind::kWrite, "pulse_control");
  return fsm;
}

}  // namespace pulse::testing::fsm
