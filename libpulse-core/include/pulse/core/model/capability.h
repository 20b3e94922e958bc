// A governed capability: one typed operation a resource advertises in its current state
// (docs/architecture.md "Governed actions"), with its parameter declarations, approval floor,
// automatic-execution class and risk. Validation here is the one rule set shared by planning,
// proposal checks and the drift re-check, so they cannot disagree. Plain values and pure
// functions; thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pulse::core {

// Approval floor. Rank none < admin < mfa; dry_run_only is special: plan only, never
// executable, never approvable.
enum class ApprovalLevel { kNone, kAdmin, kMfa, kDryRunOnly };
// Wire: none, admin, mfa, dry_run_only.
std::string_view ToString(ApprovalLevel level);
std::optional<ApprovalLevel> ParseApprovalLevel(std::string_view text);

// Whether automation (an agent or policy requester) may run the capability without a human.
// Ordered: never < low_risk < elevated.
enum class AutoAuthorization { kNever, kLowRisk, kElevated };
// Wire: never, low_risk, elevated.
std::string_view ToString(AutoAuthorization value);
std::optional<AutoAuthorization> ParseAutoAuthorization(std::string_view text);

enum class ActionRisk { kLow, kMedium, kHigh };
// Wire: low, medium, high.
std::string_view ToString(ActionRisk risk);
std::optional<ActionRisk> ParseActionRisk(std::string_view text);

// Parameter types. The parser also accepts the wire aliases bool, int, float, float64, map.
enum class ParamType { kString, kBoolean, kInteger, kNumber, kObject, kArray, kAny };
// Wire (canonical spelling): string, boolean, integer, number, object, array, any.
std::string_view ToString(ParamType type);
std::optional<ParamType> ParseParamType(std::string_view text);

struct CapabilityParam {
  std::string name;  // [A-Za-z][A-Za-z0-9_.-]{0,63}
  ParamType type = ParamType::kString;
  bool required = false;
  // Allowed values; only for string params. Empty = unconstrained.
  std::vector<std::string> enum_values;
  // Unanchored search (JSON Schema semantics) in the RapidJSON regex subset: literals,
  // . [] [^] ( ) | ? * + {n} {n,} {n,m} ^ $ and the escapes \f \n \r \t \v and \<meta>.
  // Classes such as \d or \w are not supported: a pattern using one is invalid, and an
  // invalid pattern makes the whole capability invalid (fail closed). Only for string params.
  std::string pattern;
  bool sensitive = false;  // never echoed in messages
  std::string description;

  friend bool operator==(const CapabilityParam&, const CapabilityParam&) = default;
};

struct Capability {
  std::string name;  // [a-z][a-z0-9_.-]{0,63}
  std::string description;
  ApprovalLevel minimum_approval = ApprovalLevel::kAdmin;
  AutoAuthorization auto_authorization = AutoAuthorization::kNever;
  ActionRisk risk = ActionRisk::kMedium;
  bool supports_rollback = false;
  std::vector<CapabilityParam> params;  // declaration order is significant for the policy hash

  friend bool operator==(const Capability&, const Capability&) = default;
};

// Bounds on capability declarations and on submitted params (hostile-input limits).
inline constexpr std::size_t kMaxCapabilityParams = 32;
inline constexpr std::size_t kMaxCapabilityTextBytes = 1024;  // description fields
inline constexpr std::size_t kMaxParamPatternBytes = 256;
inline constexpr std::size_t kMaxParamEnumValues = 64;
inline constexpr std::size_t kMaxParamsJsonBytes = 16 * 1024;
inline constexpr std::size_t kMaxParamsDepth = 8;
inline constexpr std::size_t kMaxParamStringBytes = 4096;

// OK when the declaration is well-formed: valid names, no duplicate params, enum/pattern only
// on string params, enum values unique, every pattern compiles within the bounds above.
// Otherwise InvalidArgument naming the first problem.
[[nodiscard]] absl::Status ValidateCapability(const Capability& capability);

// Exact-name lookup; nullptr when absent.
const Capability* FindCapability(const std::vector<Capability>& catalogue, std::string_view name);

// Why submitted params were refused: field (param name, or "params") → reason. Reasons name
// the rule broken and never echo a submitted value.
using ParamErrors = std::map<std::string, std::string>;

// The outcome of ValidateParams: canonical params text on success, else per-field reasons.
struct ParamValidation {
  std::string canonical_params;  // sorted keys, compact; set only when errors is empty
  ParamErrors errors;

  bool ok() const { return errors.empty(); }
};

// Validates `params_json` (text of a JSON object; "" is treated as {}) against `capability`:
// the text must parse within kMaxParamsJsonBytes / kMaxParamsDepth; every name is declared
// (untrimmed or undeclared names are refused), every required param is present, every value
// has its declared type (integer = a JSON integer, not 1.0; number = any JSON number), every
// string anywhere in the params is valid UTF-8 without NUL and at most kMaxParamStringBytes,
// enum and pattern hold. `capability` must already pass ValidateCapability (a pattern that
// does not compile refuses the param).
ParamValidation ValidateParams(const Capability& capability, std::string_view params_json);

// Unanchored pattern search with the same engine and limits as ValidateParams. Returns
// InvalidArgument when `pattern` is not a valid bounded pattern; `subject` must be valid UTF-8
// without NUL (else the result is false).
[[nodiscard]] absl::StatusOr<bool> PatternSearch(std::string_view pattern,
                                                 std::string_view subject);

}  // namespace pulse::core
