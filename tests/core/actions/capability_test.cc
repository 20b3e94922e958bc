#include "pulse/core/model/capability.h"

#include <catch2/catch.hpp>
#include <string>

#include "action_test_support.h"
#include "pulse/core/model/resource_id.h"

namespace pulse::core {
namespace {

using testing::actions::ReloadCapability;
using testing::actions::RestartCapability;

Capability Typed() {
  Capability c;
  c.name = "typed";
  c.minimum_approval = ApprovalLevel::kNone;
  c.params = {
      {"s", ParamType::kString, false, {}, "", false, ""},
      {"b", ParamType::kBoolean, false, {}, "", false, ""},
      {"i", ParamType::kInteger, false, {}, "", false, ""},
      {"n", ParamType::kNumber, false, {}, "", false, ""},
      {"o", ParamType::kObject, false, {}, "", false, ""},
      {"a", ParamType::kArray, false, {}, "", false, ""},
      {"x", ParamType::kAny, false, {}, "", false, ""},
  };
  return c;
}

TEST_CASE("capability enums round-trip their wire names and accept type aliases",
          "[core][actions]") {
  for (ApprovalLevel l : {ApprovalLevel::kNone, ApprovalLevel::kAdmin, ApprovalLevel::kMfa,
                          ApprovalLevel::kDryRunOnly}) {
    CHECK(ParseApprovalLevel(ToString(l)) == l);
  }
  CHECK(ToString(ApprovalLevel::kDryRunOnly) == "dry_run_only");
  for (AutoAuthorization a :
       {AutoAuthorization::kNever, AutoAuthorization::kLowRisk, AutoAuthorization::kElevated}) {
    CHECK(ParseAutoAuthorization(ToString(a)) == a);
  }
  CHECK(ParseParamType("bool") == ParamType::kBoolean);
  CHECK(ParseParamType("int") == ParamType::kInteger);
  CHECK(ParseParamType("float64") == ParamType::kNumber);
  CHECK(ParseParamType("map") == ParamType::kObject);
  CHECK(ToString(ParamType::kBoolean) == "boolean");
  CHECK_FALSE(ParseParamType("String").has_value());
  CHECK_FALSE(ParseApprovalLevel("ADMIN").has_value());
}

TEST_CASE("well-formed capability declarations validate", "[core][actions]") {
  CHECK(ValidateCapability(RestartCapability()).ok());
  CHECK(ValidateCapability(ReloadCapability()).ok());
  CHECK(ValidateCapability(Typed()).ok());
}

TEST_CASE("malformed capability declarations are refused", "[core][actions]") {
  auto with = [](auto edit) {
    Capability c = RestartCapability();
    edit(c);
    return ValidateCapability(c);
  };
  CHECK_FALSE(with([](Capability& c) { c.name = "Restart"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.name = ""; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.name = std::string(65, 'a'); }).ok());
  CHECK_FALSE(with([](Capability& c) { c.description = std::string("a\0b", 3); }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params.push_back(c.params[0]); }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].name = " mode"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[1].enum_values = {"1"}; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[1].pattern = "^1$"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].enum_values = {"a", "a"}; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].pattern = "(unclosed"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].pattern = "\\d+"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].pattern = "a{1000}{1000}"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].pattern = "((((a{60}){60}){60}){60})"; }).ok());
  CHECK_FALSE(with([](Capability& c) { c.params[0].pattern = std::string(300, 'a'); }).ok());
  CHECK_FALSE(with([](Capability& c) {
                for (int i = 0; i < 40; ++i) {
                  CapabilityParam p;
                  p.name = "p" + std::to_string(i);
                  c.params.push_back(p);
                }
              }).ok());
}

TEST_CASE("params are canonicalized and accept every declared type", "[core][actions]") {
  const ParamValidation v = ValidateParams(
      Typed(), R"({"x":null,"a":[1,"two"],"o":{"z":1,"a":2},"n":-1.5e3,"i":-7,"b":false,"s":"é"})");
  // null is not a value of any type, including any.
  CHECK(v.errors == ParamErrors{{"x", "must be of type any"}});
  const ParamValidation ok = ValidateParams(
      Typed(), R"({"x":0,"a":[1,"two"],"o":{"z":1,"a":2},"n":-1.5e3,"i":-7,"b":false,"s":"é"})");
  REQUIRE(ok.ok());
  CHECK(ok.canonical_params ==
        R"({"a":[1,"two"],"b":false,"i":-7,"n":-1500.0,"o":{"a":2,"z":1},"s":"é","x":0})");
  CHECK(ValidateParams(Typed(), "").canonical_params == "{}");
  CHECK(ValidateParams(Typed(), " { } ").canonical_params == "{}");
  CHECK(ValidateParams(Typed(), R"({"i":18446744073709551615})").ok());
}

TEST_CASE("params of the wrong type are refused per field", "[core][actions]") {
  const std::vector<std::pair<std::string, std::string>> wrong = {
      {R"({"s":1})", "s"},   {R"({"b":"true"})", "b"}, {R"({"b":1})", "b"},
      {R"({"i":1.0})", "i"}, {R"({"i":"1"})", "i"},    {R"({"i":1e2})", "i"},
      {R"({"n":"1"})", "n"}, {R"({"o":[]})", "o"},     {R"({"a":{}})", "a"},
  };
  for (const auto& [params, field] : wrong) {
    INFO(params);
    const ParamValidation v = ValidateParams(Typed(), params);
    CHECK_FALSE(v.ok());
    CHECK(v.errors.count(field) == 1);
    CHECK(v.canonical_params.empty());
  }
}

