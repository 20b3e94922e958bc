// The outbound context policy (core/loop/outbound_context.h): secrets planted anywhere in a
// request are redacted, local-only resources are withheld from JSON tool results and replaced in
// prose, a local model server gets the request untouched, and huge or hostile input is handled
// exactly (its cost is measured by tests/bench/loop/outbound_bench.cc).
#include "pulse/core/loop/outbound_context.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/loop/loop_texts.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_operator_state_store.h"

namespace pulse::core {
namespace {

using testing::FakeFleet;
using testing::InMemoryOperatorStateStore;

const std::string kPlaceholder(kLocalOnlyPlaceholder);

// One secret of each common shape, as it would appear in commands, logs and config.
const std::vector<std::string> kSecrets = {
    "sk-proj-PLANTEDabcdefghijklmnop",  // provider key
    "Planted-Bearer-0123456789",        // bearer token
    "pgPlanted_pw1",                    // PGPASSWORD=
    "myPlantedPw2",                     // mysql -p<password>
    "flagPlantedPw3",                   // --password=
    "jsonPlantedPw4",                   // "password":"..."
    "urlPlantedPw5",                    // postgres://user:pw@host
    "redisPlantedPw6",                  // redis-cli -a
};

LlmRequest RequestWithPlantedSecrets() {
  LlmRequest r;
  r.messages.push_back(Message::System("Operator notes: the staging key is " + kSecrets[0]));
  r.messages.push_back(Message::User("Why does `curl -H 'Authorization: Bearer " + kSecrets[1] +
                                     "' https://api` fail?"));
  r.messages.push_back(Message::Assistant(
      "Checking.", {ToolCall{"c1", "pulse_exec",
                             R"({"command":"PGPASSWORD=)" + kSecrets[2] +
                                 R"( psql -h db -c 'select 1' && mysql -uroot -p)" + kSecrets[3] +
                                 R"( -e status"})"}}));
  r.messages.push_back(
      Message::ToolResult("c1", "pulse_exec",
                          "Jan 01 sshd: started with --password=" + kSecrets[4] +
                              "\nconfig: {\"db\":{\"user\":\"app\",\"password\":\"" + kSecrets[5] +
                              "\"}}\nDATABASE_URL=postgres://app:" + kSecrets[6] +
                              "@db:5432/app\n" + "redis-cli -a " + kSecrets[7] + " ping",
                          false));
  return r;
}

// Everything a provider could read in `r`, concatenated.
std::string AllText(const LlmRequest& r) {
  std::string text;
  for (const Message& m : r.messages) {
    text += m.content + "\n";
    for (const ToolCall& c : m.tool_calls) {
      text += c.arguments_json + "\n";
    }
  }
  return text;
}

std::vector<LocalOnlyResource> SecretVm() { return {LocalOnlyResource{"vm:101", {"payroll-db"}}}; }

TEST_CASE("secrets planted in every part of a request never reach a hosted model",
          "[core][loop][outbound]") {
  const LlmRequest raw = RequestWithPlantedSecrets();
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi);
  const LlmRequest sent = policy.Apply(raw);
  const std::string text = AllText(sent);
  for (const std::string& secret : kSecrets) {
    INFO(secret);
    CHECK(AllText(raw).find(secret) != std::string::npos);  // the plant is real
    CHECK(text.find(secret) == std::string::npos);
  }
  CHECK(text.find("[REDACTED]") != std::string::npos);
  // The surrounding text survives, so the model still sees what happened.
  CHECK(text.find("psql -h db") != std::string::npos);
  CHECK(text.find("redis-cli -a [REDACTED] ping") != std::string::npos);
  // Shape is kept: roles, ids, tool names, error flags.
  REQUIRE(sent.messages.size() == raw.messages.size());
  for (std::size_t i = 0; i < raw.messages.size(); ++i) {
    CHECK(sent.messages[i].role == raw.messages[i].role);
    CHECK(sent.messages[i].tool_call_id == raw.messages[i].tool_call_id);
    CHECK(sent.messages[i].tool_name == raw.messages[i].tool_name);
  }
  CHECK(sent.messages[2].tool_calls.at(0).id == "c1");
  CHECK(sent.messages[2].tool_calls.at(0).name == "pulse_exec");
}

TEST_CASE("a coding-plan route is sanitized like a metered one", "[core][loop][outbound]") {
  const OutboundContextPolicy policy(InferenceRoute::kCodingPlanAllowance, SecretVm());
  CHECK_FALSE(policy.passes_through());
  const std::string text = AllText(policy.Apply(RequestWithPlantedSecrets()));
  for (const std::string& secret : kSecrets) {
    CHECK(text.find(secret) == std::string::npos);
  }
}

TEST_CASE("a local model server receives the request unchanged", "[core][loop][outbound]") {
  LlmRequest raw = RequestWithPlantedSecrets();
  raw.messages.push_back(Message::ToolResult(
      "c2", "pulse_query", R"({"resources":[{"id":"vm:101","name":"payroll-db"}]})", false));
  raw.tools.push_back(ToolDefinition{"pulse_query", "Query", "{}"});
  raw.max_tokens = 99;
  raw.cancelled = std::make_shared<std::atomic<bool>>(false);
  const OutboundContextPolicy policy(InferenceRoute::kLocalModelServer, SecretVm());
  CHECK(policy.passes_through());
  CHECK(policy.Apply(raw) == raw);
  CHECK(policy.SanitizeText(kSecrets[0]) == kSecrets[0]);
}

TEST_CASE("tools, tool choice, the completion cap and the cancellation flag are kept",
          "[core][loop][outbound]") {
  LlmRequest raw;
  raw.messages.push_back(Message::User("hi"));
  raw.tools.push_back(ToolDefinition{"pulse_read", "Read", R"({"type":"object"})"});
  raw.tool_choice = ToolChoice::kRequired;
  raw.max_tokens = 512;
  raw.cancelled = std::make_shared<std::atomic<bool>>(false);
  const LlmRequest sent = OutboundContextPolicy(InferenceRoute::kMeteredApi, SecretVm()).Apply(raw);
  CHECK(sent == raw);
}

TEST_CASE("a tool call's opaque provider state passes through untouched",
          "[core][loop][outbound]") {
  // Shapes the redactor and the local-only pass would rewrite in text: opaque bytes that happen
  // to hold them must still reach the provider exactly as it sent them.
  const std::string state =
      "Ci/AKIAIOSFODNN7EXAMPLE+sk-proj-PLANTEDabcdefghijklmnop vm:101 payroll-db";
  REQUIRE(RedactSecrets(state) != state);
  LlmRequest raw;
  raw.messages.push_back(Message::User("check vm:101"));
  raw.messages.push_back(
      Message::Assistant("", {ToolCall{"c1", "pulse_read", R"({"resource_id":"vm:101"})", state}}));
  raw.messages.push_back(Message::ToolResult("c1", "pulse_read", "ok", false));
  const LlmRequest sent = OutboundContextPolicy(InferenceRoute::kMeteredApi, SecretVm()).Apply(raw);
  const ToolCall& call = sent.messages.at(1).tool_calls.at(0);
  CHECK(call.provider_state == state);
  CHECK(call.id == "c1");
  CHECK(call.arguments_json.find("vm:101") == std::string::npos);  // the arguments are text
}

TEST_CASE("local-only objects are withheld from JSON arrays with an aggregate count",
          "[core][loop][outbound]") {
  const OutboundContextPolicy policy(
      InferenceRoute::kMeteredApi,
      {LocalOnlyResource{"vm:101", {"payroll-db"}}, LocalOnlyResource{"ct:7", {}}});
  const std::string result = policy.SanitizeToolResult(
      R"({"resources":[{"id":"vm:100","name":"web","ip":"10.0.0.4"},)"
      R"({"id":"vm:101","name":"payroll-db","ip":"10.0.0.5"},)"
      R"({"resource_id":"CT:7","status":"running"},"vm:101 as a plain string"],)"
      R"("count":4})");
  const absl::StatusOr<rapidjson::Document> doc = ParseJson(result);
  REQUIRE(doc.ok());
  const rapidjson::Value& resources = (*doc)["resources"];
  REQUIRE(resources.Size() == 3);
  CHECK(GetString(resources[0], "id") == "vm:100");
  CHECK(GetString(resources[0], "ip") == "10.0.0.4");
  CHECK(resources[1].GetString() == kPlaceholder + " as a plain string");
  CHECK(GetInt64(resources[2], kWithheldLocalOnlyMember) == 2);
  CHECK(resources[2].MemberCount() == 1);
  CHECK(result.find("10.0.0.5") == std::string::npos);
  CHECK(result.find("payroll-db") == std::string::npos);
  CHECK(result.find("vm:101") == std::string::npos);
}

TEST_CASE("a local-only object outside an array, and members keyed by its id, are withheld",
          "[core][loop][outbound]") {
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi, SecretVm());
  // The root itself.
  CHECK(policy.SanitizeToolResult(R"({"canonicalId":"vm:101","ip":"10.0.0.5"})") ==
        R"({"withheld_local_only_resources":1})");
  // An object member.
  const std::string nested =
      policy.SanitizeToolResult(R"({"target":{"resourceId":"vm:101","os":"debian"},"ok":true})");
  CHECK(nested == R"({"target":{"withheld_local_only_resources":1},"ok":true})");
  // A map keyed by id.
  const std::string keyed =
      policy.SanitizeToolResult(R"({"by_id":{"vm:100":{"cpu":1},"vm:101":{"cpu":97}}})");
  CHECK(keyed == R"({"by_id":{"vm:100":{"cpu":1},"withheld_local_only_resources":1}})");
  // Deeply nested arrays are walked too.
  const std::string deep =
      policy.SanitizeToolResult(R"({"a":[{"b":[{"id":"vm:101"},{"id":"vm:102"}]}]})");
  CHECK(deep == R"({"a":[{"b":[{"id":"vm:102"},{"withheld_local_only_resources":1}]}]})");
}

TEST_CASE("JSON without local-only objects keeps its formatting", "[core][loop][outbound]") {
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi, SecretVm());
  const std::string pretty = "{\n  \"id\": \"vm:100\",\n  \"note\": \"see vm:101\"\n}";
  CHECK(policy.SanitizeToolResult(pretty) ==
        "{\n  \"id\": \"vm:100\",\n  \"note\": \"see " + kPlaceholder + "\"\n}");
}

