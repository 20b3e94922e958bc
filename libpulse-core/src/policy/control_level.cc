#include "pulse/core/policy/control_level.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<ControlLevel>, 3> kLevelNames = {{
    {ControlLevel::kReadOnly, "read_only"},
    {ControlLevel::kControlled, "controlled"},
    {ControlLevel::kAutonomous, "autonomous"},
}};

int Rank(ControlLevel level) { return static_cast<int>(NormalizeControlLevel(level)); }

}  // namespace

std::string_view ToString(ControlLevel level) {
  return WireNameOf(kLevelNames, NormalizeControlLevel(level));
}

std::optional<ControlLevel> ParseControlLevel(std::string_view text) {
  return WireValueOf(kLevelNames, text);
}

ControlLevel NormalizeControlLevel(std::string_view text) {
  return ParseControlLevel(text).value_or(ControlLevel::kReadOnly);
}

ControlLevel NormalizeControlLevel(ControlLevel level) {
  switch (level) {
    case ControlLevel::kReadOnly:
    case ControlLevel::kControlled:
    case ControlLevel::kAutonomous:
      return level;
  }
  return ControlLevel::kReadOnly;
}

bool IsValidControlLevel(std::string_view text) { return ParseControlLevel(text).has_value(); }

bool AllowsControlTools(ControlLevel level) {
  const ControlLevel normalized = NormalizeControlLevel(level);
  return normalized == ControlLevel::kControlled || normalized == ControlLevel::kAutonomous;
}

ControlLevel Lower(ControlLevel configured, ControlLevel requested) {
  return Rank(requested) < Rank(configured) ? NormalizeControlLevel(requested)
                                            : NormalizeControlLevel(configured);
}

std::optional<ControlLevel> RequestedControlLevel(const rapidjson::Value& body) {
  if (!body.IsObject()) {
    return std::nullopt;
  }
  const rapidjson::Value* member = nullptr;
  int occurrences = 0;
  for (const auto& m : body.GetObject()) {
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == kControlLevelField) {
      member = &m.value;
      ++occurrences;
    }
  }
  if (occurrences > 1) {
    return ControlLevel::kReadOnly;  // parsers disagree on which repeat wins; trust neither
  }
  if (member == nullptr || member->IsNull()) {
    return std::nullopt;
  }
  if (!member->IsString()) {
    return ControlLevel::kReadOnly;
  }
  return NormalizeControlLevel(std::string_view(member->GetString(), member->GetStringLength()));
}

std::string ControlToolsDisabledMessage(ControlLevel level) {
  return absl::StrCat(
      "Infrastructure changes are turned off for this conversation: the Assistant control level "
      "is ",
      std::string(ToString(level)),
      ". This is an operator setting, not a failure to retry. An operator enables governed "
      "changes by starting pulse-server with --control-level controlled (each change then "
      "waits for an approval) or --control-level autonomous; a chat request can only lower the "
      "level, never raise it. Continue with read-only investigation and describe the change you "
      "would recommend.");
}

}  // namespace pulse::core
