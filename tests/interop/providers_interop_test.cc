// Cross-check of the real LLM providers against a third-party mock of the vendors' APIs,
// @copilotkit/aimock (pinned in tests/interop/package.json, fixtures in fixtures/llm.json).
// For every wire format aimock speaks, a provider built by MakeProvider with its base URL on
// the mock streams three turns: a text answer, an answer with text and two tool calls, and
// the answer to those calls' results. Each turn must be OK with the exact events; aimock's
// journal must then show that it understood each request as meant (model, system prompt,
// tools and their schemas, token cap, replayed calls and results, credential) and answered it
// from the intended fixture.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "aimock_server.h"
#include "interop_tools.h"
#include "journal_checks.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/core/model/llm_types.h"

namespace Catch {
template <>
struct StringMaker<pulse::core::LlmStreamEvent> {
  static std::string convert(const pulse::core::LlmStreamEvent& e) {  // NOLINT: Catch2's name
    using Kind = pulse::core::LlmStreamEvent::Kind;
    std::ostringstream out;
    switch (e.kind) {
      case Kind::kContentDelta:
        out << "ContentDelta(\"" << e.text << "\")";
        break;
      case Kind::kToolCall:
        out << "ToolCall(" << e.tool_call.id << ", " << e.tool_call.name << ", "
            << e.tool_call.arguments_json << ")";
        break;
      case Kind::kUsage:
        out << "Usage(" << e.usage.input_tokens << ", " << e.usage.output_tokens << ")";
        break;
      case Kind::kFinish:
        out << "Finish(" << pulse::core::ToString(e.finish_reason) << ")";
        break;
    }
    return out.str();
  }
};
}  // namespace Catch

