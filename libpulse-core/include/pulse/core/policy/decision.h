// The one policy decision. Decide() answers "may this run make this call?" and is the only
// function both the provider projection (projection.h) and enforcement (tool_executor.h)
// consult, so what a model is offered and what will run can never disagree. A refusal is a
// domain value carrying a stable tool-result code, a stable rule name and model/operator
// readable reason. Pure functions over immutable inputs; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pulse/core/errors/tool_error.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/tools/tool_catalog.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/core/tools/tool_registry.h"
#include "rapidjson/document.h"

namespace pulse::core {

// Why a call was allowed or refused. Wire strings (the "rule" detail of a refusal) are the
// snake_case names in the comments; the tool-result code each refusal carries follows.
enum class PolicyRule {
  kAllowed,               // allowed
  kBlankName,             // blank_tool_name            INVALID_INPUT
  kRetiredTool,           // retired_tool               POLICY_BLOCKED
  kUnknownTool,           // unknown_tool               NOT_FOUND
  kToolUnavailable,       // tool_unavailable           NOT_FOUND (registered, no handler)
  kInvalidArguments,      // invalid_arguments          INVALID_INPUT
  kReservedArgument,      // reserved_argument          POLICY_BLOCKED
  kUnknownDiscriminator,  // unknown_discriminator      INVALID_INPUT
  kInvalidClass,          // invalid_invocation_class   POLICY_BLOCKED
  kMissingScope,          // missing_scope              POLICY_BLOCKED
  kInteractiveOnly,       // interactive_only           NON_INTERACTIVE
  kInvestigationOnly,     // investigation_only         POLICY_BLOCKED
  kProfileForbidsWrite,   // profile_forbids_write      POLICY_BLOCKED
  kInfrastructureDenied,  // infrastructure_denied      POLICY_BLOCKED
  kControlLevel,          // control_level              POLICY_BLOCKED (operator guidance)
};

std::string_view ToString(PolicyRule rule);

struct Decision {
  bool allowed = false;
  ToolErrorCode code = ToolErrorCode::kPolicyBlocked;  // meaningful only when refused
  std::string reason;                                  // empty when allowed
  PolicyRule rule = PolicyRule::kInvalidClass;
  std::string tool;                                     // the (trimmed) tool name
  InvocationClass invocation_class = kFailClosedClass;  // what the call was judged as
  // Extra refusal details (e.g. required_scope, control_level, enable_with), in order.
  std::vector<std::pair<std::string, ToolErrorDetail>> details;

  static Decision Allow(std::string tool, InvocationClass invocation_class);
  static Decision Refuse(ToolErrorCode code, PolicyRule rule, std::string tool, std::string reason);

  // The refusal as a tool-result error: blocked=true, never retryable, details "rule" and
  // "tool" followed by `details`. Only meaningful when !allowed.
  ToolError ToToolError() const;
};

// Decides one call of `tool` under `policy`. Reads only the tool's descriptor and hints and,
// for a discriminator tool, the discriminator member of `args` (so a synthetic
// {"<discriminator>": value} object decides exactly what a full call with that value would).
// Order: the call must classify (a discriminator that is missing, repeated, not a string or
// not a declared case → kUnknownDiscriminator; an invalid class → kInvalidClass); the caller
// needs ai:chat or ai:execute for anything; interactive-only tools and every user_input call
// need the interactive profile (NON_INTERACTIVE); investigation-only tools need
// patrol_investigation; then by
// mutation target:
//  * none: allowed;
//  * pulse_state: needs ai:execute and the tool in the profile's allowlist;
//  * infrastructure: needs ai:execute, the interactive profile, no request-local denial and a
//    control level of controlled or autonomous (the last refusal is operator guidance).
Decision Decide(const InvocationPolicy& policy, const ToolSpec& tool, const rapidjson::Value& args);

// The name checks every call passes first. The name is trimmed of ASCII whitespace; blank →
// INVALID_INPUT (blank_tool_name); a retired name, matched ignoring ASCII case, →
// POLICY_BLOCKED (retired_tool) before anything else looks at it; a name `registry` does not
// hold → NOT_FOUND (unknown_tool). Returns the refusal, or nullopt when the name is usable.
std::optional<Decision> CheckToolName(const ToolRegistry& registry, std::string_view name);

// Decides a call by name against `registry`: CheckToolName, then the overload above.
Decision Decide(const InvocationPolicy& policy, const ToolRegistry& registry, std::string_view name,
                const rapidjson::Value& args);

}  // namespace pulse::core
