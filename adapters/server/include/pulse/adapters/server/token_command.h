// `pulse-server token create|list|revoke`: manage the API tokens of a data dir's token store
// (the SQLite one the server authenticates against, so a revoke takes effect on the server's
// next request even while it runs). A raw token is printed once, by create; the store keeps
// only a keyed hash, and list never shows one. Thread-compatible; each call opens the storage
// for its duration.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/ports/clock.h"

namespace pulse::server {

struct TokenCreateOptions {
  std::string data_dir;
  std::string name;
  std::string scopes;  // comma-separated wire names or "*", e.g. "monitoring:read,ai:chat"
  std::optional<std::string> kind;     // human (default), agent, service
  std::optional<std::string> expires;  // e.g. 30d, 12h; absent: never
  std::optional<std::string> host;     // kind agent only: the host the token is bound to
};

// Creates the token in `options.data_dir` (made absolute), creating the data dir, its parents
// and its files when missing, and returns the raw token. On stderr it names the data dir used,
// with a warning when it had no token store yet (a server on another data dir would refuse
// the token). InvalidArgument for an empty name, no scopes, an empty entry, an
// unknown scope, kind or lifetime (the message names it), checked before the storage is
// touched; the storage's errors otherwise (Unavailable when the data dir cannot be created or
// the database is locked). With `host` (kind agent only; InvalidArgument for another kind or a
// name that is not a host name) the new token is bound to that host in the host agent
// registry; AlreadyExists, and no token created, when a live token already holds the host (a
// revoked or expired holder is replaced).
[[nodiscard]] absl::StatusOr<std::string> CreateApiToken(const TokenCreateOptions& options,
                                                         const core::Clock& clock);

// The subcommands. Each prints its result on stdout (create: the token and a newline, nothing
// else; list: a table, or with `json` one {"tokens":[...]} object; revoke: one line naming
// the revoked token) and a failure's reason on stderr. Exit codes: 0; 2 for a refused
// argument (a bad value, a name shared by several tokens); 1 for any other failure (no such
// token, no token store in the data dir, a host already bound to a live token, storage
// errors). list shows the host each agent token is bound to (HOST; "host" in the JSON).
int RunTokenCreate(const TokenCreateOptions& options);
int RunTokenList(const std::string& data_dir, bool json);
int RunTokenRevoke(const std::string& data_dir, std::string_view name_or_id);

}  // namespace pulse::server