TEST_CASE("hostile params are refused without echoing them", "[core][actions]") {
  const Capability c = Typed();
  CHECK(ValidateParams(c, std::string("{\"s\":\"a\\u0000b\"}")).errors.count("params") == 1);
  CHECK(ValidateParams(c, "{\"s\":\"\xC3\x28\"}").errors.count("params") == 1);
  CHECK(ValidateParams(c, "{\"s\":\"\xED\xA0\x80\"}").errors.count("params") == 1);  // surrogate
  CHECK(ValidateParams(c, "{\"s\":\"\xC0\xAF\"}").errors.count("params") == 1);      // overlong
  CHECK(ValidateParams(c, "{\"s\":\"" + std::string(5000, 'a') + "\"}").errors.count("params") ==
        1);
  CHECK(ValidateParams(c, std::string(20000, ' ') + "{}").errors.count("params") == 1);
  std::string deep = R"({"o":)";
  for (int i = 0; i < 20; ++i) {
    deep += R"({"k":)";
  }
  deep += "1" + std::string(21, '}');
  CHECK(ValidateParams(c, deep).errors.count("params") == 1);
  CHECK(ValidateParams(c, "{} {}").errors.count("params") == 1);
  CHECK(ValidateParams(c, "{'s':1}").errors.count("params") == 1);
  CHECK(ValidateParams(c, "[]").errors.at("params") == "must be a JSON object");
  CHECK(ValidateParams(c, "\"{}\"").errors.at("params") == "must be a JSON object");
  const ParamValidation hostile_name = ValidateParams(c, "{\"<script>\":1}");
  CHECK(hostile_name.errors.count("params") == 1);
  CHECK(hostile_name.errors.at("params").find("<script>") == std::string::npos);
  std::string many = "{";
  for (int i = 0; i < 40; ++i) {
    many += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":1";
  }
  many += "}";
  CHECK(ValidateParams(c, many).errors.count("params") == 1);
}

TEST_CASE("required, enum and pattern rules hold", "[core][actions]") {
  const Capability reload = ReloadCapability();
  CHECK(ValidateParams(reload, "{}").errors == ParamErrors{{"unit", "is required"}});
  CHECK(ValidateParams(reload, R"({"unit":"nginx.service"})").ok());
  CHECK(ValidateParams(reload, R"({"unit":"Nginx.service"})").errors.count("unit") == 1);
  CHECK(ValidateParams(reload, R"({"unit":"nginx.service\n"})").errors.count("unit") == 1);
  CHECK(ValidateParams(reload, R"({"unit":"x.service; reboot"})").errors.count("unit") == 1);
  const Capability restart = RestartCapability();
  CHECK(ValidateParams(restart, R"({"mode":"force"})").ok());
  CHECK(ValidateParams(restart, R"({"mode":"Force"})").errors.at("mode") ==
        "is not one of the declared values");
  CHECK(ValidateParams(restart, R"({"mode":"force "})").errors.count("mode") == 1);
}

TEST_CASE("pattern search is unanchored unless the pattern anchors", "[core][actions]") {
  CHECK(*PatternSearch("ab", "xxabyy"));
  CHECK_FALSE(*PatternSearch("^ab", "xab"));
  CHECK_FALSE(*PatternSearch("ab$", "abx"));
  CHECK(*PatternSearch("^[a-z]{2,3}$", "abc"));
  CHECK_FALSE(*PatternSearch("^[a-z]{2,3}$", "abcd"));
  CHECK(*PatternSearch("^(foo|bar)+$", "foobarfoo"));
  CHECK(*PatternSearch("^[^/]+$", "web-01"));
  CHECK_FALSE(*PatternSearch("^[^/]+$", "a/b"));
  // A prefix must never decide: NUL and invalid UTF-8 never match.
  CHECK_FALSE(*PatternSearch("^[a-z]+$", std::string("abc\0;rm", 7)));
  CHECK_FALSE(*PatternSearch("^[a-z]+", "abc\xff"));
  CHECK_FALSE(PatternSearch("[", "a").ok());
  CHECK_FALSE(PatternSearch("\\w+", "a").ok());
  // Linear time: a classic catastrophic-backtracking pattern on a long subject is fast and
  // correct.
  CHECK_FALSE(*PatternSearch("^(a+)+$", std::string(4000, 'a') + "b"));
}

TEST_CASE("canonical resource ids parse and reject look-alikes", "[core][actions]") {
  for (const char* ok : {"node:pve1", "vm:101", "app-container:web", "service:pve1/nginx",
                         "storage:pve1/local-lvm", "backup-job:daily@pbs", "vm:a.b_c"}) {
    INFO(ok);
    CHECK(IsCanonicalResourceId(ok));
  }
  const std::optional<CanonicalResourceId> svc = ParseCanonicalResourceId("service:pve1/nginx");
  REQUIRE(svc.has_value());
  CHECK(svc->type == "service");
  CHECK(svc->local == "pve1/nginx");
  for (const char* bad :
       {"", "vm", "vm:", ":101", "VM:101", "vm :101", "vm:10 1", "1vm:1", "vm:101/", "vm:/101",
        "vm:a//b", "vm:../x", "vm:a/../b", "vm:.", "vm:a/./b", "vm:101\n", "vm:10\xC3\xA9",
        "a-very-long-type-name-over-32-chars:1"}) {
    INFO(bad);
    CHECK_FALSE(IsCanonicalResourceId(bad));
  }
  CHECK_FALSE(IsCanonicalResourceId("vm:" + std::string(300, 'a')));
}

}  // namespace
}  // namespace pulse::core
