// What `pulse-server token ...` and the /api/security/tokens routes share: turning an
// operator's create arguments into a core::NewApiToken, finding a token by name or id, and
// the JSON record of a token (never its secret, which no store keeps). Pure functions over
// plain values; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/ports/host_agent_store.h"
#include "pulse/core/ports/token_store.h"

namespace pulse::server {

// A create request as an operator writes it. `kind` and `expires` are optional ("" / nullopt:
// human, never expires).
struct TokenCreateArgs {
  std::string name;
  std::vector<std::string> scopes;  // wire names or "*"
  std::optional<std::string> kind;
  std::optional<std::string> expires;  // a lifetime, e.g. "30d" (core::ParseApiTokenLifetime)
};

// The request to store, created at `now`. InvalidArgument naming the argument (`what_kind` and
// `what_expires` are how the caller spells them: "--kind" or "kind") for an unknown kind, a bad
// lifetime, or anything ValidateNewApiToken refuses.
[[nodiscard]] absl::StatusOr<core::NewApiToken> MakeNewApiToken(const TokenCreateArgs& args,
                                                                absl::Time now,
                                                                std::string_view what_kind,
                                                                std::string_view what_expires);

// The one live token `name_or_id` names: the token with that id, else the one token with that
// name. NotFound when none; FailedPrecondition (listing the ids) when the name is shared.
[[nodiscard]] absl::StatusOr<core::ApiTokenInfo> FindToken(
    const std::vector<core::ApiTokenInfo>& tokens, std::string_view name_or_id);

// Checks the host an agent token is to be bound to at creation (`--host`, the API's `host`)
// before anything is stored: InvalidArgument naming `what_host` when `request` is not of kind
// agent (only an agent reports as a host) or `host` is not a protocol host name
// (hostagent::IsAgentHostName).
[[nodiscard]] absl::Status CheckAgentHostRequest(const core::NewApiToken& request,
                                                 std::string_view host, std::string_view what_host);

// Creates the agent token `request` (CheckAgentHostRequest passed) bound to `host` at `now`, for
// `pulse-server token create --host` and the API's `host`. A host another live token holds is
// refused before the token exists (AlreadyExists naming the host and the holder's id: revoke
// that token first); a revoked or expired holder is replaced. When another caller binds the
// host between the check and the binding, the new token is revoked again and the answer is
// AlreadyExists too, so a refusal never leaves an unbound agent token behind. Errors of the
// stores otherwise.
[[nodiscard]] absl::StatusOr<core::IssuedApiToken> CreateHostBoundToken(
    core::TokenStore& tokens, core::HostAgentStore& agents, const core::NewApiToken& request,
    std::string_view host, absl::Time now);

// {"id","name","kind","scopes":[...],"host"?,"createdAt","lastUsedAt"?,"expiresAt"?,"expired"}:
// times RFC 3339, absent members for a token never used or without expiry; expired at `now`;
// `host` is the host an agent token is bound to, absent when it is bound to none.
std::string TokenRecordJson(const core::ApiTokenInfo& info, absl::Time now,
                            const std::optional<std::string>& host = std::nullopt);

}  // namespace pulse::server
