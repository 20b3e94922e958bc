#include "token_command.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/status_macros.h"

namespace pulse::server {

absl::StatusOr<std::string> CreateApiToken(const std::string& data_dir, std::string_view name,
                                           std::string_view scopes, const core::Clock& clock) {
  core::NewApiToken request;
  request.name = std::string(name);
  request.created_at = clock.Now();
  for (absl::string_view entry :
       absl::StrSplit(absl::string_view(scopes.data(), scopes.size()), ',')) {
    request.scopes.emplace_back(absl::StripAsciiWhitespace(entry));
  }
  if (scopes.find_first_not_of(" \t") == std::string_view::npos) {
    return absl::InvalidArgumentError("--scopes: give at least one scope, e.g. monitoring:read");
  }
  // Checked before the storage is touched, so a typo creates no data dir.
  absl::StatusOr<std::vector<std::string>> canonical = core::ValidateNewApiToken(request);
  if (!canonical.ok()) {
    return canonical.status();
  }
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<adapters::storage::SqliteStorage> storage,
                         adapters::storage::OpenSqliteStorage(data_dir));
  for (const std::string& repair : storage->database->mode_repairs()) {
    const std::string line = absl::StrCat("pulse-server token create: ", repair, "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  PULSE_ASSIGN_OR_RETURN(core::IssuedApiToken issued, storage->tokens->Create(request));
  return issued.token;
}

int RunTokenCreate(const std::string& data_dir, std::string_view name, std::string_view scopes) {
  adapters::system::SystemClock clock;
  absl::StatusOr<std::string> token = CreateApiToken(data_dir, name, scopes, clock);
  if (!token.ok()) {
    const std::string line =
        absl::StrCat("pulse-server token create: ", token.status().message(), "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
    return token.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  const std::string line = *token + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace pulse::server
