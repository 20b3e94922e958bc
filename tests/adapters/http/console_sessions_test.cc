// The console's sessions (console_sessions.h): sign-in with human tokens only, the token checked
// again on every use (revocation ends the session), the idle and absolute ends, the bounds, and
// the parsers of what a browser sends (the Cookie header, the CSRF and origin headers) fed
// hostile input.
#include "pulse/adapters/http/console_sessions.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "pulse/testing/fake_clock.h"
#include "pulse/testing/in_memory_token_store.h"

namespace pulse::adapters::http {
namespace {

class Fixture {
 public:
  explicit Fixture(ConsoleSessionOptions options = {})
      : authenticator_(store_, clock_), sessions_(authenticator_, clock_, options) {}

  std::string Token(core::ApiTokenKind kind = core::ApiTokenKind::kHuman,
                    std::vector<std::string> scopes = {"monitoring:read", "actions:approve"}) {
    core::NewApiToken request;
    request.name = "op";
    request.kind = kind;
    request.scopes = std::move(scopes);
    request.created_at = clock_.Now();
    absl::StatusOr<core::IssuedApiToken> issued = store_.Create(request);
    REQUIRE(issued.ok());
    ids_.push_back(issued->info.id);
    return issued->token;
  }

  ConsoleSessions& sessions() { return sessions_; }
  testing::FakeClock& clock() { return clock_; }
  testing::InMemoryTokenStore& store() { return store_; }
  const std::string& last_id() const { return ids_.back(); }

