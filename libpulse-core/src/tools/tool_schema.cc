#include "pulse/core/tools/tool_schema.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/status_macros.h"
// The regex dialect RapidJSON's schema validator compiles "pattern" with (internal API, the
// same class the validator uses), so a pattern that compiles here is one it enforces.
#include "pulse/core/string_view.h"
#include "rapidjson/internal/regex.h"

namespace pulse::core {
namespace {

using rapidjson::Value;

constexpr std::array<std::string_view, 7> kTypeNames = {"object",  "array",   "string", "number",
                                                        "integer", "boolean", "null"};

absl::Status SchemaError(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("input schema at \"", path.empty() ? "#" : path, "\" ", std::string(what)));
}

struct TypeSet {
  bool declared = false;
  bool object = false;
  bool array = false;
};

absl::StatusOr<TypeSet> ReadTypes(const Value& node, const std::string& path) {
  TypeSet types;
  const Value* type = GetMember(node, "type");
  if (type == nullptr) {
    return types;
  }
  std::vector<const Value*> names;
  if (type->IsString()) {
    names.push_back(type);
  } else if (type->IsArray() && !type->Empty()) {
    for (const Value& v : type->GetArray()) {
      names.push_back(&v);
    }
  } else {
    return SchemaError(path, "has a malformed \"type\"");
  }
  for (const Value* name : names) {
    if (!name->IsString() ||
        std::find(kTypeNames.begin(), kTypeNames.end(), StringViewOf(*name)) == kTypeNames.end()) {
      return SchemaError(path, "names an unknown type");
    }
    types.object = types.object || StringViewOf(*name) == "object";
    types.array = types.array || StringViewOf(*name) == "array";
  }
  types.declared = true;
  return types;
}

absl::Status CheckPattern(const Value& pattern, const std::string& path) {
  if (!pattern.IsString()) {
    return SchemaError(path, "has a non-string pattern");
  }
  const std::string text(StringViewOf(pattern));
  if (text.find('\0') != std::string::npos) {
    return SchemaError(path, "has a pattern containing NUL");
  }
  rapidjson::internal::GenericRegex<rapidjson::UTF8<>> regex(text.c_str());
  if (!regex.IsValid()) {
    return SchemaError(path, absl::StrCat("has a pattern the validator cannot compile: ", text));
  }
  return absl::OkStatus();
}

absl::Status WalkSchema(const Value& node, const std::string& path, std::size_t depth);

// Walks anyOf/oneOf/allOf branches; sets `present` when the node has any combinator.
absl::Status WalkCombinators(const Value& node, const std::string& path, std::size_t depth,
                             bool& present) {
  for (std::string_view keyword : {"anyOf", "oneOf", "allOf"}) {
    const Value* branches = GetMember(node, keyword);
    if (branches == nullptr) {
      continue;
    }
    if (!branches->IsArray() || branches->Empty()) {
      return SchemaError(path, absl::StrCat("has a malformed \"", std::string(keyword), "\""));
    }
    present = true;
    for (rapidjson::SizeType i = 0; i < branches->Size(); ++i) {
      PULSE_RETURN_IF_ERROR(WalkSchema(
          (*branches)[i], absl::StrCat(path, "/", std::string(keyword), "/", i), depth + 1));
    }
  }
  return absl::OkStatus();
}

absl::Status WalkObjectKeywords(const Value& node, const std::string& path, std::size_t depth) {
  const Value* properties = GetMember(node, "properties");
  if (properties != nullptr) {
    if (!properties->IsObject()) {
      return SchemaError(path, "has a malformed \"properties\"");
    }
    for (const auto& p : properties->GetObject()) {
      const std::string child =
          absl::StrCat(path, "/properties/", std::string(StringViewOf(p.name)));
      PULSE_RETURN_IF_ERROR(WalkSchema(p.value, child, depth + 1));
    }
  }
  const Value* required = GetMember(node, "required");
  if (required == nullptr) {
    return absl::OkStatus();
  }
  if (!required->IsArray()) {
    return SchemaError(path, "has a malformed \"required\"");
  }
  for (const Value& name : required->GetArray()) {
    if (!name.IsString() || properties == nullptr ||
        GetMember(*properties, StringViewOf(name)) == nullptr) {
      return SchemaError(path, "requires a property it does not declare");
    }
  }
  return absl::OkStatus();
}

// An object level is closed when it admits no undeclared member ("additionalProperties":
// false) or when it is a bounded scalar map: "maxProperties" is set and
// "additionalProperties" is a schema whose types are all scalar, so nothing can nest below.
absl::Status CheckObjectIsClosed(const Value& node, const std::string& path, std::size_t depth) {
  const Value* additional = GetMember(node, "additionalProperties");
  if (additional != nullptr && additional->IsFalse()) {
    return absl::OkStatus();
  }
  const Value* max_properties = GetMember(node, "maxProperties");
  if (additional == nullptr || !additional->IsObject() || max_properties == nullptr ||
      !max_properties->IsUint()) {
    return SchemaError(path,
                       "must set \"additionalProperties\": false (or be a scalar map with "
                       "\"maxProperties\")");
  }
  const std::string child = absl::StrCat(path, "/additionalProperties");
  PULSE_ASSIGN_OR_RETURN(TypeSet types, ReadTypes(*additional, child));
  if (!types.declared || types.object || types.array) {
    return SchemaError(child, "must declare only scalar types");
  }
  return WalkSchema(*additional, child, depth + 1);
}

absl::Status WalkItems(const Value& node, const std::string& path, std::size_t depth) {
  const Value* items = GetMember(node, "items");
  if (items == nullptr) {
    return SchemaError(path, "is an array without \"items\"");
  }
  if (items->IsObject()) {
    return WalkSchema(*items, absl::StrCat(path, "/items"), depth + 1);
  }
  if (!items->IsArray() || items->Empty()) {
    return SchemaError(path, "has a malformed \"items\"");
  }
  const Value* additional = GetMember(node, "additionalItems");
  if (additional == nullptr || !additional->IsFalse()) {
    return SchemaError(path, "is a tuple array without \"additionalItems\": false");
  }
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    PULSE_RETURN_IF_ERROR(WalkSchema((*items)[i], absl::StrCat(path, "/items/", i), depth + 1));
  }
  return absl::OkStatus();
}

