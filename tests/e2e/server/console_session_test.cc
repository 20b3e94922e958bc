// The console's sign-in against the real binary (docs/console.md): a human token buys an
// HttpOnly, SameSite=Strict session cookie and a CSRF token; the cookie then stands for the
// token on every route with the token's scopes; a state-changing request the cookie
// authenticates is refused (403 csrf_rejected, nothing changed) without the session's CSRF
// token or from another origin; revoking the token ends its sessions; only human tokens sign in.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

struct Signed {
  std::string cookie;  // "pulse_session=<value>"
  std::string csrf;
  Reply reply;
};

Signed SignIn(int port, const std::string& token) {
  Signed out;
  out.reply = Send(port, "POST", "/api/console/session", "", R"({"token":")" + token + R"("})");
  if (out.reply.status != 200) {
    return out;
  }
  const std::string set_cookie = out.reply.Header("Set-Cookie");
  out.cookie = set_cookie.substr(0, set_cookie.find(';'));
  out.csrf = Str(Json(out.reply.body), "csrf_token");
  return out;
}

httplib::Headers WithCookie(const Signed& s, httplib::Headers more = {}) {
  more.emplace("Cookie", s.cookie);
  return more;
}

// The names of the live tokens, by the token API (with an admin token header).
std::vector<std::string> TokenNames(int port, const std::string& admin) {
  const Reply reply = Send(port, "GET", "/api/security/tokens", admin);
  REQUIRE(reply.status == 200);
  std::vector<std::string> names;
  const rapidjson::Document body = Json(reply.body);
  for (const rapidjson::Value& t : body["tokens"].GetArray()) {
    names.push_back(Str(t, "name"));
  }
  return names;
}

const std::string kNewToken = R"({"name":"made-by-console","scopes":["monitoring:read"]})";

TEST_CASE("console: a human token signs in and the cookie stands for it", "[e2e][console]") {
  TempDir dir;
  const std::string admin = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path());
  const Signed s = SignIn(server.port(), admin);
  REQUIRE(s.reply.status == 200);
  const std::string set_cookie = s.reply.Header("Set-Cookie");
  INFO(set_cookie);
  CHECK(set_cookie.rfind("pulse_session=", 0) == 0);
  CHECK(set_cookie.find("; HttpOnly") != std::string::npos);
  CHECK(set_cookie.find("; SameSite=Strict") != std::string::npos);
  CHECK(set_cookie.find("; Path=/") != std::string::npos);
  CHECK(set_cookie.find(admin.substr(6)) == std::string::npos);
  CHECK(s.reply.body.find(admin.substr(6)) == std::string::npos);
  CHECK(s.reply.Header("Cache-Control") == "no-store");
  const rapidjson::Document body = Json(s.reply.body);
  CHECK(Str(body["token"], "name") == "admin");
  CHECK(Str(body["token"], "kind") == "human");
  CHECK(s.csrf.size() == 43);

  // The session route answers the same session (a reloaded page finds its CSRF token again).
  const Reply again = Send(server.port(), "GET", "/api/console/session", "", "", WithCookie(s));
  REQUIRE(again.status == 200);
  CHECK(Str(Json(again.body), "csrf_token") == s.csrf);

  // Reads need only the cookie; a change needs the CSRF token too.
  CHECK(Send(server.port(), "GET", "/api/actions", "", "", WithCookie(s)).status == 200);
  const Reply made =
      Send(server.port(), "POST", "/api/security/tokens", "", kNewToken,
           WithCookie(s, {{"X-CSRF-Token", s.csrf},
                          {"Origin", "http://127.0.0.1:" + std::to_string(server.port())}}));
  CHECK(made.status == 201);
  const std::vector<std::string> names = TokenNames(server.port(), admin);
  CHECK(std::count(names.begin(), names.end(), "made-by-console") == 1);

  // Signing out needs the CSRF token, clears the cookie and ends the session.
  const Reply forged_out =
      Send(server.port(), "DELETE", "/api/console/session", "", "", WithCookie(s));
  CHECK(forged_out.status == 403);
  CHECK(ErrorCode(forged_out.body) == "csrf_rejected");
  CHECK(Send(server.port(), "GET", "/api/console/session", "", "", WithCookie(s)).status == 200);
  const Reply out = Send(server.port(), "DELETE", "/api/console/session", "", "",
                         WithCookie(s, {{"X-CSRF-Token", s.csrf}}));
  CHECK(out.status == 200);
  CHECK(out.Header("Set-Cookie").find("Max-Age=0") != std::string::npos);
  const Reply after = Send(server.port(), "GET", "/api/actions", "", "", WithCookie(s));
  CHECK(after.status == 401);
  CHECK(after.Header("WWW-Authenticate").empty());  // no browser login dialog
  CHECK(Send(server.port(), "GET", "/api/console/session", "", "", WithCookie(s)).status == 401);
}

