#include "pulse/core/policy/scope.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

// The single table of scope wire strings, in canonical order.
constexpr std::array<WireName<Scope>, 12> kScopeNames = {{
    {Scope::kMonitoringRead, "monitoring:read"},
    {Scope::kMonitoringWrite, "monitoring:write"},
    {Scope::kSettingsRead, "settings:read"},
    {Scope::kSettingsWrite, "settings:write"},
    {Scope::kAuditRead, "audit:read"},
    {Scope::kAiExecute, "ai:execute"},
    {Scope::kAiChat, "ai:chat"},
    {Scope::kAgentReport, "agent:report"},
    {Scope::kAgentExec, "agent:exec"},
    {Scope::kActionsPlan, "actions:plan"},
    {Scope::kActionsApprove, "actions:approve"},
    {Scope::kActionsExecute, "actions:execute"},
}};

std::string_view TrimAscii(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const std::size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) {
    return {};
  }
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

bool IsKnown(Scope scope) { return static_cast<std::size_t>(scope) < kScopeNames.size(); }

std::uint32_t Bit(Scope scope) { return std::uint32_t{1} << static_cast<unsigned>(scope); }

}  // namespace

std::string_view ToString(Scope scope) { return WireNameOf(kScopeNames, scope); }

std::optional<Scope> ParseScope(std::string_view text) { return WireValueOf(kScopeNames, text); }

ScopeSet ScopeSet::Of(std::initializer_list<Scope> scopes) {
  ScopeSet set;
  for (Scope scope : scopes) {
    set.Add(scope);
  }
  return set;
}

ScopeSet ScopeSet::All() {
  ScopeSet set;
  set.wildcard_ = true;
  return set;
}

absl::StatusOr<ScopeSet> ScopeSet::Parse(const std::vector<std::string>& entries) {
  ScopeSet set;
  for (const std::string& raw : entries) {
    const std::string_view entry = TrimAscii(raw);
    if (entry.empty()) {
      return absl::InvalidArgumentError("scope list has an empty entry");
    }
    if (entry == kScopeWildcard) {
      set.wildcard_ = true;
      continue;
    }
    std::optional<Scope> scope = ParseScope(entry);
    if (!scope.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown scope \"", QuoteForMessage(entry), "\""));
    }
    set.Add(*scope);
  }
  return set;
}

absl::StatusOr<ScopeSet> ScopeSet::ParseList(std::string_view comma_separated) {
  if (TrimAscii(comma_separated).empty()) {
    return ScopeSet();
  }
  std::vector<std::string> entries;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = comma_separated.find(',', start);
    entries.emplace_back(comma_separated.substr(start, comma - start));
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return Parse(entries);
}

bool ScopeSet::Has(Scope scope) const {
  if (!IsKnown(scope)) {
    return false;
  }
  return wildcard_ || (bits_ & Bit(scope)) != 0;
}

bool ScopeSet::HasAny(std::initializer_list<Scope> scopes) const {
  for (Scope scope : scopes) {
    if (Has(scope)) {
      return true;
    }
  }
  return false;
}

void ScopeSet::Add(Scope scope) {
  if (IsKnown(scope)) {
    bits_ |= Bit(scope);
  }
}

std::vector<std::string> ScopeSet::ToStrings() const {
  std::vector<std::string> out;
  if (wildcard_) {
    out.emplace_back(kScopeWildcard);
  }
  for (const WireName<Scope>& entry : kScopeNames) {
    if ((bits_ & Bit(entry.value)) != 0) {
      out.emplace_back(entry.name);
    }
  }
  return out;
}

std::string ScopeSet::ToString() const { return absl::StrJoin(ToStrings(), ", "); }

}  // namespace pulse::core
