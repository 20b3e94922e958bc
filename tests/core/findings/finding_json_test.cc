#include "pulse/core/findings/finding_json.h"

#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "contracts/finding_store_contract.h"
#include "pulse/core/model/suppression_rule.h"

namespace pulse::core {
namespace {

using testing::contracts::FullFinding;

Finding Minimal() {
  Finding f;
  f.id = "abc";
  f.resource_id = "vm:1";
  f.title = "t";
  f.detected_at = absl::FromUnixSeconds(1'800'000'000);
  f.last_seen_at = f.detected_at;
  return f;
}

std::string MinimalJson(const std::string& extra = "") {
  return R"({"id":"abc","severity":"warning","category":"general","resource_id":"vm:1",)"
         R"("title":"t","detected_at":"2027-01-15T08:00:00Z",)"
         R"("last_seen_at":"2027-01-15T08:00:00Z")" +
         extra + "}";
}

void ExpectRejected(const std::string& json, const std::string& why) {
  INFO(why << ": " << json.substr(0, 200));
  auto parsed = FindingFromJson(json);
  REQUIRE_FALSE(parsed.ok());
  CHECK(absl::IsInvalidArgument(parsed.status()));
}

TEST_CASE("a finding with every field round trips through JSON", "[core][findings]") {
  const Finding f = FullFinding("0123456789abcdef");
  auto parsed = FindingFromJson(FindingToJson(f));
  REQUIRE(parsed.ok());
  CHECK(*parsed == f);
  const Finding m = Minimal();
  auto minimal = FindingFromJson(FindingToJson(m));
  REQUIRE(minimal.ok());
  CHECK(*minimal == m);
}

TEST_CASE("the encoding uses the wire field names and shapes", "[core][findings]") {
  const std::string json = FindingToJson(FullFinding("f1"));
  for (const char* fragment :
       {R"("id":"f1")", R"("severity":"critical")", R"("category":"capacity")",
        R"("resource_id":"storage:pve1:local-zfs")", R"("auto_resolved":true)",
        R"("times_raised":7)", R"("suppressed":false)", R"("dismissed_reason":"will_fix_later")",
        R"("remind_count":2)", R"("investigation_attempts":1)", R"("loop_state":"resolved")",
        R"("detected_at":"2027-01-15T08:00:00Z")",
        R"("last_seen_at":"2027-01-15T08:15:00.00000025Z")",
        R"("capacity_forecast":{"metric":"usage","reading":"filling","sample_count":48,)"
        R"("current_pct":91.25,"daily_change":5.5,"days_to_full":2})",
        R"("investigation_record":{"proposed_fix":{"description":"prune"},"steps":[1,2]})",
        R"("alert_identifier":"alert-7")", R"("regression_count":3)"}) {
    INFO(fragment);
    CHECK(json.find(fragment) != std::string::npos);
  }
  const std::string minimal = FindingToJson(Minimal());
  CHECK(minimal.find("\"auto_resolved\":false") != std::string::npos);
  CHECK(minimal.find("\"times_raised\":0") != std::string::npos);
  CHECK(minimal.find("lifecycle") == std::string::npos);
  CHECK(minimal.find("resolved_at") == std::string::npos);
}

TEST_CASE("public JSON hides the alert identifier and derives the live loop state",
          "[core][findings]") {
  Finding f = Minimal();
  f.alert_identifier = "alert-1";
  f.snoozed_until = f.detected_at + absl::Hours(1);
  f.loop_state = LoopState::kSnoozed;
  FindingJsonOptions options;
  options.include_private = false;
  options.now = f.detected_at + absl::Hours(2);  // the snooze has lapsed
  const std::string json = FindingToJson(f, options);
  CHECK(json.find("alert_identifier") == std::string::npos);
  CHECK(json.find(R"("loop_state":"detected")") != std::string::npos);
  CHECK(FindingToJson(f).find(R"("loop_state":"snoozed")") != std::string::npos);
  const Finding list[] = {f, Minimal()};
  const std::string array = FindingListToJson(list, options);
  CHECK(array.front() == '[');
  CHECK(array.back() == ']');
}

TEST_CASE("a forecast without a fill date encodes days_to_full as -1", "[core][findings]") {
  CapacityForecast f;
  f.metric = "disk";
  f.reading = ForecastReading::kNoFillTrend;
  f.sample_count = 48;
  f.current_pct = 86;
  f.daily_change = 0.01;
  const std::string json = CapacityForecastToJson(f);
  CHECK(json ==
        R"({"metric":"disk","reading":"no_fill_trend","sample_count":48,"current_pct":86.0,)"
        R"("daily_change":0.01,"days_to_full":-1})");
  auto parsed = CapacityForecastFromJson(json);
  REQUIRE(parsed.ok());
  CHECK(*parsed == f);
  CapacityForecast weird = f;
  weird.current_pct = std::numeric_limits<double>::quiet_NaN();
  weird.daily_change = std::numeric_limits<double>::infinity();
  const std::string finite = CapacityForecastToJson(weird);
  CHECK(finite.find("current_pct") == std::string::npos);
  CHECK(finite.find("daily_change") == std::string::npos);
  CHECK(CapacityForecastFromJson(finite).ok());
}

TEST_CASE("ill-formed UTF-8 in a finding still encodes as valid JSON", "[core][findings]") {
  Finding f = Minimal();
  f.title = "bad \xC3( byte";
  f.lifecycle.push_back(LifecycleEvent{
      f.detected_at, LifecycleEventType::kDetected, "\xFF", {}, {}, {{"k\xFE", "v\x80"}}});
  const std::string json = FindingToJson(f);
  auto parsed = FindingFromJson(json);
  REQUIRE(parsed.ok());
  CHECK(parsed->title == "bad \xEF\xBF\xBD( byte");
  CHECK(parsed->lifecycle.at(0).message == "\xEF\xBF\xBD");
}

TEST_CASE("malformed finding JSON is rejected", "[core][findings]") {
  CHECK(FindingFromJson(MinimalJson()).ok());
  ExpectRejected("", "empty");
  ExpectRejected("not json", "not JSON");
  ExpectRejected(MinimalJson() + " {}", "trailing value");
  ExpectRejected("[]", "not an object");
  ExpectRejected(R"({"id":"abc"})", "missing required members");
  ExpectRejected(MinimalJson(R"(,"id":"again")"), "duplicate member");
  ExpectRejected(MinimalJson(R"(,"unexpected":1)"), "unknown member");
  ExpectRejected(MinimalJson(R"(,"times_raised":"7")"), "count as string");
  ExpectRejected(MinimalJson(R"(,"times_raised":-1)"), "negative count");
  ExpectRejected(MinimalJson(R"(,"times_raised":1.5)"), "fractional count");
  ExpectRejected(MinimalJson(R"(,"times_raised":1e300)"), "huge count");
  ExpectRejected(MinimalJson(R"(,"suppressed":"yes")"), "bool as string");
  ExpectRejected(MinimalJson(R"(,"dismissed_reason":"bored")"), "unknown enum");
  ExpectRejected(MinimalJson(R"(,"loop_state":"DETECTED")"), "enum case");
  ExpectRejected(MinimalJson(R"(,"resolved_at":"yesterday")"), "bad time");
  ExpectRejected(MinimalJson(R"(,"resolved_at":"2027-13-45T99:00:00Z")"), "impossible time");
  ExpectRejected(MinimalJson(R"(,"resolved_at":"2027-01-15T08:00:00")"), "time without offset");
  ExpectRejected(MinimalJson(R"(,"resolved_at":"10000-01-01T00:00:00Z")"), "year 10000");
  ExpectRejected(MinimalJson(R"(,"resolved_at":1800000000)"), "time as number");
  ExpectRejected(MinimalJson(R"(,"lifecycle":{})"), "lifecycle not an array");
  ExpectRejected(MinimalJson(R"(,"lifecycle":[{"type":"detected"}])"), "event without time");
  ExpectRejected(MinimalJson(R"(,"lifecycle":[{"at":"2027-01-15T08:00:00Z","type":"x"}])"),
                 "unknown event type");
  ExpectRejected(MinimalJson(R"(,"lifecycle":[{"at":"2027-01-15T08:00:00Z","type":"detected",)"
                             R"("metadata":{"k":1}}])"),
                 "metadata value not a string");
  ExpectRejected(MinimalJson(R"(,"investigation_record":[1])"), "opaque member not an object");
  ExpectRejected(MinimalJson(R"(,"capacity_forecast":{"reading":"soon"})"), "bad forecast");
  ExpectRejected(MinimalJson(R"(,"capacity_forecast":{"reading":"filling","days_to_full":-7})"),
                 "negative days");
}

TEST_CASE("hostile finding JSON is bounded", "[core][findings]") {
  std::string events;
  for (int i = 0; i < 51; ++i) {
    events += std::string(i ? "," : "") + R"({"at":"2027-01-15T08:00:00Z","type":"detected"})";
  }
  ExpectRejected(MinimalJson(R"(,"lifecycle":[)" + events + "]"), "51 events");
  ExpectRejected(MinimalJson(R"(,"title2":")" + std::string(kMaxFindingJsonBytes, 'a') + "\""),
                 "over the byte limit");
  ExpectRejected(
      MinimalJson(R"(,"description":")" + std::string(kMaxFindingTextBytes + 1, 'a') + "\""),
      "text field too long");
  ExpectRejected(
      MinimalJson(R"(,"key":")" + std::string(kMaxFindingIdentifierBytes + 1, 'k') + "\""),
      "identifier too long");
  std::string deep = R"(,"investigation_record":)";
  for (int i = 0; i < 100000; ++i) {
    deep += R"({"a":)";
  }
  deep += "1";
  for (int i = 0; i < 100000; ++i) {
    deep += "}";
  }
  ExpectRejected(MinimalJson(deep), "100000 levels of nesting");
  ExpectRejected(MinimalJson(",\"user_note\":\"\xC3(\""), "invalid UTF-8");
  ExpectRejected(MinimalJson(",\"user_note\":\"\xED\xA0\x80\""), "encoded surrogate");
  std::string metadata;
  for (int i = 0; i < 17; ++i) {
    metadata += std::string(i ? "," : "") + "\"k" + std::to_string(i) + "\":\"v\"";
  }
  ExpectRejected(MinimalJson(R"(,"lifecycle":[{"at":"2027-01-15T08:00:00Z","type":"detected",)"
                             R"("metadata":{)" +
                             metadata + "}}]"),
                 "too many metadata entries");
  // A NUL inside a string is data, not a terminator.
  auto nul = FindingFromJson(MinimalJson(R"(,"user_note":"a\u0000b")"));
  REQUIRE(nul.ok());
  CHECK(nul->user_note == std::string("a\0b", 3));
}

