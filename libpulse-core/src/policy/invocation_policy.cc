#include "pulse/core/policy/invocation_policy.h"

#include <algorithm>

namespace pulse::core {

InvocationPolicy InvocationPolicy::Create(const PolicyInputs& inputs,
                                          std::optional<ControlLevel> requested) {
  InvocationPolicy policy;
  policy.scopes_ = inputs.scopes;
  policy.profile_ = NormalizeExecutionProfile(inputs.profile);
  const ControlLevel configured = NormalizeControlLevel(inputs.configured_max);
  policy.control_level_ = Lower(configured, requested.value_or(configured));
  policy.deny_infrastructure_mutations_ = inputs.deny_infrastructure_mutations;
  if (!IsInteractive(policy.profile_)) {
    // No user owns a change in a non-interactive run: no infrastructure writes and no
    // inherited autonomy, whatever the Assistant's setting.
    policy.deny_infrastructure_mutations_ = true;
    policy.control_level_ = Lower(policy.control_level_, ControlLevel::kControlled);
  }
  policy.allowlist_ = PulseStateAllowlist(policy.profile_);
  return policy;
}

InvocationPolicy InvocationPolicy::FromRequest(const PolicyInputs& inputs,
                                               const rapidjson::Value& request_body) {
  return Create(inputs, RequestedControlLevel(request_body));
}

InvocationPolicy InvocationPolicy::WithControlLevelAtMost(ControlLevel level) const {
  InvocationPolicy narrowed = *this;
  narrowed.control_level_ = Lower(control_level_, level);
  return narrowed;
}

InvocationPolicy InvocationPolicy::WithInfrastructureDenied() const {
  InvocationPolicy narrowed = *this;
  narrowed.deny_infrastructure_mutations_ = true;
  return narrowed;
}

bool InvocationPolicy::AllowsPulseStateWrite(std::string_view tool) const {
  return std::find(allowlist_.begin(), allowlist_.end(), tool) != allowlist_.end();
}

}  // namespace pulse::core
