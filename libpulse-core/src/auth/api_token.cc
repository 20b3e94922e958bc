#include "pulse/core/auth/api_token.h"

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/policy/scope.h"

namespace pulse::core {
namespace {

absl::Status CheckName(std::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("token name is empty");
  }
  if (name.size() > kMaxApiTokenNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("token name is longer than ", kMaxApiTokenNameBytes, " bytes"));
  }
  if (!IsValidUtf8(name)) {
    return absl::InvalidArgumentError("token name is not valid UTF-8");
  }
  // In valid UTF-8 every byte below 0x80 is a whole character, so a byte scan finds controls.
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F) {
      return absl::InvalidArgumentError("token name contains a control character");
    }
  }
  return absl::OkStatus();
}

bool InNanosecondRange(absl::Time t) {
  const absl::Time min = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::min());
  const absl::Time max = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::max());
  return t >= min && t <= max;
}

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

}  // namespace

std::string_view ToString(ApiTokenKind kind) {
  switch (kind) {
    case ApiTokenKind::kHuman:
      return "human";
    case ApiTokenKind::kAgent:
      return "agent";
    case ApiTokenKind::kService:
      return "service";
  }
  return "human";
}

std::optional<ApiTokenKind> ParseApiTokenKind(std::string_view text) {
  for (ApiTokenKind kind : {ApiTokenKind::kHuman, ApiTokenKind::kAgent, ApiTokenKind::kService}) {
    if (text == ToString(kind)) {
      return kind;
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<std::string>> ValidateNewApiToken(const NewApiToken& request) {
  if (absl::Status s = CheckName(request.name); !s.ok()) {
    return s;
  }
  if (const int k = static_cast<int>(request.kind);
      k < static_cast<int>(ApiTokenKind::kHuman) || k > static_cast<int>(ApiTokenKind::kService)) {
    return absl::InvalidArgumentError("token kind must be human, agent or service");
  }
  if (request.scopes.empty()) {
    return absl::InvalidArgumentError("a token needs at least one scope");
  }
  absl::StatusOr<ScopeSet> scopes = ScopeSet::Parse(request.scopes);
  if (!scopes.ok()) {
    return scopes.status();
  }
  if (!InNanosecondRange(request.created_at)) {
    return absl::InvalidArgumentError("token created_at is out of range");
  }
  if (request.expires_at.has_value()) {
    if (!InNanosecondRange(*request.expires_at)) {
      return absl::InvalidArgumentError("token expires_at is out of range");
    }
    if (*request.expires_at <= request.created_at) {
      return absl::InvalidArgumentError("token expires_at must be after created_at");
    }
  }
  return scopes->ToStrings();
}

absl::StatusOr<absl::Duration> ParseApiTokenLifetime(std::string_view text) {
  const auto bad = [] {
    return absl::InvalidArgumentError(
        "a token lifetime is a whole number of hours or days, e.g. 12h or 30d, at most 3650d");
  };
  if (text.size() < 2 || text.size() > 12) {
    return bad();
  }
  const char unit = text.back();
  if (unit != 'h' && unit != 'd') {
    return bad();
  }
  std::int64_t count = 0;
  for (char c : text.substr(0, text.size() - 1)) {
    if (c < '0' || c > '9') {
      return bad();
    }
    count = count * 10 + (c - '0');  // at most 11 digits: no overflow
  }
  const absl::Duration lifetime = unit == 'h' ? absl::Hours(count) : absl::Hours(count * 24);
  if (count <= 0 || lifetime > kMaxApiTokenLifetime) {
    return bad();
  }
  return lifetime;
}

bool HasApiTokenShape(std::string_view token) {
  if (token.size() != kApiTokenLength ||
      token.substr(0, kApiTokenPrefix.size()) != kApiTokenPrefix) {
    return false;
  }
  for (char c : token.substr(kApiTokenPrefix.size())) {
    if (!IsBase64UrlChar(c)) {
      return false;
    }
  }
  return true;
}

bool IsApiTokenId(std::string_view id) {
  if (id.size() != kApiTokenIdPrefix.size() + 16 ||
      id.substr(0, kApiTokenIdPrefix.size()) != kApiTokenIdPrefix) {
    return false;
  }
  for (char c : id.substr(kApiTokenIdPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

bool IsApiTokenExpired(const ApiTokenInfo& info, absl::Time now) {
  return info.expires_at.has_value() && now >= *info.expires_at;
}

bool ShouldRecordApiTokenUse(const ApiTokenInfo& info, absl::Time now) {
  return !info.last_used_at.has_value() || now - *info.last_used_at >= kApiTokenLastUsedResolution;
}

}  // namespace pulse::core
