#include "pulse/core/policy/governance.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<ActionMode>, 3> kModes = {{
    {ActionMode::kRead, "read"},
    {ActionMode::kMixed, "mixed"},
    {ActionMode::kWrite, "write"},
}};

constexpr std::array<WireName<ApprovalPolicy>, 2> kPolicies = {{
    {ApprovalPolicy::kScopeOnly, "scope_only"},
    {ApprovalPolicy::kActionPlan, "action_plan"},
}};

}  // namespace

// An out-of-range value is described by its most demanding reading.
std::string_view ToString(ActionMode mode) { return WireNameOf(kModes, mode, "write"); }
std::string_view ToString(ApprovalPolicy policy) {
  return WireNameOf(kPolicies, policy, "action_plan");
}

}  // namespace pulse::core
