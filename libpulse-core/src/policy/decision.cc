#include "pulse/core/policy/decision.h"

#include <array>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/tools/classify.h"
#include "pulse/core/tools/invocation_descriptor.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<PolicyRule>, 15> kRuleNames = {{
    {PolicyRule::kAllowed, "allowed"},
    {PolicyRule::kBlankName, "blank_tool_name"},
    {PolicyRule::kRetiredTool, "retired_tool"},
    {PolicyRule::kUnknownTool, "unknown_tool"},
    {PolicyRule::kToolUnavailable, "tool_unavailable"},
    {PolicyRule::kInvalidArguments, "invalid_arguments"},
    {PolicyRule::kReservedArgument, "reserved_argument"},
    {PolicyRule::kUnknownDiscriminator, "unknown_discriminator"},
    {PolicyRule::kInvalidClass, "invalid_invocation_class"},
    {PolicyRule::kMissingScope, "missing_scope"},
    {PolicyRule::kInteractiveOnly, "interactive_only"},
    {PolicyRule::kInvestigationOnly, "investigation_only"},
    {PolicyRule::kProfileForbidsWrite, "profile_forbids_write"},
    {PolicyRule::kInfrastructureDenied, "infrastructure_denied"},
    {PolicyRule::kControlLevel, "control_level"},
}};

std::string Quoted(std::string_view name) {
  return absl::StrCat("\"", QuoteForMessage(name), "\"");
}

// The class a call resolves to, or the rule that refuses it before any authority check.
struct Resolved {
  std::optional<InvocationClass> invocation_class;
  PolicyRule failure = PolicyRule::kInvalidClass;
};

// Mirrors Classify() but tells an undeclared discriminator apart from a declared case whose
// class happens to equal the fail-closed class, and refuses invalid descriptors and classes
// instead of mapping them to write/infrastructure (which full authority could then allow).
Resolved Resolve(const InvocationDescriptor& d, const rapidjson::Value& args) {
  const bool has_discriminator = !d.discriminator.empty() || !d.cases.empty();
  if (d.static_class.has_value()) {
    if (has_discriminator || !IsValidInvocationClass(*d.static_class)) {
      return {};
    }
    return {*d.static_class, PolicyRule::kAllowed};
  }
  if (d.discriminator.empty()) {
    return {};
  }
  const rapidjson::Value* value = nullptr;
  int occurrences = 0;
  if (args.IsObject()) {
    for (const auto& member : args.GetObject()) {
      if (std::string_view(member.name.GetString(), member.name.GetStringLength()) ==
          d.discriminator) {
        value = &member.value;
        ++occurrences;
      }
    }
  }
  if (occurrences != 1 || !value->IsString()) {
    return {std::nullopt, PolicyRule::kUnknownDiscriminator};
  }
  auto it = d.cases.find(
      NormalizeDiscriminatorValue(std::string_view(value->GetString(), value->GetStringLength())));
  if (it == d.cases.end()) {
    return {std::nullopt, PolicyRule::kUnknownDiscriminator};
  }
  if (!IsValidInvocationClass(it->second) || Classify(d, args) != it->second) {
    return {};
  }
  return {it->second, PolicyRule::kAllowed};
}

Decision MissingScope(const ToolSpec& tool, InvocationClass c, Scope required, std::string why) {
  Decision d = Decision::Refuse(ToolErrorCode::kPolicyBlocked, PolicyRule::kMissingScope, tool.name,
                                std::move(why));
  d.invocation_class = c;
  d.details.emplace_back("required_scope", std::string(ToString(required)));
  return d;
}

Decision Blocked(const ToolSpec& tool, InvocationClass c, PolicyRule rule, std::string why,
                 ToolErrorCode code = ToolErrorCode::kPolicyBlocked) {
  Decision d = Decision::Refuse(code, rule, tool.name, std::move(why));
  d.invocation_class = c;
  return d;
}

