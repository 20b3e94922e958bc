#include "pulse/core/tools/invocation_descriptor.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && IsAsciiSpace(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

std::string ClassText(InvocationClass c) {
  return absl::StrCat(std::string(ToString(c.kind)), "/", std::string(ToString(c.mutation)));
}

absl::Status ValidateCases(const InvocationDescriptor& d) {
  if (d.cases.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("discriminator \"", d.discriminator, "\" has no cases"));
  }
  for (const auto& [key, c] : d.cases) {
    if (key.empty() || NormalizeDiscriminatorValue(key) != key) {
      return absl::InvalidArgumentError(absl::StrCat("discriminator \"", d.discriminator,
                                                     "\" case \"", key,
                                                     "\" is not normalized (trimmed, lowercase)"));
    }
    if (!IsValidInvocationClass(c)) {
      return absl::InvalidArgumentError(absl::StrCat("discriminator \"", d.discriminator,
                                                     "\" case \"", key, "\" has invalid class ",
                                                     ClassText(c)));
    }
  }
  return absl::OkStatus();
}

// Reads the normalized enum set the schema declares for the discriminator property.
absl::StatusOr<std::set<std::string>> ReadDiscriminatorEnum(const std::string& name,
                                                            const rapidjson::Value& schema) {
  const rapidjson::Value* properties = GetMember(schema, "properties");
  const rapidjson::Value* property = properties ? GetMember(*properties, name) : nullptr;
  if (property == nullptr || !property->IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "discriminator \"", name, "\" is not a declared property of the input schema"));
  }
  const rapidjson::Value* values = GetMember(*property, "enum");
  if (values == nullptr || !values->IsArray() || values->Empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("discriminator \"", name, "\" needs a non-empty string enum in the schema"));
  }
  std::set<std::string> out;
  for (const auto& v : values->GetArray()) {
    if (!v.IsString() || NormalizeDiscriminatorValue(StringViewOf(v)).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("discriminator \"", name, "\" enum must hold only non-empty strings"));
    }
    out.insert(NormalizeDiscriminatorValue(StringViewOf(v)));
  }
  return out;
}

absl::Status ValidateDiscriminator(const InvocationDescriptor& d, const rapidjson::Value& schema) {
  PULSE_RETURN_IF_ERROR(ValidateCases(d));
  PULSE_ASSIGN_OR_RETURN(std::set<std::string> enum_values,
                         ReadDiscriminatorEnum(d.discriminator, schema));
  std::vector<std::string> missing;  // in the enum, without a case
  std::vector<std::string> extra;    // a case the enum does not offer
  for (const std::string& value : enum_values) {
    if (d.cases.find(value) == d.cases.end()) {
      missing.push_back(value);
    }
  }
  for (const auto& [key, c] : d.cases) {
    if (enum_values.find(key) == enum_values.end()) {
      extra.push_back(key);
    }
  }
  if (missing.empty() && extra.empty()) {
    return absl::OkStatus();
  }
  std::string message =
      absl::StrCat("discriminator \"", d.discriminator, "\" cases do not match the schema enum:");
  if (!missing.empty()) {
    absl::StrAppend(&message, " missing cases [", absl::StrJoin(missing, ", "), "]");
  }
  if (!extra.empty()) {
    absl::StrAppend(&message, missing.empty() ? "" : ";", " extra cases [",
                    absl::StrJoin(extra, ", "), "]");
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace

InvocationDescriptor StaticDescriptor(InvocationClass c) {
  InvocationDescriptor d;
  d.static_class = c;
  return d;
}

InvocationDescriptor DiscriminatorDescriptor(std::string argument,
                                             std::map<std::string, InvocationClass> cases) {
  InvocationDescriptor d;
  d.discriminator = std::move(argument);
  d.cases = std::move(cases);
  return d;
}

bool IsValidInvocationClass(InvocationClass c) {
  std::optional<ToolKind> kind = ParseToolKind(ToString(c.kind));
  std::optional<MutationTarget> mutation = ParseMutationTarget(ToString(c.mutation));
  if (!kind.has_value() || !mutation.has_value()) {
    return false;
  }
  if (c.kind == ToolKind::kWrite) {
    return c.mutation != MutationTarget::kNone;
  }
  return c.mutation == MutationTarget::kNone;
}

std::string NormalizeDiscriminatorValue(std::string_view value) {
  std::string out(TrimAscii(value));
  for (char& ch : out) {
    if (ch >= 'A' && ch <= 'Z') {
      ch = static_cast<char>(ch - 'A' + 'a');
    }
  }
  return out;
}

absl::Status ValidateDescriptor(const InvocationDescriptor& descriptor,
                                const rapidjson::Value& input_schema) {
  const bool has_static = descriptor.static_class.has_value();
  const bool has_discriminator = !descriptor.discriminator.empty() || !descriptor.cases.empty();
  if (has_static && has_discriminator) {
    return absl::InvalidArgumentError(
        "invocation descriptor is both static and discriminator-based");
  }
  if (!has_static && !has_discriminator) {
    return absl::InvalidArgumentError(
        "invocation descriptor is neither static nor discriminator-based");
  }
  if (has_static) {
    if (!IsValidInvocationClass(*descriptor.static_class)) {
      return absl::InvalidArgumentError(absl::StrCat("static invocation class ",
                                                     ClassText(*descriptor.static_class),
                                                     " is not a valid class"));
    }
    return absl::OkStatus();
  }
  if (descriptor.discriminator.empty()) {
    return absl::InvalidArgumentError("discriminator descriptor has cases but no argument name");
  }
  return ValidateDiscriminator(descriptor, input_schema);
}

InvocationClass Classify(const InvocationDescriptor& descriptor, const rapidjson::Value& args) {
  if (descriptor.static_class.has_value()) {
    const bool clean = descriptor.discriminator.empty() && descriptor.cases.empty() &&
                       IsValidInvocationClass(*descriptor.static_class);
    return clean ? *descriptor.static_class : kFailClosedClass;
  }
  if (descriptor.discriminator.empty() || !args.IsObject()) {
    return kFailClosedClass;
  }
  const rapidjson::Value* value = nullptr;
  for (const auto& member : args.GetObject()) {
    if (!member.name.IsString() || StringViewOf(member.name) != descriptor.discriminator) {
      continue;
    }
    if (value != nullptr) {
      return kFailClosedClass;  // a repeated key could smuggle a second value past us
    }
    value = &member.value;
  }
  if (value == nullptr || !value->IsString()) {
    return kFailClosedClass;
  }
  auto it = descriptor.cases.find(NormalizeDiscriminatorValue(StringViewOf(*value)));
  if (it == descriptor.cases.end() || !IsValidInvocationClass(it->second)) {
    return kFailClosedClass;
  }
  return it->second;
}

}  // namespace pulse::core
