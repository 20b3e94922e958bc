#include "token_admin.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/adapters/hostagent/wire.h"
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

absl::Status CheckAgentHostRequest(const core::NewApiToken& request, std::string_view host,
                                   std::string_view what_host) {
  if (request.kind != core::ApiTokenKind::kAgent) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what_host),
                     " binds a host agent's token to its host; it needs the token kind agent, not ",
                     std::string(core::ToString(request.kind))));
  }
  if (!adapters::hostagent::IsAgentHostName(host)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what_host), " \"", std::string(host),
                     "\" is not a host name: 1..64 bytes of [A-Za-z0-9._-], starting with a "
                     "letter or digit"));
  }
  return absl::OkStatus();
}

namespace {

// The holder `host` is bound to when that token is no longer live (revoked, so missing from
// `live`, or expired), nullopt when the host is unbound; AlreadyExists when a live token holds it.
absl::StatusOr<std::optional<std::string>> HostBindingToReplace(
    core::HostAgentStore& agents, const std::vector<core::ApiTokenInfo>& live,
    std::string_view host, absl::Time now) {
  absl::StatusOr<core::HostAgentRecord> bound = agents.Get(host);
  if (absl::IsNotFound(bound.status())) {
    return std::nullopt;
  }
  if (!bound.ok()) {
    return bound.status();
  }
  for (const core::ApiTokenInfo& info : live) {
    if (info.id == bound->token_id && !core::IsApiTokenExpired(info, now)) {
      return absl::AlreadyExistsError(
          absl::StrCat("host ", std::string(host), " is already bound to the live token ", info.id,
                       " (", info.name, "); revoke that token first to give the host a new one"));
    }
  }
  return bound->token_id;
}

}  // namespace

absl::StatusOr<core::IssuedApiToken> CreateHostBoundToken(core::TokenStore& tokens,
                                                          core::HostAgentStore& agents,
                                                          const core::NewApiToken& request,
                                                          std::string_view host, absl::Time now) {
  absl::StatusOr<std::vector<core::ApiTokenInfo>> live = tokens.List();
  if (!live.ok()) {
    return live.status();
  }
  absl::StatusOr<std::optional<std::string>> replacing =
      HostBindingToReplace(agents, *live, host, now);
  if (!replacing.ok()) {
    return replacing.status();
  }
  absl::StatusOr<core::IssuedApiToken> issued = tokens.Create(request);
  if (!issued.ok()) {
    return issued.status();
  }
  std::optional<std::string_view> replacing_view;
  if (replacing->has_value()) {
    replacing_view = **replacing;
  }
  absl::StatusOr<core::HostAgentRecord> bound =
      agents.Bind(host, issued->info.id, now, replacing_view);
  if (bound.ok()) {
    return issued;
  }
  // Another caller bound the host in between: the new token must not outlive the refusal.
  if (absl::Status revoked = tokens.Revoke(issued->info.id); !revoked.ok()) {
    return absl::InternalError(absl::StrCat(
        "the host could not be bound (", bound.status().message(), ") and the new token ",
        issued->info.id, " could not be revoked: ", revoked.message()));
  }
  if (absl::IsFailedPrecondition(bound.status())) {
    return absl::AlreadyExistsError(bound.status().message());
  }
  return bound.status();
}

std::string TokenRecordJson(const core::ApiTokenInfo& info, absl::Time now,
                            const std::optional<std::string>& host) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("id", info.id);
  w.Member("name", info.name);
  w.Member("kind", core::ToString(info.kind));
  w.Key("scopes");
  w.StringArray(info.scopes);
  if (host.has_value()) {
    w.Member("host", *host);
  }
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
