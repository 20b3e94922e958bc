// SuppressionRule: an operator's standing decision that new findings for a resource and
// category are not wanted (docs/architecture.md "Findings"). A rule blocks *new* findings only; an
// existing finding that is seen again while suppressed is recorded as such. Plain values;
// thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/finding_types.h"

namespace pulse::core {

// Where a rule came from. Wire strings: finding, dismissed, manual, suppress.
enum class SuppressionOrigin { kFinding, kDismissed, kManual, kSuppress };

std::string_view ToString(SuppressionOrigin origin);
std::optional<SuppressionOrigin> ParseSuppressionOrigin(std::string_view text);

struct SuppressionRule {
  std::string id;           // SuppressionRuleIdFor(resource_id, category)
  std::string resource_id;  // empty = every resource (a broad rule)
  std::string resource_name;
  std::optional<Category> category;  // nullopt = every category (a broad rule)
  std::string description;
  std::optional<DismissReason> dismissed_reason;
  absl::Time created_at = absl::UnixEpoch();
  SuppressionOrigin created_from = SuppressionOrigin::kManual;
  std::string finding_id;  // the finding it was created from, if any

  friend bool operator==(const SuppressionRule&, const SuppressionRule&) = default;
};

// Whether the rule covers a finding for this resource and category: each empty field of the
// rule is a wildcard, each set field must match exactly.
bool RuleMatches(const SuppressionRule& rule, std::string_view resource_id, Category category);

// A rule with a wildcard field (any resource or any category).
bool IsBroadRule(const SuppressionRule& rule);

// Deterministic id: "sr-" + 16 hex digits of sha256("<len>:<resource_id>:<category or *>")
// (len = byte length of resource_id, so no two scopes share a preimage). One scope has one
// rule, and re-creating it is an idempotent upsert.
std::string SuppressionRuleIdFor(std::string_view resource_id, std::optional<Category> category);

// Compact JSON: {"id","resource_id","resource_name","category"?,"description",
// "dismissed_reason"?,"created_at","created_from","finding_id"?}; an absent category is a
// wildcard. The decoder is strict: unknown or duplicate members, wrong types, unknown enum
// strings, oversized fields, an id that does not match the scope, or a bad time are
// InvalidArgument.
std::string SuppressionRuleToJson(const SuppressionRule& rule);
absl::StatusOr<SuppressionRule> SuppressionRuleFromJson(std::string_view json);

}  // namespace pulse::core
