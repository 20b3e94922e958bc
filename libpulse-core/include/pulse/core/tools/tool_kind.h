// The closed vocabulary every tool call is classified into: a workflow kind (what the
// session FSM sees) and a mutation target (what the invocation policy sees).
// Plain values, freely copyable; no shared state.
#pragma once

#include <optional>
#include <string_view>

namespace pulse::core {

// Workflow kind of a tool call. Wire strings: resolve, read, write, user_input.
enum class ToolKind { kResolve, kRead, kWrite, kUserInput };

// What a call may change. Wire strings: none, pulse_state, infrastructure.
enum class MutationTarget { kNone, kPulseState, kInfrastructure };

// The class of one concrete invocation. Both fields come from closed sets, so every
// value of this struct is valid; parsing from strings is where unknowns are rejected.
struct InvocationClass {
  ToolKind kind = ToolKind::kWrite;
  MutationTarget mutation = MutationTarget::kInfrastructure;

  friend bool operator==(const InvocationClass&, const InvocationClass&) = default;
};

// The class every unknown or unclassifiable call falls to.
inline constexpr InvocationClass kFailClosedClass{ToolKind::kWrite,
                                                  MutationTarget::kInfrastructure};

// True for a write whose target is infrastructure (the only class the FSM's write gate and
// the action lifecycle govern).
constexpr bool IsInfrastructureWrite(InvocationClass c) {
  return c.kind == ToolKind::kWrite && c.mutation == MutationTarget::kInfrastructure;
}

// Wire string of a kind ("resolve", "read", "write", "user_input").
std::string_view ToString(ToolKind kind);
// Wire string of a mutation target ("none", "pulse_state", "infrastructure").
std::string_view ToString(MutationTarget target);

// Exact-match parsers: anything but the wire strings (including other casing or
// surrounding whitespace) returns nullopt.
std::optional<ToolKind> ParseToolKind(std::string_view text);
std::optional<MutationTarget> ParseMutationTarget(std::string_view text);

}  // namespace pulse::core
