#include "pulse/core/policy/scope.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pulse::core {
namespace {

TEST_CASE("scope wire strings round-trip in canonical order", "[core][policy]") {
  const std::vector<std::string> expected = {
      "monitoring:read", "monitoring:write", "settings:read",   "settings:write",
      "audit:read",      "ai:execute",       "ai:chat",         "agent:report",
      "agent:exec",      "actions:plan",     "actions:approve", "actions:execute"};
  REQUIRE(kAllScopes.size() == expected.size());
  for (std::size_t i = 0; i < kAllScopes.size(); ++i) {
    CHECK(std::string(ToString(kAllScopes[i])) == expected[i]);
    CHECK(ParseScope(expected[i]) == kAllScopes[i]);
  }
  CHECK(ToString(static_cast<Scope>(200)) == "unknown");
}

TEST_CASE("scope parsing is closed: unknown, mis-cased, padded-inside and empty entries fail",
          "[core][policy]") {
  for (const char* bad : {"AI:CHAT", "ai:chat:x", "relay:mobile:access", "docker:manage",
                          "ai: chat", "ai", "**", "unknown", "ai:execute\x01"}) {
    INFO("[" << bad << "]");
    CHECK_FALSE(ParseScope(bad).has_value());
    absl::StatusOr<ScopeSet> set = ScopeSet::Parse({"ai:chat", bad});
    REQUIRE_FALSE(set.ok());
    CHECK(set.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(ScopeSet::Parse({"ai:chat", ""}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ScopeSet::Parse({"  "}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ScopeSet::ParseList("ai:chat,,ai:execute").status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(ScopeSet::ParseList("ai:chat,").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(ScopeSet::Parse({"ai:admin"}).status().message()),
             Catch::Contains("unknown scope \"ai:admin\""));
}

TEST_CASE("scope lists are trimmed per entry and deduplicated", "[core][policy]") {
  absl::StatusOr<ScopeSet> set = ScopeSet::ParseList(" ai:chat , ai:execute,ai:chat\t");
  REQUIRE(set.ok());
  CHECK(*set == ScopeSet::Of({Scope::kAiChat, Scope::kAiExecute}));
  CHECK(set->ToString() == "ai:execute, ai:chat");
  absl::StatusOr<ScopeSet> blank = ScopeSet::ParseList("   ");
  REQUIRE(blank.ok());
  CHECK(blank->Empty());
}

TEST_CASE("the wildcard grants every known scope and nothing else", "[core][policy]") {
  absl::StatusOr<ScopeSet> set = ScopeSet::ParseList("*");
  REQUIRE(set.ok());
  CHECK(set->HasWildcard());
  for (Scope scope : kAllScopes) {
    CHECK(set->Has(scope));
  }
  CHECK_FALSE(set->Has(static_cast<Scope>(99)));
  CHECK(*set == ScopeSet::All());
  CHECK(set->ToStrings() == std::vector<std::string>{"*"});
}

TEST_CASE("a scope set holds exactly what was granted", "[core][policy]") {
  const ScopeSet empty;
  CHECK(empty.Empty());
  for (Scope scope : kAllScopes) {
    CHECK_FALSE(empty.Has(scope));
  }
  ScopeSet chat = ScopeSet::Of({Scope::kAiChat});
  CHECK(chat.Has(Scope::kAiChat));
  CHECK_FALSE(chat.Has(Scope::kAiExecute));
  CHECK(chat.HasAny({Scope::kAiExecute, Scope::kAiChat}));
  CHECK_FALSE(chat.HasAny({Scope::kAiExecute, Scope::kActionsExecute}));
  chat.Add(static_cast<Scope>(77));  // ignored, not a scope
  CHECK(chat == ScopeSet::Of({Scope::kAiChat}));
}

TEST_CASE("scope sets display in canonical order with the wildcard first", "[core][policy]") {
  absl::StatusOr<ScopeSet> set =
      ScopeSet::Parse({"actions:execute", "ai:chat", "*", "monitoring:read", "ai:execute"});
  REQUIRE(set.ok());
  CHECK(set->ToStrings() == std::vector<std::string>{"*", "monitoring:read", "ai:execute",
                                                     "ai:chat", "actions:execute"});
  CHECK(set->ToString() == "*, monitoring:read, ai:execute, ai:chat, actions:execute");
}

}  // namespace
}  // namespace pulse::core
