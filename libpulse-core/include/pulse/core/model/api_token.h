// API token values: the token and id shapes, the kind of holder, what a store keeps and what a
// create asks for. Checking a create against the scope vocabulary is auth/api_token.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::core {

inline constexpr std::string_view kApiTokenPrefix = "pulse_";
inline constexpr std::size_t kApiTokenRandomBytes = 32;
// base64url without padding of kApiTokenRandomBytes.
inline constexpr std::size_t kApiTokenEncodedChars = 43;
inline constexpr std::size_t kApiTokenLength = 6 + kApiTokenEncodedChars;
// Token ids: "tok_" + 16 lowercase hex digits. Public handles for list and revoke; not secret.
inline constexpr std::string_view kApiTokenIdPrefix = "tok_";
inline constexpr std::size_t kMaxApiTokenNameBytes = 128;
// A successful authentication records last_used_at only when the stored value is older than
// this, so authenticated reads do not each cost a durable write.
inline constexpr absl::Duration kApiTokenLastUsedResolution = absl::Minutes(1);

// Who holds a token, chosen when it is created and never changed: the actor kind its requests
// act as. Only a human token may approve a governed action or acknowledge Autopilot; an agent
// (an MCP client, a model acting on its own judgement) or a service (a script, CI) may not.
// A request can narrow this (X-Pulse-Agent-Surface makes a human token act as an agent) but
// never widen it.
enum class ApiTokenKind { kHuman, kAgent, kService };
// Wire: human, agent, service.
std::string_view ToString(ApiTokenKind kind);
// Exact match; anything else (other case, blanks) is nullopt.
std::optional<ApiTokenKind> ParseApiTokenKind(std::string_view text);

// What a store keeps about a token (never the token or its hash).
struct ApiTokenInfo {
  std::string id;
  std::string name;
  ApiTokenKind kind = ApiTokenKind::kHuman;
  std::vector<std::string> scopes;  // canonical order (ScopeSet::ToStrings), each once
  absl::Time created_at;
  std::optional<absl::Time> last_used_at;
  std::optional<absl::Time> expires_at;  // expired when now >= expires_at

  friend bool operator==(const ApiTokenInfo&, const ApiTokenInfo&) = default;
};

// A request to create a token.
struct NewApiToken {
  std::string name;  // 1..kMaxApiTokenNameBytes of UTF-8, no control characters
  ApiTokenKind kind = ApiTokenKind::kHuman;
  std::vector<std::string> scopes;  // wire strings or "*"; at least one
  absl::Time created_at;
  std::optional<absl::Time> expires_at;  // when set, after created_at
};

// The answer to a create: the stored facts and the raw token, which exists nowhere else.
struct IssuedApiToken {
  ApiTokenInfo info;
  std::string token;
};

// The longest lifetime a token may be given (ten years).
inline constexpr absl::Duration kMaxApiTokenLifetime = absl::Hours(24 * 3650);

// A token lifetime as an operator writes it: a positive whole number followed by one unit,
// h (hours) or d (days), e.g. "12h", "30d", at most kMaxApiTokenLifetime. InvalidArgument
// naming the rule for anything else ("", "30", "0d", "-1d", "1.5d", "30 d", "1w", "1h30m",
// a number too large).
[[nodiscard]] absl::StatusOr<absl::Duration> ParseApiTokenLifetime(std::string_view text);

// True when `token` has the shape of a raw API token: the prefix, then exactly
// kApiTokenEncodedChars base64url characters. Says nothing about whether it is valid.
bool HasApiTokenShape(std::string_view token);

// True when `id` is "tok_" followed by 16 lowercase hex digits.
bool IsApiTokenId(std::string_view id);

// True when the token has an expiry and `now` is at or past it.
bool IsApiTokenExpired(const ApiTokenInfo& info, absl::Time now);

// True when a successful authentication at `now` should record the use: never used, or last
// used at least kApiTokenLastUsedResolution before `now`.
bool ShouldRecordApiTokenUse(const ApiTokenInfo& info, absl::Time now);

}  // namespace pulse::core
