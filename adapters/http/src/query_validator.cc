#include "pulse/adapters/http/query_validator.h"

#include <array>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::adapters::http {
namespace {

using Type = QueryValidator::Type;

// The JSON Schema `type` keywords a query parameter may declare.
constexpr std::array<core::WireName<Type>, 3> kTypeNames = {{
    {Type::kString, "string"},
    {Type::kInteger, "integer"},
    {Type::kBoolean, "boolean"},
}};

// Integers longer than this could overflow int64; no parameter needs one.
constexpr std::size_t kMaxIntegerDigits = 18;

core::AgentError Refusal(core::AgentErrorCode code, std::string message,
                         const std::string& parameter, std::string problem) {
  core::AgentError error = core::MakeAgentError(code, std::move(message));
  error.details.emplace(parameter, std::move(problem));
  return error;
}

std::optional<std::int64_t> ParseInteger(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.size() > kMaxIntegerDigits) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + (c - '0');
  }
  return negative ? -value : value;
}

std::optional<bool> ParseBoolean(std::string_view text) {
  const std::string lower = absl::AsciiStrToLower(core::ToAbsl(text));
  if (lower == "true" || lower == "1") {
    return true;
  }
  if (lower == "false" || lower == "0") {
    return false;
  }
  return std::nullopt;
}

bool HasControl(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      return true;
    }
  }
  return false;
}

std::string TypeName(Type type) {
  switch (type) {
    case Type::kInteger:
      return "an integer";
    case Type::kBoolean:
      return "true or false";
    case Type::kString:
      break;
  }
  return "text";
}

}  // namespace

absl::StatusOr<std::unique_ptr<QueryValidator>> QueryValidator::Compile(
    std::string_view schema_json) {
  std::unique_ptr<QueryValidator> v(new QueryValidator());
  if (schema_json.empty()) {
    return v;
  }
  absl::StatusOr<rapidjson::Document> schema =
      core::ParseJson(schema_json, core::JsonLimits{core::kMaxToolSchemaBytes, 24});
  if (!schema.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("query schema does not parse: ", schema.status().message()));
  }
  const auto type = core::GetString(*schema, "type");
  if (!schema->IsObject() || !type.has_value() || *type != "object") {
    return absl::InvalidArgumentError("a query schema must describe an object");
  }
  if (const rapidjson::Value* properties = core::GetMember(*schema, "properties");
      properties != nullptr && properties->IsObject()) {
    for (const auto& m : properties->GetObject()) {
      const std::string name(core::StringViewOf(m.name));
      const std::optional<std::string_view> declared =
          m.value.IsObject() ? core::GetString(m.value, "type") : std::nullopt;
      const std::optional<Type> type_of =
          declared.has_value() ? core::WireValueOf(kTypeNames, *declared) : std::nullopt;
      if (!type_of.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter ", name, " must be of type string, integer or boolean"));
      }
      v->parameters_.emplace(name, *type_of);
    }
  }
  v->schema_ = *std::move(schema);
  // The query is checked against the schema as declared, but closed: a parameter not declared
  // is refused (before the schema runs, with its own message) whatever additionalProperties
  // says, since the fallback input schema leaves it open for tool arguments.
  v->schema_.RemoveMember("required");
  v->compiled_ = std::make_unique<rapidjson::SchemaDocument>(v->schema_);
  return v;
}

std::optional<core::AgentError> QueryValidator::Validate(
    const QueryParams& query, core::AgentErrorCode code,
    const std::map<std::string, core::AgentErrorCode>& param_codes) const {
  const auto code_for = [&](const std::string& name) {
    auto it = param_codes.find(name);
    return it == param_codes.end() ? code : it->second;
  };
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& alloc = doc.GetAllocator();
  for (auto it = query.begin(); it != query.end(); it = query.upper_bound(it->first)) {
    const std::string& name = it->first;
    const std::string shown = core::QuoteForMessage(name, 64);
    auto declared = parameters_.find(name);
    if (declared == parameters_.end()) {
      return Refusal(code, absl::StrCat("unknown query parameter \"", shown, "\""), shown,
                     "is not a known parameter");
    }
    if (query.count(name) > 1) {
      return Refusal(code_for(name),
                     absl::StrCat("query parameter \"", shown, "\" is given more than once"), shown,
                     "is repeated");
    }
    const std::string& text = it->second;
    rapidjson::Value value;
    switch (declared->second) {
      case Type::kInteger:
        if (std::optional<std::int64_t> parsed = ParseInteger(text)) {
          value.SetInt64(*parsed);
        }
        break;
      case Type::kBoolean:
        if (std::optional<bool> parsed = ParseBoolean(text)) {
          value.SetBool(*parsed);
        }
        break;
      case Type::kString:
        if (!HasControl(text)) {
          value.SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
        }
        break;
    }
    if (value.IsNull()) {
      return Refusal(
          code_for(name),
          absl::StrCat("query parameter \"", shown, "\" must be ", TypeName(declared->second)),
          shown, absl::StrCat("must be ", TypeName(declared->second)));
    }
    doc.AddMember(rapidjson::Value(name.c_str(), alloc), value, alloc);
  }
  if (compiled_ == nullptr || doc.MemberCount() == 0) {
    return std::nullopt;
  }
  absl::MutexLock lock(&validate_mu_);
  rapidjson::SchemaValidator validator(*compiled_);
  if (doc.Accept(validator)) {
    return std::nullopt;
  }
  const rapidjson::Pointer& pointer = validator.GetInvalidDocumentPointer();
  const std::string name =
      pointer.GetTokenCount() == 0
          ? std::string("query")
          : std::string(pointer.GetTokens()[0].name, pointer.GetTokens()[0].length);
  const char* keyword = validator.GetInvalidSchemaKeyword();
  const std::string rule = keyword == nullptr ? "the schema" : keyword;
  const std::string shown = core::QuoteForMessage(name, 64);
  return Refusal(code_for(name),
                 absl::StrCat("query parameter \"", shown, "\" violates \"", rule, "\""), shown,
                 absl::StrCat("violates ", rule));
}

}  // namespace pulse::adapters::http
