#include "token_admin.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::server {

absl::StatusOr<core::NewApiToken> MakeNewApiToken(const TokenCreateArgs& args, absl::Time now,
                                                  std::string_view what_kind,
                                                  std::string_view what_expires) {
  core::NewApiToken request;
  request.name = args.name;
  request.scopes = args.scopes;
  request.created_at = now;
  if (args.kind.has_value()) {
    const std::optional<core::ApiTokenKind> kind = core::ParseApiTokenKind(*args.kind);
    if (!kind.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(what_kind), " must be human, agent or service"));
    }
    request.kind = *kind;
  }
  if (args.expires.has_value()) {
    absl::StatusOr<absl::Duration> lifetime = core::ParseApiTokenLifetime(*args.expires);
    if (!lifetime.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(what_expires), ": ", lifetime.status().message()));
    }
    request.expires_at = now + *lifetime;
  }
  absl::StatusOr<std::vector<std::string>> canonical = core::ValidateNewApiToken(request);
  if (!canonical.ok()) {
    return canonical.status();
  }
  return request;
}

absl::StatusOr<core::ApiTokenInfo> FindToken(const std::vector<core::ApiTokenInfo>& tokens,
                                             std::string_view name_or_id) {
  for (const core::ApiTokenInfo& info : tokens) {
    if (info.id == name_or_id) {
      return info;
    }
  }
  std::vector<std::string> ids;
  const core::ApiTokenInfo* found = nullptr;
  for (const core::ApiTokenInfo& info : tokens) {
    if (info.name == name_or_id) {
      ids.push_back(info.id);
      found = &info;
    }
  }
  if (ids.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(ids.size(), " tokens are named \"", std::string(name_or_id), "\" (",
                     absl::StrJoin(ids, ", "), "); name one by its id"));
  }
  if (found == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no token is named or has the id \"", std::string(name_or_id), "\""));
  }
  return *found;
}

std::string TokenRecordJson(const core::ApiTokenInfo& info, absl::Time now) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("id", info.id);
  w.Member("name", info.name);
  w.Member("kind", core::ToString(info.kind));
  w.Key("scopes");
  w.StringArray(info.scopes);
  w.TimeMember("createdAt", info.created_at);
  if (info.last_used_at.has_value()) {
    w.TimeMember("lastUsedAt", *info.last_used_at);
  }
  if (info.expires_at.has_value()) {
    w.TimeMember("expiresAt", *info.expires_at);
  }
  w.Member("expired", core::IsApiTokenExpired(info, now));
  w.EndObject();
  return w.Take();
}

}  // namespace pulse::server
