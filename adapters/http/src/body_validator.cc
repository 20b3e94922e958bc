#include "pulse/adapters/http/body_validator.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_schema.h"
#include "rapidjson/stringbuffer.h"

namespace pulse::adapters::http {
namespace {

core::AgentError Refusal(core::AgentErrorCode code, std::string message, std::string member = {},
                         std::string problem = {}) {
  core::AgentError error = core::MakeAgentError(code, std::move(message));
  if (!member.empty()) {
    error.details.emplace(std::move(member), std::move(problem));
  }
  return error;
}

// The member a validator complaint is about: the first token of its document pointer
// ("/duration_hours" -> "duration_hours"), or "body" for the root.
std::string MemberOf(const rapidjson::Pointer& pointer) {
  if (pointer.GetTokenCount() == 0) {
    return "body";
  }
  const auto& token = pointer.GetTokens()[0];
  return core::QuoteForMessage(std::string_view(token.name, token.length), 64);
}

// Blank as JSON reads it: only RFC 8259 whitespace (space, tab, LF, CR), the rule every core body
// decoder applies. A body of other ASCII space ("\f", "\v") is malformed JSON, not {}: were it
// {} here, a decoder handed the raw body (run_patrol's) would refuse what this accepted.
bool IsBlankBody(std::string_view body) {
  return body.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::vector<std::string> StringArray(const rapidjson::Value* v) {
  std::vector<std::string> out;
  if (v != nullptr && v->IsArray()) {
    for (const auto& item : v->GetArray()) {
      if (item.IsString()) {
        out.emplace_back(core::StringViewOf(item));
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BodyValidator>> BodyValidator::Compile(
    std::string_view schema_json) {
  absl::StatusOr<rapidjson::Document> schema =
      core::ParseJson(schema_json, core::JsonLimits{core::kMaxToolSchemaBytes, 24});
  if (!schema.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("body schema does not parse: ", schema.status().message()));
  }
  const auto type = core::GetString(*schema, "type");
  if (!schema->IsObject() || !type.has_value() || *type != "object") {
    return absl::InvalidArgumentError("a body schema must describe an object");
  }
  std::unique_ptr<BodyValidator> v(new BodyValidator());
  v->schema_ = *std::move(schema);
  if (const rapidjson::Value* properties = core::GetMember(v->schema_, "properties");
      properties != nullptr && properties->IsObject()) {
    for (const auto& m : properties->GetObject()) {
      v->declared_.emplace_back(core::StringViewOf(m.name));
    }
  }
  v->required_ = StringArray(core::GetMember(v->schema_, "required"));
  const rapidjson::Value* additional = core::GetMember(v->schema_, "additionalProperties");
  v->closed_ = additional != nullptr && additional->IsFalse();
  v->compiled_ = std::make_unique<rapidjson::SchemaDocument>(v->schema_);
  return v;
}

std::optional<core::AgentError> BodyValidator::Validate(std::string_view body,
                                                        core::AgentErrorCode code,
                                                        const PathParams& path_params) const {
  std::string_view text = body;
  if (IsBlankBody(body)) {
    text = "{}";
  }
  absl::StatusOr<rapidjson::Document> doc =
      core::ParseJson(text, core::JsonLimits{text.size(), core::kMaxArgumentDepth});
  if (!doc.ok()) {
    return Refusal(code,
                   absl::StrCat("the request body is not valid JSON: ", doc.status().message()));
  }
  if (!doc->IsObject()) {
    return Refusal(code, "the request body must be a JSON object");
  }
  if (absl::Status s = core::CheckArgumentStructure(*doc); !s.ok()) {
    return Refusal(code, absl::StrCat("the request body is not acceptable: ",
                                      core::QuoteForMessage(core::ToStd(s.message()), 200)));
  }
  const rapidjson::Value& object = *doc;
  for (const auto& member : object.GetObject()) {
    const std::string_view name = core::StringViewOf(member.name);
    if (closed_ && std::find(declared_.begin(), declared_.end(), name) == declared_.end()) {
      const std::string shown = core::QuoteForMessage(name, 64);
      return Refusal(code, absl::StrCat("unknown field \"", shown, "\""), shown,
                     "is not a known field");
    }
    auto path_value = path_params.find(std::string(name));
    if (path_value != path_params.end() &&
        (!member.value.IsString() || core::StringViewOf(member.value) != path_value->second)) {
      return Refusal(code,
                     absl::StrCat("field \"", path_value->first, "\" does not match the path"),
                     path_value->first, "must match the path");
    }
  }
  for (const std::string& name : required_) {
    if (!doc->HasMember(rapidjson::StringRef(name.data(), name.size())) &&
        path_params.count(name) == 0) {
      return Refusal(code, absl::StrCat("field \"", name, "\" is required"), name, "required");
    }
  }
  absl::MutexLock lock(&validate_mu_);
  rapidjson::SchemaValidator validator(*compiled_);
  if (doc->Accept(validator)) {
    return std::nullopt;
  }
  const std::string member = MemberOf(validator.GetInvalidDocumentPointer());
  const char* keyword = validator.GetInvalidSchemaKeyword();
  const std::string rule = keyword == nullptr ? "the schema" : keyword;
  return Refusal(code, absl::StrCat("field \"", member, "\" violates \"", rule, "\""), member,
                 absl::StrCat("violates ", rule));
}

std::string BodyWithPathParams(std::string_view body, const PathParams& path_params,
                               PathParamsInBody mode) {
  std::string_view text = body;
  if (IsBlankBody(body)) {
    text = "{}";
  }
  absl::StatusOr<rapidjson::Document> doc =
      core::ParseJson(text, core::JsonLimits{text.size(), core::kMaxArgumentDepth});
  if (!doc.ok() || !doc->IsObject()) {
    return std::string(body);
  }
  rapidjson::Document out(rapidjson::kObjectType);
  auto& alloc = out.GetAllocator();
  const rapidjson::Value& source = *doc;
  for (const auto& member : source.GetObject()) {
    const bool is_path_param = path_params.count(std::string(core::StringViewOf(member.name))) > 0;
    if (mode == PathParamsInBody::kAdd || !is_path_param) {
      out.AddMember(rapidjson::Value(member.name, alloc), rapidjson::Value(member.value, alloc),
                    alloc);
    }
  }
  if (mode == PathParamsInBody::kAdd) {
    for (const auto& [name, value] : path_params) {
      if (!source.HasMember(name.c_str())) {
        out.AddMember(rapidjson::Value(name.c_str(), alloc), rapidjson::Value(value.c_str(), alloc),
                      alloc);
      }
    }
  }
  return core::ToJsonString(out);
}

}  // namespace pulse::adapters::http
