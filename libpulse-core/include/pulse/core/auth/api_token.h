// Token creation checks over the scope vocabulary (policy/scope.h); the token values themselves
// are model/api_token.h.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/core/model/api_token.h"

namespace pulse::core {

// Checks a create request and returns its scopes in canonical form. InvalidArgument naming
// the first problem: an empty, over-long, ill-formed UTF-8 or control-character name; a kind
// outside the enum; no scopes or an unknown scope (ScopeSet::Parse); expires_at not after
// created_at; a time outside the range of 64-bit nanoseconds since the Unix epoch (years
// 1678..2261).
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ValidateNewApiToken(
    const NewApiToken& request);

}  // namespace pulse::core
