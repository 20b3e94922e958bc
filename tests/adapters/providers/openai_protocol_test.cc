#include "pulse/adapters/providers/openai_protocol.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "protocol_test_support.h"
#include "provider_test_support.h"
#include "pulse/adapters/providers/message_framer.h"

namespace pulse::adapters::providers {
namespace {

using core::FinishReason;
using core::LlmStreamEvent;
using testing::providers::Canonical;
using testing::providers::Data;
using testing::providers::Decoded;
using testing::providers::Drive;
using testing::providers::Framed;
using testing::providers::IsIncomplete;

OpenAiProtocol Protocol() {
  OpenAiProtocolOptions options;
  options.model = "gpt-4o";
  options.api_key = "sk-test";
  return OpenAiProtocol(options);
}

// A conversation with everything the wire format carries: a system prompt, a user turn, an
// assistant turn with text and two tool calls, their results (one an error), and tools.
core::LlmRequest Conversation(core::ToolChoice choice) {
  core::LlmRequest request;
  request.messages = {
      core::Message::System("You are Pulse."),
      core::Message::User("Why is vm-1 slow?"),
      core::Message::Assistant("Checking.", {{"call_1", "get_status", R"({"resource":"vm-1"})"},
                                             {"call_2", "get_logs", ""}}),
      core::Message::ToolResult("call_1", "get_status", R"({"cpu":97})", false),
      core::Message::ToolResult("call_2", "get_logs", "permission denied", true),
      core::Message::Assistant("", {{"call_3", "get_status", R"({"resource":"vm-2"})"}}),
      core::Message::ToolResult("call_3", "get_status", "ok", false),
  };
  request.tools = {
      {"get_status", "Read a resource's status.",
       R"({"type":"object","properties":{"resource":{"type":"string"}},"required":["resource"],"additionalProperties":false})"},
      {"get_logs", "", ""},
  };
  request.tool_choice = choice;
  request.max_tokens = 512;
  return request;
}

constexpr std::string_view kExpectedMessages = R"([
  {"role":"system","content":"You are Pulse."},
  {"role":"user","content":"Why is vm-1 slow?"},
  {"role":"assistant","content":"Checking.","tool_calls":[
    {"id":"call_1","type":"function","function":{"name":"get_status","arguments":"{\"resource\":\"vm-1\"}"}},
    {"id":"call_2","type":"function","function":{"name":"get_logs","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"call_1","content":"{\"cpu\":97}"},
  {"role":"tool","tool_call_id":"call_2","content":"permission denied"},
  {"role":"assistant","tool_calls":[
    {"id":"call_3","type":"function","function":{"name":"get_status","arguments":"{\"resource\":\"vm-2\"}"}}]},
  {"role":"tool","tool_call_id":"call_3","content":"ok"}
])";

constexpr std::string_view kExpectedTools = R"([
  {"type":"function","function":{"name":"get_status","description":"Read a resource's status.",
   "parameters":{"type":"object","properties":{"resource":{"type":"string"}},"required":["resource"],"additionalProperties":false}}},
  {"type":"function","function":{"name":"get_logs","parameters":{"type":"object","properties":{}}}}
])";

std::string ExpectedBody(std::string_view tools_and_choice) {
  return std::string(R"({"model":"gpt-4o","messages":)") + std::string(kExpectedMessages) +
         std::string(tools_and_choice) +
         R"(,"max_tokens":512,"stream":true,"stream_options":{"include_usage":true}})";
}

TEST_CASE("OpenAI request carries the conversation, tools and each tool_choice",
          "[adapters][providers][openai]") {
  struct Row {
    core::ToolChoice choice;
    std::string tools_and_choice;
  };
  const std::vector<Row> rows = {
      // unset: tools offered, tool_choice omitted (the model decides)
      {core::ToolChoice::kUnset, ",\"tools\":" + std::string(kExpectedTools)},
      // none: no tools at all, so no tool_choice either
      {core::ToolChoice::kNone, ""},
      // required: tools and tool_choice "required"
      {core::ToolChoice::kRequired,
       ",\"tools\":" + std::string(kExpectedTools) + ",\"tool_choice\":\"required\""},
  };
  auto server = testing::StartServer();
  auto provider = testing::OpenAiOver(*server);
  for (const Row& row : rows) {
    INFO("tool_choice " << core::ToString(row.choice));
    testing::ScriptedResponse response;
    response.path = "/v1/chat/completions";
    response.chunks = testing::SseChunks(testing::OpenAiToolCallPayloads());
    server->Enqueue(response);
    REQUIRE(testing::StreamFrom(*provider, Conversation(row.choice)).status.ok());
    const testing::RecordedRequest captured = server->Requests().back();
    CHECK(captured.target == "/v1/chat/completions");
    CHECK(Canonical(captured.body) == Canonical(ExpectedBody(row.tools_and_choice)));
    // The protocol alone builds the same request.
    auto spec = Protocol().BuildRequest(Conversation(row.choice));
    REQUIRE(spec.ok());
    CHECK(spec->method == "POST");
    CHECK(spec->path == "/chat/completions");
    CHECK(Canonical(spec->body) == Canonical(captured.body));
  }
}

TEST_CASE("OpenAI request options: key header, cap field, usage option",
          "[adapters][providers][openai]") {
  OpenAiProtocolOptions options;
  options.model = "mistral-large-latest";
  options.max_tokens_field = "max_completion_tokens";
  options.stream_usage_option = false;
  const OpenAiProtocol keyless(options);
  core::LlmRequest request = testing::HelloRequest();
  request.max_tokens = 64;
  auto spec = keyless.BuildRequest(request);
  REQUIRE(spec.ok());
  CHECK(Canonical(spec->body) ==
        Canonical(R"({"model":"mistral-large-latest","messages":[{"role":"user","content":"hello"}],
                      "max_completion_tokens":64,"stream":true})"));
  for (const auto& [name, value] : spec->headers) {
    CHECK(name != "Authorization");
  }
  auto with_key = Protocol().BuildRequest(request);
  REQUIRE(with_key.ok());
  bool has_auth = false;
  for (const auto& [name, value] : with_key->headers) {
    has_auth = has_auth || (name == "Authorization" && value == "Bearer sk-test");
  }
  CHECK(has_auth);
}

TEST_CASE("OpenAI request refuses what it cannot express", "[adapters][providers][openai]") {
  core::LlmRequest required_without_tools = testing::HelloRequest();
  required_without_tools.tool_choice = core::ToolChoice::kRequired;
  CHECK(Protocol().BuildRequest(required_without_tools).status().code() ==
        absl::StatusCode::kInvalidArgument);

  core::LlmRequest bad_schema = testing::HelloRequest();
  bad_schema.tools = {{"t", "", "[1,2]"}};
  CHECK(Protocol().BuildRequest(bad_schema).status().code() == absl::StatusCode::kInvalidArgument);
  bad_schema.tools = {{"t", "", "{not json"}};
  CHECK(Protocol().BuildRequest(bad_schema).status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- decoding -------------------------------------------------------------------------------

std::vector<Framed> Messages(const std::vector<std::string>& payloads) {
  std::vector<Framed> out;
  out.reserve(payloads.size());
  for (const std::string& p : payloads) {
    out.push_back(Data(p));
  }
  return out;
}

// Bytes through the SSE parser into a fresh decoder, fed in `pieces`, the way the transport
// does it; then OnEnd.
struct Piped {
  absl::Status status;
  std::vector<LlmStreamEvent> events;
};

Piped Pipe(const std::vector<std::string_view>& pieces) {
  const OpenAiProtocol protocol = Protocol();
  auto decoder = protocol.NewDecoder();
  SseParser parser;
  Piped out;
  auto emit = [&out](const LlmStreamEvent& e) { out.events.push_back(e); };
  absl::Status decoding;
  auto on_message = [&](std::string_view event, std::string_view data) {
    decoding = decoder->OnMessage(event, data, emit);
    return decoding.ok() && !decoder->Complete();
  };
  for (std::string_view piece : pieces) {
    out.status = parser.Feed(piece, on_message);
    if (!out.status.ok() || !decoding.ok()) {
      out.status.Update(decoding);
      return out;
    }
  }
  out.status = parser.Finish(on_message);
  out.status.Update(decoding);
  if (out.status.ok()) {
    out.status = decoder->OnEnd(emit);
  }
  return out;
}

TEST_CASE("OpenAI decoder assembles a tool-call stream", "[adapters][providers][openai]") {
  auto decoder = Protocol().NewDecoder();
  const Decoded decoded = Drive(*decoder, Messages(testing::OpenAiToolCallPayloads()));
  REQUIRE(decoded.status.ok());
  CHECK(decoded.complete);
  CHECK(decoded.before_end == 2);  // only content before the end
  CHECK(decoded.events == testing::OpenAiToolCallEvents());
}

TEST_CASE("OpenAI stream decodes identically when split at every byte",
          "[adapters][providers][openai]") {
  const std::string bytes = testing::OpenAiToolCallBytes();
  const std::vector<LlmStreamEvent> expected = testing::OpenAiToolCallEvents();
  const std::string_view all(bytes);
  for (std::size_t split = 0; split <= bytes.size(); ++split) {
    const Piped piped = Pipe({all.substr(0, split), all.substr(split)});
    INFO("split at " << split);
    REQUIRE(piped.status.ok());
    REQUIRE(piped.events == expected);
  }
  std::vector<std::string_view> one_byte_pieces;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    one_byte_pieces.push_back(all.substr(i, 1));
  }
  const Piped piped = Pipe(one_byte_pieces);
  REQUIRE(piped.status.ok());
  CHECK(piped.events == expected);

  // CRLF line ends, as some servers send them.
  std::string crlf;
  for (char c : bytes) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }
  const std::string_view crlf_view(crlf);
  for (std::size_t split = 0; split <= crlf.size(); split += 7) {
    const Piped split_crlf = Pipe({crlf_view.substr(0, split), crlf_view.substr(split)});
    INFO("CRLF split at " << split);
    REQUIRE(split_crlf.status.ok());
    REQUIRE(split_crlf.events == expected);
  }
}

TEST_CASE("OpenAI stream without a finish reason delivers no tool call",
          "[adapters][providers][openai]") {
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  SECTION("cut in the middle of the arguments") { payloads.resize(6); }
  SECTION("[DONE] before any finish reason") {
    payloads.resize(8);
    payloads.push_back("[DONE]");
  }
  auto decoder = Protocol().NewDecoder();
  const Decoded decoded = Drive(*decoder, Messages(payloads));
  CHECK(IsIncomplete(decoded.status));
  CHECK(decoded.Calls().empty());
  CHECK_FALSE(decoded.Finish().has_value());
  CHECK(decoded.Text() == "Let me check vm-1 \xE2\x9C\x93 \xC3\xA9t\xC3\xA9");
}

TEST_CASE("OpenAI stream may omit [DONE] once a finish reason arrived",
          "[adapters][providers][openai]") {
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  payloads.pop_back();  // no [DONE]
  auto decoder = Protocol().NewDecoder();
  const Decoded decoded = Drive(*decoder, Messages(payloads));
  REQUIRE(decoded.status.ok());
  CHECK_FALSE(decoded.complete);
  CHECK(decoded.events == testing::OpenAiToolCallEvents());
}

TEST_CASE("OpenAI finish reasons map to the neutral ones", "[adapters][providers][openai]") {
  struct Row {
    std::string reason;
    FinishReason expected;
  };
  for (const Row& row : std::vector<Row>{{"stop", FinishReason::kStop},
                                         {"length", FinishReason::kLength},
                                         {"content_filter", FinishReason::kError},
                                         {"tool_calls", FinishReason::kToolCalls},
                                         {"something_new", FinishReason::kStop}}) {
    auto decoder = Protocol().NewDecoder();
    const Decoded decoded = Drive(
        *decoder,
        {Data(R"({"choices":[{"index":0,"delta":{"content":"hi"}}]})"),
         Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":")" + row.reason + R"("}]})"),
         Data("[DONE]")});
    INFO(row.reason);
    REQUIRE(decoded.status.ok());
    CHECK(decoded.Finish() == row.expected);
    CHECK(decoded.Text() == "hi");
  }
}

TEST_CASE("OpenAI decoder fills in what providers leave out", "[adapters][providers][openai]") {
  auto decoder = Protocol().NewDecoder();
  // No ids, no index (position is the index), a name repeated in a later fragment, empty
  // arguments, and finish_reason "stop" although tools were called.
  const Decoded decoded = Drive(
      *decoder,
      {Data(
           R"({"choices":[{"delta":{"tool_calls":[{"function":{"name":"list_nodes","arguments":""}},{"function":{"name":"get_logs","arguments":"{\"n\":1}"}}]}}]})"),
       Data(
           R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"list_nodes"}}]},"finish_reason":"stop"}]})")});
  REQUIRE(decoded.status.ok());
  CHECK(decoded.Calls() ==
        std::vector<core::ToolCall>{{"openai_list_nodes_0", "list_nodes", "{}"},
                                    {"openai_get_logs_1", "get_logs", "{\"n\":1}"}});
  CHECK(decoded.Finish() == FinishReason::kToolCalls);
}

