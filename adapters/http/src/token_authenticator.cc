#include "pulse/adapters/http/token_authenticator.h"

#include <sodium/utils.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::http {
namespace {

constexpr std::string_view kBearer = "bearer";

std::string_view Trim(std::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(core::ToAbsl(text));
  return core::ToStd(t);
}

// The token of "Bearer <token>" (scheme case-insensitive), or nullopt.
std::optional<std::string_view> BearerToken(std::string_view value) {
  value = Trim(value);
  if (value.size() <= kBearer.size() ||
      !absl::EqualsIgnoreCase(absl::string_view(value.data(), kBearer.size()),
                              core::ToAbsl(kBearer)) ||
      (value[kBearer.size()] != ' ' && value[kBearer.size()] != '\t')) {
    return std::nullopt;
  }
  const std::string_view token = Trim(value.substr(kBearer.size()));
  if (token.empty() || token.find_first_of(" \t") != std::string_view::npos) {
    return std::nullopt;
  }
  return token;
}

bool SameToken(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

absl::StatusOr<Principal> TokenAuthenticator::Authenticate(
    const std::vector<std::string>& api_tokens,
    const std::vector<std::string>& authorizations) const {
  if (api_tokens.size() > 1 || authorizations.size() > 1) {
    return absl::UnauthenticatedError("a credential header is repeated");
  }
  std::optional<std::string_view> from_header;
  if (!api_tokens.empty()) {
    from_header = Trim(api_tokens.front());
    if (from_header->empty()) {
      return absl::UnauthenticatedError("the API token header is empty");
    }
  }
  std::optional<std::string_view> from_bearer;
  if (!authorizations.empty()) {
    from_bearer = BearerToken(authorizations.front());
    if (!from_bearer.has_value()) {
      return absl::UnauthenticatedError("Authorization must be \"Bearer <token>\"");
    }
  }
  if (from_header.has_value() && from_bearer.has_value() &&
      !SameToken(*from_header, *from_bearer)) {
    return absl::UnauthenticatedError("the two credential headers disagree");
  }
  const std::optional<std::string_view> token = from_header.has_value() ? from_header : from_bearer;
  if (!token.has_value()) {
    return absl::UnauthenticatedError("no API token was presented");
  }
  absl::StatusOr<core::ApiTokenInfo> info = store_.Authenticate(*token, clock_.Now());
  if (!info.ok()) {
    if (info.status().code() == absl::StatusCode::kUnavailable) {
      return absl::UnavailableError("the token store is unavailable");
    }
    return absl::UnauthenticatedError("the API token is not valid");
  }
  absl::StatusOr<core::ScopeSet> scopes = core::ScopeSet::Parse(info->scopes);
  if (!scopes.ok()) {
    return absl::UnauthenticatedError("the API token carries scopes this server does not know");
  }
  Principal principal;
  principal.authenticated = true;
  principal.token_id = info->id;
  principal.token_name = info->name;
  principal.kind = info->kind;
  principal.scopes = *scopes;
  return principal;
}

core::AgentError AuthenticationError(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kUnavailable) {
    return core::MakeAgentError(core::AgentErrorCode::kServiceUnavailable,
                                "authentication is unavailable; retry later");
  }
  return core::MakeAgentError(core::AgentErrorCode::kUnauthorized,
                              "a valid API token is required (X-API-Token or Authorization: "
                              "Bearer)");
}

std::optional<core::AgentError> RequireScope(const Principal& principal, core::Scope scope) {
  if (principal.scopes.Has(scope)) {
    return std::nullopt;
  }
  return core::MissingScopeError(core::ToString(scope));
}

}  // namespace pulse::adapters::http