 private:
  testing::InMemoryTokenStore store_;
  testing::FakeClock clock_;
  TokenAuthenticator authenticator_;
  ConsoleSessions sessions_;
  std::vector<std::string> ids_;
};

TEST_CASE("a human token signs in and its cookie stands for it", "[adapters][http][console]") {
  Fixture f;
  const std::string token = f.Token();
  absl::StatusOr<ConsoleSessions::SignedIn> in = f.sessions().SignIn(token);
  REQUIRE(in.ok());
  // Opaque, random, and neither the token nor the CSRF token.
  CHECK(in->cookie_value.size() == 43);
  CHECK(in->session.csrf_token.size() == 43);
  CHECK(in->cookie_value != in->session.csrf_token);
  CHECK(in->cookie_value.find(token) == std::string::npos);
  CHECK(in->session.principal.token_id == f.last_id());
  CHECK(in->session.principal.scopes.Has(core::Scope::kActionsApprove));
  CHECK_FALSE(in->session.principal.scopes.Has(core::Scope::kSettingsWrite));

  absl::StatusOr<ConsoleSession> resolved = f.sessions().Resolve(in->cookie_value);
  REQUIRE(resolved.ok());
  CHECK(resolved->csrf_token == in->session.csrf_token);
  CHECK(resolved->principal.token_id == f.last_id());

  // Two sign-ins are two sessions with their own CSRF tokens.
  absl::StatusOr<ConsoleSessions::SignedIn> again = f.sessions().SignIn(token);
  REQUIRE(again.ok());
  CHECK(again->cookie_value != in->cookie_value);
  CHECK(again->session.csrf_token != in->session.csrf_token);
  CHECK(f.sessions().size() == 2);
}

TEST_CASE("only a human token signs in", "[adapters][http][console]") {
  Fixture f;
  CHECK(absl::IsPermissionDenied(
      f.sessions().SignIn(f.Token(core::ApiTokenKind::kAgent, {"agent:report"})).status()));
  CHECK(absl::IsPermissionDenied(
      f.sessions().SignIn(f.Token(core::ApiTokenKind::kService)).status()));
  for (const std::string& bad : {std::string(), std::string("pulse_") + std::string(43, 'A'),
                                 std::string(100000, 'x'), std::string("pulse_\r\nX: y")}) {
    CHECK(absl::IsUnauthenticated(f.sessions().SignIn(bad).status()));
  }
  CHECK(f.sessions().size() == 0);
}

TEST_CASE("revoking the token ends its console sessions at once", "[adapters][http][console]") {
  Fixture f;
  absl::StatusOr<ConsoleSessions::SignedIn> in = f.sessions().SignIn(f.Token());
  REQUIRE(in.ok());
  REQUIRE(f.store().Revoke(f.last_id()).ok());
  CHECK(absl::IsUnauthenticated(f.sessions().Resolve(in->cookie_value).status()));
  CHECK(f.sessions().size() == 0);  // dropped, not kept for a later try
  CHECK(absl::IsNotFound(f.sessions().Resolve(in->cookie_value).status()));
}

TEST_CASE("a session ends when idle and at the end of its lifetime", "[adapters][http][console]") {
  ConsoleSessionOptions options;
  options.idle_timeout = absl::Minutes(30);
  options.lifetime = absl::Hours(2);
  Fixture f(options);
  absl::StatusOr<ConsoleSessions::SignedIn> in = f.sessions().SignIn(f.Token());
  REQUIRE(in.ok());
  CHECK(in->session.expires_at == f.clock().Now() + absl::Minutes(30));
  // Used every 20 minutes it lives past its idle timeout, but not past its lifetime.
  for (int i = 0; i < 5; ++i) {
    f.clock().Advance(absl::Minutes(20));
    INFO(i);
    REQUIRE(f.sessions().Resolve(in->cookie_value).ok());
  }
  f.clock().Advance(absl::Minutes(20));  // 2 h after sign-in
  CHECK(absl::IsNotFound(f.sessions().Resolve(in->cookie_value).status()));

  absl::StatusOr<ConsoleSessions::SignedIn> idle = f.sessions().SignIn(f.Token());
  REQUIRE(idle.ok());
  f.clock().Advance(absl::Minutes(30));
  CHECK(absl::IsNotFound(f.sessions().Resolve(idle->cookie_value).status()));
  CHECK(f.sessions().size() == 0);
}

TEST_CASE("sessions are bounded per token and in all", "[adapters][http][console]") {
  ConsoleSessionOptions options;
  options.max_sessions_per_token = 3;
  options.max_sessions = 5;
  options.idle_timeout = absl::Minutes(10);
  Fixture f(options);
  const std::string token = f.Token();
  std::vector<std::string> cookies;
  for (int i = 0; i < 4; ++i) {
    f.clock().Advance(absl::Seconds(1));
    absl::StatusOr<ConsoleSessions::SignedIn> in = f.sessions().SignIn(token);
    REQUIRE(in.ok());
    cookies.push_back(in->cookie_value);
  }
  // The token's oldest session gave way to its newest.
  CHECK(f.sessions().size() == 3);
  CHECK(absl::IsNotFound(f.sessions().Resolve(cookies[0]).status()));
  CHECK(f.sessions().Resolve(cookies[3]).ok());

  // Full: a sign-in is refused rather than ending someone else's live session...
  REQUIRE(f.sessions().SignIn(f.Token()).ok());
  REQUIRE(f.sessions().SignIn(f.Token()).ok());
  CHECK(absl::IsResourceExhausted(f.sessions().SignIn(f.Token()).status()));
  CHECK(f.sessions().Resolve(cookies[1]).ok());
  // ...until sessions have ended.
  f.clock().Advance(absl::Minutes(11));
  CHECK(f.sessions().SignIn(f.Token()).ok());
  CHECK(f.sessions().size() == 1);
}

TEST_CASE("sign-out ends exactly its own session", "[adapters][http][console]") {
  Fixture f;
  const std::string token = f.Token();
  absl::StatusOr<ConsoleSessions::SignedIn> a = f.sessions().SignIn(token);
  absl::StatusOr<ConsoleSessions::SignedIn> b = f.sessions().SignIn(token);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  f.sessions().SignOut(a->cookie_value);
  f.sessions().SignOut(a->cookie_value);  // idempotent
  f.sessions().SignOut("no-such-session");
  CHECK(absl::IsNotFound(f.sessions().Resolve(a->cookie_value).status()));
  CHECK(f.sessions().Resolve(b->cookie_value).ok());
}

TEST_CASE("the session cookie is read strictly from Cookie headers", "[adapters][http][console]") {
  const std::string v(43, 'a');
  CHECK(ConsoleCookieValue({"pulse_session=" + v}) == v);
  CHECK(ConsoleCookieValue({"theme=dark; pulse_session=" + v + "; lang=en"}) == v);
  CHECK(ConsoleCookieValue({"theme=dark", "pulse_session=" + v}) == v);
  CHECK(ConsoleCookieValue({"pulse_session=A-b_9"}) == "A-b_9");
  // Absent, or not to be trusted: repeated (a cookie planted by a sibling host), empty,
  // oversized, or holding bytes no session id has.
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{},
                                             {""},
                                             {"theme=dark"},
                                             {"pulse_session"},
                                             {"pulse_sessionx=" + v},
                                             {"Pulse_Session=" + v},
                                             {"pulse_session=" + v + "; pulse_session=" + v},
                                             {"pulse_session=" + v, "pulse_session=" + v},
                                             {"pulse_session="},
                                             {"pulse_session=" + std::string(129, 'a')},
                                             {"pulse_session=" + std::string(1 << 20, 'a')},
                                             {"pulse_session=a+b/c="},
                                             {"pulse_session=\"" + v + "\""},
                                             {std::string("pulse_session=a\0b", 17)},
                                             {std::string("pulse_session=a\xff")}}) {
    const std::string shown = bad.empty() ? std::string("(none)") : bad.front().substr(0, 80);
    INFO(shown);
    CHECK_FALSE(ConsoleCookieValue(bad).has_value());
  }
}