absl::Status WalkSchema(const Value& node, const std::string& path, std::size_t depth) {
  if (depth > kMaxToolSchemaDepth) {
    return SchemaError(path, absl::StrCat("nests deeper than ", kMaxToolSchemaDepth, " levels"));
  }
  if (!node.IsObject()) {
    return SchemaError(path, "is not a JSON object");
  }
  for (std::string_view refused : {"$ref", "patternProperties"}) {
    if (GetMember(node, refused) != nullptr) {
      return SchemaError(
          path, absl::StrCat("uses \"", std::string(refused), "\", which tool schemas may not"));
    }
  }
  PULSE_ASSIGN_OR_RETURN(TypeSet types, ReadTypes(node, path));
  const Value* enum_values = GetMember(node, "enum");
  if (enum_values != nullptr && (!enum_values->IsArray() || enum_values->Empty())) {
    return SchemaError(path, "has a malformed \"enum\"");
  }
  bool combinators = false;
  PULSE_RETURN_IF_ERROR(WalkCombinators(node, path, depth, combinators));
  if (!types.declared && enum_values == nullptr && !combinators) {
    return SchemaError(path, "declares no type, so it would accept any value");
  }
  if (types.object || GetMember(node, "properties") != nullptr) {
    PULSE_RETURN_IF_ERROR(CheckObjectIsClosed(node, path, depth));
    PULSE_RETURN_IF_ERROR(WalkObjectKeywords(node, path, depth));
  }
  if (types.array) {
    PULSE_RETURN_IF_ERROR(WalkItems(node, path, depth));
  }
  if (const Value* pattern = GetMember(node, "pattern"); pattern != nullptr) {
    PULSE_RETURN_IF_ERROR(CheckPattern(*pattern, path));
  }
  return absl::OkStatus();
}

absl::Status CheckText(std::string_view text, std::size_t max_bytes, std::string_view what) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("a tool argument ", std::string(what),
                                                   " is longer than ", max_bytes, " bytes"));
  }
  if (text.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("a tool argument ", std::string(what), " contains a NUL character"));
  }
  if (!IsValidUtf8(text)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a tool argument ", std::string(what), " is not valid UTF-8"));
  }
  return absl::OkStatus();
}

absl::Status CheckObjectKeys(const Value& object) {
  absl::flat_hash_set<absl::string_view> seen;
  seen.reserve(object.MemberCount());
  for (const auto& member : object.GetObject()) {
    const std::string_view key = StringViewOf(member.name);
    PULSE_RETURN_IF_ERROR(CheckText(key, kMaxArgumentKeyBytes, "name"));
    if (!seen.insert(ToAbsl(key)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate tool argument \"", QuoteForMessage(key), "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateToolSchema(const Value& schema) {
  if (!schema.IsObject()) {
    return absl::InvalidArgumentError("input schema is not a JSON object");
  }
  const Value* type = GetMember(schema, "type");
  if (type == nullptr || !type->IsString() || StringViewOf(*type) != "object") {
    return absl::InvalidArgumentError("input schema root must declare \"type\": \"object\"");
  }
  const Value* additional = GetMember(schema, "additionalProperties");
  if (additional == nullptr || !additional->IsFalse()) {
    return absl::InvalidArgumentError("input schema root must set \"additionalProperties\": false");
  }
  return WalkSchema(schema, "", 1);
}

absl::Status CheckArgumentStructure(const Value& args) {
  if (!args.IsObject()) {
    return absl::InvalidArgumentError("tool arguments must be a JSON object");
  }
  std::vector<std::pair<const Value*, std::size_t>> stack;  // value, container depth
  stack.emplace_back(&args, 1);
  std::size_t values = 0;
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    if (++values > kMaxArgumentValues) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool arguments hold more than ", kMaxArgumentValues, " values"));
    }
    if ((value->IsObject() || value->IsArray()) && depth > kMaxArgumentDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool arguments nest deeper than ", kMaxArgumentDepth, " levels"));
    }
    if (value->IsString()) {
      PULSE_RETURN_IF_ERROR(CheckText(StringViewOf(*value), kMaxArgumentStringBytes, "string"));
    } else if (value->IsDouble() && !std::isfinite(value->GetDouble())) {
      return absl::InvalidArgumentError("a tool argument number is not finite");
    } else if (value->IsObject()) {
      PULSE_RETURN_IF_ERROR(CheckObjectKeys(*value));
      for (const auto& member : value->GetObject()) {
        stack.emplace_back(&member.value, depth + 1);
      }
    } else if (value->IsArray()) {
      for (const Value& element : value->GetArray()) {
        stack.emplace_back(&element, depth + 1);
      }
    }
  }
  return absl::OkStatus();
}

std::string QuoteForMessage(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const std::size_t n = std::min(text.size(), max_bytes);
  out.reserve(n + 8);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out.append("\\x");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  if (text.size() > max_bytes) {
    out.append("...");
  }
  return out;
}

}  // namespace pulse::core
