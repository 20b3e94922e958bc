#include "pulse/adapters/http/console_sessions.h"

#include <sodium/crypto_generichash.h>
#include <sodium/randombytes.h>
#include <sodium/utils.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::http {
namespace {

using core::AgentErrorCode;

constexpr std::size_t kRandomBytes = 32;
constexpr std::size_t kMaxCookieValueBytes = 128;

// 256 random bits as URL-safe base64 without padding (43 characters).
std::string RandomToken() {
  std::array<unsigned char, kRandomBytes> bytes{};
  randombytes_buf(bytes.data(), bytes.size());
  std::array<char,
             sodium_base64_ENCODED_LEN(kRandomBytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING)>
      text{};
  sodium_bin2base64(text.data(), text.size(), bytes.data(), bytes.size(),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(bytes.data(), bytes.size());
  return std::string(text.data());
}

std::string KeyedHash(std::string_view key, std::string_view value) {
  std::array<unsigned char, crypto_generichash_BYTES> out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(value.data()),
                     value.size(), reinterpret_cast<const unsigned char*>(key.data()), key.size());
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

bool IsBase64UrlChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

bool EqualSecret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

// "http://host:port" -> "host:port" when the scheme is http or https and nothing follows the
// authority; nullopt otherwise ("null", another scheme, a path).
std::optional<std::string_view> OriginAuthority(std::string_view origin) {
  std::string_view rest = origin;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos) {
    return std::nullopt;
  }
  return rest;
}

std::vector<std::string> RequestHeader(const HttpRequest& request, std::string_view lower_name) {
  std::vector<std::string> values;
  for (const auto& [name, value] : request.headers) {
    if (name == lower_name) {
      values.push_back(value);
    }
  }
  return values;
}

std::optional<core::AgentError> CheckRequestCsrf(const HttpRequest& request,
                                                 std::string_view expected) {
  return CheckConsoleCsrf(RequestHeader(request, "x-csrf-token"), RequestHeader(request, "origin"),
                          RequestHeader(request, "host"), RequestHeader(request, "sec-fetch-site"),
                          expected);
}

HttpReply SessionReply(const ConsoleSession& session) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("csrf_token", session.csrf_token);
  w.Key("token");
  w.StartObject();
  w.Member("id", session.principal.token_id);
  w.Member("name", session.principal.token_name);
  w.Member("kind", core::ToString(session.principal.kind));
  w.EndObject();
  w.Key("scopes");
  w.StartArray();
  for (const std::string& scope : session.principal.scopes.ToStrings()) {
    w.String(scope);
  }
  w.EndArray();
  w.TimeMember("expires_at", session.expires_at);
  w.EndObject();
  HttpReply reply = HttpReply::Json(w.Take());
  reply.headers.emplace_back("Cache-Control", "no-store");
  return reply;
}

HttpReply SessionEnded() {
  return HttpReply::Error(AgentErrorCode::kUnauthorized,
                          "no console session: sign in with an API token");
}

}  // namespace

ConsoleSessions::ConsoleSessions(const TokenAuthenticator& authenticator, const core::Clock& clock,
                                 ConsoleSessionOptions options)
    : authenticator_(authenticator),
      clock_(clock),
      options_(options),
      key_(crypto_generichash_KEYBYTES, '\0') {
  randombytes_buf(key_.data(), key_.size());
}

absl::Time ConsoleSessions::EndOf(const Entry& entry) const {
  return std::min(entry.last_seen + options_.idle_timeout, entry.created + options_.lifetime);
}

void ConsoleSessions::DropEndedLocked(absl::Time now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = EndOf(it->second) <= now ? sessions_.erase(it) : std::next(it);
  }
}