TEST_CASE("the cookie is HttpOnly, SameSite=Strict and scoped to the whole site",
          "[adapters][http][console]") {
  CHECK(ConsoleSetCookie("abc", absl::Hours(24), false) ==
        "pulse_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=86400");
  CHECK(ConsoleSetCookie("abc", absl::Hours(1), true) ==
        "pulse_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure");
  CHECK(ConsoleClearCookie(false) ==
        "pulse_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
}

TEST_CASE("the CSRF check wants the session's token from the server's own origin",
          "[adapters][http][console]") {
  const std::string csrf(43, 'c');
  const std::vector<std::string> host = {"127.0.0.1:7655"};
  const auto passes = [&](std::vector<std::string> tokens, std::vector<std::string> origins,
                          std::vector<std::string> hosts, std::vector<std::string> sites,
                          std::string_view expected) {
    std::optional<core::AgentError> refused =
        CheckConsoleCsrf(tokens, origins, hosts, sites, expected);
    if (refused.has_value()) {
      CHECK(refused->code == core::AgentErrorCode::kCsrfRejected);
      CHECK(refused->message.find(csrf) == std::string::npos);  // never echoed
    }
    return !refused.has_value();
  };
  CHECK(passes({csrf}, {}, host, {}, csrf));
  CHECK(passes({csrf}, {"http://127.0.0.1:7655"}, host, {"same-origin"}, csrf));
  CHECK(passes({csrf}, {"https://127.0.0.1:7655"}, host, {"none"}, csrf));
  CHECK_FALSE(
      passes({csrf}, {"HTTP://127.0.0.1:7655"}, host, {}, csrf));  // browsers send lower case
  CHECK(passes({}, {"http://127.0.0.1:7655"}, host, {}, ""));      // sign-in: origin only

  CHECK_FALSE(passes({}, {}, host, {}, csrf));
  CHECK_FALSE(passes({""}, {}, host, {}, csrf));
  CHECK_FALSE(passes({csrf + "x"}, {}, host, {}, csrf));
  CHECK_FALSE(passes({csrf.substr(1)}, {}, host, {}, csrf));
  CHECK_FALSE(passes({csrf, csrf}, {}, host, {}, csrf));
  CHECK_FALSE(passes({std::string(43, 'C')}, {}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://evil.example"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://127.0.0.1:7656"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://127.0.0.1:7655.evil.example"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://127.0.0.1:7655/"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://user@127.0.0.1:7655"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"null"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"file://"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://127.0.0.1:7655", "http://evil.example"}, host, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://127.0.0.1:7655"}, {}, {}, csrf));
  CHECK_FALSE(passes({csrf}, {"http://127.0.0.1:7655"}, {"a", "b"}, {}, csrf));
  CHECK_FALSE(passes({csrf}, {}, host, {"cross-site"}, csrf));
  CHECK_FALSE(passes({csrf}, {}, host, {"same-site"}, csrf));
  CHECK_FALSE(passes({csrf}, {}, host, {"same-origin", "cross-site"}, csrf));
  CHECK_FALSE(passes({}, {"http://evil.example"}, host, {}, ""));
}

TEST_CASE("only GET, HEAD and OPTIONS go without a CSRF token", "[adapters][http][console]") {
  for (const char* method : {"GET", "HEAD", "OPTIONS"}) {
    CHECK(IsSafeMethod(method));
  }
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE", "get", "", "TRACE", "CONNECT"}) {
    CHECK_FALSE(IsSafeMethod(method));
  }
}

}  // namespace
}  // namespace pulse::adapters::http
