// Execution profiles: the posture a run executes under, owned by the core and never read from
// a request body. interactive is the Assistant talking to a user; patrol_detection and
// patrol_investigation are the two Patrol phases. The vocabulary is closed: anything else is
// kUnknown, which is non-interactive and may write nothing. Pure functions; thread-safe.
#pragma once

#include <span>
#include <string_view>

namespace pulse::core {

enum class ExecutionProfile {
  kInteractive,          // the Assistant, with a user present
  kPatrolDetection,      // Patrol finding detection: may write finding state via its allowlist
  kPatrolInvestigation,  // Patrol investigation: domain-read-only plus one typed proposal
  kUnknown,              // anything else: reads only, no writes, no profile-gated tools
};

// Wire string: "interactive", "patrol_detection", "patrol_investigation", or "unknown" (also
// for a value outside the enum).
std::string_view ToString(ExecutionProfile profile);

// Closed parse: the three exact wire strings map to their profile; anything else (including
// "unknown", other casing and surrounding whitespace) is kUnknown.
ExecutionProfile ParseExecutionProfile(std::string_view text);

// A value outside the enum (e.g. from a cast) becomes kUnknown; others are unchanged.
ExecutionProfile NormalizeExecutionProfile(ExecutionProfile profile);

// Only kInteractive has a user who can answer a question or own a change.
bool IsInteractive(ExecutionProfile profile);

// The tools that may write pulse_state (Pulse's own records) under `profile`:
// patrol_detection → patrol_report_finding, patrol_assess_finding (patrol_resolve_finding is
// allowed in no profile: closing a finding needs verifier evidence, not the model's word);
// every other profile (interactive, investigation, unknown) → none. The span is static.
std::span<const std::string_view> PulseStateAllowlist(ExecutionProfile profile);

}  // namespace pulse::core
