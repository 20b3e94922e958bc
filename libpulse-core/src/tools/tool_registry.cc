#include "pulse/core/tools/tool_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_names.h"
#include "rapidjson/schema.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {

// One registered tool. Heap-allocated so the compiled schema, which points into `schema`,
// and the mutex never move.
struct ToolRegistry::Entry {
  ToolSpec spec;
  rapidjson::Document schema;
  std::unique_ptr<rapidjson::SchemaDocument> compiled ABSL_PT_GUARDED_BY(validate_mu);
  std::vector<std::string> declared;  // root property names
  std::vector<std::string> required;  // root required names, schema order
  // RapidJSON 1.1.0's regex matcher keeps scratch state inside the compiled pattern, so two
  // validations against one schema must not overlap (unserialized, they return wrong
  // verdicts).
  mutable absl::Mutex validate_mu;
};

namespace {

absl::Status WithTool(std::string_view name, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("tool \"", QuoteForMessage(name), "\": ", status.message()));
}

bool IsValidToolName(std::string_view name) {
  if (name.empty() || name.size() > kMaxToolNameLength) {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) {
      return false;
    }
  }
  return true;
}

absl::Status CheckExtensionName(std::string_view name) {
  if (!IsValidToolName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("extension tool name \"", QuoteForMessage(name),
                                                   "\" must match [A-Za-z0-9_-]{1,",
                                                   kMaxToolNameLength, "}"));
  }
  if (IsBuiltinToolName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", QuoteForMessage(name),
                     "\" is a built-in tool; an extension cannot register or shadow it"));
  }
  if (IsRetiredToolName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", QuoteForMessage(name), "\" is a retired tool name and can never be registered"));
  }
  for (std::string_view prefix : kReservedToolNamePrefixes) {
    if (name.substr(0, prefix.size()) == prefix) {
      return absl::InvalidArgumentError(absl::StrCat("extension tool \"", QuoteForMessage(name),
                                                     "\" uses the prefix \"", std::string(prefix),
                                                     "\" reserved for built-ins"));
    }
  }
  return absl::OkStatus();
}

void ReadRootShape(const rapidjson::Value& schema, std::vector<std::string>& declared,
                   std::vector<std::string>& required) {
  // ValidateToolSchema has already proven these members well-formed.
  auto properties = schema.FindMember("properties");
  if (properties != schema.MemberEnd()) {
    for (const auto& p : properties->value.GetObject()) {
      declared.emplace_back(StringViewOf(p.name));
    }
  }
  auto req = schema.FindMember("required");
  if (req != schema.MemberEnd()) {
    for (const auto& r : req->value.GetArray()) {
      required.emplace_back(StringViewOf(r));
    }
  }
}

// Refuses a schema that declares a reserved argument name under any "properties", at any
// level (walked iteratively; the schema's depth is already bounded by ValidateToolSchema).
absl::Status CheckNoReservedProperties(const rapidjson::Value& schema) {
  std::vector<const rapidjson::Value*> stack = {&schema};
  while (!stack.empty()) {
    const rapidjson::Value* node = stack.back();
    stack.pop_back();
    if (node->IsArray()) {
      for (const auto& element : node->GetArray()) {
        stack.push_back(&element);
      }
      continue;
    }
    if (!node->IsObject()) {
      continue;
    }
    for (const auto& member : node->GetObject()) {
      const std::string_view keyword = StringViewOf(member.name);
      if (keyword == "properties" && member.value.IsObject()) {
        for (const auto& property : member.value.GetObject()) {
          if (IsReservedArgumentName(StringViewOf(property.name))) {
            return absl::InvalidArgumentError(
                absl::StrCat("input schema declares the reserved argument name \"",
                             QuoteForMessage(StringViewOf(property.name)),
                             "\" (reserved for server-attached approval metadata)"));
          }
          stack.push_back(&property.value);
        }
      } else if (keyword == "items" || keyword == "additionalProperties" ||
                 keyword == "additionalItems" || keyword == "anyOf" || keyword == "oneOf" ||
                 keyword == "allOf" || keyword == "not") {
        stack.push_back(&member.value);
      }
    }
  }
  return absl::OkStatus();
}

