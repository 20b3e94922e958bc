#include "pulse/core/policy/execution_profile.h"

#include <array>

#include "pulse/core/json/wire_enum.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<ExecutionProfile>, 3> kProfileNames = {{
    {ExecutionProfile::kInteractive, "interactive"},
    {ExecutionProfile::kPatrolDetection, "patrol_detection"},
    {ExecutionProfile::kPatrolInvestigation, "patrol_investigation"},
}};

// Detection reports and assesses; nothing else it runs may touch Pulse state (no resolve on
// the model's word, no alert dismissal, no knowledge writes, no extension writes). A finding
// closes only on verifier evidence: an assessment of "resolved" goes through the verifier
// gate of FindingsService::ResolveByPatrol, in every category.
constexpr std::array<std::string_view, 2> kDetectionAllowlist = {kToolPatrolReportFinding,
                                                                 kToolPatrolAssessFinding};

}  // namespace

std::string_view ToString(ExecutionProfile profile) { return WireNameOf(kProfileNames, profile); }

ExecutionProfile ParseExecutionProfile(std::string_view text) {
  return WireValueOf(kProfileNames, text).value_or(ExecutionProfile::kUnknown);
}

ExecutionProfile NormalizeExecutionProfile(ExecutionProfile profile) {
  switch (profile) {
    case ExecutionProfile::kInteractive:
    case ExecutionProfile::kPatrolDetection:
    case ExecutionProfile::kPatrolInvestigation:
    case ExecutionProfile::kUnknown:
      return profile;
  }
  return ExecutionProfile::kUnknown;
}

bool IsInteractive(ExecutionProfile profile) { return profile == ExecutionProfile::kInteractive; }

std::span<const std::string_view> PulseStateAllowlist(ExecutionProfile profile) {
  if (profile == ExecutionProfile::kPatrolDetection) {
    return kDetectionAllowlist;
  }
  return {};
}

}  // namespace pulse::core
