#include "pulse/core/model/api_token.h"

#include <array>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

constexpr std::array<WireName<ApiTokenKind>, 3> kKinds = {{
    {ApiTokenKind::kHuman, "human"},
    {ApiTokenKind::kAgent, "agent"},
    {ApiTokenKind::kService, "service"},
}};

}  // namespace

std::string_view ToString(ApiTokenKind kind) { return WireNameOf(kKinds, kind, "human"); }
std::optional<ApiTokenKind> ParseApiTokenKind(std::string_view text) {
  return WireValueOf(kKinds, text);
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
