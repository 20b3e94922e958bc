// SessionRecord JSON: the persisted form of a session round-trips every field exactly, and the
// decoder refuses malformed, oversized and hostile input with InvalidArgument.
#include "pulse/core/loop/session_record_json.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"
#include "contracts/session_store_contract.h"
#include "pulse/core/json/utf8.h"

namespace pulse::core {
namespace {

std::string MinimalJson(const std::string& extra = "") {
  return R"({"id":"ses_a","revision":1,"status":"idle",)"
         R"("fsm":{"state":"RESOLVING","wrote_this_episode":false,"read_after_write":false,)"
         R"("consecutive_verify_blocks":0},)"
         R"("created_at":"2027-01-15T08:00:00Z","updated_at":"2027-01-15T08:00:00.25Z")" +
         extra + "}";
}

std::string Counters(const std::string& extra = "") {
  return R"({"turns":1,"provider_calls":1,"input_tokens":1,"output_tokens":1,"tool_calls":1,)"
         R"("tool_errors":0,"evidence_calls":0,"consecutive_error_turns":0,"tools_run":{})" +
         extra + "}";
}

std::string WithSuspended(const std::string& counters, const std::string& extra = "") {
  return MinimalJson(R"(,"suspended":{"transcript_index":0,"suspended_at":"2027-01-15T08:00:00Z",)"
                     R"("denied_fingerprints":[],"counters":)" +
                     counters + extra + "}");
}

void ExpectRejected(const std::string& json, const char* why) {
  INFO(why);
  absl::StatusOr<SessionRecord> parsed = SessionRecordFromJson(json);
  REQUIRE_FALSE(parsed.ok());
  CHECK(absl::IsInvalidArgument(parsed.status()));
}

SessionRecord FullyPopulated() {
  SessionRecord r = testing::session_contract::FullSession("ses_full-01");
  r.revision = 7;
  r.transcript.push_back(Message::ToolResult("call_3", "pulse_read", "boom\x01\x7F\0x", true));
  r.transcript.back().content.push_back('\0');
  r.fsm.read_after_write = true;
  r.fsm.last_read_at_unix_nanos = -5;  // before the epoch: still exact
  r.facts.push_back({"k", std::string("nul\0inside", 10), "call_3", 3});
  r.created_at = absl::FromUnixNanos(1'799'999'000'000'000'001);
  return r;
}

TEST_CASE("a fully populated session round trips through JSON exactly", "[core][loop]") {
  const SessionRecord r = FullyPopulated();
  REQUIRE(r.suspended.has_value());
  REQUIRE(r.suspended->counters.tools_run.size() == 2);
  const std::string json = SessionRecordToJson(r);
  CHECK(IsValidUtf8(json));
  absl::StatusOr<SessionRecord> back = SessionRecordFromJson(json);
  REQUIRE(back.ok());
  CHECK(*back == r);
  CHECK(SessionRecordToJson(*back) == json);
  CHECK(json.find(R"("status":"awaiting_approval")") != std::string::npos);
  CHECK(json.find(R"("last_read_at_unix_nanos":-5)") != std::string::npos);
}

TEST_CASE("a default record and a minimal document round trip", "[core][loop]") {
  SessionRecord r;
  r.id = "ses_empty";
  absl::StatusOr<SessionRecord> back = SessionRecordFromJson(SessionRecordToJson(r));
  REQUIRE(back.ok());
  CHECK(*back == r);
  absl::StatusOr<SessionRecord> minimal = SessionRecordFromJson(MinimalJson());
  REQUIRE(minimal.ok());
  CHECK(minimal->updated_at - minimal->created_at == absl::Milliseconds(250));
  CHECK(minimal->transcript.empty());
  CHECK_FALSE(minimal->suspended.has_value());
  CHECK(SessionRecordFromJson(WithSuspended(Counters())).ok());
}

TEST_CASE("a record written before usage accounting still loads", "[core][loop]") {
  absl::StatusOr<SessionRecord> old = SessionRecordFromJson(WithSuspended(Counters()));
  REQUIRE(old.ok());
  CHECK(old->usage.empty());
  CHECK(old->usage_totals == UsageTotals{});
  REQUIRE(old->suspended.has_value());
  CHECK(old->suspended->counters.cost_usd == 0);
  CHECK_FALSE(old->suspended->counters.cost_unknown);
}

TEST_CASE("a tool call's provider state round trips and is optional", "[core][loop]") {
  const SessionRecord full = FullyPopulated();
  REQUIRE_FALSE(full.transcript.at(1).tool_calls.at(0).provider_state.empty());
  absl::StatusOr<SessionRecord> back = SessionRecordFromJson(SessionRecordToJson(full));
  REQUIRE(back.ok());
  CHECK(back->transcript.at(1).tool_calls.at(0).provider_state ==
        full.transcript.at(1).tool_calls.at(0).provider_state);

  // Written before provider state existed: the call loads without one.
  const std::string call = R"(,"transcript":[{"role":"assistant","is_error":false,)"
                           R"("tool_calls":[{"id":"c1","name":"pulse_read","arguments":"{}")";
  absl::StatusOr<SessionRecord> old = SessionRecordFromJson(MinimalJson(call + "}]}]"));
  REQUIRE(old.ok());
  CHECK(old->transcript.at(0).tool_calls.at(0).provider_state.empty());
  absl::StatusOr<SessionRecord> signed_call =
      SessionRecordFromJson(MinimalJson(call + R"(,"provider_state":"sig=="}]}])"));
  REQUIRE(signed_call.ok());
  CHECK(signed_call->transcript.at(0).tool_calls.at(0).provider_state == "sig==");

  ExpectRejected(MinimalJson(call + R"(,"provider_state":7}]}])"), "provider state not a string");
  ExpectRejected(MinimalJson(call + R"(,"thought_signature":"x"}]}])"), "unknown tool call member");
  ExpectRejected(MinimalJson(call + R"(,"provider_state":")" +
                             std::string(kMaxProviderStateBytes + 1, 'A') + R"("}]}])"),
                 "oversized provider state");
}

