// The pure API-token rules of the core (core/auth/api_token.h): token shape, id shape,
// request validation with canonical scopes, expiry and last-use recording.
#include "pulse/core/auth/api_token.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pulse::core {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

TEST_CASE("a raw token is pulse_ plus exactly 43 base64url characters", "[core][auth]") {
  const std::string body(43, 'A');
  CHECK(HasApiTokenShape("pulse_" + body));
  CHECK(HasApiTokenShape("pulse_" + std::string(21, '-') + std::string(22, '_')));
  CHECK_FALSE(HasApiTokenShape(""));
  CHECK_FALSE(HasApiTokenShape("pulse_" + body.substr(1)));
  CHECK_FALSE(HasApiTokenShape("pulse_" + body + "A"));
  CHECK_FALSE(HasApiTokenShape("Pulse_" + body));
  CHECK_FALSE(HasApiTokenShape("pulse_" + body.substr(1) + "="));
  CHECK_FALSE(HasApiTokenShape("pulse_" + body.substr(1) + "+"));
  CHECK_FALSE(HasApiTokenShape("pulse_" + body.substr(1) + std::string(1, '\0')));
}

TEST_CASE("a token id is tok_ plus 16 lowercase hex digits", "[core][auth]") {
  CHECK(IsApiTokenId("tok_0123456789abcdef"));
  CHECK_FALSE(IsApiTokenId("tok_0123456789ABCDEF"));
  CHECK_FALSE(IsApiTokenId("tok_0123456789abcde"));
  CHECK_FALSE(IsApiTokenId("tok_0123456789abcdef0"));
  CHECK_FALSE(IsApiTokenId("tk_0123456789abcdef0"));
}

TEST_CASE("a create request is validated and its scopes canonicalized", "[core][auth]") {
  NewApiToken r;
  r.name = "deploy bot";
  r.scopes = {"actions:execute", " ai:chat ", "monitoring:read", "ai:chat"};
  r.created_at = kT0;
  absl::StatusOr<std::vector<std::string>> scopes = ValidateNewApiToken(r);
  REQUIRE(scopes.ok());
  CHECK(*scopes == std::vector<std::string>{"monitoring:read", "ai:chat", "actions:execute"});
  r.scopes = {"ai:chat", "*"};
  scopes = ValidateNewApiToken(r);
  REQUIRE(scopes.ok());
  CHECK(*scopes == std::vector<std::string>{"*", "ai:chat"});
  r.scopes = {"ai:chat", ""};
  CHECK(absl::IsInvalidArgument(ValidateNewApiToken(r).status()));
  r.scopes = {"ai:chat"};
  r.name = "line\nbreak";
  CHECK(absl::IsInvalidArgument(ValidateNewApiToken(r).status()));
  r.name = "delete\x7F";
  CHECK(absl::IsInvalidArgument(ValidateNewApiToken(r).status()));
  r.name = "overlong \xC0\xAF";
  CHECK(absl::IsInvalidArgument(ValidateNewApiToken(r).status()));
  r.name = "surrogate \xED\xA0\x80";
  CHECK(absl::IsInvalidArgument(ValidateNewApiToken(r).status()));
  r.name = "Grüße ✓ 🚀";
  CHECK(ValidateNewApiToken(r).ok());
  r.created_at = absl::InfinitePast();
  CHECK(absl::IsInvalidArgument(ValidateNewApiToken(r).status()));
}

TEST_CASE("expiry is inclusive of its instant, last use is recorded once per resolution",
          "[core][auth]") {
  ApiTokenInfo info;
  info.created_at = kT0;
  CHECK_FALSE(IsApiTokenExpired(info, kT0 + absl::Hours(1'000'000)));
  info.expires_at = kT0 + absl::Hours(1);
  CHECK_FALSE(IsApiTokenExpired(info, kT0 + absl::Hours(1) - absl::Nanoseconds(1)));
  CHECK(IsApiTokenExpired(info, kT0 + absl::Hours(1)));
  CHECK(ShouldRecordApiTokenUse(info, kT0));
  info.last_used_at = kT0;
  CHECK_FALSE(
      ShouldRecordApiTokenUse(info, kT0 + kApiTokenLastUsedResolution - absl::Nanoseconds(1)));
  CHECK(ShouldRecordApiTokenUse(info, kT0 + kApiTokenLastUsedResolution));
  CHECK_FALSE(ShouldRecordApiTokenUse(info, kT0 - absl::Hours(1)));  // clock stepped back
}

}  // namespace
}  // namespace pulse::core

namespace pulse::core {
namespace {

TEST_CASE("a token kind is exactly human, agent or service", "[core][auth]") {
  CHECK(ParseApiTokenKind("human") == std::optional(ApiTokenKind::kHuman));
  CHECK(ParseApiTokenKind("agent") == std::optional(ApiTokenKind::kAgent));
  CHECK(ParseApiTokenKind("service") == std::optional(ApiTokenKind::kService));
  for (const char* bad : {"", "Human", "AGENT", " human", "human ", "root", "admin", "policy"}) {
    INFO(bad);
    CHECK_FALSE(ParseApiTokenKind(bad).has_value());
  }
  for (ApiTokenKind kind : {ApiTokenKind::kHuman, ApiTokenKind::kAgent, ApiTokenKind::kService}) {
    CHECK(ParseApiTokenKind(ToString(kind)) == std::optional(kind));
  }
}

TEST_CASE("a token lifetime is a positive whole number of hours or days", "[core][auth]") {
  CHECK(*ParseApiTokenLifetime("1h") == absl::Hours(1));
  CHECK(*ParseApiTokenLifetime("12h") == absl::Hours(12));
  CHECK(*ParseApiTokenLifetime("30d") == absl::Hours(30 * 24));
  CHECK(*ParseApiTokenLifetime("3650d") == kMaxApiTokenLifetime);
  CHECK(*ParseApiTokenLifetime("87600h") == kMaxApiTokenLifetime);
  for (const char* bad : {"",    "h",     "d",     "30",     "0d",           "0h",           "-1d",
                          "+1d", "1.5d",  "1e3h",  "30 d",   " 30d",         "30D",          "1w",
                          "1m",  "1h30m", "3651d", "87601h", "99999999999h", "999999999999d"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(ParseApiTokenLifetime(bad).status()));
  }
}

}  // namespace
}  // namespace pulse::core