absl::StatusOr<ConsoleSessions::SignedIn> ConsoleSessions::SignIn(std::string_view token) {
  absl::StatusOr<Principal> principal =
      authenticator_.Authenticate({std::string(token)}, /*authorizations=*/{});
  if (!principal.ok()) {
    return principal.status();
  }
  if (principal->kind != core::ApiTokenKind::kHuman) {
    return absl::PermissionDeniedError("the console takes a human token");
  }
  const absl::Time now = clock_.Now();
  Entry entry;
  entry.token = std::string(token);
  entry.token_id = principal->token_id;
  entry.csrf_token = RandomToken();
  entry.created = now;
  entry.last_seen = now;
  SignedIn out;
  out.cookie_value = RandomToken();
  out.session.csrf_token = entry.csrf_token;
  out.session.principal = *std::move(principal);
  out.session.expires_at = EndOf(entry);
  absl::MutexLock lock(&mu_);
  // The token's oldest sessions give way to its newest.
  std::vector<std::map<std::string, Entry>::iterator> same_token;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.token_id == entry.token_id) {
      same_token.push_back(it);
    }
  }
  std::sort(same_token.begin(), same_token.end(),
            [](const auto& a, const auto& b) { return a->second.created < b->second.created; });
  for (std::size_t i = 0; i + options_.max_sessions_per_token <= same_token.size(); ++i) {
    sessions_.erase(same_token[i]);
  }
  if (sessions_.size() >= options_.max_sessions) {
    DropEndedLocked(now);
    if (sessions_.size() >= options_.max_sessions) {
      return absl::ResourceExhaustedError("too many console sessions");
    }
  }
  sessions_.emplace(KeyedHash(key_, out.cookie_value), std::move(entry));
  return out;
}

absl::StatusOr<ConsoleSession> ConsoleSessions::Resolve(std::string_view cookie_value) {
  const std::string key = KeyedHash(key_, cookie_value);
  const absl::Time now = clock_.Now();
  std::string token;
  std::string csrf;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(key);
    if (it == sessions_.end()) {
      return absl::NotFoundError("no such console session");
    }
    if (EndOf(it->second) <= now) {
      sessions_.erase(it);
      return absl::NotFoundError("no such console session");
    }
    token = it->second.token;
    csrf = it->second.csrf_token;
  }
  absl::StatusOr<Principal> principal = authenticator_.Authenticate({token}, {});
  sodium_memzero(token.data(), token.size());
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    return absl::NotFoundError("no such console session");  // signed out meanwhile
  }
  if (!principal.ok()) {
    if (absl::IsUnauthenticated(principal.status())) {
      sessions_.erase(it);
    }
    return principal.status();
  }
  it->second.last_seen = now;
  ConsoleSession session;
  session.csrf_token = std::move(csrf);
  session.principal = *std::move(principal);
  session.expires_at = EndOf(it->second);
  return session;
}

void ConsoleSessions::SignOut(std::string_view cookie_value) {
  const std::string key = KeyedHash(key_, cookie_value);
  absl::MutexLock lock(&mu_);
  sessions_.erase(key);
}

std::size_t ConsoleSessions::size() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

std::optional<std::string> ConsoleCookieValue(const std::vector<std::string>& cookie_headers) {
  std::optional<std::string> found;
  for (const std::string& header : cookie_headers) {
    for (absl::string_view piece : absl::StrSplit(header, ';')) {
      const std::string_view pair = core::ToStd(absl::StripAsciiWhitespace(piece));
      const std::size_t eq = pair.find('=');
      if (eq == std::string_view::npos || pair.substr(0, eq) != kConsoleCookieName) {
        continue;
      }
      if (found.has_value()) {
        return std::nullopt;  // two session cookies: neither is trusted
      }
      const std::string_view value = pair.substr(eq + 1);
      if (value.empty() || value.size() > kMaxCookieValueBytes ||
          !std::all_of(value.begin(), value.end(), IsBase64UrlChar)) {
        return std::nullopt;
      }
      found = std::string(value);
    }
  }
  return found;
}

std::string ConsoleSetCookie(std::string_view value, absl::Duration max_age, bool secure) {
  return absl::StrCat(core::ToAbsl(kConsoleCookieName), "=", core::ToAbsl(value),
                      "; Path=/; HttpOnly; SameSite=Strict; Max-Age=",
                      std::max<std::int64_t>(0, absl::ToInt64Seconds(max_age)),
                      secure ? "; Secure" : "");
}

std::string ConsoleClearCookie(bool secure) {
  return absl::StrCat(core::ToAbsl(kConsoleCookieName),
                      "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0", secure ? "; Secure" : "");
}

