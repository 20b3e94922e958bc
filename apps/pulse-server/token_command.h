// `pulse-server token create`: mints one API token in a data dir's token store (the SQLite one
// the server authenticates against) and returns the raw token, which exists nowhere else
// afterwards (the store keeps only a keyed hash). Thread-compatible; opens the storage for the
// duration of the call.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/ports/clock.h"

namespace pulse::server {

// Creates a token called `name` with the comma-separated `scopes` (wire names or "*", e.g.
// "monitoring:read,ai:chat") in `data_dir`, creating the data dir and its files when missing.
// InvalidArgument for an empty name, no scopes, an empty entry or an unknown scope (the
// message names it); the storage's errors otherwise (Unavailable when the data dir cannot be
// created or the database is locked).
[[nodiscard]] absl::StatusOr<std::string> CreateApiToken(const std::string& data_dir,
                                                         std::string_view name,
                                                         std::string_view scopes,
                                                         const core::Clock& clock);

// The subcommand: prints the new token and a newline on stdout and nothing else; on failure
// prints the reason on stderr. Returns the exit code: 0, 2 for a refused argument
// (InvalidArgument), 1 for any other failure.
int RunTokenCreate(const std::string& data_dir, std::string_view name, std::string_view scopes);

}  // namespace pulse::server