TEST_CASE("console: forged requests are refused and change nothing", "[e2e][console]") {
  TempDir dir;
  const std::string admin = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path());
  const Signed s = SignIn(server.port(), admin);
  REQUIRE(s.reply.status == 200);
  const std::string own = "http://127.0.0.1:" + std::to_string(server.port());
  const std::vector<std::string> before = TokenNames(server.port(), admin);
  const std::vector<std::pair<std::string, httplib::Headers>> forged = {
      {"no CSRF token", {}},
      {"an empty CSRF token", {{"X-CSRF-Token", ""}}},
      {"another CSRF token", {{"X-CSRF-Token", std::string(43, 'A')}}},
      {"the CSRF token twice", {{"X-CSRF-Token", s.csrf}, {"X-CSRF-Token", s.csrf}}},
      {"another origin", {{"X-CSRF-Token", s.csrf}, {"Origin", "http://evil.example"}}},
      {"another port", {{"X-CSRF-Token", s.csrf}, {"Origin", "http://127.0.0.1:1"}}},
      {"an opaque origin", {{"X-CSRF-Token", s.csrf}, {"Origin", "null"}}},
      {"a cross-site fetch", {{"X-CSRF-Token", s.csrf}, {"Sec-Fetch-Site", "cross-site"}}},
      {"a same-site fetch", {{"X-CSRF-Token", s.csrf}, {"Sec-Fetch-Site", "same-site"}}},
  };
  for (const auto& [what, headers] : forged) {
    INFO(what);
    for (const auto& [method, path, body] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"POST", "/api/security/tokens", kNewToken},
             {"POST", "/api/ai/patrol/run", "{}"},
             {"PUT", "/api/ai/patrol/autonomy", R"({"autonomy_level":"monitor"})"}}) {
      INFO(method << " " << path);
      const Reply reply = Send(server.port(), method, path, "", body, WithCookie(s, headers));
      CHECK(reply.status == 403);
      CHECK(ErrorCode(reply.body) == "csrf_rejected");
      CHECK(reply.body.find(s.csrf) == std::string::npos);
    }
  }
  CHECK(TokenNames(server.port(), admin) == before);
  // A request with a token header is the token's, cookie or not: no CSRF token needed (a
  // cross-site page cannot set that header), and the token's own scopes apply.
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const Reply by_reader = Send(server.port(), "POST", "/api/security/tokens", reader, kNewToken,
                               WithCookie(s, {{"Origin", own}}));
  CHECK(by_reader.status == 403);
  CHECK(ErrorCode(by_reader.body) == "missing_scope");
  // A cookie that is no session is no credential.
  const Reply stale = Send(server.port(), "GET", "/api/actions", "", "",
                           {{"Cookie", "pulse_session=" + std::string(43, 'x')}});
  CHECK(stale.status == 401);
  CHECK(ErrorCode(stale.body) == "unauthorized");
}