std::optional<core::AgentError> CheckConsoleCsrf(const std::vector<std::string>& csrf_values,
                                                 const std::vector<std::string>& origins,
                                                 const std::vector<std::string>& hosts,
                                                 const std::vector<std::string>& fetch_sites,
                                                 std::string_view expected_csrf) {
  const auto refuse = [](std::string_view why) {
    core::AgentError error;
    error.code = AgentErrorCode::kCsrfRejected;
    error.message = std::string(why);
    return error;
  };
  if (!expected_csrf.empty() &&
      (csrf_values.size() != 1 || !EqualSecret(csrf_values.front(), expected_csrf))) {
    return refuse("a console request that changes state needs the session's X-CSRF-Token");
  }
  for (const std::string& site : fetch_sites) {
    const std::string lower = absl::AsciiStrToLower(site);
    if (lower != "same-origin" && lower != "none") {
      return refuse("the request comes from another site");
    }
  }
  if (!origins.empty()) {
    if (hosts.size() != 1) {
      return refuse("the request's origin cannot be checked");
    }
    for (const std::string& origin : origins) {
      const std::optional<std::string_view> authority = OriginAuthority(origin);
      if (!authority.has_value() ||
          !absl::EqualsIgnoreCase(core::ToAbsl(*authority), hosts.front())) {
        return refuse("the request comes from another origin");
      }
    }
  }
  return std::nullopt;
}

bool IsSafeMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

HttpHandler ConsoleSignInHandler(ConsoleSessions& sessions) {
  return [&sessions](const HttpRequest& request) {
    // A sign-in from another origin would sign the victim's browser in as the attacker.
    if (std::optional<core::AgentError> refused = CheckRequestCsrf(request, "")) {
      return HttpReply::Error(*refused);
    }
    absl::StatusOr<rapidjson::Document> body = core::ParseJson(request.body);
    const std::optional<std::string_view> token =
        body.ok() ? core::GetString(*body, "token") : std::nullopt;
    if (!token.has_value()) {
      return HttpReply::Error(AgentErrorCode::kInvalidRequest, "the body must be {\"token\": ...}");
    }
    absl::StatusOr<ConsoleSessions::SignedIn> signed_in = sessions.SignIn(*token);
    if (!signed_in.ok()) {
      if (absl::IsPermissionDenied(signed_in.status())) {
        return HttpReply::Error(AgentErrorCode::kHumanTokenRequired,
                                "the console takes a human token (not an agent or service token)");
      }
      if (absl::IsResourceExhausted(signed_in.status())) {
        return HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                                "too many console sessions; retry later");
      }
      return HttpReply::Error(AuthenticationError(signed_in.status()));
    }
    HttpReply reply = SessionReply(signed_in->session);
    reply.headers.emplace_back(
        "Set-Cookie", ConsoleSetCookie(signed_in->cookie_value, sessions.options().lifetime,
                                       sessions.options().secure_cookie));
    return reply;
  };
}

HttpHandler ConsoleSessionHandler(ConsoleSessions& sessions) {
  return [&sessions](const HttpRequest& request) {
    const std::optional<std::string> cookie = ConsoleCookieValue(RequestHeader(request, "cookie"));
    if (!cookie.has_value()) {
      return SessionEnded();
    }
    absl::StatusOr<ConsoleSession> session = sessions.Resolve(*cookie);
    if (!session.ok()) {
      return absl::IsUnavailable(session.status())
                 ? HttpReply::Error(AuthenticationError(session.status()))
                 : SessionEnded();
    }
    return SessionReply(*session);
  };
}

HttpHandler ConsoleSignOutHandler(ConsoleSessions& sessions) {
  return [&sessions](const HttpRequest& request) {
    const std::optional<std::string> cookie = ConsoleCookieValue(RequestHeader(request, "cookie"));
    if (cookie.has_value()) {
      // Only the session's own page may end it: a forged sign-out is refused like any other
      // forged request. An ended session has nothing to protect and is signed out silently.
      absl::StatusOr<ConsoleSession> session = sessions.Resolve(*cookie);
      if (session.ok()) {
        if (std::optional<core::AgentError> refused =
                CheckRequestCsrf(request, session->csrf_token)) {
          return HttpReply::Error(*refused);
        }
      }
      sessions.SignOut(*cookie);
    }
    HttpReply reply = HttpReply::Json(R"({"signed_out":true})");
    reply.headers.emplace_back("Set-Cookie", ConsoleClearCookie(sessions.options().secure_cookie));
    return reply;
  };
}

}  // namespace pulse::adapters::http
