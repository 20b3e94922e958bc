#include "pulse/core/tools/tool_kind.h"

#include <catch2/catch.hpp>
#include <string>

#include "tools_test_support.h"

namespace pulse::core {
namespace {

TEST_CASE("tool kinds round-trip through their wire strings", "[core][tools]") {
  const std::pair<ToolKind, std::string_view> cases[] = {
      {ToolKind::kResolve, "resolve"},
      {ToolKind::kRead, "read"},
      {ToolKind::kWrite, "write"},
      {ToolKind::kUserInput, "user_input"},
  };
  for (const auto& [kind, wire] : cases) {
    CHECK(ToString(kind) == wire);
    REQUIRE(ParseToolKind(wire).has_value());
    CHECK(*ParseToolKind(wire) == kind);
  }
}

TEST_CASE("mutation targets round-trip through their wire strings", "[core][tools]") {
  const std::pair<MutationTarget, std::string_view> cases[] = {
      {MutationTarget::kNone, "none"},
      {MutationTarget::kPulseState, "pulse_state"},
      {MutationTarget::kInfrastructure, "infrastructure"},
  };
  for (const auto& [target, wire] : cases) {
    CHECK(ToString(target) == wire);
    REQUIRE(ParseMutationTarget(wire).has_value());
    CHECK(*ParseMutationTarget(wire) == target);
  }
}

TEST_CASE("kind and target parsing is exact-match only", "[core][tools]") {
  for (std::string_view text : {"", "READ", "Read", " read", "read ", "reads", "user-input",
                                "userinput", "mixed", "none"}) {
    INFO(std::string(text));
    CHECK_FALSE(ParseToolKind(text).has_value());
  }
  for (std::string_view text : {"", "None", "NONE", " none", "pulse-state", "infra",
                                "Infrastructure", "infrastructure\n", "read"}) {
    INFO(std::string(text));
    CHECK_FALSE(ParseMutationTarget(text).has_value());
  }
}

TEST_CASE("values outside the closed sets render as unknown and never parse back",
          "[core][tools]") {
  const auto bogus_kind = static_cast<ToolKind>(42);
  const auto bogus_target = static_cast<MutationTarget>(42);
  CHECK(ToString(bogus_kind) == "unknown");
  CHECK(ToString(bogus_target) == "unknown");
  CHECK_FALSE(ParseToolKind(ToString(bogus_kind)).has_value());
  CHECK_FALSE(ParseMutationTarget(ToString(bogus_target)).has_value());
}

TEST_CASE("the fail-closed class is write on infrastructure and is the default", "[core][tools]") {
  CHECK(kFailClosedClass.kind == ToolKind::kWrite);
  CHECK(kFailClosedClass.mutation == MutationTarget::kInfrastructure);
  CHECK(InvocationClass{} == kFailClosedClass);
  CHECK(IsInfrastructureWrite(kFailClosedClass));
}

TEST_CASE("only write on infrastructure counts as an infrastructure write", "[core][tools]") {
  CHECK_FALSE(IsInfrastructureWrite(testing::kWritePulseState));
  CHECK_FALSE(IsInfrastructureWrite(testing::kReadNone));
  CHECK_FALSE(IsInfrastructureWrite(testing::kResolveNone));
  CHECK_FALSE(IsInfrastructureWrite(testing::kUserInputNone));
  CHECK_FALSE(IsInfrastructureWrite({ToolKind::kRead, MutationTarget::kInfrastructure}));
  CHECK(IsInfrastructureWrite(testing::kWriteInfrastructure));
}

TEST_CASE("invocation classes compare by both fields", "[core][tools]") {
  CHECK(testing::kReadNone == InvocationClass{ToolKind::kRead, MutationTarget::kNone});
  CHECK_FALSE(testing::kReadNone == testing::kResolveNone);
  CHECK_FALSE(testing::kWritePulseState == testing::kWriteInfrastructure);
}

}  // namespace
}  // namespace pulse::core
