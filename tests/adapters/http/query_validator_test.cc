// QueryValidator on its own: declared parameters convert strictly by type and then meet the
// schema; anything undeclared, repeated or malformed is refused with the right code.
#include "pulse/adapters/http/query_validator.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

namespace pulse::adapters::http {
namespace {

using core::AgentErrorCode;

constexpr char kSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    "flag": {"type": "boolean"},
    "view": {"type": "string", "enum": ["pending", "settled"]},
    "name": {"type": "string", "maxLength": 8}
  },
  "required": ["limit"]
})json";

std::unique_ptr<QueryValidator> Compiled(const char* schema) {
  auto v = QueryValidator::Compile(schema);
  REQUIRE(v.ok());
  return *std::move(v);
}

std::string CodeOf(const QueryValidator& v, const QueryParams& q,
                   const std::map<std::string, AgentErrorCode>& own = {}) {
  const auto refused = v.Validate(q, AgentErrorCode::kInvalidFindingRequest, own);
  return refused.has_value() ? std::string(core::ToString(refused->code)) : "";
}

TEST_CASE("declared query values of the right type pass and nothing is required",
          "[adapters][http][query]") {
  auto v = Compiled(kSchema);
  CHECK(CodeOf(*v, {}).empty());
  CHECK(CodeOf(*v, {{"limit", "500"}, {"flag", "TRUE"}, {"view", "settled"}, {"name", "a b"}})
            .empty());
  CHECK(CodeOf(*v, {{"flag", "0"}}).empty());
  CHECK(v->parameters().size() == 4);
}

TEST_CASE("undeclared, repeated, mistyped and out-of-range query values are refused",
          "[adapters][http][query]") {
  auto v = Compiled(kSchema);
  for (const char* limit : {"-1", "0", "501", "1e3", "1.5", "+5", " 5", "0x10", "", "5a",
                            "9999999999999999999", "99999999999999999999"}) {
    INFO(limit);
    CHECK(CodeOf(*v, {{"limit", limit}}) == "invalid_finding_request");
  }
  for (const char* flag : {"maybe", "", "2", "yes"}) {
    CHECK(CodeOf(*v, {{"flag", flag}}) == "invalid_finding_request");
  }
  for (const char* view : {"all", "", "PENDING", "pending "}) {
    CHECK(CodeOf(*v, {{"view", view}}) == "invalid_finding_request");
  }
  CHECK(CodeOf(*v, {{"name", "123456789"}}) == "invalid_finding_request");
  CHECK(CodeOf(*v, {{"name", "a\nb"}}) == "invalid_finding_request");
  CHECK(CodeOf(*v, {{"unknown", "1"}}) == "invalid_finding_request");
  CHECK(CodeOf(*v, {{"limit", "1"}, {"limit", "1"}}) == "invalid_finding_request");
  // A parameter's own code wins for that parameter only; unknown ones keep the route's.
  const std::map<std::string, AgentErrorCode> own = {
      {"view", AgentErrorCode::kInvalidActionListView}};
  CHECK(CodeOf(*v, {{"view", "all"}}, own) == "invalid_action_list_view");
  CHECK(CodeOf(*v, {{"zzz", "all"}}, own) == "invalid_finding_request");
  // The refusal names the parameter, never the value.
  const auto refused = v->Validate({{"view", "leak-me"}}, AgentErrorCode::kInvalidRequest);
  REQUIRE(refused.has_value());
  CHECK(refused->details.count("view") == 1);
  CHECK(refused->ToJson().find("leak-me") == std::string::npos);
}

TEST_CASE("a route without declared parameters refuses every query parameter",
          "[adapters][http][query]") {
  auto v = Compiled("");
  CHECK(CodeOf(*v, {}).empty());
  CHECK(CodeOf(*v, {{"limit", "1"}}) == "invalid_finding_request");
  CHECK_FALSE(
      QueryValidator::Compile(R"({"type":"object","properties":{"x":{"type":"array"}}})").ok());
  CHECK_FALSE(QueryValidator::Compile(R"({"type":"array"})").ok());
}

}  // namespace
}  // namespace pulse::adapters::http
