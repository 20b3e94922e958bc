#include "pulse/core/policy/governance.h"

namespace pulse::core {

std::string_view ToString(ActionMode mode) {
  switch (mode) {
    case ActionMode::kRead:
      return "read";
    case ActionMode::kMixed:
      return "mixed";
    case ActionMode::kWrite:
      return "write";
  }
  return "write";  // an out-of-range value is described by its most demanding reading
}

std::string_view ToString(ApprovalPolicy policy) {
  switch (policy) {
    case ApprovalPolicy::kScopeOnly:
      return "scope_only";
    case ApprovalPolicy::kActionPlan:
      return "action_plan";
  }
  return "action_plan";
}

}  // namespace pulse::core
