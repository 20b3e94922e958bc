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

}  // namespace

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

}  // namespace pulse::core
