#include "pulse/core/errors/tool_error.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

TEST_CASE("tool error codes are the closed UPPER_SNAKE vocabulary", "[core][errors]") {
  const std::set<std::string> expected = {"FSM_BLOCKED",       "POLICY_BLOCKED",
                                          "APPROVAL_REQUIRED", "INVALID_INPUT",
                                          "NOT_FOUND",         "EXECUTION_FAILED",
                                          "NO_AGENT",          "LOOP_DETECTED",
                                          "BUDGET_EXHAUSTED",  "TOOL_NOT_ADVERTISED",
                                          "NON_INTERACTIVE",   "EXECUTION_CONTEXT_UNAVAILABLE"};
  std::set<std::string> actual;
  for (ToolErrorCode code : AllToolErrorCodes()) {
    std::string name(ToString(code));
    actual.insert(name);
    REQUIRE(ParseToolErrorCode(name) == code);
  }
  CHECK(actual == expected);
  // Reference codes this engine has no path to produce stay undeclared (tool_error.h says
  // why); a code is declared only together with the path that emits it.
  CHECK_FALSE(ParseToolErrorCode("STRICT_RESOLUTION").has_value());
  CHECK_FALSE(ParseToolErrorCode("ROUTING_MISMATCH").has_value());
  CHECK_FALSE(ParseToolErrorCode("fsm_blocked").has_value());
  CHECK_FALSE(ParseToolErrorCode(" FSM_BLOCKED").has_value());
  CHECK_FALSE(ParseToolErrorCode("").has_value());
}

TEST_CASE("tool errors render as {error:{code,message}} with optional fields omitted",
          "[core][errors]") {
  ToolError e{ToolErrorCode::kNotFound, "no such resource", false, false, false, {}};
  CHECK(e.ToJson() == R"({"error":{"code":"NOT_FOUND","message":"no such resource"}})");

  e.blocked = true;
  e.details.emplace_back("resource_id", std::string("vm:101"));
  e.details.emplace_back("recoverable", true);
  e.details.emplace_back("attempts", std::int64_t{3});
  CHECK(e.ToJson() == R"({"error":{"code":"NOT_FOUND","message":"no such resource","blocked":true,)"
                      R"("details":{"resource_id":"vm:101","recoverable":true,"attempts":3}}})");
}

TEST_CASE("tool error JSON escapes hostile message text", "[core][errors]") {
  ToolError e{ToolErrorCode::kInvalidInput,
              "quote \" backslash \\ newline \n \x01 end",
              false,
              true,
              false,
              {}};
  auto doc = ParseJson(e.ToJson());
  REQUIRE(doc.ok());
  CHECK(std::string((*doc)["error"]["message"].GetString()) ==
        "quote \" backslash \\ newline \n \x01 end");
  CHECK((*doc)["error"]["failed"].GetBool());
}

TEST_CASE("the code extractor reads error.code, then legacy error_code", "[core][errors]") {
  CHECK(ExtractToolErrorCode(R"({"error":{"code":"FSM_BLOCKED","message":"x"}})") == "FSM_BLOCKED");
  CHECK(ExtractToolErrorCode(R"(prose before {"error":{"code":"NOT_FOUND"}})") == "NOT_FOUND");
  CHECK(ExtractToolErrorCode(R"({"error_code":"STRICT_RESOLUTION"})") == "STRICT_RESOLUTION");
  CHECK(ExtractToolErrorCode(R"({"error":{"code":"  "},"error_code":"LEGACY"})") == "LEGACY");
  // Round trip through our own renderer.
  ToolError e{ToolErrorCode::kLoopDetected, "stop", true, false, false, {}};
  CHECK(ExtractToolErrorCode(e.ToJson()) == "LOOP_DETECTED");
}

TEST_CASE("the code extractor finds nothing in malformed or codeless text", "[core][errors]") {
  CHECK_FALSE(ExtractToolErrorCode("").has_value());
  CHECK_FALSE(ExtractToolErrorCode("FSM blocked tool 'x' in state VERIFYING").has_value());
  CHECK_FALSE(ExtractToolErrorCode(R"({"error":{"code":42}})").has_value());
  CHECK_FALSE(ExtractToolErrorCode(R"({"error":"FSM_BLOCKED"})").has_value());
  CHECK_FALSE(ExtractToolErrorCode(R"({"error":{"code":"X"}} trailing)").has_value());
  CHECK_FALSE(ExtractToolErrorCode(R"({"error":{"code":"X")").has_value());
  CHECK_FALSE(ExtractToolErrorCode(std::string(100000, '{')).has_value());
  CHECK_FALSE(ExtractToolErrorCode(std::string(2 << 20, ' ') + "{}").has_value());
}

TEST_CASE("verification evidence requires verification.ok to be the boolean true",
          "[core][errors]") {
  CHECK(HasVerificationOk(R"({"verification":{"ok":true}})"));
  CHECK(HasVerificationOk(R"(restarted. {"status":"done","verification":{"ok":true,"x":1}})"));
  CHECK_FALSE(HasVerificationOk(R"({"verification":{"ok":"true"}})"));
  CHECK_FALSE(HasVerificationOk(R"({"verification":{"ok":1}})"));
  CHECK_FALSE(HasVerificationOk(R"({"verification":{"ok":false}})"));
  CHECK_FALSE(HasVerificationOk(R"({"verification":true})"));
  CHECK_FALSE(HasVerificationOk(R"({"ok":true})"));
  CHECK_FALSE(HasVerificationOk("verification ok true"));
  CHECK_FALSE(HasVerificationOk(R"({"verification":{"ok":true}} extra)"));
}

}  // namespace
}  // namespace pulse::core
