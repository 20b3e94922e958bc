// InvocationPolicy: the authority one run executes with — the caller's scopes, the effective
// control level, the execution profile, the request-local infrastructure denial and the
// profile's pulse_state allowlist. It is built only by Create/FromRequest, which take the
// server's configured maximum and can only narrow it, so caller JSON never grants authority.
// An immutable value: copy it per run; safe to read from any thread.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "pulse/core/policy/control_level.h"
#include "pulse/core/policy/execution_profile.h"
#include "pulse/core/policy/scope.h"
#include "rapidjson/document.h"

namespace pulse::core {

// What the server knows before it reads the request body.
struct PolicyInputs {
  ScopeSet scopes;                                        // of the caller's token
  ControlLevel configured_max = ControlLevel::kReadOnly;  // the operator's setting
  ExecutionProfile profile = ExecutionProfile::kUnknown;  // the default fails closed
  bool deny_infrastructure_mutations = false;             // request-local; never serialized
};

class InvocationPolicy {
 public:
  // The policy of one run. The effective level is Lower(configured_max, requested) (requested
  // absent: configured_max). Out-of-range enum values normalize fail-closed (level →
  // read_only, profile → kUnknown). Both Patrol profiles and kUnknown are non-interactive:
  // infrastructure denial is forced on and an autonomous level is clamped to controlled.
  static InvocationPolicy Create(const PolicyInputs& inputs,
                                 std::optional<ControlLevel> requested = std::nullopt);

  // Create() with the level a request body asks for (RequestedControlLevel: absent or null
  // member → no narrowing, an unknown string or any non-string → read_only).
  static InvocationPolicy FromRequest(const PolicyInputs& inputs,
                                      const rapidjson::Value& request_body);

  // A copy whose control level is at most `level` (never raised).
  InvocationPolicy WithControlLevelAtMost(ControlLevel level) const;
  // A copy that refuses every infrastructure mutation (the flag can only be turned on).
  InvocationPolicy WithInfrastructureDenied() const;

  const ScopeSet& Scopes() const { return scopes_; }
  // The effective control level (after the request's narrowing and the profile's clamp).
  ControlLevel EffectiveLevel() const { return control_level_; }
  ExecutionProfile Profile() const { return profile_; }
  // True when this run refuses every infrastructure mutation.
  bool DeniesInfrastructure() const { return deny_infrastructure_mutations_; }
  // The tools that may write pulse_state under this profile (PulseStateAllowlist).
  std::span<const std::string_view> PulseStateTools() const { return allowlist_; }
  // True when `tool` (exact name) is in PulseStateTools().
  bool AllowsPulseStateWrite(std::string_view tool) const;

 private:
  InvocationPolicy() = default;

  ScopeSet scopes_;
  ControlLevel control_level_ = ControlLevel::kReadOnly;
  ExecutionProfile profile_ = ExecutionProfile::kUnknown;
  bool deny_infrastructure_mutations_ = true;
  std::span<const std::string_view> allowlist_;
};

}  // namespace pulse::core