TEST_CASE("local-only ids and names are replaced in prose at token boundaries",
          "[core][loop][outbound]") {
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi,
                                     {LocalOnlyResource{"vm:101", {"Payroll-DB", "10.0.0.5", "db"}},
                                      LocalOnlyResource{"service:pve1/vault", {"vault \"prod\""}}});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vm:101 is down", kPlaceholder + " is down"},
      {"restart VM:101, then check payroll-db.",
       "restart " + kPlaceholder + ", then check " + kPlaceholder + "."},
      {"facts: [vm:101:state] stopped", "facts: [" + kPlaceholder + ":state] stopped"},
      {"host 10.0.0.5 answered", "host " + kPlaceholder + " answered"},
      // Not the same resource: a longer id, a longer address, a word containing the name.
      {"vm:1012 and 10.0.0.51 and payroll-dbx", "vm:1012 and 10.0.0.51 and payroll-dbx"},
      // Names shorter than kMinLocalOnlyNameBytes are too ambiguous for prose.
      {"the db is fine", "the db is fine"},
      {"unit service:pve1/vault failed", "unit " + kPlaceholder + " failed"},
      {R"({"name":"vault \"prod\""})", R"({"name":")" + kPlaceholder + R"("})"},
  };
  for (const auto& [in, out] : cases) {
    INFO(in);
    CHECK(policy.SanitizeText(in) == out);
  }
  // Idempotent, even when a name occurs in the placeholder itself.
  const OutboundContextPolicy tricky(InferenceRoute::kMeteredApi,
                                     {LocalOnlyResource{"vm:9", {"local", "resource"}}});
  const std::string once = tricky.SanitizeText("local resource vm:9");
  CHECK(once == kPlaceholder + " " + kPlaceholder + " " + kPlaceholder);
  CHECK(tricky.SanitizeText(once) == once);
}

