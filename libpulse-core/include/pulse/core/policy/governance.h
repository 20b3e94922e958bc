// The governance vocabulary a tool or capability is offered with (docs/security.md):
// actionMode says whether calls read, write, or may do either; approvalPolicy says whether
// holding the scope is enough or a governed action-plan approval is needed. Plain values.
#pragma once

#include <string_view>

namespace pulse::core {

// Wire strings: read, mixed, write.
enum class ActionMode { kRead, kMixed, kWrite };

// Wire strings: scope_only, action_plan.
enum class ApprovalPolicy { kScopeOnly, kActionPlan };

std::string_view ToString(ActionMode mode);
std::string_view ToString(ApprovalPolicy policy);

}  // namespace pulse::core
