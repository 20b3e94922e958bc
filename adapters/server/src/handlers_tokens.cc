// API tokens for the web console: list, create (the secret is in this one reply), revoke.
// Humans only: an agent or service token, or a human token sent through an agent surface, is
// refused, so a model can never mint itself a wider credential. A caller manages only tokens
// its own scopes cover: it cannot mint or revoke a token wider than itself.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"
#include "token_admin.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
using core::AgentErrorCode;
using http::HttpReply;
using http::HttpRequest;

std::optional<HttpReply> RefuseNonHuman(const HttpRequest& request) {
  if (ActorFor(request).kind == core::ActorKind::kHuman && request.principal.authenticated) {
    return std::nullopt;
  }
  return HttpReply::Error(AgentErrorCode::kTokenManagementForbidden,
                          "only a human token may manage API tokens; this caller acts as " +
                              std::string(core::ToString(ActorFor(request).kind)));
}

// True when every scope of `target` is one `caller` holds (a wildcard only under a wildcard).
bool Covers(const core::ScopeSet& caller, const core::ScopeSet& target) {
  if (target.HasWildcard()) {
    return caller.HasWildcard();
  }
  for (core::Scope scope : core::kAllScopes) {
    if (target.Has(scope) && !caller.Has(scope)) {
      return false;
    }
  }
  return true;
}

HttpReply List(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *refused;
  }
  absl::StatusOr<std::vector<core::ApiTokenInfo>> tokens = ctx.tokens.List();
  if (!tokens.ok()) {
    return Unavailable("the token store", tokens.status());
  }
  const absl::Time now = ctx.clock.Now();
  // The host each agent token is bound to (the registry's bindings; none: not bound yet).
  std::map<std::string, std::string, std::less<>> hosts;
  if (absl::StatusOr<std::vector<core::HostAgentRecord>> bindings =
          ctx.agents->store().ListBindings();
      bindings.ok()) {
    for (core::HostAgentRecord& b : *bindings) {
      hosts.emplace(std::move(b.token_id), std::move(b.host));
    }
  }
  std::vector<std::string> records;
  for (const core::ApiTokenInfo& info : *tokens) {
    const auto host = hosts.find(info.id);
    records.push_back(TokenRecordJson(
        info, now, host == hosts.end() ? std::nullopt : std::optional<std::string>(host->second)));
  }
  return HttpReply::Json(absl::StrCat("{\"tokens\":[", absl::StrJoin(records, ","), "]}"));
}

HttpReply Create(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *refused;
  }
  // The body passed the capability's closed schema (types, required members, kind enum).
  absl::StatusOr<rapidjson::Document> body = core::ParseJson(request.body);
  if (!body.ok() || !body->IsObject()) {
    return HttpReply::Error(AgentErrorCode::kInvalidTokenRequest, "the body must be an object");
  }
  TokenCreateArgs args;
  args.name = std::string(core::GetString(*body, "name").value_or(""));
  const rapidjson::Value& root = *body;  // const: one iterator type on both sides of !=
  if (auto it = root.FindMember("scopes"); it != root.MemberEnd() && it->value.IsArray()) {
    for (const auto& scope : it->value.GetArray()) {
      if (scope.IsString()) {
        args.scopes.emplace_back(core::StringViewOf(scope));
      }
    }
  }
  if (std::optional<std::string_view> kind = core::GetString(*body, "kind")) {
    args.kind = std::string(*kind);
  }
  if (std::optional<std::string_view> expires = core::GetString(*body, "expiresIn")) {
    args.expires = std::string(*expires);
  }
  absl::StatusOr<core::NewApiToken> new_token =
      MakeNewApiToken(args, ctx.clock.Now(), "kind", "expiresIn");
  if (!new_token.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidTokenRequest,
                            std::string(new_token.status().message()));
  }
  absl::StatusOr<core::ScopeSet> scopes = core::ScopeSet::Parse(new_token->scopes);
  if (!scopes.ok() || !Covers(request.principal.scopes, *scopes)) {
    return HttpReply::Error(AgentErrorCode::kTokenManagementForbidden,
                            "a token may not be given scopes its creator does not hold");
  }
  const std::optional<std::string_view> host = core::GetString(*body, "host");
  if (host.has_value()) {
    if (absl::Status s = CheckAgentHostRequest(*new_token, *host, "host"); !s.ok()) {
      return HttpReply::Error(AgentErrorCode::kInvalidTokenRequest, std::string(s.message()));
    }
  }
  absl::StatusOr<core::IssuedApiToken> issued =
      host.has_value() ? CreateHostBoundToken(ctx.tokens, ctx.agents->store(), *new_token, *host,
                                              ctx.clock.Now())
                       : ctx.tokens.Create(*new_token);
  if (absl::IsAlreadyExists(issued.status())) {
    // The host is held by another live agent token (revoke it first); nothing was created.
    return HttpReply::Error(AgentErrorCode::kInvalidTokenRequest,
                            std::string(issued.status().message()));
  }
  if (absl::IsInvalidArgument(issued.status())) {
    return HttpReply::Error(AgentErrorCode::kInvalidTokenRequest,
                            std::string(issued.status().message()));
  }
  if (!issued.ok()) {
    return Unavailable("the token store", issued.status());
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("token", issued->token);
  w.Key("record");
  w.RawValue(TokenRecordJson(
      issued->info, ctx.clock.Now(),
      host.has_value() ? std::optional<std::string>(std::string(*host)) : std::nullopt));
  w.EndObject();
  return HttpReply::Json(w.Take(), 201);
}

HttpReply Revoke(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonHuman(request)) {
    return *refused;
  }
  const std::string& id = PathParam(request, "tokenId");
  absl::StatusOr<std::vector<core::ApiTokenInfo>> tokens = ctx.tokens.List();
  if (!tokens.ok()) {
    return Unavailable("the token store", tokens.status());
  }
  const core::ApiTokenInfo* target = nullptr;
  for (const core::ApiTokenInfo& info : *tokens) {
    if (info.id == id) {
      target = &info;
    }
  }
  if (target == nullptr) {
    return HttpReply::Error(AgentErrorCode::kTokenNotFound,
                            "no live API token has this id (revoke takes the id, tok_...)");
  }
  absl::StatusOr<core::ScopeSet> scopes = core::ScopeSet::Parse(target->scopes);
  if (!scopes.ok() || !Covers(request.principal.scopes, *scopes)) {
    return HttpReply::Error(AgentErrorCode::kTokenManagementForbidden,
                            "a token whose scopes exceed the caller's cannot be revoked by it");
  }
  const absl::Status revoked = ctx.tokens.Revoke(id);
  if (absl::IsNotFound(revoked)) {
    return HttpReply::Error(AgentErrorCode::kTokenNotFound, "the token was revoked meanwhile");
  }
  if (!revoked.ok()) {
    return Unavailable("the token store", revoked);
  }
  LogLine(absl::StrCat("API token ", id, " revoked by ", request.principal.token_id));
  return HttpReply::NoContent();
}

}  // namespace

absl::Status BindTokenRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(router.Handle(
      "list_api_tokens", [&ctx](const HttpRequest& request) { return List(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "create_api_token", [&ctx](const HttpRequest& request) { return Create(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "revoke_api_token", [&ctx](const HttpRequest& request) { return Revoke(ctx, request); }));
  return absl::OkStatus();
}

}  // namespace pulse::server