TEST_CASE("the placeholder never says 'redacted by policy'", "[core][loop][outbound]") {
  CHECK(kLocalOnlyPlaceholder.find("redacted by policy") == std::string_view::npos);
}

TEST_CASE("framed tool results in a request get the structural pass behind their frame",
          "[core][loop][outbound]") {
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi, SecretVm());
  LlmRequest raw;
  const std::string frame =
      std::string(kUntrustedFramePrefix) + "pulse_query" + std::string(kUntrustedFrameSuffix);
  raw.messages.push_back(
      Message::ToolResult("c1", "pulse_query",
                          frame + R"([{"id":"vm:101","name":"payroll-db"},{"id":"vm:7"}])", false));
  const LlmRequest sent = policy.Apply(raw);
  CHECK(sent.messages[0].content ==
        frame + R"([{"id":"vm:7"},{"withheld_local_only_resources":1}])");
}

TEST_CASE("the local-only set is read from the operator state and named by the fleet",
          "[core][loop][outbound]") {
  InMemoryOperatorStateStore store;
  FakeFleet fleet;
  FleetResource vm;
  vm.id = "vm:101";
  vm.type = "vm";
  vm.name = "payroll-db";
  vm.attributes = {{"ip", "10.0.0.5"}, {"os", "debian"}};
  fleet.PutResource(vm, {});
  OperatorState marked;
  marked.resource_id = "vm:101";
  marked.set_by = "alice";
  marked.local_only = true;
  REQUIRE(store.Set(marked).ok());
  OperatorState gone = marked;
  gone.resource_id = "vm:404";  // local-only, but the fleet no longer knows it
  REQUIRE(store.Set(gone).ok());
  OperatorState shared = marked;
  shared.resource_id = "vm:102";
  shared.local_only = false;
  REQUIRE(store.Set(shared).ok());

  absl::StatusOr<std::vector<LocalOnlyResource>> loaded = LoadLocalOnlyResources(store, &fleet);
  REQUIRE(loaded.ok());
  CHECK(*loaded ==
        std::vector<LocalOnlyResource>{{"vm:101", {"payroll-db", "10.0.0.5"}}, {"vm:404", {}}});
  absl::StatusOr<std::vector<LocalOnlyResource>> ids_only = LoadLocalOnlyResources(store, nullptr);
  REQUIRE(ids_only.ok());
  CHECK(ids_only->size() == 2);

  store.FailNext(absl::UnavailableError("disk gone"));
  CHECK(absl::IsUnavailable(LoadLocalOnlyResources(store, &fleet).status()));
}

