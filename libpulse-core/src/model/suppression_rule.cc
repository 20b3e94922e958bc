#include "pulse/core/model/suppression_rule.h"

#include <array>
#include <utility>

#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/finding_wire.h"
#include "pulse/core/model/short_digest.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;

constexpr std::array<WireName<SuppressionOrigin>, 4> kOrigins = {{
    {SuppressionOrigin::kFinding, "finding"},
    {SuppressionOrigin::kDismissed, "dismissed"},
    {SuppressionOrigin::kManual, "manual"},
    {SuppressionOrigin::kSuppress, "suppress"},
}};

}  // namespace

std::string_view ToString(SuppressionOrigin origin) { return WireNameOf(kOrigins, origin); }

std::optional<SuppressionOrigin> ParseSuppressionOrigin(std::string_view text) {
  return WireValueOf(kOrigins, text);
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
  JsonWriter out;
  out.StartObject();
  out.Member(w::kId, rule.id);
  out.Member(w::kResourceId, rule.resource_id);
  out.Member(w::kResourceName, rule.resource_name);
  if (rule.category.has_value()) {
    out.Member(w::kCategory, ToString(*rule.category));
  }
  out.Member(w::kRuleDescription, rule.description);
  if (rule.dismissed_reason.has_value()) {
    out.Member(w::kDismissedReason, ToString(*rule.dismissed_reason));
  }
  out.TimeMember(w::kRuleCreatedAt, rule.created_at);
  out.Member(w::kRuleCreatedFrom, ToString(rule.created_from));
  out.MemberIfNotEmpty(w::kRuleFindingId, rule.finding_id);
  out.EndObject();
  return out.Take();
}

absl::StatusOr<SuppressionRule> SuppressionRuleFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json, JsonLimits{64 * 1024, 4}));
  JsonObjectReader in(doc, "suppression_rule");
  PULSE_RETURN_IF_ERROR(in.ExpectMembers(
      {w::kId, w::kResourceId, w::kResourceName, w::kCategory, w::kRuleDescription,
       w::kDismissedReason, w::kRuleCreatedAt, w::kRuleCreatedFrom, w::kRuleFindingId}));
  constexpr JsonStringRule kIdentifier{kMaxFindingIdentifierBytes};
  constexpr JsonStringRule kEnum{64};
  SuppressionRule rule;
  rule.id = in.String(w::kId, {kMaxFindingIdentifierBytes, JsonPresence::kRequired}).value_or("");
  rule.resource_id = in.String(w::kResourceId, kIdentifier).value_or("");
  rule.resource_name = in.String(w::kResourceName, kIdentifier).value_or("");
  rule.category = in.Enum(w::kCategory, ParseCategory, kEnum);
  rule.description = in.String(w::kRuleDescription, {kMaxFindingTextBytes}).value_or("");
  rule.dismissed_reason = in.Enum(w::kDismissedReason, ParseDismissReason, kEnum);
  rule.created_at = in.Time(w::kRuleCreatedAt, JsonPresence::kRequired).value_or(rule.created_at);
  rule.created_from =
      in.Enum(w::kRuleCreatedFrom, ParseSuppressionOrigin, {64, JsonPresence::kRequired})
          .value_or(rule.created_from);
  rule.finding_id = in.String(w::kRuleFindingId, kIdentifier).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  if (rule.id != SuppressionRuleIdFor(rule.resource_id, rule.category)) {
    in.Fail(w::kId, "does not match the rule's resource and category");
    return in.status();
  }
  return rule;
}

}  // namespace pulse::core
