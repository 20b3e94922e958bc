#include "pulse/core/policy/control_level.h"

#include <catch2/catch.hpp>
#include <string>

#include "policy_test_support.h"

namespace pulse::core {
namespace {

using testing::Json;

constexpr ControlLevel kLevels[] = {ControlLevel::kReadOnly, ControlLevel::kControlled,
                                    ControlLevel::kAutonomous};

TEST_CASE("control levels normalize by exact match and fail closed to read_only",
          "[core][policy]") {
  CHECK(NormalizeControlLevel("read_only") == ControlLevel::kReadOnly);
  CHECK(NormalizeControlLevel("controlled") == ControlLevel::kControlled);
  CHECK(NormalizeControlLevel("autonomous") == ControlLevel::kAutonomous);
  for (const char* text : {"", " ", "suggest", "bad", "AUTONOMOUS", "Autonomous", "autonomous ",
                           " controlled", "controlled\n", "read-only", "full", "true"}) {
    INFO("[" << text << "]");
    CHECK(NormalizeControlLevel(text) == ControlLevel::kReadOnly);
    CHECK_FALSE(IsValidControlLevel(text));
    CHECK_FALSE(ParseControlLevel(text).has_value());
  }
  for (ControlLevel level : kLevels) {
    CHECK(ParseControlLevel(ToString(level)) == level);
    CHECK(IsValidControlLevel(ToString(level)));
  }
  CHECK(NormalizeControlLevel(static_cast<ControlLevel>(9)) == ControlLevel::kReadOnly);
  CHECK(ToString(static_cast<ControlLevel>(9)) == "read_only");
}

TEST_CASE("only controlled and autonomous allow control tools", "[core][policy]") {
  CHECK_FALSE(AllowsControlTools(ControlLevel::kReadOnly));
  CHECK(AllowsControlTools(ControlLevel::kControlled));
  CHECK(AllowsControlTools(ControlLevel::kAutonomous));
  CHECK_FALSE(AllowsControlTools(static_cast<ControlLevel>(-1)));
  CHECK_FALSE(AllowsControlTools(static_cast<ControlLevel>(3)));
}

TEST_CASE("Lower lets a request lower the configured level but never raise it", "[core][policy]") {
  for (ControlLevel configured : kLevels) {
    for (ControlLevel requested : kLevels) {
      const ControlLevel effective = Lower(configured, requested);
      INFO(ToString(configured) << " <- " << ToString(requested));
      CHECK(static_cast<int>(effective) <= static_cast<int>(configured));
      CHECK(static_cast<int>(effective) <= static_cast<int>(requested));
      CHECK((effective == configured || effective == requested));
    }
    CHECK(Lower(configured, static_cast<ControlLevel>(7)) == ControlLevel::kReadOnly);
    CHECK(Lower(static_cast<ControlLevel>(7), configured) == ControlLevel::kReadOnly);
  }
  CHECK(Lower(ControlLevel::kControlled, ControlLevel::kAutonomous) == ControlLevel::kControlled);
  CHECK(Lower(ControlLevel::kAutonomous, ControlLevel::kControlled) == ControlLevel::kControlled);
}

TEST_CASE("a request body asks for a level only through a string control_level", "[core][policy]") {
  CHECK_FALSE(RequestedControlLevel(Json(R"({"message":"hi"})")).has_value());
  CHECK_FALSE(RequestedControlLevel(Json(R"({"control_level":null})")).has_value());
  CHECK_FALSE(RequestedControlLevel(Json(R"(["control_level","autonomous"])")).has_value());
  CHECK_FALSE(RequestedControlLevel(Json(R"("autonomous")")).has_value());
  CHECK(RequestedControlLevel(Json(R"({"control_level":"controlled"})")) ==
        ControlLevel::kControlled);
  CHECK(RequestedControlLevel(Json(R"({"control_level":"autonomous"})")) ==
        ControlLevel::kAutonomous);
  for (const char* body :
       {R"({"control_level":"AUTONOMOUS"})", R"({"control_level":"autonomous "})",
        R"({"control_level":""})", R"({"control_level":2})", R"({"control_level":true})",
        R"({"control_level":["autonomous"]})", R"({"control_level":{"level":"autonomous"}})",
        R"({"control_level":1e308})"}) {
    INFO(body);
    CHECK(RequestedControlLevel(Json(body)) == ControlLevel::kReadOnly);
  }
}

TEST_CASE("the disabled-control message names the setting that enables changes", "[core][policy]") {
  const std::string message = ControlToolsDisabledMessage(ControlLevel::kReadOnly);
  CHECK_THAT(message,
             Catch::Contains("read_only") && Catch::Contains("--control-level controlled") &&
                 Catch::Contains("not a failure to retry") && Catch::Contains("only lower"));
}

}  // namespace
}  // namespace pulse::core
