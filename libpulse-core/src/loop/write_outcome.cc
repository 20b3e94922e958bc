#include "pulse/core/loop/write_outcome.h"

#include "pulse/core/json/json.h"

namespace pulse::core {

WriteOutcome ParseWriteOutcome(std::string_view result_text) {
  WriteOutcome outcome;
  absl::StatusOr<rapidjson::Document> doc = ParseJson(result_text, JsonLimits{1 << 20, 64});
  if (!doc.ok() || !doc->IsObject()) {
    return outcome;
  }
  if (std::optional<bool> dispatched = GetBool(*doc, kResultDispatchedField);
      dispatched.has_value() && !*dispatched) {
    outcome.dispatched = false;
  }
  const rapidjson::Value* approval = GetMember(*doc, kResultApprovalNeededField);
  if (approval != nullptr && approval->IsObject()) {
    std::optional<std::string_view> id = GetString(*approval, "action_id");
    std::optional<std::string_view> hash = GetString(*approval, "plan_hash");
    if (id.has_value() && !id->empty() && hash.has_value() && !hash->empty()) {
      outcome.approval_action_id = std::string(*id);
      outcome.approval_plan_hash = std::string(*hash);
    }
  }
  return outcome;
}

}  // namespace pulse::core
