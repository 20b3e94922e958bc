#include "pulse/core/policy/projection.h"

#include <string_view>
#include <utility>

#include "pulse/core/json/json.h"
#include "pulse/core/policy/decision.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

// What the allowed invocations of one tool add up to.
struct Offered {
  bool any = false;
  bool reads = false;           // some allowed class mutates nothing
  bool writes = false;          // some allowed class mutates pulse_state or infrastructure
  bool infrastructure = false;  // some allowed class mutates infrastructure

  void Add(InvocationClass c) {
    any = true;
    reads = reads || c.mutation == MutationTarget::kNone;
    writes = writes || c.mutation != MutationTarget::kNone;
    infrastructure = infrastructure || c.mutation == MutationTarget::kInfrastructure;
  }
};

rapidjson::Value* MutableMember(rapidjson::Value& object, std::string_view key) {
  if (!object.IsObject()) {
    return nullptr;
  }
  // Scan as const and index the mutable member: comparing RapidJSON's non-const member
  // iterators is ambiguous under C++20's reversed-operator rules (clang rejects it).
  const rapidjson::Value& view = object;
  rapidjson::SizeType index = 0;
  for (const auto& member : view.GetObject()) {
    if (StringViewOf(member.name) == key) {
      return &object.MemberBegin()[index].value;
    }
    ++index;
  }
  return nullptr;
}

// Decides one discriminator value with the synthetic call {"<discriminator>": value}.
Decision DecideValue(const InvocationPolicy& policy, const ToolSpec& tool,
                     const rapidjson::Value& value) {
  rapidjson::Document args(rapidjson::kObjectType);
  rapidjson::Value copy(value, args.GetAllocator());  // enum values are scalars
  const std::string& key = tool.descriptor.discriminator;
  args.AddMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()),
                                  args.GetAllocator()),
                 copy, args.GetAllocator());
  return Decide(policy, tool, args);
}

// Keeps only the allowed enum values of the discriminator property; records what was offered.
// Returns false when the schema has no such enum (the tool is then not offered).
bool PruneDiscriminator(const InvocationPolicy& policy, const ToolSpec& tool,
                        rapidjson::Document& schema, ProjectedTool& out, Offered& offered) {
  rapidjson::Value* properties = MutableMember(schema, "properties");
  rapidjson::Value* property =
      properties ? MutableMember(*properties, tool.descriptor.discriminator) : nullptr;
  rapidjson::Value* values = property ? MutableMember(*property, "enum") : nullptr;
  if (values == nullptr || !values->IsArray()) {
    return false;
  }
  rapidjson::Value kept(rapidjson::kArrayType);
  for (rapidjson::Value& value : values->GetArray()) {
    const Decision decision = DecideValue(policy, tool, value);
    if (!decision.allowed || !value.IsString()) {
      continue;
    }
    offered.Add(decision.invocation_class);
    out.offered_values.emplace_back(StringViewOf(value));
    kept.PushBack(rapidjson::Value(value, schema.GetAllocator()), schema.GetAllocator());
  }
  *values = std::move(kept);
  rapidjson::Value* fallback = MutableMember(*property, "default");
  if (fallback != nullptr) {
    bool still_offered = false;
    for (const std::string& v : out.offered_values) {
      still_offered = still_offered || (fallback->IsString() && StringViewOf(*fallback) == v);
    }
    if (!still_offered) {
      property->RemoveMember("default");
    }
  }
  return true;
}

}  // namespace

std::optional<ProjectedTool> ProjectTool(const InvocationPolicy& policy, const ToolSpec& tool) {
  absl::StatusOr<rapidjson::Document> schema =
      ParseJson(tool.input_schema_json, JsonLimits{kMaxToolSchemaBytes, kMaxToolSchemaDepth * 2});
  if (!schema.ok() || !schema->IsObject()) {
    return std::nullopt;
  }
  ProjectedTool out;
  Offered offered;
  if (tool.descriptor.static_class.has_value()) {
    const rapidjson::Value no_args(rapidjson::kObjectType);
    const Decision decision = Decide(policy, tool, no_args);
    if (decision.allowed) {
      offered.Add(decision.invocation_class);
    }
  } else if (!PruneDiscriminator(policy, tool, *schema, out, offered)) {
    return std::nullopt;
  }
  if (!offered.any) {
    return std::nullopt;
  }
  out.name = tool.name;
  out.description = tool.description;
  out.input_schema_json = ToJsonString(*schema);
  out.action_mode = !offered.writes ? ActionMode::kRead
                    : offered.reads ? ActionMode::kMixed
                                    : ActionMode::kWrite;
  out.approval_policy =
      offered.infrastructure ? ApprovalPolicy::kActionPlan : ApprovalPolicy::kScopeOnly;
  out.runs_alone = tool.runs_alone;
  return out;
}

std::vector<ProjectedTool> ProjectTools(const InvocationPolicy& policy,
                                        const ToolRegistry& registry) {
  std::vector<ProjectedTool> out;
  for (const std::string& name : registry.Names()) {
    std::optional<ToolSpec> spec = registry.Find(name);
    if (!spec.has_value()) {
      continue;
    }
    if (std::optional<ProjectedTool> projected = ProjectTool(policy, *spec)) {
      out.push_back(std::move(*projected));
    }
  }
  return out;
}

}  // namespace pulse::core