Decision DecidePulseState(const InvocationPolicy& policy, const ToolSpec& tool, InvocationClass c) {
  if (!policy.Scopes().Has(Scope::kAiExecute)) {
    return MissingScope(tool, c, Scope::kAiExecute,
                        absl::StrCat("tool ", Quoted(tool.name),
                                     " changes Pulse's own records, which needs the ai:execute "
                                     "scope; this token may converse and read only"));
  }
  if (!policy.AllowsPulseStateWrite(tool.name)) {
    return Blocked(tool, c, PolicyRule::kProfileForbidsWrite,
                   absl::StrCat("tool ", Quoted(tool.name),
                                " changes Pulse's own records, which "
                                "the ",
                                std::string(ToString(policy.Profile())),
                                " execution profile does not allow for this tool; gather "
                                "read-only evidence instead"));
  }
  return Decision::Allow(tool.name, c);
}

Decision DecideInfrastructure(const InvocationPolicy& policy, const ToolSpec& tool,
                              InvocationClass c) {
  if (!policy.Scopes().Has(Scope::kAiExecute)) {
    return MissingScope(tool, c, Scope::kAiExecute,
                        absl::StrCat("tool ", Quoted(tool.name),
                                     " requests an infrastructure change, which needs the "
                                     "ai:execute scope; this token may converse and read only"));
  }
  if (!IsInteractive(policy.Profile())) {
    return Blocked(
        tool, c, PolicyRule::kProfileForbidsWrite,
        absl::StrCat("tool ", Quoted(tool.name), " requests an infrastructure change, which the ",
                     std::string(ToString(policy.Profile())),
                     " execution profile never allows; use read-only evidence and, "
                     "where offered, a typed proposal"));
  }
  if (policy.DeniesInfrastructure()) {
    return Blocked(tool, c, PolicyRule::kInfrastructureDenied,
                   absl::StrCat("tool ", Quoted(tool.name),
                                " requests an infrastructure change, which this request does "
                                "not allow; continue with read-only investigation"));
  }
  if (!AllowsControlTools(policy.EffectiveLevel())) {
    Decision d = Blocked(tool, c, PolicyRule::kControlLevel,
                         ControlToolsDisabledMessage(policy.EffectiveLevel()));
    d.details.emplace_back("control_level", std::string(ToString(policy.EffectiveLevel())));
    d.details.emplace_back("enable_with", std::string("--control-level controlled"));
    return d;
  }
  return Decision::Allow(tool.name, c);
}

// The authority checks for a call already resolved to the valid class `c`.
Decision DecideClass(const InvocationPolicy& policy, const ToolSpec& tool, InvocationClass c) {
  if (!policy.Scopes().HasAny({Scope::kAiChat, Scope::kAiExecute})) {
    return MissingScope(tool, c, Scope::kAiChat,
                        absl::StrCat("tool ", Quoted(tool.name),
                                     " needs the ai:chat or ai:execute scope; this token has "
                                     "neither"));
  }
  // A question needs someone to answer it, whatever the tool's hint says.
  const bool asks_user = tool.interactive_only || c.kind == ToolKind::kUserInput;
  if (asks_user && !IsInteractive(policy.Profile())) {
    return Blocked(tool, c, PolicyRule::kInteractiveOnly,
                   absl::StrCat("tool ", Quoted(tool.name),
                                " needs a user to answer, and this run has none; continue "
                                "without it"),
                   ToolErrorCode::kNonInteractive);
  }
  if (tool.investigation_only && policy.Profile() != ExecutionProfile::kPatrolInvestigation) {
    return Blocked(tool, c, PolicyRule::kInvestigationOnly,
                   absl::StrCat("tool ", Quoted(tool.name),
                                " is available only to a Patrol investigation run"));
  }
  switch (c.mutation) {
    case MutationTarget::kNone:
      return Decision::Allow(tool.name, c);
    case MutationTarget::kPulseState:
      return DecidePulseState(policy, tool, c);
    case MutationTarget::kInfrastructure:
      return DecideInfrastructure(policy, tool, c);
  }
  return Blocked(tool, kFailClosedClass, PolicyRule::kInvalidClass,
                 absl::StrCat("tool ", Quoted(tool.name), " has an invalid invocation class"));
}

}  // namespace

