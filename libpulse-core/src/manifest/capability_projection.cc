#include "pulse/core/manifest/capability_projection.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/manifest/path_template.h"

namespace pulse::core {
namespace {

std::string SentenceCase(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', ' ');
  if (!out.empty() && out.front() >= 'a' && out.front() <= 'z') {
    out.front() = static_cast<char>(out.front() - 'a' + 'A');
  }
  return out;
}

std::string ErrorCodeList(const AgentCapability& c) {
  std::vector<std::string> names;
  for (AgentErrorCode code : c.error_codes) {
    names.emplace_back(ToString(code));
  }
  return absl::StrJoin(names, ", ");
}

void WriteMeta(JsonWriter& w, const AgentCapability& c) {
  w.StartObject();
  w.Key("pulse.capability");
  w.StartObject();
  w.Member("name", c.name);
  w.Member("category", c.category);
  w.Member("scope", ToString(c.scope));
  w.MemberIfNotEmpty("requestBodyShape", c.request_body_shape);
  w.MemberIfNotEmpty("responseShape", c.response_shape);
  if (!c.error_codes.empty()) {
    w.Key("errorCodes");
    w.StartArray();
    for (AgentErrorCode code : c.error_codes) {
      w.String(ToString(code));
    }
    w.EndArray();
  }
  w.Key("route");
  w.StartObject();
  w.Member("method", c.method);
  w.Member("path", c.path);
  w.EndObject();
  w.Key("governance");
  w.StartObject();
  w.Member("actionMode", ToString(c.action_mode));
  w.Member("approvalPolicy", ToString(c.approval_policy));
  w.Member("approvalSummary", ApprovalSummary(c));
  w.EndObject();
  w.EndObject();
  w.EndObject();
}

void WriteAnnotations(JsonWriter& w, const ToolAnnotations& a) {
  w.StartObject();
  w.Member("readOnlyHint", a.read_only_hint);
  w.Member("destructiveHint", a.destructive_hint);
  w.Member("idempotentHint", a.idempotent_hint);
  w.Member("openWorldHint", a.open_world_hint);
  w.EndObject();
}

// The query text of one scalar argument, or nullopt for values a query cannot carry.
std::optional<std::string> QueryValue(const rapidjson::Value& v) {
  if (v.IsString()) {
    return std::string(StringViewOf(v));
  }
  if (v.IsBool()) {
    return v.GetBool() ? "true" : "false";
  }
  if (v.IsInt64()) {
    return absl::StrCat(v.GetInt64());
  }
  if (v.IsUint64()) {
    return absl::StrCat(v.GetUint64());
  }
  return std::nullopt;
}

}  // namespace

ToolAnnotations AnnotationsFor(ActionMode mode) {
  switch (mode) {
    case ActionMode::kMixed:
      return ToolAnnotations{false, false, false, true};
    case ActionMode::kWrite:
      return ToolAnnotations{false, true, false, true};
    case ActionMode::kRead:
      break;
  }
  return ToolAnnotations{true, false, true, true};
}

std::string CapabilityToolDescription(const AgentCapability& c) {
  std::vector<std::pair<std::string_view, std::string>> items = {
      {"category", c.category},
      {"route", absl::StrCat(c.method, " ", c.path)},
      {"required scope", std::string(ToString(c.scope))},
      {"action mode", std::string(ToString(c.action_mode))},
      {"approval policy", std::string(ToString(c.approval_policy))},
      {"request body", c.request_body_shape},
      {"response", c.response_shape},
      {"stable error codes", ErrorCodeList(c)},
  };
  std::string out = absl::StrCat(c.description, "\n\nPulse capability metadata:");
  for (const auto& [key, value] : items) {
    if (!value.empty()) {
      absl::StrAppend(&out, "\n- ", std::string(key), ": ", value);
    }
  }
  return out;
}

CapabilityTool ProjectCapabilityTool(const AgentCapability& c) {
  CapabilityTool tool;
  tool.name = c.name;
  tool.title = c.title.empty() ? SentenceCase(c.name) : c.title;
  tool.description = CapabilityToolDescription(c);
  tool.input_schema_json = InputSchemaJson(c);
  if (!c.output_schema.empty()) {
    absl::StatusOr<rapidjson::Document> output = ParseJson(c.output_schema);
    tool.output_schema_json = output.ok() ? ToJsonString(*output) : "";
  }
  tool.annotations = AnnotationsFor(c.action_mode);
  JsonWriter meta;
  WriteMeta(meta, c);
  tool.meta_json = meta.Take();
  return tool;
}

std::vector<CapabilityTool> ProjectCapabilityTools() {
  std::vector<CapabilityTool> tools;
  for (const std::string& name : McpToolCapabilityNames()) {
    if (const AgentCapability* c = FindAgentCapability(name); c != nullptr) {
      tools.push_back(ProjectCapabilityTool(*c));
    }
  }
  return tools;
}

std::string ProjectCapabilityToolsJson() {
  JsonWriter w;
  w.StartArray();
  for (const CapabilityTool& tool : ProjectCapabilityTools()) {
    w.StartObject();
    w.Member("name", tool.name);
    w.Member("title", tool.title);
    w.Member("description", tool.description);
    w.Key("inputSchema");
    w.RawValue(tool.input_schema_json);
    if (!tool.output_schema_json.empty()) {
      w.Key("outputSchema");
      w.RawValue(tool.output_schema_json);
    }
    w.Key("annotations");
    WriteAnnotations(w, tool.annotations);
    w.Key("_meta");
    w.RawValue(tool.meta_json);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string CapabilityCall::Target() const {
  std::string target = path;
  char separator = '?';
  for (const auto& [name, value] : query) {
    absl::StrAppend(&target, std::string(1, separator), PercentEncode(name), "=",
                    PercentEncode(value));
    separator = '&';
  }
  return target;
}

absl::StatusOr<CapabilityCall> ProjectCapabilityCall(const AgentCapability& capability,
                                                     const rapidjson::Value& args) {
  if (capability.streaming) {
    return absl::InvalidArgumentError(
        absl::StrCat(capability.name, " is a stream, not a callable tool"));
  }
  if (!args.IsObject()) {
    return absl::InvalidArgumentError("tool arguments must be a JSON object");
  }
  absl::StatusOr<std::vector<PathSegment>> segments = ParsePathTemplate(capability.path);
  if (!segments.ok()) {
    return segments.status();
  }
  CapabilityCall call;
  call.method = capability.method;
  std::vector<std::string> path_names;
  std::vector<std::string> missing;
  for (const PathSegment& segment : *segments) {
    if (!segment.placeholder) {
      absl::StrAppend(&call.path, "/", segment.text);
      continue;
    }
    path_names.push_back(segment.text);
    const rapidjson::Value* value = GetMember(args, segment.text);
    const bool present = value != nullptr && !value->IsNull();
    if (present && !value->IsString()) {
      missing.push_back(absl::StrCat(segment.text, " (not a string)"));
    } else if (!present || value->GetStringLength() == 0) {
      missing.push_back(segment.text);  // an empty segment would change the route
    } else {
      absl::StrAppend(&call.path, "/", PercentEncode(StringViewOf(*value)));
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing path argument(s): ", absl::StrJoin(missing, ", ")));
  }
  auto is_public = [&](std::string_view key) {
    return key != kApprovalIdArgument &&
           std::find(path_names.begin(), path_names.end(), key) == path_names.end();
  };
  if (!TakesBody(capability)) {
    for (const auto& member : args.GetObject()) {
      const std::string_view key = StringViewOf(member.name);
      if (!is_public(key)) {
        continue;
      }
      if (std::optional<std::string> value = QueryValue(member.value); value.has_value()) {
        call.query.emplace_back(std::string(key), *std::move(value));
      }
    }
    std::sort(call.query.begin(), call.query.end());
    return call;
  }
  if (const rapidjson::Value* body = GetMember(args, "body"); body != nullptr) {
    call.body_json = ToJsonString(*body);
    return call;
  }
  rapidjson::Document body(rapidjson::kObjectType);
  for (const auto& member : args.GetObject()) {
    if (is_public(StringViewOf(member.name))) {
      body.AddMember(rapidjson::Value(member.name, body.GetAllocator()),
                     rapidjson::Value(member.value, body.GetAllocator()), body.GetAllocator());
    }
  }
  call.body_json = ToJsonString(body);
  return call;
}

}  // namespace pulse::core
