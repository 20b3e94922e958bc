#include "pulse/adapters/mcp/tool_allowlist.h"

#include <algorithm>
#include <string>

#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::adapters::mcp {
namespace {

constexpr std::size_t kMaxManifestBytes = std::size_t{8} << 20;

const rapidjson::Value* FindContract(const rapidjson::Value& manifest) {
  const rapidjson::Value* contracts = core::GetMember(manifest, "surfaceToolContracts");
  if (contracts == nullptr || !contracts->IsArray()) {
    return nullptr;
  }
  for (const rapidjson::Value& contract : contracts->GetArray()) {
    if (core::GetString(contract, "surfaceId") ==
        std::optional<std::string_view>(core::kMcpSurfaceId)) {
      return &contract;
    }
  }
  return nullptr;
}

const rapidjson::Value* FindCapability(const rapidjson::Value& manifest, std::string_view name) {
  const rapidjson::Value* capabilities = core::GetMember(manifest, "capabilities");
  if (capabilities == nullptr || !capabilities->IsArray()) {
    return nullptr;
  }
  for (const rapidjson::Value& capability : capabilities->GetArray()) {
    if (core::GetString(capability, "name") == std::optional<std::string_view>(name)) {
      return &capability;
    }
  }
  return nullptr;
}

}  // namespace

bool McpSurface::HasTool(std::string_view name) const {
  return std::find(tool_names.begin(), tool_names.end(), name) != tool_names.end();
}

absl::StatusOr<McpSurface> McpSurfaceFromManifest(std::string_view manifest_json) {
  auto parsed = core::ParseJson(manifest_json, core::JsonLimits{.max_bytes = kMaxManifestBytes});
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("the capability manifest is not JSON: " +
                                      std::string(parsed.status().message()));
  }
  if (!parsed->IsObject()) {
    return absl::InvalidArgumentError("the capability manifest is not a JSON object");
  }
  McpSurface surface;
  const rapidjson::Value* contract = FindContract(*parsed);
  if (contract == nullptr) {
    surface.tools = false;
    return surface;
  }
  if (const rapidjson::Value* affordances = core::GetMember(*contract, "affordances");
      affordances != nullptr && affordances->IsObject()) {
    // Affordance booleans are omitted when false; a contract that declares none gets the
    // pulse_mcp defaults (docs/api.md).
    const bool any = affordances->MemberCount() > 0;
    surface.tools = !any || core::GetBool(*affordances, "tools").value_or(false);
    surface.resources = !any || core::GetBool(*affordances, "resources").value_or(false);
    surface.prompts = !any || core::GetBool(*affordances, "prompts").value_or(false);
  }
  const rapidjson::Value* names = core::GetMember(*contract, "toolNames");
  if (!surface.tools || names == nullptr || !names->IsArray()) {
    surface.tools = false;
    return surface;
  }
  for (const rapidjson::Value& name_value : names->GetArray()) {
    if (!name_value.IsString()) {
      continue;
    }
    const std::string name = name_value.GetString();
    const core::AgentCapability* known = core::FindAgentCapability(name);
    const rapidjson::Value* published = FindCapability(*parsed, name);
    if (known == nullptr || known->streaming || published == nullptr || surface.HasTool(name)) {
      continue;
    }
    surface.tool_names.push_back(name);
    if (const rapidjson::Value* schema = core::GetMember(*published, "inputSchema");
        schema != nullptr && schema->IsObject()) {
      surface.input_schemas[name] = core::ToJsonString(*schema);
    }
  }
  return surface;
}

}  // namespace pulse::adapters::mcp