TEST_CASE("OpenAI response cut by length or filtered delivers no tool call",
          "[adapters][providers][openai]") {
  for (const auto& [reason, finish] : std::vector<std::pair<std::string, FinishReason>>{
           {"length", FinishReason::kLength}, {"content_filter", FinishReason::kError}}) {
    auto decoder = Protocol().NewDecoder();
    const Decoded decoded = Drive(
        *decoder,
        {Data(
             R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a\":"}}]}}]})"),
         Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":")" + reason + R"("}]})"),
         Data("[DONE]")});
    INFO(reason);
    REQUIRE(decoded.status.ok());
    CHECK(decoded.Calls().empty());
    CHECK(decoded.Finish() == finish);
  }
}

TEST_CASE("OpenAI decoder fails closed on malformed chunks", "[adapters][providers][openai]") {
  const std::vector<std::string> bad = {
      R"({"choices":[{"index":0,"delta":{"content":"x"}})",  // truncated JSON
      "not json",
      R"([1,2])",
      R"({"choices":{"index":0}})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":"zero"}]}}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":9999}]}}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":7}]})",
  };
  for (const std::string& chunk : bad) {
    auto decoder = Protocol().NewDecoder();
    const Decoded decoded = Drive(
        *decoder,
        {Data(
             R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]})"),
         Data(chunk),
         Data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})")});
    INFO(chunk);
    CHECK(IsIncomplete(decoded.status));
    CHECK(decoded.Calls().empty());
  }
}