TEST_CASE("usage entries and totals round trip and are checked", "[core][loop]") {
  SessionRecord r;
  r.id = "ses_usage";
  r.usage = {{3, "anthropic:claude", 10, 20, 1.0 / 3.0, true}};
  r.usage_totals = {1, 10, 20, 1.0 / 3.0, 0};
  const std::string json = SessionRecordToJson(r);
  absl::StatusOr<SessionRecord> back = SessionRecordFromJson(json);
  REQUIRE(back.ok());
  CHECK(*back == r);
  CHECK(json.find(R"("usage":[{"turn":3,"route":"anthropic:claude","input_tokens":10,)") !=
        std::string::npos);

  const std::string entry = R"({"turn":0,"input_tokens":1,"output_tokens":1,)";
  CHECK(
      SessionRecordFromJson(MinimalJson(R"(,"usage":[)" + entry + R"("budget_applicable":false}])"))
          .ok());
  ExpectRejected(MinimalJson(R"(,"usage":{})"), "usage not an array");
  ExpectRejected(
      MinimalJson(R"(,"usage":[)" + entry + R"("cost_usd":-1,"budget_applicable":true}])"),
      "negative cost");
  ExpectRejected(
      MinimalJson(R"(,"usage":[)" + entry + R"("cost_usd":"1","budget_applicable":true}])"),
      "cost not a number");
  ExpectRejected(MinimalJson(R"(,"usage":[{"turn":0,"input_tokens":-1,"output_tokens":1,)"
                             R"("budget_applicable":true}])"),
                 "negative tokens");
  ExpectRejected(MinimalJson(R"(,"usage":[)" + entry + R"("budget_applicable":true,"x":1}])"),
                 "unknown usage member");
  ExpectRejected(MinimalJson(R"(,"usage":[)" + entry + R"("cost_usd":1}])"),
                 "usage without budget_applicable");
  ExpectRejected(MinimalJson(R"(,"usage_totals":{"provider_calls":1})"), "partial totals");
  ExpectRejected(WithSuspended(Counters(R"(,"cost_usd":-0.5)")), "negative run cost");
  std::string many;
  for (std::size_t i = 0; i <= kMaxSessionUsageEntries; ++i) {
    many += (i ? "," : "") + entry + R"("budget_applicable":true})";
  }
  ExpectRejected(MinimalJson(R"(,"usage":[)" + many + "]"), "too many usage entries");
}

