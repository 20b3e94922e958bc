// API-token scopes: the closed set of authorities a caller can hold (docs/security.md "Who:
// scopes"), and ScopeSet, the parsed scopes of one caller. Parsing is closed: a string outside the
// set is an error, never silently ignored. `*` grants every scope. Plain values; no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::core {

// Declared in canonical display order: the Pulse wire order (which puts ai:execute before
// ai:chat) restricted to the scopes this product knows.
enum class Scope : std::uint8_t {
  kMonitoringRead,
  kMonitoringWrite,
  kSettingsRead,
  kSettingsWrite,
  kAuditRead,
  kAiExecute,
  kAiChat,
  kAgentReport,
  kAgentExec,
  kActionsPlan,
  kActionsApprove,
  kActionsExecute,
};

// Every scope, in canonical order.
inline constexpr std::array<Scope, 12> kAllScopes = {
    Scope::kMonitoringRead, Scope::kMonitoringWrite, Scope::kSettingsRead,   Scope::kSettingsWrite,
    Scope::kAuditRead,      Scope::kAiExecute,       Scope::kAiChat,         Scope::kAgentReport,
    Scope::kAgentExec,      Scope::kActionsPlan,     Scope::kActionsApprove, Scope::kActionsExecute,
};

// The wildcard: a token holding it holds every scope.
inline constexpr std::string_view kScopeWildcard = "*";

// Wire string, e.g. "ai:chat". A value outside the enum renders as "unknown".
std::string_view ToString(Scope scope);

// Exact-match parse of one wire string (case-sensitive, no trimming); `*` is not a Scope.
std::optional<Scope> ParseScope(std::string_view text);

class ScopeSet {
 public:
  // The empty set: grants nothing.
  ScopeSet() = default;

  static ScopeSet Of(std::initializer_list<Scope> scopes);
  // The wildcard set (`*`).
  static ScopeSet All();

  // Parses scope strings. Each entry is trimmed of ASCII whitespace and must then be `*` or
  // an exact wire string. InvalidArgument names the first entry that is empty or unknown (so
  // "AI:CHAT", "ai:chat:x" and "relay:mobile:access" are refused). Duplicates are harmless.
  [[nodiscard]] static absl::StatusOr<ScopeSet> Parse(const std::vector<std::string>& entries);
  // The same over one comma-separated list ("ai:chat,ai:execute"). A blank string is the
  // empty set; an empty entry between commas is refused.
  [[nodiscard]] static absl::StatusOr<ScopeSet> ParseList(std::string_view comma_separated);

  // True when the set holds `scope` or the wildcard. False for a value outside the enum.
  bool Has(Scope scope) const;
  bool HasWildcard() const { return wildcard_; }
  // True when the set holds at least one of the scopes (or the wildcard).
  bool HasAny(std::initializer_list<Scope> scopes) const;
  bool Empty() const { return !wildcard_ && bits_ == 0; }

  // Adds one scope; a value outside the enum is ignored.
  void Add(Scope scope);

  // Canonical display form: `*` first when present, then the explicit scopes in canonical
  // order, each once.
  std::vector<std::string> ToStrings() const;
  // ToStrings() joined with ", ".
  std::string ToString() const;

  friend bool operator==(const ScopeSet&, const ScopeSet&) = default;

 private:
  std::uint32_t bits_ = 0;
  bool wildcard_ = false;
};

}  // namespace pulse::core