TEST_CASE("console: the session has the token's scopes and dies with the token", "[e2e][console]") {
  TempDir dir;
  const std::string admin = MintToken(dir.path(), "*", "admin");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path());
  const Signed s = SignIn(server.port(), reader);
  REQUIRE(s.reply.status == 200);
  const rapidjson::Document body = Json(s.reply.body);
  REQUIRE(body["scopes"].Size() == 1);
  CHECK(std::string(body["scopes"][0].GetString()) == "monitoring:read");
  CHECK(Send(server.port(), "GET", "/api/agent/fleet-context", "", "", WithCookie(s)).status ==
        200);
  const Reply approve = Send(server.port(), "GET", "/api/actions", "", "", WithCookie(s));
  CHECK(approve.status == 403);
  CHECK(ErrorCode(approve.body) == "missing_scope");

  // Revoked while signed in: the next request is refused and the session is gone.
  const Reply list = Send(server.port(), "GET", "/api/security/tokens", admin);
  std::string reader_id;
  const rapidjson::Document tokens = Json(list.body);
  for (const rapidjson::Value& t : tokens["tokens"].GetArray()) {
    if (Str(t, "name") == "reader") {
      reader_id = Str(t, "id");
    }
  }
  REQUIRE(!reader_id.empty());
  REQUIRE(Send(server.port(), "DELETE", "/api/security/tokens/" + reader_id, admin).status == 204);
  CHECK(Send(server.port(), "GET", "/api/agent/fleet-context", "", "", WithCookie(s)).status ==
        401);
  CHECK(Send(server.port(), "GET", "/api/console/session", "", "", WithCookie(s)).status == 401);
}

TEST_CASE("console: only a human token signs in, and bad sign-ins change nothing",
          "[e2e][console]") {
  TempDir dir;
  const std::string agent = MintToken(dir.path(), "agent:report", "host-agent", "agent");
  const std::string service = MintToken(dir.path(), "monitoring:read", "svc", "service");
  ServerProcess server(dir.path());
  for (const std::string& token : {agent, service}) {
    const Signed s = SignIn(server.port(), token);
    CHECK(s.reply.status == 403);
    CHECK(ErrorCode(s.reply.body) == "human_token_required");
    CHECK(s.reply.Header("Set-Cookie").empty());
  }
  const Signed unknown = SignIn(server.port(), "pulse_" + std::string(43, 'A'));
  CHECK(unknown.reply.status == 401);
  CHECK(ErrorCode(unknown.reply.body) == "unauthorized");
  CHECK(unknown.reply.Header("Set-Cookie").empty());
  const std::vector<std::pair<std::string, std::string>> malformed = {
      {"not JSON", "token=abc"},
      {"an array", R"(["pulse_x"])"},
      {"no token", "{}"},
      {"an empty token", R"({"token":""})"},
      {"a number", R"({"token":7})"},
      {"an extra member", R"({"token":"pulse_x","remember":true})"},
      {"an oversized token", R"({"token":")" + std::string(600, 'a') + R"("})"},
      {"a deep body", std::string(5000, '[') + std::string(5000, ']')},
  };
  for (const auto& [what, body] : malformed) {
    INFO(what);
    const Reply reply = Send(server.port(), "POST", "/api/console/session", "", body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_request");
    CHECK(reply.Header("Set-Cookie").empty());
  }
  // A sign-in posted from another origin (login CSRF) is refused.
  const std::string human = MintToken(dir.path(), "monitoring:read", "human");
  const Reply cross = Send(server.port(), "POST", "/api/console/session", "",
                           R"({"token":")" + human + R"("})", {{"Origin", "http://evil.example"}});
  CHECK(cross.status == 403);
  CHECK(ErrorCode(cross.body) == "csrf_rejected");
  CHECK(cross.Header("Set-Cookie").empty());
  CHECK(server.Running());
}

TEST_CASE("console: API replies forbid framing, sniffing, referrers and caching",
          "[e2e][console][security]") {
  TempDir dir;
  const std::string admin = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path());
  for (const auto& [path, token] : std::vector<std::pair<std::string, std::string>>{
           {"/api/actions", admin}, {"/api/actions", ""}, {"/healthz", ""}, {"/nope", ""}}) {
    INFO(path << (token.empty() ? " without a token" : ""));
    const Reply reply = Send(server.port(), "GET", path, token);
    CHECK(reply.Header("X-Frame-Options") == "DENY");
    CHECK(reply.Header("Content-Security-Policy") == "default-src 'none'; frame-ancestors 'none'");
    CHECK(reply.Header("X-Content-Type-Options") == "nosniff");
    CHECK(reply.Header("Referrer-Policy") == "no-referrer");
    CHECK(reply.Header("Cache-Control") == "no-store");
  }
}

}  // namespace
}  // namespace pulse::testing::e2e