TEST_CASE("a 1 MB tool result is sanitized exactly", "[core][loop][outbound]") {
  std::vector<LocalOnlyResource> local;
  for (int i = 0; i < 200; ++i) {
    local.push_back(
        LocalOnlyResource{"vm:" + std::to_string(1000 + i), {"secret-host-" + std::to_string(i)}});
  }
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi, local);
  std::string json = R"({"resources":[)";
  int kept = 0;
  for (int i = 0; json.size() < (1 << 20); ++i) {
    const bool hidden = i % 10 == 0;
    const int id = hidden ? 1000 + (i / 10) % 200 : 5000 + i;
    kept += hidden ? 0 : 1;
    json += (i ? "," : "") + std::string(R"({"id":"vm:)") + std::to_string(id) +
            R"(","log":"password=hunter2 ok sk-proj-abcdefghijklmnopqrst"})";
  }
  json += "]}";
  // Its cost per byte is measured by tests/bench/loop/outbound_bench.cc, not timed here.
  const std::string out = policy.SanitizeToolResult(json);
  CHECK(out.find("hunter2") == std::string::npos);
  CHECK(out.find("sk-proj-") == std::string::npos);
  const absl::StatusOr<rapidjson::Document> doc = ParseJson(out, JsonLimits{4 << 20, 64});
  REQUIRE(doc.ok());
  const rapidjson::Value& resources = (*doc)["resources"];
  REQUIRE(resources.Size() == static_cast<rapidjson::SizeType>(kept + 1));
  CHECK(GetInt64(resources[resources.Size() - 1], kWithheldLocalOnlyMember).has_value());

  // The same size as prose full of near misses.
  std::string prose;
  while (prose.size() < (1 << 20)) {
    prose += "vm:10001 secret-host-1x vm:1000 secret-host-7 ";
  }
  const std::string cleaned = policy.SanitizeText(prose);
  CHECK(cleaned.find("vm:1000 ") == std::string::npos);
  CHECK(cleaned.find("secret-host-7 ") == std::string::npos);
  CHECK(cleaned.find("vm:10001") != std::string::npos);
  CHECK(cleaned.find("secret-host-1x") != std::string::npos);
}

TEST_CASE("hostile JSON falls back to text handling without failing", "[core][loop][outbound]") {
  const OutboundContextPolicy policy(InferenceRoute::kMeteredApi, SecretVm());
  // Nesting far past the parser's depth limit.
  std::string deep;
  for (int i = 0; i < 200000; ++i) {
    deep += "[";
  }
  deep += R"({"id":"vm:101","password":"hunter2"})";
  for (int i = 0; i < 200000; ++i) {
    deep += "]";
  }
  const std::string deep_out = policy.SanitizeToolResult(deep);
  CHECK(deep_out.find("vm:101") == std::string::npos);
  CHECK(deep_out.find("hunter2") == std::string::npos);
  // Truncated, duplicated keys, invalid UTF-8, embedded NULs.
  const std::vector<std::string> hostile = {
      R"({"resources":[{"id":"vm:101","ip":"10.0.0.5"},{"id":"vm:1)",
      R"({"id":"vm:100","id":"vm:101","detail":"x"})",
      "[{\"id\":\"vm:101\",\"bad\":\"\xC3(\"}]",
      std::string("[{\"id\":\"vm:101\"},\"a\0b\"]", 23),
      "{\"id\":\"vm:101\"",
  };
  for (const std::string& in : hostile) {
    INFO(in);
    const std::string out = policy.SanitizeToolResult(in);
    CHECK(out.find("vm:101") == std::string::npos);
    // Withheld as an object when the text parsed, replaced in place when it did not.
    CHECK((out.find(kPlaceholder) != std::string::npos ||
           out.find(kWithheldLocalOnlyMember) != std::string::npos));
  }
  CHECK(policy.SanitizeToolResult("[1,2,3") == "[1,2,3");
  CHECK(policy.SanitizeToolResult(R"({"id":"vm:100","id":"vm:101","detail":"x"})") ==
        R"({"withheld_local_only_resources":1})");
}

}  // namespace
}  // namespace pulse::core