std::string_view ToString(PolicyRule rule) {
  return WireNameOf(kRuleNames, rule, "invalid_invocation_class");
}

Decision Decision::Allow(std::string tool, InvocationClass invocation_class) {
  Decision d;
  d.allowed = true;
  d.rule = PolicyRule::kAllowed;
  d.tool = std::move(tool);
  d.invocation_class = invocation_class;
  return d;
}

Decision Decision::Refuse(ToolErrorCode code, PolicyRule rule, std::string tool,
                          std::string reason) {
  Decision d;
  d.allowed = false;
  d.code = code;
  d.rule = rule;
  d.tool = std::move(tool);
  d.reason = std::move(reason);
  return d;
}

ToolError Decision::ToToolError() const {
  ToolError error;
  error.code = code;
  error.message = reason;
  error.blocked = true;
  error.retryable = false;
  error.details.emplace_back("rule", std::string(ToString(rule)));
  error.details.emplace_back("tool", tool);
  for (const auto& detail : details) {
    error.details.push_back(detail);
  }
  return error;
}

Decision Decide(const InvocationPolicy& policy, const ToolSpec& tool,
                const rapidjson::Value& args) {
  const Resolved resolved = Resolve(tool.descriptor, args);
  if (!resolved.invocation_class.has_value()) {
    if (resolved.failure == PolicyRule::kUnknownDiscriminator) {
      return Decision::Refuse(
          ToolErrorCode::kInvalidInput, PolicyRule::kUnknownDiscriminator, tool.name,
          absl::StrCat("tool ", Quoted(tool.name), " needs argument ",
                       Quoted(tool.descriptor.discriminator),
                       " exactly once, as one of the values offered in its schema"));
    }
    return Decision::Refuse(ToolErrorCode::kPolicyBlocked, PolicyRule::kInvalidClass, tool.name,
                            absl::StrCat("tool ", Quoted(tool.name),
                                         " has no valid invocation class, so nothing may run"));
  }
  return DecideClass(policy, tool, *resolved.invocation_class);
}

std::optional<Decision> CheckToolName(const ToolRegistry& registry, std::string_view name) {
  const std::string_view trimmed = TrimToolName(name);
  if (trimmed.empty()) {
    return Decision::Refuse(ToolErrorCode::kInvalidInput, PolicyRule::kBlankName, "",
                            "a tool name is required");
  }
  if (IsRetiredToolName(absl::AsciiStrToLower(std::string(trimmed)))) {
    return Decision::Refuse(
        ToolErrorCode::kPolicyBlocked, PolicyRule::kRetiredTool, std::string(trimmed),
        absl::StrCat("tool ", Quoted(trimmed),
                     " is retired and denied; request changes with pulse_control (a typed "
                     "resource capability) and read with the offered tools"));
  }
  if (!registry.Contains(trimmed)) {
    return Decision::Refuse(
        ToolErrorCode::kNotFound, PolicyRule::kUnknownTool, std::string(trimmed),
        absl::StrCat("unknown tool ", Quoted(trimmed), "; call only the tools offered to you"));
  }
  return std::nullopt;
}

Decision Decide(const InvocationPolicy& policy, const ToolRegistry& registry, std::string_view name,
                const rapidjson::Value& args) {
  if (std::optional<Decision> refusal = CheckToolName(registry, name)) {
    return std::move(*refusal);
  }
  std::optional<ToolSpec> spec = registry.Find(TrimToolName(name));
  if (!spec.has_value()) {  // unreachable: CheckToolName found it and registration is final
    return Decision::Refuse(ToolErrorCode::kNotFound, PolicyRule::kUnknownTool,
                            std::string(TrimToolName(name)), "unknown tool");
  }
  return Decide(policy, *spec, args);
}

}  // namespace pulse::core