TEST_CASE("malformed session JSON is rejected", "[core][loop]") {
  ExpectRejected("", "empty");
  ExpectRejected("not json", "not JSON");
  ExpectRejected(MinimalJson() + " {}", "trailing value");
  ExpectRejected("[]", "not an object");
  ExpectRejected(R"({"id":"ses_a"})", "missing required members");
  ExpectRejected(MinimalJson(R"(,"id":"again")"), "duplicate member");
  ExpectRejected(MinimalJson(R"(,"unexpected":1)"), "unknown member");
  ExpectRejected(R"({"id":"","revision":1})", "empty id");
  ExpectRejected(MinimalJson(R"(,"transcript":{})"), "transcript not an array");
  ExpectRejected(MinimalJson(R"(,"transcript":[{"role":"robot","is_error":false}])"),
                 "unknown role");
  ExpectRejected(MinimalJson(R"(,"transcript":[{"role":"user"}])"), "message without is_error");
  ExpectRejected(MinimalJson(R"(,"transcript":[{"role":"user","is_error":"no"}])"),
                 "bool as string");
  ExpectRejected(MinimalJson(R"(,"transcript":[{"role":"user","is_error":false,"extra":1}])"),
                 "unknown message member");
  ExpectRejected(
      MinimalJson(
          R"(,"transcript":[{"role":"assistant","is_error":false,"tool_calls":[{"id":1}]}])"),
      "tool call id as number");
  ExpectRejected(MinimalJson(R"(,"facts":[{"key":"k","turn":-1}])"), "negative turn");
  ExpectRejected(MinimalJson(R"(,"facts":[{"key":"k","turn":1.5}])"), "fractional turn");
  ExpectRejected(MinimalJson(R"(,"facts":[{"key":"k","turn":1e300}])"), "huge turn");
  ExpectRejected(WithSuspended(Counters(), R"(,"suspended_at":"yesterday")"), "bad time");
  ExpectRejected(WithSuspended(Counters(R"(,"turns":2)")), "duplicate counter");
  ExpectRejected(WithSuspended(Counters().replace(1, 10, "")), "missing counter");
  ExpectRejected(WithSuspended(Counters().replace(Counters().size() - 3, 2, R"({"t":-1})")),
                 "negative tools_run count");
  ExpectRejected(WithSuspended(Counters().replace(Counters().size() - 3, 2, R"({"t":1,"t":2})")),
                 "duplicate tools_run entry");
  ExpectRejected(WithSuspended(Counters(), R"(,"denied_fingerprints":[1])"),
                 "fingerprint not a string");
  ExpectRejected(MinimalJson(R"(,"suspended":[])"), "suspended not an object");
}

TEST_CASE("the status member is checked against the vocabulary", "[core][loop]") {
  std::string json = MinimalJson();
  const std::string idle = R"("status":"idle")";
  std::string upper = json;
  upper.replace(json.find(idle), idle.size(), R"("status":"IDLE")");
  ExpectRejected(upper, "enum case");
  std::string unknown = json;
  unknown.replace(json.find(idle), idle.size(), R"("status":"sleeping")");
  ExpectRejected(unknown, "unknown status");
  std::string number = json;
  number.replace(json.find(idle), idle.size(), R"("status":0)");
  ExpectRejected(number, "status as number");
}

TEST_CASE("hostile session JSON is bounded", "[core][loop]") {
  ExpectRejected(MinimalJson(R"(,"x":")" + std::string(kMaxSessionRecordJsonBytes, 'a') + "\""),
                 "over the byte limit");
  std::string messages;
  for (std::size_t i = 0; i <= kMaxSessionTranscriptMessages; ++i) {
    messages += std::string(i ? "," : "") + R"({"role":"user","is_error":false})";
  }
  ExpectRejected(MinimalJson(R"(,"transcript":[)" + messages + "]"), "too many messages");
  std::string deep = R"(,"transcript":)";
  for (int i = 0; i < 100000; ++i) {
    deep += "[";
  }
  for (int i = 0; i < 100000; ++i) {
    deep += "]";
  }
  ExpectRejected(MinimalJson(deep), "100000 levels of nesting");
  ExpectRejected(MinimalJson().replace(7, 5, std::string(kMaxSessionIdBytes + 1, 'a')), "long id");
  ExpectRejected(MinimalJson(",\"transcript\":[{\"role\":\"user\",\"is_error\":false,"
                             "\"content\":\"\xC3(\"}]"),
                 "invalid UTF-8");
  ExpectRejected(MinimalJson(",\"transcript\":[{\"role\":\"user\",\"is_error\":false,"
                             "\"content\":\"\xED\xA0\x80\"}]"),
                 "encoded surrogate");
  // A NUL inside a string is data, not a terminator.
  absl::StatusOr<SessionRecord> nul = SessionRecordFromJson(
      MinimalJson(R"(,"transcript":[{"role":"user","is_error":false,"content":"a\u0000b"}])"));
  REQUIRE(nul.ok());
  CHECK(nul->transcript.at(0).content == std::string("a\0b", 3));
}

TEST_CASE("ill-formed UTF-8 still encodes as valid JSON but does not round trip", "[core][loop]") {
  SessionRecord r;
  r.id = "ses_bad";
  r.transcript.push_back(Message::User("bad \xC3( byte"));
  const std::string json = SessionRecordToJson(r);
  CHECK(IsValidUtf8(json));
  absl::StatusOr<SessionRecord> back = SessionRecordFromJson(json);
  REQUIRE(back.ok());
  CHECK(back->transcript.at(0).content == "bad \xEF\xBF\xBD( byte");
  CHECK_FALSE(*back == r);
}

}  // namespace
}  // namespace pulse::core
