// TokenStore: durable API tokens (auth/api_token.h). A token is created once and its raw value
// is returned only then; afterwards a store can recognise it (Authenticate) but never show it:
// it keeps a keyed hash, the name, the canonical scopes and the created / last-used / expiry
// times. Lookups must not leak through timing how much of a presented token matched.
// Thread-safety: implementations must be safe to call concurrently; every method is atomic.
// Codes: InvalidArgument (Create: ValidateNewApiToken fails; nothing stored),
// Unauthenticated (Authenticate: malformed, unknown, revoked or expired token — one code for
// all, so a caller cannot probe which), NotFound (Revoke: unknown id), Unavailable (the store
// cannot be read or written; an authentication that cannot be checked fails closed).
// Real implementation: adapters/storage (SqliteTokenStore); tests use
// pulse::testing::InMemoryTokenStore. Every implementation must pass
// tests/contracts/token_store_contract.h.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/api_token.h"

namespace pulse::core {

class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // Validates `request` (ValidateNewApiToken), stores a new token with a fresh id and returns
  // it with its raw value. The info carries the canonical scopes and no last use.
  [[nodiscard]] virtual absl::StatusOr<IssuedApiToken> Create(const NewApiToken& request) = 0;

  // The token presented as `token`, if it is known, not revoked and not expired at `now`.
  // Records the use (last_used_at = now) when ShouldRecordApiTokenUse says so and returns the
  // info as stored afterwards.
  [[nodiscard]] virtual absl::StatusOr<ApiTokenInfo> Authenticate(std::string_view token,
                                                                  absl::Time now) = 0;

  // Every live (not revoked) token, expired ones included, oldest created first (ties by id).
  [[nodiscard]] virtual absl::StatusOr<std::vector<ApiTokenInfo>> List() = 0;

  // Revokes the token with this id: it no longer authenticates or lists. NotFound when there
  // is no such token.
  [[nodiscard]] virtual absl::Status Revoke(std::string_view id) = 0;
};

}  // namespace pulse::core