namespace pulse::adapters::providers {
namespace {

using core::FinishReason;
using core::LlmRequest;
using core::LlmStreamEvent;
using core::Message;
using core::TokenUsage;
using core::ToolCall;
using core::ToolDefinition;
using testing::AimockServer;
using testing::Canonical;
using testing::ExpectedRequest;

constexpr std::string_view kApiKey = "pulse-interop-key";
constexpr std::string_view kSystemPrompt = "You are the Pulse interop assistant.";
constexpr std::string_view kTextQuestion = "interop-text: how is the fleet doing?";
constexpr std::string_view kToolQuestion =
    "interop-tool: how full is /var on web-1, and is nginx up?";
constexpr int kMaxTokens = 512;

// The answers fixtures/llm.json scripts; aimock streams them in 20-character chunks.
constexpr std::string_view kTextAnswer =
    "All 3 nodes are healthy.\nBackup \"nightly-db\" finished at 02:00 \u2014 peak 41 \u00b0C.";
constexpr std::string_view kToolPreamble = "Checking both.";
constexpr std::string_view kResultAnswer = "/var on web-1 is 41% full; nginx is running.";

// One wire format as a registry provider speaks it and aimock serves it.
struct WireFormat {
  std::string_view provider;   // registry name given to MakeProvider
  std::string_view base_path;  // the base URL's path on the mock
  std::string_view model;
  std::string_view request_path;       // where the requests arrive, query included
  std::string_view credential_header;  // where the key travels (lower case)
  std::string_view max_tokens_field;   // the cap as the journal shows it
  bool usage_on_wire;                  // aimock reports the fixture's token counts in this format
  bool call_ids_on_wire;               // this format carries tool call ids
  bool schemas_drop_additional_properties;
};

constexpr WireFormat kOpenAi{"openai",
                             "/v1",
                             "gpt-4o-mini",
                             "/v1/chat/completions",
                             "authorization",
                             "max_completion_tokens",
                             true,
                             true,
                             false};
constexpr WireFormat kOpenAiCompatible{"openai-compatible",
                                       "/v1",
                                       "local-model",
                                       "/v1/chat/completions",
                                       "authorization",
                                       "max_tokens",
                                       true,
                                       true,
                                       false};
constexpr WireFormat kAnthropic{"anthropic",    "/v1",       "claude-3-5-haiku-latest",
                                "/v1/messages", "x-api-key", "max_tokens",
                                true,           true,        false};
constexpr WireFormat kGemini{"gemini",
                             "/v1beta",
                             "gemini-2.0-flash",
                             "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
                             "x-goog-api-key",
                             "max_tokens",
                             true,
                             true,
                             true};
// aimock's Ollama stream reports zero token counts and no call ids (as Ollama itself).
constexpr WireFormat kOllama{"ollama",     "",    "qwen3:8b", "/api/chat", "authorization",
                             "max_tokens", false, false,      false};

std::vector<ToolDefinition> Tools() {
  return {
      {"get_disk_usage", "Disk usage of one path on one host.",
       R"({"type":"object","properties":{"host":{"type":"string"},"path":{"type":"string"}},)"
       R"("required":["host","path"],"additionalProperties":false})"},
      {"get_service_status", "State and recent log lines of one service.",
       R"({"type":"object","properties":{"host":{"type":"string"},"service":{"type":"string"},)"
       R"("tail_lines":{"type":"integer","minimum":0},"follow":{"type":"boolean"}},)"
       R"("required":["host","service"],"additionalProperties":false})"},
  };
}

// The calls fixtures/llm.json scripts, in order.
std::vector<ToolCall> ScriptedCalls() {
  return {{"call_disk_1", "get_disk_usage", R"({"host":"web-1","path":"/var"})"},
          {"call_svc_2", "get_service_status",
           R"({"host":"web-1","service":"nginx","tail_lines":20,"follow":false})"}};
}

// One result per scripted call, in order; fixtures/llm.json matches the last one.
std::vector<std::string> ToolResults() {
  return {R"({"host":"web-1","path":"/var","used_percent":41})",
          R"({"service":"nginx","state":"active-running"})"};
}

struct Turn {
  absl::Status status;
  std::vector<LlmStreamEvent> events;
};

Turn Run(core::LlmProvider& provider, const LlmRequest& request) {
  Turn turn;
  turn.status =
      provider.Stream(request, [&](const LlmStreamEvent& event) { turn.events.push_back(event); });
  return turn;
}

// Checks one complete response: OK, every content delta before any other event, the content
// equal to `text` and streamed in more than one delta when aimock chunked it, then exactly
// the tool calls, the usage (where the format reports it) and the finish.
void ExpectResponse(const Turn& turn, const WireFormat& format, std::string_view text,
                    const std::vector<ToolCall>& calls, TokenUsage usage, FinishReason finish) {
  INFO("status " << turn.status.ToString());
  REQUIRE(turn.status.ok());
  std::string content;
  int deltas = 0;
  std::vector<LlmStreamEvent> rest;
  for (const LlmStreamEvent& event : turn.events) {
    if (event.kind == LlmStreamEvent::Kind::kContentDelta) {
      INFO("a content delta after " << Catch::Detail::stringify(rest));
      CHECK(rest.empty());
      content += event.text;
      ++deltas;
    } else if (event.kind == LlmStreamEvent::Kind::kUsage && !format.usage_on_wire) {
      CHECK(event.usage == TokenUsage{});  // the format's counts are all zero here
    } else {
      rest.push_back(event);
    }
  }
  CHECK(content == text);
  if (text.size() > 20) {
    CHECK(deltas >= 2);
  }

  // Ids the format does not carry are made up by the provider: distinct and non-empty.
  std::set<std::string> ids;
  for (LlmStreamEvent& event : rest) {
    if (event.kind == LlmStreamEvent::Kind::kToolCall) {
      ToolCall& call = event.tool_call;
      CHECK(!call.id.empty());
      CHECK(ids.insert(call.id).second);
      call.arguments_json = Canonical(call.arguments_json);
    }
  }
  std::vector<LlmStreamEvent> expected;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ToolCall call = calls[i];
    call.arguments_json = Canonical(call.arguments_json);
    if (!format.call_ids_on_wire && i < rest.size()) {
      call.id = rest[i].tool_call.id;
    }
    expected.push_back(LlmStreamEvent::ToolCallDone(call));
  }
  if (format.usage_on_wire) {
    expected.push_back(LlmStreamEvent::Usage(usage.input_tokens, usage.output_tokens));
  }
  expected.push_back(LlmStreamEvent::Finish(finish));
  CHECK(rest == expected);
}

// What every journal entry of `format` shares.
ExpectedRequest BaseExpectation(const WireFormat& format) {
  ExpectedRequest e;
  e.path = std::string(format.request_path);
  e.credential_header = std::string(format.credential_header);
  e.model = std::string(format.model);
  e.system_prompt = std::string(kSystemPrompt);
  e.call_ids_on_wire = format.call_ids_on_wire;
  e.schemas_drop_additional_properties = format.schemas_drop_additional_properties;
  return e;
}

// Streams the three turns through `provider` and checks each response. Returns the tool
// calls of turn 2 as the provider delivered them (turn 3 replays them).
std::vector<ToolCall> RunTurns(core::LlmProvider& provider, const WireFormat& format) {
  const Message system = Message::System(std::string(kSystemPrompt));
  LlmRequest text_request;
  text_request.messages = {system, Message::User(std::string(kTextQuestion))};
  {
    INFO("turn 1: a text answer");
    ExpectResponse(Run(provider, text_request), format, kTextAnswer, {}, {21, 13},
                   FinishReason::kStop);
  }

  LlmRequest tool_request;
  tool_request.messages = {system, Message::User(std::string(kToolQuestion))};
  tool_request.tools = Tools();
  tool_request.max_tokens = kMaxTokens;
  const Turn tool_turn = Run(provider, tool_request);
  {
    INFO("turn 2: text and two tool calls");
    ExpectResponse(tool_turn, format, kToolPreamble, ScriptedCalls(), {40, 25},
                   FinishReason::kToolCalls);
  }
  std::vector<ToolCall> calls;
  for (const LlmStreamEvent& event : tool_turn.events) {
    if (event.kind == LlmStreamEvent::Kind::kToolCall) {
      calls.push_back(event.tool_call);
    }
  }

  const std::vector<std::string> tool_results = ToolResults();
  REQUIRE(calls.size() == tool_results.size());
  LlmRequest result_request = tool_request;
  result_request.max_tokens.reset();
  result_request.messages.push_back(Message::Assistant(std::string(kToolPreamble), calls));
  for (std::size_t i = 0; i < calls.size(); ++i) {
    result_request.messages.push_back(
        Message::ToolResult(calls[i].id, calls[i].name, tool_results[i], false));
  }
  {
    INFO("turn 3: the answer to the tool results");
    ExpectResponse(Run(provider, result_request), format, kResultAnswer, {}, {57, 12},
                   FinishReason::kStop);
  }
  return calls;
}

// Checks that aimock understood the three requests as meant and matched the right fixtures.
void CheckJournal(const AimockServer& mock, const WireFormat& format,
                  const std::vector<ToolCall>& calls) {
  absl::StatusOr<rapidjson::Document> journal = mock.Journal();
  INFO("journal: " << journal.status().ToString());
  REQUIRE(journal.ok());
  REQUIRE(journal->IsArray());
  REQUIRE(journal->Size() == 3);  // strict mode: nothing unmatched, nothing retried

  ExpectedRequest text = BaseExpectation(format);
  text.user_text = std::string(kTextQuestion);
  text.fixture_user_message = "interop-text:";
  {
    INFO("journal: turn 1");
    testing::CheckJournalEntry((*journal)[0], text);
  }

  ExpectedRequest tools = BaseExpectation(format);
  tools.user_text = std::string(kToolQuestion);
  tools.fixture_user_message = "interop-tool:";
  tools.tools = Tools();
  tools.max_tokens_field = std::string(format.max_tokens_field);
  tools.max_tokens = kMaxTokens;
  {
    INFO("journal: turn 2");
    testing::CheckJournalEntry((*journal)[1], tools);
  }

  ExpectedRequest results = tools;
  results.fixture_has_tool_result = true;
  results.max_tokens_field.clear();
  results.assistant_calls = calls;
  results.tool_result_texts = {"used_percent", "active-running"};
  {
    INFO("journal: turn 3");
    testing::CheckJournalEntry((*journal)[2], results);
  }
}

void RunConversation(const WireFormat& format) {
  absl::StatusOr<std::unique_ptr<AimockServer>> mock =
      AimockServer::Start({.fixture_file = std::string(testing::kInteropFixtures) + "/llm.json",
                           .api_key = std::string(kApiKey),
                           .log_name = "aimock-" + std::string(format.provider) + ".log"});
  INFO("aimock: " << mock.status().ToString());
  REQUIRE(mock.ok());
  INFO("aimock log: " << (*mock)->log_path());

  ProviderConfig config;
  config.provider = std::string(format.provider);
  config.base_url = (*mock)->Url(format.base_path);
  config.model = std::string(format.model);
  config.api_key = std::string(kApiKey);
  config.timeouts = {.connect = absl::Seconds(5),
                     .response_header = absl::Seconds(10),
                     .idle_chunk = absl::Seconds(10),
                     .request = absl::Seconds(20)};
  absl::StatusOr<std::unique_ptr<core::LlmProvider>> provider = MakeProvider(config);
  INFO("MakeProvider: " << provider.status().ToString());
  REQUIRE(provider.ok());

  const std::vector<ToolCall> calls = RunTurns(**provider, format);
  CheckJournal(**mock, format, calls);
}

TEST_CASE("openai speaks the chat-completions format aimock serves", "[interop][providers]") {
  RunConversation(kOpenAi);
}

TEST_CASE("openai-compatible speaks the chat-completions format aimock serves",
          "[interop][providers]") {
  RunConversation(kOpenAiCompatible);
}

TEST_CASE("anthropic speaks the messages format aimock serves", "[interop][providers]") {
  RunConversation(kAnthropic);
}

TEST_CASE("gemini speaks the streamGenerateContent format aimock serves", "[interop][providers]") {
  RunConversation(kGemini);
}

TEST_CASE("ollama speaks the native chat format aimock serves", "[interop][providers]") {
  RunConversation(kOllama);
}

}  // namespace
}  // namespace pulse::adapters::providers
