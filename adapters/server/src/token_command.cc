#include "pulse/adapters/server/token_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/status_macros.h"
#include "token_admin.h"

namespace pulse::server {
namespace {

void Print(std::FILE* stream, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stream);
}

int Fail(std::string_view command, const absl::Status& status) {
  Print(stderr,
        absl::StrCat("pulse-server token ", std::string(command), ": ", status.message(), "\n"));
  return status.code() == absl::StatusCode::kInvalidArgument ||
                 status.code() == absl::StatusCode::kFailedPrecondition
             ? 2
             : 1;
}

int Flush() { return std::fflush(stdout) == 0 ? 0 : 1; }

// The storage of an existing data dir: list and revoke never create one.
absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> OpenExisting(
    const std::string& data_dir) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(data_dir) / "pulse.db", ec)) {
    return absl::NotFoundError(
        absl::StrCat("no token store in ", data_dir, " (pulse.db is missing; check --data-dir)"));
  }
  return adapters::storage::OpenSqliteStorage(data_dir);
}

// A table time, to the second (--json carries the exact RFC 3339 time).
std::string Cell(const std::optional<absl::Time>& t) {
  return t.has_value() ? absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *t, absl::UTCTimeZone())
                       : std::string("-");
}

// The host each token is bound to in the host agent registry, by token id.
using HostsByToken = std::map<std::string, std::string, std::less<>>;

std::optional<std::string> HostOf(const HostsByToken& hosts, const std::string& token_id) {
  if (auto it = hosts.find(token_id); it != hosts.end()) {
    return it->second;
  }
  return std::nullopt;
}

std::string Table(const std::vector<core::ApiTokenInfo>& tokens, const HostsByToken& hosts,
                  absl::Time now) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "NAME", "KIND", "HOST", "SCOPES", "CREATED", "LAST USED", "EXPIRES"}};
  for (const core::ApiTokenInfo& info : tokens) {
    std::string expires = Cell(info.expires_at);
    if (core::IsApiTokenExpired(info, now)) {
      expires += " (expired)";
    }
    rows.push_back({info.id, info.name, std::string(core::ToString(info.kind)),
                    HostOf(hosts, info.id).value_or("-"), absl::StrJoin(info.scopes, ","),
                    Cell(info.created_at), Cell(info.last_used_at), expires});
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> CreateApiToken(const TokenCreateOptions& options,
                                           const core::Clock& clock) {
  if (options.scopes.find_first_not_of(" \t") == std::string::npos) {
    return absl::InvalidArgumentError("--scopes: give at least one scope, e.g. monitoring:read");
  }
  TokenCreateArgs args;
  args.name = options.name;
  for (absl::string_view entry : absl::StrSplit(options.scopes, ',')) {
    args.scopes.emplace_back(absl::StripAsciiWhitespace(entry));
  }
  args.kind = options.kind;
  args.expires = options.expires;
  // Checked before the storage is touched, so a typo creates no data dir.
  const absl::Time now = clock.Now();
  PULSE_ASSIGN_OR_RETURN(core::NewApiToken request,
                         MakeNewApiToken(args, now, "--kind", "--expires"));
  if (options.host.has_value()) {
    PULSE_RETURN_IF_ERROR(CheckAgentHostRequest(request, *options.host, "--host"));
  }
  // A token is only useful in the store pulse-server reads, so say which one it went into, and
  // say it loudly when that store is new (a typo in --data-dir, or a relative path run from
  // another directory): the server running elsewhere would answer 401 to it.
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(options.data_dir, ec).lexically_normal();
  if (!ec && !dir.has_filename()) {
    dir = dir.parent_path();  // a trailing slash
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("--data-dir ", options.data_dir, ": ", ec.message()));
  }
  const bool is_new = !std::filesystem::exists(dir / "pulse.db", ec);
  if (is_new && dir.has_parent_path()) {
    // The data dir itself is created by the storage (owner-only); its parents like mkdir -p.
    std::filesystem::create_directories(dir.parent_path(), ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat("cannot create the parent directories of ",
                                                 dir.string(), ": ", ec.message()));
    }
  }
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<adapters::storage::SqliteStorage> storage,
                         adapters::storage::OpenSqliteStorage(dir.string()));
  Print(stderr, is_new ? absl::StrCat("pulse-server token create: warning: ", dir.string(),
                                      " had no token store; created a new data dir there. Only a "
                                      "pulse-server started with --data-dir ",
                                      dir.string(), " accepts this token.\n")
                       : absl::StrCat("pulse-server token create: stored in ", dir.string(),
                                      "/pulse.db\n"));
  for (const std::string& repair : storage->database->mode_repairs()) {
    const std::string line = absl::StrCat("pulse-server token create: ", repair, "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  if (!options.host.has_value()) {
    PULSE_ASSIGN_OR_RETURN(core::IssuedApiToken issued, storage->tokens->Create(request));
    return issued.token;
  }
  PULSE_ASSIGN_OR_RETURN(
      core::IssuedApiToken issued,
      CreateHostBoundToken(*storage->tokens, *storage->host_agents, request, *options.host, now));
  return issued.token;
}

int RunTokenCreate(const TokenCreateOptions& options) {
  adapters::system::SystemClock clock;
  absl::StatusOr<std::string> token = CreateApiToken(options, clock);
  if (!token.ok()) {
    return Fail("create", token.status());
  }
  Print(stdout, *token + "\n");
  return Flush();
}

int RunTokenList(const std::string& data_dir, bool json) {
  adapters::system::SystemClock clock;
  absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> storage =
      OpenExisting(data_dir);
  if (!storage.ok()) {
    return Fail("list", storage.status());
  }
  absl::StatusOr<std::vector<core::ApiTokenInfo>> tokens = (*storage)->tokens->List();
  if (!tokens.ok()) {
    return Fail("list", tokens.status());
  }
  absl::StatusOr<std::vector<core::HostAgentRecord>> agents = (*storage)->host_agents->List();
  if (!agents.ok()) {
    return Fail("list", agents.status());
  }
  HostsByToken hosts;
  for (const core::HostAgentRecord& agent : *agents) {
    hosts.emplace(agent.token_id, agent.host);
  }
  const absl::Time now = clock.Now();
  if (json) {
    std::vector<std::string> records;
    for (const core::ApiTokenInfo& info : *tokens) {
      records.push_back(TokenRecordJson(info, now, HostOf(hosts, info.id)));
    }
    Print(stdout, absl::StrCat("{\"tokens\":[", absl::StrJoin(records, ","), "]}\n"));
  } else {
    Print(stdout, Table(*tokens, hosts, now));
  }
  return Flush();
}

int RunTokenRevoke(const std::string& data_dir, std::string_view name_or_id) {
  absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> storage =
      OpenExisting(data_dir);
  if (!storage.ok()) {
    return Fail("revoke", storage.status());
  }
  absl::StatusOr<std::vector<core::ApiTokenInfo>> tokens = (*storage)->tokens->List();
  if (!tokens.ok()) {
    return Fail("revoke", tokens.status());
  }
  absl::StatusOr<core::ApiTokenInfo> target = FindToken(*tokens, name_or_id);
  if (!target.ok()) {
    return Fail("revoke", target.status());
  }
  if (absl::Status revoked = (*storage)->tokens->Revoke(target->id); !revoked.ok()) {
    return Fail("revoke", revoked);
  }
  Print(stdout, absl::StrCat("revoked ", target->id, " (", target->name, ")\n"));
  return Flush();
}

}  // namespace pulse::server