TEST_CASE("OpenAI decoder refuses a tool call without a name or with oversized arguments",
          "[adapters][providers][openai]") {
  auto decoder = Protocol().NewDecoder();
  const Decoded nameless = Drive(
      *decoder,
      {Data(
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]})")});
  CHECK(IsIncomplete(nameless.status));
  CHECK(nameless.Calls().empty());

  OpenAiProtocolOptions options;
  options.model = "m";
  options.max_tool_arguments_bytes = 16;
  auto small = OpenAiProtocol(options).NewDecoder();
  const Decoded oversized = Drive(
      *small,
      {Data(
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a\":\"0123456789\"}"}}]}}]})")});
  CHECK(IsIncomplete(oversized.status));
}

TEST_CASE("OpenAI in-stream errors are typed", "[adapters][providers][openai]") {
  struct Row {
    std::string chunk;
    core::LlmErrorKind kind;
  };
  const std::vector<Row> rows = {
      {R"({"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}})",
       core::LlmErrorKind::kRateLimited},
      {R"({"error":{"message":"Provider returned error","code":429}})",
       core::LlmErrorKind::kRateLimited},
      {R"({"error":{"message":"upstream failed","code":502},"choices":[{"index":0,"delta":{},"finish_reason":"error"}]})",
       core::LlmErrorKind::kUnavailable},
      {R"({"error":{"message":"The server had an error","type":"server_error"}})",
       core::LlmErrorKind::kUnavailable},
      {R"({"error":{"message":"bad tool schema","type":"invalid_request_error","code":null}})",
       core::LlmErrorKind::kInvalidRequest},
  };
  for (const Row& row : rows) {
    auto decoder = Protocol().NewDecoder();
    const Decoded decoded = Drive(
        *decoder, {Data(R"({"choices":[{"index":0,"delta":{"content":"a"}}]})"), Data(row.chunk)});
    INFO(row.chunk);
    CHECK(core::ClassifyLlmError(decoded.status) == row.kind);
    CHECK(decoded.Text() == "a");
    CHECK_FALSE(decoded.Finish().has_value());
  }
  auto decoder = Protocol().NewDecoder();
  const Decoded detailed = Drive(
      *decoder, {Data(R"({"error":{"message":"key sk-abcdefghijklmnopqrstuvwx0123 revoked"}})")});
  CHECK(std::string(detailed.status.message()).find("abcdefghijkl") == std::string::npos);
}

TEST_CASE("OpenAI decoder ignores messages after [DONE] and other choices",
          "[adapters][providers][openai]") {
  auto decoder = Protocol().NewDecoder();
  auto emit = [](const LlmStreamEvent&) {};
  REQUIRE(decoder->OnMessage("", R"({"choices":[{"index":1,"delta":{"content":"other"}}]})", emit)
              .ok());
  REQUIRE(
      decoder->OnMessage("", R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})", emit)
          .ok());
  REQUIRE(decoder->OnMessage("", "[DONE]", emit).ok());
  CHECK(decoder->Complete());
  CHECK(decoder->OnMessage("", "garbage after done", emit).ok());
  std::vector<LlmStreamEvent> events;
  REQUIRE(decoder->OnEnd([&events](const LlmStreamEvent& e) { events.push_back(e); }).ok());
  CHECK(events == std::vector<LlmStreamEvent>{LlmStreamEvent::Finish(FinishReason::kStop)});
}

}  // namespace
}  // namespace pulse::adapters::providers