std::string PointerText(const rapidjson::Pointer& pointer) {
  rapidjson::StringBuffer buffer;
  pointer.Stringify(buffer);
  std::string text(buffer.GetString(), buffer.GetSize());
  return text.empty() ? "(arguments)" : text;
}

// The constraint behind a failed keyword, rendered compactly (schemas are ours and small).
std::string ConstraintText(const rapidjson::Document& schema, const rapidjson::Pointer& at,
                           std::string_view keyword) {
  const rapidjson::Value* node = at.Get(schema);
  if (node == nullptr || !node->IsObject()) {
    return "";
  }
  auto it = node->FindMember(rapidjson::StringRef(keyword.data(), keyword.size()));
  if (it == node->MemberEnd() || it->value.IsObject()) {
    return "";
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  it->value.Accept(writer);
  return absl::StrCat(" (", std::string(keyword), ": ",
                      std::string(buffer.GetString(), buffer.GetSize()), ")");
}

}  // namespace

bool IsReservedArgumentName(std::string_view name) {
  if (!name.empty() && name.front() == '_') {
    return true;
  }
  for (std::string_view reserved : kReservedArgumentNames) {
    if (reserved.size() == name.size() &&
        std::equal(reserved.begin(), reserved.end(), name.begin(), [](char a, char b) {
          return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
        })) {
      return true;
    }
  }
  return false;
}

ToolRegistry::ToolRegistry() = default;
ToolRegistry::~ToolRegistry() = default;
ToolRegistry::ToolRegistry(ToolRegistry&&) noexcept = default;
ToolRegistry& ToolRegistry::operator=(ToolRegistry&&) noexcept = default;

absl::StatusOr<ToolRegistry> ToolRegistry::WithBuiltins() {
  ToolRegistry registry;
  for (const ToolSpec& spec : BuiltinTools()) {
    PULSE_RETURN_IF_ERROR(registry.RegisterBuiltin(spec));
  }
  return registry;
}

absl::Status ToolRegistry::RegisterBuiltin(const ToolSpec& spec) {
  std::optional<ToolSpec> canonical = FindBuiltinTool(spec.name);
  if (!canonical.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", QuoteForMessage(spec.name), "\" is not a built-in tool"));
  }
  if (spec.descriptor != canonical->descriptor) {
    return absl::InvalidArgumentError(absl::StrCat(
        "built-in tool \"", spec.name, "\" must use its canonical invocation descriptor"));
  }
  if (spec.interactive_only != canonical->interactive_only ||
      spec.investigation_only != canonical->investigation_only ||
      spec.runs_alone != canonical->runs_alone) {
    return absl::InvalidArgumentError(
        absl::StrCat("built-in tool \"", spec.name, "\" must keep its canonical placement hints"));
  }
  if (spec.traits != canonical->traits) {
    return absl::InvalidArgumentError(
        absl::StrCat("built-in tool \"", spec.name, "\" must keep its canonical traits"));
  }
  return Register(spec);
}

absl::Status ToolRegistry::RegisterExtension(ToolSpec spec) {
  PULSE_RETURN_IF_ERROR(CheckExtensionName(spec.name));
  if (spec.traits != ToolTraits{}) {
    return WithTool(spec.name,
                    absl::InvalidArgumentError("only a built-in tool may declare loop traits"));
  }
  return Register(std::move(spec));
}

