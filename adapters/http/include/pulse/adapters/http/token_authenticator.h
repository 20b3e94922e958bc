// TokenAuthenticator: turns the credential headers of a request into a Principal through the
// TokenStore port. A token is accepted from X-API-Token or from "Authorization: Bearer
// <token>"; presenting both is accepted only when they carry the same token. The store does
// the comparison that matters (a keyed-hash lookup confirmed in constant time, so timing does
// not reveal how much of a guess matched); this class never logs, stores or echoes a token,
// and its errors are fixed texts. Thread-safe when the store is (the port demands it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/adapters/http/http_types.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/token_store.h"

namespace pulse::adapters::http {

// The credential headers, as the surface table declares them.
using core::kApiTokenHeader;
using core::kAuthorizationHeader;

class TokenAuthenticator {
 public:
  // Borrows both; they must outlive the authenticator.
  TokenAuthenticator(core::TokenStore& store, const core::Clock& clock)
      : store_(store), clock_(clock) {}

  // `api_tokens` holds every X-API-Token value of the request, `authorizations` every
  // Authorization value. Unauthenticated when no credential is presented, a header repeats,
  // Authorization is not "Bearer <token>", the two headers disagree, the store refuses the
  // token (unknown, revoked, expired, malformed), or its scopes do not parse. Unavailable
  // when the store cannot answer (fail closed).
  [[nodiscard]] absl::StatusOr<Principal> Authenticate(
      const std::vector<std::string>& api_tokens,
      const std::vector<std::string>& authorizations) const;

 private:
  core::TokenStore& store_;
  const core::Clock& clock_;
};

// The envelope for a failed authentication: unauthorized (401), or service_unavailable (503)
// when the store was unavailable. The message is fixed text.
core::AgentError AuthenticationError(const absl::Status& status);

// nullopt when the principal holds `scope` (or `*`); else missing_scope with requiredScope.
std::optional<core::AgentError> RequireScope(const Principal& principal, core::Scope scope);

}  // namespace pulse::adapters::http
