#include "pulse/core/findings/suppression_rule.h"

#include <array>
#include <utility>

#include "json_codec.h"
#include "short_digest.h"
#include "pulse/core/findings/finding.h"
#include "pulse/core/findings/finding_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;
using findings_internal::JsonOut;
using findings_internal::ObjectIn;

constexpr std::array<std::pair<SuppressionOrigin, std::string_view>, 4> kOrigins = {{
    {SuppressionOrigin::kFinding, "finding"},
    {SuppressionOrigin::kDismissed, "dismissed"},
    {SuppressionOrigin::kManual, "manual"},
    {SuppressionOrigin::kSuppress, "suppress"},
}};

}  // namespace

std::string_view ToString(SuppressionOrigin origin) {
  for (const auto& [value, name] : kOrigins) {
    if (value == origin) {
      return name;
    }
  }
  return "unknown";
}

std::optional<SuppressionOrigin> ParseSuppressionOrigin(std::string_view text) {
  for (const auto& [value, name] : kOrigins) {
    if (name == text) {
      return value;
    }
  }
  return std::nullopt;
}

bool RuleMatches(const SuppressionRule& rule, std::string_view resource_id, Category category) {
  if (!rule.resource_id.empty() && rule.resource_id != resource_id) {
    return false;
  }
  return !rule.category.has_value() || *rule.category == category;
}

bool IsBroadRule(const SuppressionRule& rule) {
  return rule.resource_id.empty() || !rule.category.has_value();
}

std::string SuppressionRuleIdFor(std::string_view resource_id, std::optional<Category> category) {
  // Length-prefixed, so no resource id (which may hold ':' or '*') can alias another scope.
  std::string preimage = std::to_string(resource_id.size());
  preimage.append(":").append(resource_id).append(":");
  preimage.append(category.has_value() ? ToString(*category) : "*");
  return "sr-" + findings_internal::ShortDigestHex(preimage);
}

std::string SuppressionRuleToJson(const SuppressionRule& rule) {
  JsonOut out;
  out.StartObject();
  out.Field(w::kId, rule.id);
  out.Field(w::kResourceId, rule.resource_id);
  out.Field(w::kResourceName, rule.resource_name);
  if (rule.category.has_value()) {
    out.Field(w::kCategory, ToString(*rule.category));
  }
  out.Field(w::kRuleDescription, rule.description);
  if (rule.dismissed_reason.has_value()) {
    out.Field(w::kDismissedReason, ToString(*rule.dismissed_reason));
  }
  out.FieldTime(w::kRuleCreatedAt, rule.created_at);
  out.Field(w::kRuleCreatedFrom, ToString(rule.created_from));
  out.FieldIfSet(w::kRuleFindingId, rule.finding_id);
  out.EndObject();
  return out.Take();
}

absl::StatusOr<SuppressionRule> SuppressionRuleFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json, JsonLimits{64 * 1024, 4}));
  ObjectIn in(doc, "suppression_rule");
  PULSE_RETURN_IF_ERROR(in.Check({w::kId, w::kResourceId, w::kResourceName, w::kCategory,
                                  w::kRuleDescription, w::kDismissedReason, w::kRuleCreatedAt,
                                  w::kRuleCreatedFrom, w::kRuleFindingId}));
  SuppressionRule rule;
  PULSE_RETURN_IF_ERROR(in.String(w::kId, kMaxFindingIdentifierBytes, true, rule.id));
  PULSE_RETURN_IF_ERROR(
      in.String(w::kResourceId, kMaxFindingIdentifierBytes, false, rule.resource_id));
  PULSE_RETURN_IF_ERROR(
      in.String(w::kResourceName, kMaxFindingIdentifierBytes, false, rule.resource_name));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kCategory, ParseCategory, false, rule.category));
  PULSE_RETURN_IF_ERROR(
      in.String(w::kRuleDescription, kMaxFindingTextBytes, false, rule.description));
  PULSE_RETURN_IF_ERROR(
      in.Enum(w::kDismissedReason, ParseDismissReason, false, rule.dismissed_reason));
  PULSE_RETURN_IF_ERROR(in.RequiredTime(w::kRuleCreatedAt, rule.created_at));
  std::optional<SuppressionOrigin> origin;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kRuleCreatedFrom, ParseSuppressionOrigin, true, origin));
  rule.created_from = *origin;
  PULSE_RETURN_IF_ERROR(
      in.String(w::kRuleFindingId, kMaxFindingIdentifierBytes, false, rule.finding_id));
  if (rule.id != SuppressionRuleIdFor(rule.resource_id, rule.category)) {
    return in.Invalid(w::kId, "does not match the rule's resource and category");
  }
  return rule;
}

}  // namespace pulse::core
