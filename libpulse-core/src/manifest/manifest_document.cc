// ManifestJson: the document GET /api/agent/capabilities serves (docs/api.md), built
// once from the catalogue and written canonically.
#include <string>
#include <vector>

#include "manifest_internal.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/workflow_prompts.h"

namespace pulse::core {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

Value Str(std::string_view text, Allocator& alloc) {
  return Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

// Moves `value` into `object` (RapidJSON values move on AddMember).
void Add(Value& object, std::string_view key, Value& value, Allocator& alloc) {
  object.AddMember(Str(key, alloc), value, alloc);
}

void Add(Value& object, std::string_view key, Value&& value, Allocator& alloc) {
  object.AddMember(Str(key, alloc), value, alloc);
}

void AddStr(Value& object, std::string_view key, std::string_view text, Allocator& alloc) {
  Add(object, key, Str(text, alloc), alloc);
}

Value StrArray(const std::vector<std::string>& items, Allocator& alloc) {
  Value out(rapidjson::kArrayType);
  for (const std::string& item : items) {
    out.PushBack(Str(item, alloc), alloc);
  }
  return out;
}

Value Described(std::string_view id, std::string_view label, std::string_view description,
                Allocator& alloc) {
  Value out(rapidjson::kObjectType);
  AddStr(out, "id", id, alloc);
  AddStr(out, "label", label, alloc);
  AddStr(out, "description", description, alloc);
  return out;
}

// Affordance flags; false ones are absent (omitempty).
Value Affordances(bool tools, bool resources, bool prompts, bool capability_metadata,
                  bool interactive_questions, Allocator& alloc) {
  Value out(rapidjson::kObjectType);
  const std::pair<std::string_view, bool> flags[] = {
      {"tools", tools},
      {"resources", resources},
      {"prompts", prompts},
      {"capabilityMetadata", capability_metadata},
      {"interactiveQuestions", interactive_questions}};
  for (const auto& [key, on] : flags) {
    if (on) {
      Add(out, key, Value(true), alloc);
    }
  }
  return out;
}

Value McpAffordances(Allocator& alloc) { return Affordances(true, true, true, true, false, alloc); }

Value SurfaceContract(Allocator& alloc) {
  Value out(rapidjson::kObjectType);
  Add(out, "core",
      Described("pulse_intelligence_core", "Pulse Intelligence Core",
                "Shared context, governed actions, safety gates, approvals, audit and "
                "independent verification behind every surface.",
                alloc),
      alloc);
  Add(out, "proactiveEngine",
      Described("pulse_patrol", "Pulse Patrol",
                "Scheduled investigation that turns what it observes into findings and, "
                "where allowed, proposes governed actions.",
                alloc),
      alloc);
  Value surfaces(rapidjson::kArrayType);
  Value assistant = Described("pulse_assistant", "Pulse Assistant",
                              "The built-in chat operator, with clarifying questions.", alloc);
  Add(assistant, "native", Value(true), alloc);
  Add(assistant, "externalAdapter", Value(false), alloc);
  Add(assistant, "affordances", Affordances(true, false, false, false, true, alloc), alloc);
  surfaces.PushBack(assistant, alloc);
  Value mcp =
      Described(kMcpSurfaceId, kMcpSurfaceLabel,
                "External agents over the Model Context Protocol through pulse-mcp.", alloc);
  Add(mcp, "native", Value(false), alloc);
  Add(mcp, "externalAdapter", Value(true), alloc);
  Add(mcp, "affordances", McpAffordances(alloc), alloc);
  surfaces.PushBack(mcp, alloc);
  Add(out, "operatorSurfaces", surfaces, alloc);
  return out;
}

Value SurfaceToolContracts(Allocator& alloc) {
  const std::vector<std::string> names = McpToolCapabilityNames();
  Value contract(rapidjson::kObjectType);
  AddStr(contract, "surfaceId", kMcpSurfaceId, alloc);
  AddStr(contract, "surfaceLabel", kMcpSurfaceLabel, alloc);
  AddStr(contract, "toolSource", kMcpToolSource, alloc);
  Add(contract, "toolNames", StrArray(names, alloc), alloc);
  Add(contract, "capabilityNames", StrArray(names, alloc), alloc);
  Add(contract, "affordances", McpAffordances(alloc), alloc);
  Value out(rapidjson::kArrayType);
  out.PushBack(contract, alloc);
  return out;
}

Value ConfigFamily(std::string_view id, std::string_view label, std::string_view shape,
                   const std::vector<std::string>& file_hints,
                   const std::vector<std::string>& client_labels, Allocator& alloc) {
  Value out(rapidjson::kObjectType);
  AddStr(out, "id", id, alloc);
  AddStr(out, "label", label, alloc);
  AddStr(out, "shape", shape, alloc);
  if (!file_hints.empty()) {
    Add(out, "fileHints", StrArray(file_hints, alloc), alloc);
  }
  if (!client_labels.empty()) {
    Add(out, "clientLabels", StrArray(client_labels, alloc), alloc);
  }
  return out;
}

Value McpAdapter(Allocator& alloc) {
  Value out(rapidjson::kObjectType);
  AddStr(out, "serverName", kMcpServerName, alloc);
  AddStr(out, "command", kMcpCommand, alloc);
  AddStr(out, "baseUrlFlag", kMcpBaseUrlFlag, alloc);
  AddStr(out, "defaultBaseUrl", kMcpDefaultBaseUrl, alloc);
  AddStr(out, "tokenEnv", kMcpTokenEnv, alloc);
  Value families(rapidjson::kArrayType);
  families.PushBack(
      ConfigFamily("opencode", "OpenCode", "opencode_mcp",
                   {"opencode.json", "opencode.jsonc", "~/.config/opencode/opencode.json"},
                   {"OpenCode"}, alloc),
      alloc);
  families.PushBack(ConfigFamily("claude-style", "Claude-style clients", "mcp_servers",
                                 {"claude_desktop_config.json", ".mcp.json"},
                                 {"Claude Desktop", "Claude Code"}, alloc),
                    alloc);
  families.PushBack(ConfigFamily("custom-mcp", "custom MCP clients", "custom", {}, {}, alloc),
                    alloc);
  Add(out, "configFamilies", families, alloc);
  return out;
}

Value Prompts(Allocator& alloc) {
  Value out(rapidjson::kArrayType);
  for (const WorkflowPrompt& prompt : WorkflowPrompts()) {
    Value entry(rapidjson::kObjectType);
    AddStr(entry, "name", prompt.name, alloc);
    AddStr(entry, "label", prompt.label, alloc);
    AddStr(entry, "presentationKind", prompt.presentation_kind, alloc);
    AddStr(entry, "description", prompt.description, alloc);
    if (!prompt.arguments.empty()) {
      Value arguments(rapidjson::kArrayType);
      for (const WorkflowPromptArgument& argument : prompt.arguments) {
        Value a(rapidjson::kObjectType);
        AddStr(a, "name", argument.name, alloc);
        AddStr(a, "description", argument.description, alloc);
        Add(a, "required", Value(argument.required), alloc);
        arguments.PushBack(a, alloc);
      }
      Add(entry, "arguments", arguments, alloc);
    }
    out.PushBack(entry, alloc);
  }
  return out;
}

Value CapabilityObject(const AgentCapability& c, Allocator& alloc) {
  Value out(rapidjson::kObjectType);
  AddStr(out, "name", c.name, alloc);
  AddStr(out, "title", c.title, alloc);
  AddStr(out, "description", c.description, alloc);
  AddStr(out, "category", c.category, alloc);
  AddStr(out, "method", c.method, alloc);
  AddStr(out, "path", c.path, alloc);
  AddStr(out, "scope", ToString(c.scope), alloc);
  AddStr(out, "actionMode", ToString(c.action_mode), alloc);
  AddStr(out, "approvalPolicy", ToString(c.approval_policy), alloc);
  if (!c.response_shape.empty()) {
    AddStr(out, "responseShape", c.response_shape, alloc);
  }
  if (!c.request_body_shape.empty()) {
    AddStr(out, "requestBodyShape", c.request_body_shape, alloc);
  }
  rapidjson::Document input = manifest_internal::ParseCatalogueJson(InputSchemaJson(c));
  Add(out, "inputSchema", Value(input, alloc), alloc);
  if (!c.output_schema.empty()) {
    rapidjson::Document output = manifest_internal::ParseCatalogueJson(c.output_schema);
    Add(out, "outputSchema", Value(output, alloc), alloc);
  }
  if (!c.error_codes.empty()) {
    Value codes(rapidjson::kArrayType);
    for (AgentErrorCode code : c.error_codes) {
      codes.PushBack(Str(ToString(code), alloc), alloc);
    }
    Add(out, "errorCodes", codes, alloc);
  }
  return out;
}

std::string BuildManifestJson() {
  rapidjson::Document doc(rapidjson::kObjectType);
  Allocator& alloc = doc.GetAllocator();
  AddStr(doc, "version", kManifestVersion, alloc);
  Add(doc, "surfaceContract", SurfaceContract(alloc), alloc);
  Add(doc, "surfaceToolContracts", SurfaceToolContracts(alloc), alloc);
  Add(doc, "mcpAdapter", McpAdapter(alloc), alloc);
  Value scopes(rapidjson::kArrayType);
  for (Scope scope : ManifestRequiredScopes()) {
    scopes.PushBack(Str(ToString(scope), alloc), alloc);
  }
  Add(doc, "requiredScopes", scopes, alloc);
  Value categories(rapidjson::kArrayType);
  for (const ManifestCategory& category : ManifestCategories()) {
    categories.PushBack(Described(category.id, category.label, category.description, alloc), alloc);
  }
  Add(doc, "categories", categories, alloc);
  Add(doc, "workflowPrompts", Prompts(alloc), alloc);
  Value capabilities(rapidjson::kArrayType);
  for (const AgentCapability& capability : AgentCapabilities()) {
    capabilities.PushBack(CapabilityObject(capability, alloc), alloc);
  }
  Add(doc, "capabilities", capabilities, alloc);
  return CanonicalJson(doc);
}

}  // namespace

const std::string& ManifestJson() {
  static const std::string json = BuildManifestJson();
  return json;
}

}  // namespace pulse::core
