// ValidateManifest: the catalogue's self-check, run by the server at startup and by a test on
// every build, so a bad edit to the table fails before anything serves it.
#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "manifest_internal.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/manifest/workflow_prompts.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/tool_schema.h"
#include "rapidjson/schema.h"

namespace pulse::core {
namespace {

absl::Status Bad(const AgentCapability& c, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("capability \"", c.name, "\": ", std::string(what)));
}

bool IsSnakeCase(std::string_view name) {
  if (name.empty() || name.front() < 'a' || name.front() > 'z') {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

absl::StatusOr<rapidjson::Document> ParseSchema(const AgentCapability& c, std::string_view text,
                                                std::string_view which) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(text, JsonLimits{kMaxToolSchemaBytes, 24});
  if (!doc.ok()) {
    return Bad(c, absl::StrCat(std::string(which), " does not parse: ", doc.status().message()));
  }
  const rapidjson::Value* type = GetMember(*doc, "type");
  if (!doc->IsObject() || type == nullptr || !type->IsString() || StringViewOf(*type) != "object") {
    return Bad(c, absl::StrCat(std::string(which), " is not an object schema"));
  }
  // RapidJSON has no compile errors to report; building the document proves it accepts it.
  rapidjson::SchemaDocument compiled(*doc);
  static_cast<void>(compiled);
  return doc;
}

// A copy of `schema` with the named properties taken out, so the closed-schema rule can judge
// the rest; each one taken out must be declared as a plain object.
absl::Status CheckClosedExcept(const AgentCapability& c, const rapidjson::Value& schema,
                               const std::vector<std::string>& open_members) {
  rapidjson::Document copy;
  copy.CopyFrom(schema, copy.GetAllocator());
  rapidjson::Value* properties = nullptr;
  if (copy.HasMember("properties")) {
    properties = &copy["properties"];
  }
  for (const std::string& member : open_members) {
    const rapidjson::Value* property =
        properties == nullptr ? nullptr : GetMember(*properties, member);
    const rapidjson::Value* type = property == nullptr ? nullptr : GetMember(*property, "type");
    if (type == nullptr || !type->IsString() || StringViewOf(*type) != "object") {
      return Bad(c, absl::StrCat("open member \"", member, "\" is not declared as an object"));
    }
    properties->RemoveMember(rapidjson::StringRef(member.data(), member.size()));
  }
  if (absl::Status s = ValidateToolSchema(copy); !s.ok()) {
    return Bad(c, std::string(s.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckPlaceholdersDeclared(const AgentCapability& c, const rapidjson::Value& schema) {
  const rapidjson::Value* properties = GetMember(schema, "properties");
  const rapidjson::Value* required = GetMember(schema, "required");
  for (const std::string& name : PathPlaceholders(c.path)) {
    const rapidjson::Value* property =
        properties == nullptr ? nullptr : GetMember(*properties, name);
    const rapidjson::Value* type = property == nullptr ? nullptr : GetMember(*property, "type");
    if (type == nullptr || !type->IsString() || StringViewOf(*type) != "string") {
      return Bad(c, absl::StrCat("path placeholder {", name, "} is not a string property"));
    }
    const bool listed =
        required != nullptr && required->IsArray() &&
        std::any_of(required->Begin(), required->End(), [&](const rapidjson::Value& v) {
          return v.IsString() && StringViewOf(v) == name;
        });
    if (!listed) {
      return Bad(c, absl::StrCat("path placeholder {", name, "} is not required"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckInputSchema(const AgentCapability& c) {
  if (c.input_schema.empty()) {
    if (!c.open_members.empty()) {
      return Bad(c, "open_members needs an explicit input schema");
    }
    // The fallback is open by design; closing a copy lets the shape rules judge the rest.
    rapidjson::Document fallback = manifest_internal::FallbackInputSchema(c);
    fallback["additionalProperties"] = false;
    const std::vector<std::string> open =
        TakesBody(c) ? std::vector<std::string>{"body"} : std::vector<std::string>{};
    PULSE_RETURN_IF_ERROR(CheckClosedExcept(c, fallback, open));
    return CheckPlaceholdersDeclared(c, fallback);
  }
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document schema, ParseSchema(c, c.input_schema, "inputSchema"));
  PULSE_RETURN_IF_ERROR(CheckClosedExcept(c, schema, c.open_members));
  PULSE_RETURN_IF_ERROR(CheckPlaceholdersDeclared(c, schema));
  if (TakesBody(c)) {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document body,
                           ParseSchema(c, BodySchemaJson(c), "body schema"));
    PULSE_RETURN_IF_ERROR(CheckClosedExcept(c, body, c.open_members));
  }
  return absl::OkStatus();
}

absl::Status CheckErrorCodes(const AgentCapability& c) {
  std::set<AgentErrorCode> seen;
  const auto& transport = TransportErrorCodes();
  for (AgentErrorCode code : c.error_codes) {
    const std::optional<AgentErrorCode> parsed = ParseAgentErrorCode(ToString(code));
    if (!parsed.has_value() || *parsed != code) {
      return Bad(c, "lists an error code outside the closed vocabulary");
    }
    if (!seen.insert(code).second) {
      return Bad(c, absl::StrCat("lists ", std::string(ToString(code)), " twice"));
    }
    if (std::find(transport.begin(), transport.end(), code) != transport.end()) {
      return Bad(c, absl::StrCat("declares the transport code ", std::string(ToString(code))));
    }
  }
  if (TakesBody(c) != c.body_error_code.has_value()) {
    return Bad(c, "body_error_code must be set exactly when the method takes a body");
  }
  if (c.body_error_code.has_value() && seen.count(*c.body_error_code) == 0) {
    return Bad(c, "body_error_code is not among its error codes");
  }
  if (c.query_error_code.has_value() && seen.count(*c.query_error_code) == 0) {
    return Bad(c, "query_error_code is not among its error codes");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAgentCapability(const AgentCapability& c) {
  if (!IsSnakeCase(c.name)) {
    return Bad(c, "name is not snake_case");
  }
  if (c.title.empty() || c.description.empty()) {
    return Bad(c, "title and description are required");
  }
  const auto& categories = ManifestCategories();
  if (std::none_of(categories.begin(), categories.end(),
                   [&](const ManifestCategory& k) { return k.id == c.category; })) {
    return Bad(c, "names an unknown category");
  }
  static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "DELETE"};
  if (std::find(std::begin(kMethods), std::end(kMethods), c.method) == std::end(kMethods)) {
    return Bad(c, "has an unsupported method");
  }
  if (absl::Status s = ParsePathTemplate(c.path).status(); !s.ok()) {
    return Bad(c, std::string(s.message()));
  }
  if (!c.request_body_shape.empty() && !TakesBody(c)) {
    return Bad(c, "describes a request body for a method without one");
  }
  if (c.streaming && (c.method != "GET" || !PathPlaceholders(c.path).empty())) {
    return Bad(c, "a stream must be a plain GET");
  }
  PULSE_RETURN_IF_ERROR(CheckErrorCodes(c));
  PULSE_RETURN_IF_ERROR(CheckInputSchema(c));
  if (!c.output_schema.empty()) {
    PULSE_RETURN_IF_ERROR(ParseSchema(c, c.output_schema, "outputSchema").status());
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckPrompts() {
  for (const WorkflowPrompt& prompt : WorkflowPrompts()) {
    for (const std::string& name : prompt.required_capabilities) {
      const AgentCapability* c = FindAgentCapability(name);
      if (c == nullptr || c->streaming) {
        return absl::InvalidArgumentError(absl::StrCat(
            "workflow prompt \"", prompt.name, "\" needs the missing capability \"", name, "\""));
      }
    }
    std::set<std::string> arguments;
    for (const WorkflowPromptArgument& argument : prompt.arguments) {
      if (argument.name.empty() || !arguments.insert(argument.name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("workflow prompt \"", prompt.name, "\" has a blank or repeated argument"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateManifest() {
  const auto& capabilities = AgentCapabilities();
  if (capabilities.empty()) {
    return absl::InvalidArgumentError("the capability catalogue is empty");
  }
  PULSE_RETURN_IF_ERROR(ValidateSurface());
  for (const SurfaceRoute& route : SurfaceRoutes()) {
    if (route.kind == SurfaceRouteKind::kCapability &&
        (FindAgentCapability(route.name) == nullptr || !route.scope.has_value())) {
      return absl::InvalidArgumentError(
          absl::StrCat("surface route \"", route.name, "\" names no capability or has no scope"));
    }
  }
  std::set<std::string> names;
  std::set<std::pair<std::string, std::string>> routes;
  for (const AgentCapability& c : capabilities) {
    const SurfaceRoute* route = FindSurfaceRoute(c.name);
    if (route == nullptr || route->kind != SurfaceRouteKind::kCapability) {
      return Bad(c, "has no capability route in the surface table");
    }
    if (!names.insert(c.name).second) {
      return Bad(c, "the name is used twice");
    }
    if (!routes.emplace(c.method, c.path).second) {
      return Bad(c, "another capability has the same method and path");
    }
    PULSE_RETURN_IF_ERROR(ValidateAgentCapability(c));
  }
  PULSE_RETURN_IF_ERROR(CheckPrompts());
  if (absl::Status s = ParseJson(ManifestJson()).status(); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the manifest document does not parse: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace pulse::core
