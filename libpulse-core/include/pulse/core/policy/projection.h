// Provider projection: the tools, schemas and governance a model is offered under one
// InvocationPolicy. Every offer is computed by calling Decide() — the same function
// enforcement calls — so an offered tool or enum value is exactly one that would be allowed.
// Pure functions; thread-safe over a registry that is no longer being registered into.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pulse/core/policy/governance.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/tools/tool_catalog.h"
#include "pulse/core/tools/tool_registry.h"

namespace pulse::core {

struct ProjectedTool {
  std::string name;
  std::string description;
  // The tool's closed schema, compact; for a discriminator tool its enum keeps only the
  // allowed values (original spelling and order) and a "default" naming a removed value is
  // dropped.
  std::string input_schema_json;
  ActionMode action_mode = ActionMode::kRead;
  ApprovalPolicy approval_policy = ApprovalPolicy::kScopeOnly;
  // Discriminator tools: the enum values offered, in schema order. Empty for static tools.
  std::vector<std::string> offered_values;
  bool runs_alone = false;  // never shares a provider turn with another call

  friend bool operator==(const ProjectedTool&, const ProjectedTool&) = default;
};

// The offer for one tool, or nullopt when no invocation of it is allowed (or its schema does
// not parse). A static tool is decided once; a discriminator tool once per enum value, each
// with the synthetic arguments {"<discriminator>": value}. action_mode comes from the mutation
// targets of the allowed classes: only none → read; only pulse_state/infrastructure → write;
// both → mixed. approval_policy is action_plan when an allowed class writes infrastructure
// (such a change goes through the action lifecycle), otherwise scope_only.
std::optional<ProjectedTool> ProjectTool(const InvocationPolicy& policy, const ToolSpec& tool);

// ProjectTool over every registered tool, in registration order, dropping tools with no
// allowed invocation.
std::vector<ProjectedTool> ProjectTools(const InvocationPolicy& policy,
                                        const ToolRegistry& registry);

}  // namespace pulse::core