TEST_CASE("suppression rules round trip and their id must match their scope", "[core][findings]") {
  SuppressionRule rule = testing::contracts::Rule("vm:1", Category::kBackup);
  rule.finding_id = "f1";
  rule.dismissed_reason = DismissReason::kSuppressed;
  rule.created_from = SuppressionOrigin::kSuppress;
  auto parsed = SuppressionRuleFromJson(SuppressionRuleToJson(rule));
  REQUIRE(parsed.ok());
  CHECK(*parsed == rule);
  SuppressionRule broad = testing::contracts::Rule("", std::nullopt);
  auto parsed_broad = SuppressionRuleFromJson(SuppressionRuleToJson(broad));
  REQUIRE(parsed_broad.ok());
  CHECK(*parsed_broad == broad);
  SuppressionRule forged = rule;
  forged.id = SuppressionRuleIdFor("vm:2", Category::kBackup);
  CHECK(absl::IsInvalidArgument(SuppressionRuleFromJson(SuppressionRuleToJson(forged)).status()));
  CHECK(absl::IsInvalidArgument(SuppressionRuleFromJson(R"({"id":"x"})").status()));
  CHECK(SuppressionRuleIdFor("vm:1", Category::kBackup).rfind("sr-", 0) == 0);
  CHECK(SuppressionRuleIdFor("vm:1", Category::kBackup) !=
        SuppressionRuleIdFor("vm:1", std::nullopt));
  CHECK(SuppressionRuleIdFor("", Category::kBackup) !=
        SuppressionRuleIdFor("*", Category::kBackup));
  CHECK(SuppressionRuleIdFor("a:backup", std::nullopt) !=
        SuppressionRuleIdFor("a", Category::kBackup));
}

TEST_CASE("a rule matches on its set fields and treats empty ones as wildcards",
          "[core][findings]") {
  SuppressionRule exact = testing::contracts::Rule("vm:1", Category::kBackup);
  CHECK(RuleMatches(exact, "vm:1", Category::kBackup));
  CHECK_FALSE(RuleMatches(exact, "vm:1", Category::kSecurity));
  CHECK_FALSE(RuleMatches(exact, "vm:2", Category::kBackup));
  CHECK_FALSE(IsBroadRule(exact));
  SuppressionRule any_category = testing::contracts::Rule("vm:1", std::nullopt);
  CHECK(RuleMatches(any_category, "vm:1", Category::kSecurity));
  CHECK(IsBroadRule(any_category));
  SuppressionRule any_resource = testing::contracts::Rule("", Category::kBackup);
  CHECK(RuleMatches(any_resource, "vm:9", Category::kBackup));
  CHECK(IsBroadRule(any_resource));
}

}  // namespace
}  // namespace pulse::core