absl::Status ToolRegistry::Register(ToolSpec spec) {
  if (index_.contains(absl::string_view(spec.name))) {
    return absl::AlreadyExistsError(absl::StrCat(
        "tool \"", spec.name, "\" is already registered; registration is append-only"));
  }
  if (spec.description.empty()) {
    return WithTool(spec.name, absl::InvalidArgumentError("description is empty"));
  }
  auto entry = std::make_unique<Entry>();
  absl::StatusOr<rapidjson::Document> parsed =
      ParseJson(spec.input_schema_json, JsonLimits{kMaxToolSchemaBytes, kMaxToolSchemaDepth * 2});
  if (!parsed.ok()) {
    return WithTool(spec.name, absl::InvalidArgumentError(
                                   absl::StrCat("input schema: ", parsed.status().message())));
  }
  entry->schema = std::move(parsed).value();
  if (absl::Status s = ValidateToolSchema(entry->schema); !s.ok()) {
    return WithTool(spec.name, s);
  }
  if (absl::Status s = CheckNoReservedProperties(entry->schema); !s.ok()) {
    return WithTool(spec.name, s);
  }
  if (absl::Status s = ValidateDescriptor(spec.descriptor, entry->schema); !s.ok()) {
    return WithTool(spec.name, s);
  }
  ReadRootShape(entry->schema, entry->declared, entry->required);
  entry->compiled = std::make_unique<rapidjson::SchemaDocument>(entry->schema);
  entry->spec = std::move(spec);
  index_.emplace(entry->spec.name, entries_.size());
  entries_.push_back(std::move(entry));
  return absl::OkStatus();
}

const ToolRegistry::Entry* ToolRegistry::Lookup(std::string_view name) const {
  auto it = index_.find(ToAbsl(name));
  return it == index_.end() ? nullptr : entries_[it->second].get();
}

std::optional<ToolSpec> ToolRegistry::Find(std::string_view name) const {
  const Entry* entry = Lookup(name);
  if (entry == nullptr) {
    return std::nullopt;
  }
  return entry->spec;
}

std::optional<InvocationDescriptor> ToolRegistry::FindDescriptor(std::string_view name) const {
  const Entry* entry = Lookup(name);
  if (entry == nullptr) {
    return std::nullopt;
  }
  return entry->spec.descriptor;
}

bool ToolRegistry::Contains(std::string_view name) const { return Lookup(name) != nullptr; }

ToolTraits ToolRegistry::Traits(std::string_view name) const {
  const Entry* entry = Lookup(name);
  return entry == nullptr ? ToolTraits{} : entry->spec.traits;
}

std::vector<std::string> ToolRegistry::Names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto& entry : entries_) {
    names.push_back(entry->spec.name);
  }
  return names;
}

absl::Status ToolRegistry::ValidateArguments(std::string_view name,
                                             const rapidjson::Value& args) const {
  const Entry* entry = Lookup(name);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown tool \"", QuoteForMessage(name), "\""));
  }
  if (!args.IsObject()) {
    return absl::InvalidArgumentError("tool arguments must be a JSON object");
  }
  // Undeclared names first: the most useful message for a model, and a flat scan.
  // (ValidateToolSchema guarantees the root has "additionalProperties": false.)
  for (const auto& member : args.GetObject()) {
    const std::string_view key = StringViewOf(member.name);
    if (std::find(entry->declared.begin(), entry->declared.end(), key) == entry->declared.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("undeclared tool argument \"", QuoteForMessage(key), "\""));
    }
  }
  PULSE_RETURN_IF_ERROR(CheckArgumentStructure(args));
  for (const std::string& key : entry->required) {
    if (!args.HasMember(rapidjson::StringRef(key.data(), key.size()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("required tool argument \"", key, "\" is missing"));
    }
  }
  absl::MutexLock lock(&entry->validate_mu);
  rapidjson::SchemaValidator validator(*entry->compiled);
  if (args.Accept(validator)) {
    return absl::OkStatus();
  }
  const char* failed = validator.GetInvalidSchemaKeyword();
  const std::string keyword = failed == nullptr ? "schema" : failed;
  return absl::InvalidArgumentError(absl::StrCat(
      "tool argument ", PointerText(validator.GetInvalidDocumentPointer()), " violates \"", keyword,
      "\"", ConstraintText(entry->schema, validator.GetInvalidSchemaPointer(), keyword)));
}

}  // namespace pulse::core
