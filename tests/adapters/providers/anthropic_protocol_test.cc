// AnthropicProtocol: the Messages API request it builds and how its decoder reads the SSE
// event stream, failing closed on anything short of a stop_reason.

#include "pulse/adapters/providers/anthropic_protocol.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "protocol_test_support.h"
#include "pulse/adapters/providers/message_framer.h"

namespace pulse::adapters::providers {
namespace {

using core::FinishReason;
using core::LlmErrorKind;
using core::LlmRequest;
using core::Message;
using core::ToolCall;
using core::ToolChoice;
using core::ToolDefinition;
using testing::providers::Canonical;
using testing::providers::Decoded;
using testing::providers::Framed;
using testing::providers::IsIncomplete;

constexpr char kModel[] = "claude-sonnet-4-5";
constexpr char kKey[] = "sk-ant-test-key-123";

LlmRequest Conversation() {
  LlmRequest r;
  r.messages = {
      Message::System("You are Pulse."),
      Message::User("Why is node pve1 slow?"),
      Message::Assistant("Checking.", {ToolCall{"toolu_01", "get_metrics", R"({"node":"pve1"})"},
                                       ToolCall{"toolu_02", "list_vms", "{}"}}),
      Message::ToolResult("toolu_01", "get_metrics", "cpu 97%", false),
      Message::ToolResult("toolu_02", "list_vms", "vm 101 is missing", true),
      Message::User("And the disks?"),
  };
  r.tools = {
      ToolDefinition{"get_metrics", "Read node metrics",
                     R"({"type":"object","properties":{"node":{"type":"string"}},)"
                     R"("required":["node"],"additionalProperties":false})"},
      ToolDefinition{"list_vms", "List VMs", ""},
  };
  r.max_tokens = 1024;
  return r;
}

constexpr char kMessages[] = R"([
  {"role": "user", "content": [{"type": "text", "text": "Why is node pve1 slow?"}]},
  {"role": "assistant", "content": [
    {"type": "text", "text": "Checking."},
    {"type": "tool_use", "id": "toolu_01", "name": "get_metrics", "input": {"node": "pve1"}},
    {"type": "tool_use", "id": "toolu_02", "name": "list_vms", "input": {}}]},
  {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "cpu 97%", "is_error": false},
    {"type": "tool_result", "tool_use_id": "toolu_02", "content": "vm 101 is missing",
     "is_error": true},
    {"type": "text", "text": "And the disks?"}]}])";

constexpr char kTools[] = R"([
  {"name": "get_metrics", "description": "Read node metrics",
   "input_schema": {"type": "object", "properties": {"node": {"type": "string"}},
                    "required": ["node"], "additionalProperties": false}},
  {"name": "list_vms", "description": "List VMs", "input_schema": {"type": "object"}}])";

std::string Body(const LlmRequest& request, AnthropicProtocolOptions options = {}) {
  AnthropicProtocol protocol(kModel, kKey, options);
  absl::StatusOr<HttpRequestSpec> spec = protocol.BuildRequest(request);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  return spec->body;
}

Framed Ev(std::string type, std::string data) { return Framed{std::move(type), std::move(data)}; }

Framed MessageStart(int input_tokens = 25) {
  return Ev(
      "message_start",
      fmt::format(R"({{"type":"message_start","message":{{"id":"msg_01","type":"message",)"
                  R"("role":"assistant","model":"{}","content":[],"stop_reason":null,)"
                  R"("stop_sequence":null,"usage":{{"input_tokens":{},"output_tokens":1}}}}}})",
                  kModel, input_tokens));
}
Framed TextStart(int index) {
  return Ev("content_block_start", fmt::format(R"({{"type":"content_block_start","index":{},)"
                                               R"("content_block":{{"type":"text","text":""}}}})",
                                               index));
}
Framed TextDelta(int index, std::string_view text) {
  return Ev("content_block_delta", fmt::format(R"({{"type":"content_block_delta","index":{},)"
                                               R"("delta":{{"type":"text_delta","text":"{}"}}}})",
                                               index, text));
}
Framed ToolStart(int index, std::string_view id, std::string_view name) {
  return Ev("content_block_start",
            fmt::format(R"({{"type":"content_block_start","index":{},"content_block":)"
                        R"({{"type":"tool_use","id":"{}","name":"{}","input":{{}}}}}})",
                        index, id, name));
}
// `fragment` is JSON-escaped by the caller.
Framed JsonDelta(int index, std::string_view fragment) {
  return Ev("content_block_delta",
            fmt::format(R"({{"type":"content_block_delta","index":{},)"
                        R"("delta":{{"type":"input_json_delta","partial_json":"{}"}}}})",
                        index, fragment));
}
Framed BlockStop(int index) {
  return Ev("content_block_stop",
            fmt::format(R"({{"type":"content_block_stop","index":{}}})", index));
}
Framed MessageDelta(std::string_view stop_reason, int output_tokens = 15) {
  return Ev("message_delta",
            fmt::format(R"({{"type":"message_delta","delta":{{"stop_reason":"{}",)"
                        R"("stop_sequence":null}},"usage":{{"output_tokens":{}}}}})",
                        stop_reason, output_tokens));
}
Framed MessageStop() { return Ev("message_stop", R"({"type":"message_stop"})"); }
Framed Ping() { return Ev("ping", R"({"type":"ping"})"); }
Framed Error(std::string_view type, std::string_view message) {
  return Ev("error", fmt::format(R"({{"type":"error","error":{{"type":"{}","message":"{}"}}}})",
                                 type, message));
}

Decoded Run(const std::vector<Framed>& messages) {
  AnthropicProtocol protocol(kModel, kKey);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  return testing::providers::Drive(*decoder, messages);
}

// A tool-using response: text, then one tool_use block whose input arrives in fragments.
std::vector<Framed> ToolResponse() {
  return {MessageStart(),
          TextStart(0),
          TextDelta(0, "Let me check "),
          TextDelta(0, "the disks."),
          BlockStop(0),
          ToolStart(1, "toolu_01A", "get_disks"),
          JsonDelta(1, ""),
          Ping(),
          JsonDelta(1, R"({\"node\": \"pv)"),
          JsonDelta(1, R"(e1\", \"all\": tr)"),
          JsonDelta(1, R"(ue})"),
          BlockStop(1),
          MessageDelta("tool_use", 89),
          MessageStop()};
}

// ---- request ------------------------------------------------------------------------------

TEST_CASE(
    "Anthropic request: system on top, tool_use blocks, tool results grouped into one "
    "user turn",
    "[adapters][providers][anthropic]") {
  const std::string expected = fmt::format(
      R"({{"model": "{}", "max_tokens": 1024, "system": "You are Pulse.", "messages": {},)"
      R"("tools": {}, "stream": true}})",
      kModel, kMessages, kTools);
  CHECK(Canonical(Body(Conversation())) == Canonical(expected));
}

TEST_CASE("Anthropic request: tool_choice required is {type: any}, none sends no tools at all",
          "[adapters][providers][anthropic]") {
  LlmRequest request = Conversation();
  request.tool_choice = ToolChoice::kRequired;
  CHECK(Canonical(Body(request)) ==
        Canonical(fmt::format(
            R"({{"model": "{}", "max_tokens": 1024, "system": "You are Pulse.", "messages": {},)"
            R"("tools": {}, "tool_choice": {{"type": "any"}}, "stream": true}})",
            kModel, kMessages, kTools)));

  request.tool_choice = ToolChoice::kNone;
  CHECK(Canonical(Body(request)) ==
        Canonical(fmt::format(
            R"({{"model": "{}", "max_tokens": 1024, "system": "You are Pulse.", "messages": {},)"
            R"("stream": true}})",
            kModel, kMessages)));
}

TEST_CASE("Anthropic request: POST /messages with x-api-key and anthropic-version headers",
          "[adapters][providers][anthropic]") {
  AnthropicProtocol protocol(kModel, kKey);
  absl::StatusOr<HttpRequestSpec> spec = protocol.BuildRequest(Conversation());
  REQUIRE(spec.ok());
  CHECK(spec->method == "POST");
  CHECK(spec->path == "/messages");
  using Headers = std::vector<std::pair<std::string, std::string>>;
  CHECK(spec->headers == Headers{{"x-api-key", kKey}, {"anthropic-version", "2023-06-01"}});
  CHECK(spec->body.find(kKey) == std::string::npos);
  CHECK(protocol.framing() == Framing::kServerSentEvents);

  AnthropicProtocol keyless(kModel, "");
  spec = keyless.BuildRequest(Conversation());
  REQUIRE(spec.ok());
  CHECK(spec->headers == Headers{{"anthropic-version", "2023-06-01"}});
}

TEST_CASE("Anthropic request: max_tokens falls back to the default, which Anthropic requires",
          "[adapters][providers][anthropic]") {
  LlmRequest request;
  request.messages = {Message::User("hi")};
  const std::string body = Body(request);
  CHECK(Canonical(body) ==
        Canonical(fmt::format(R"({{"model": "{}", "max_tokens": 4096, "stream": true,)"
                              R"("messages": [{{"role": "user", "content": [)"
                              R"({{"type": "text", "text": "hi"}}]}}]}})",
                              kModel)));
  CHECK(Body(request, {.default_max_tokens = 512}).find(R"("max_tokens":512)") !=
        std::string::npos);
}

TEST_CASE("Anthropic request: arguments that are not a JSON object are replayed as {}",
          "[adapters][providers][anthropic]") {
  LlmRequest request;
  request.messages = {
      Message::User("go"),
      Message::Assistant("", {ToolCall{"toolu_1", "a", R"({"x": )"},
                              ToolCall{"toolu_2", "b", "[1]"}, ToolCall{"toolu_3", "c", ""}}),
      Message::ToolResult("toolu_1", "a", "arguments are malformed", true),
      Message::ToolResult("toolu_2", "b", "arguments are malformed", true),
      Message::ToolResult("toolu_3", "c", "ok", false),
  };
  const std::string body = Body(request);
  CHECK(Canonical(body) ==
        Canonical(
            fmt::format(R"({{"model": "{}", "max_tokens": 4096, "stream": true, "messages": [)"
                        R"({{"role": "user", "content": [{{"type": "text", "text": "go"}}]}},)"
                        R"({{"role": "assistant", "content": [)"
                        R"({{"type": "tool_use", "id": "toolu_1", "name": "a", "input": {{}}}},)"
                        R"({{"type": "tool_use", "id": "toolu_2", "name": "b", "input": {{}}}},)"
                        R"({{"type": "tool_use", "id": "toolu_3", "name": "c", "input": {{}}}}]}},)"
                        R"({{"role": "user", "content": [)"
                        R"({{"type": "tool_result", "tool_use_id": "toolu_1",)"
                        R"( "content": "arguments are malformed", "is_error": true}},)"
                        R"({{"type": "tool_result", "tool_use_id": "toolu_2",)"
                        R"( "content": "arguments are malformed", "is_error": true}},)"
                        R"({{"type": "tool_result", "tool_use_id": "toolu_3", "content": "ok",)"
                        R"( "is_error": false}}]}}]}})",
                        kModel)));
}

TEST_CASE("Anthropic request: same-role neighbours merge, and tool results lead their user turn",
          "[adapters][providers][anthropic]") {
  LlmRequest request;
  request.messages = {
      Message::User("first"),
      Message::User("second"),
      Message::Assistant("one"),
      Message::Assistant("two", {ToolCall{"t1", "f", "{}"}}),
      Message::User("aside"),
      Message::ToolResult("t1", "f", "done", false),
      Message::System("late system text"),
  };
  CHECK(
      Canonical(Body(request)) ==
      Canonical(fmt::format(
          R"({{"model": "{}", "max_tokens": 4096, "stream": true,)"
          R"("system": "late system text", "messages": [)"
          R"({{"role": "user", "content": [{{"type": "text", "text": "first"}},)"
          R"({{"type": "text", "text": "second"}}]}},)"
          R"({{"role": "assistant", "content": [{{"type": "text", "text": "one"}},)"
          R"({{"type": "text", "text": "two"}},)"
          R"({{"type": "tool_use", "id": "t1", "name": "f", "input": {{}}}}]}},)"
          R"({{"role": "user", "content": [)"
          R"({{"type": "tool_result", "tool_use_id": "t1", "content": "done", "is_error": false}},)"
          R"({{"type": "text", "text": "aside"}}]}}]}})",
          kModel)));
}

TEST_CASE("Anthropic request: requests it cannot express are InvalidArgument",
          "[adapters][providers][anthropic]") {
  AnthropicProtocol protocol(kModel, kKey);
  LlmRequest request = Conversation();
  request.tools.clear();
  request.tool_choice = ToolChoice::kRequired;
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);

  request = Conversation();
  request.tools[0].input_schema_json = "{not json";
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
  request.tools[0].input_schema_json = "[]";
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);

  request = Conversation();
  request.max_tokens = 0;
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);

  request.max_tokens.reset();
  request.messages = {Message::System("only a system prompt"), Message::User("")};
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- decoder ------------------------------------------------------------------------------

TEST_CASE("Anthropic stream: text deltas stream, usage and end_turn arrive at the end",
          "[adapters][providers][anthropic]") {
  const Decoded d =
      Run({MessageStart(25), TextStart(0), Ping(), TextDelta(0, "Hello"), TextDelta(0, ", world"),
           BlockStop(0), MessageDelta("end_turn", 15), MessageStop()});
  REQUIRE(d.status.ok());
  CHECK(d.complete);
  CHECK(d.Text() == "Hello, world");
  CHECK(d.before_end == 2);
  CHECK(d.Usage() == core::TokenUsage{25, 15});
  CHECK(d.Finish() == FinishReason::kStop);
}

TEST_CASE(
    "Anthropic stream: input_json_delta fragments become one tool call, delivered only at "
    "the end",
    "[adapters][providers][anthropic]") {
  AnthropicProtocol protocol(kModel, kKey);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  std::vector<core::LlmStreamEvent> events;
  auto emit = [&events](const core::LlmStreamEvent& e) { events.push_back(e); };
  for (const Framed& m : ToolResponse()) {
    REQUIRE(decoder->OnMessage(m.event, m.data, emit).ok());
    for (const core::LlmStreamEvent& e : events) {
      CHECK(e.kind == core::LlmStreamEvent::Kind::kContentDelta);
    }
  }
  REQUIRE(decoder->Complete());
  REQUIRE(decoder->OnEnd(emit).ok());
  Decoded d;
  d.events = events;
  CHECK(d.Text() == "Let me check the disks.");
  CHECK(d.Calls() ==
        std::vector<ToolCall>{{"toolu_01A", "get_disks", R"({"node": "pve1", "all": true})"}});
  CHECK(d.Usage() == core::TokenUsage{25, 89});
  CHECK(d.Finish() == FinishReason::kToolCalls);
}

TEST_CASE(
    "Anthropic stream: fragments are concatenated per block index, calls kept in block "
    "order",
    "[adapters][providers][anthropic]") {
  const Decoded d =
      Run({MessageStart(), ToolStart(0, "toolu_a", "first"), ToolStart(1, "toolu_b", "second"),
           JsonDelta(1, R"({\"b\":)"), JsonDelta(0, R"({\"a\":)"), JsonDelta(0, "1}"),
           JsonDelta(1, "2}"), BlockStop(1), BlockStop(0), ToolStart(2, "toolu_c", "no_args"),
           BlockStop(2), MessageDelta("tool_use"), MessageStop()});
  REQUIRE(d.status.ok());
  CHECK(d.Calls() == std::vector<ToolCall>{{"toolu_b", "second", R"({"b":2})"},
                                           {"toolu_a", "first", R"({"a":1})"},
                                           {"toolu_c", "no_args", "{}"}});
  CHECK(d.Finish() == FinishReason::kToolCalls);
}

TEST_CASE("Anthropic stream: thinking blocks and unknown events are not content",
          "[adapters][providers][anthropic]") {
  const Decoded d = Run(
      {MessageStart(),
       Ev("content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})"),
       Ev("content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}})"),
       Ev("content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}})"),
       BlockStop(0), Ev("future_event", R"({"type":"future_event","x":1})"), TextStart(1),
       TextDelta(1, "Answer."), BlockStop(1), MessageDelta("end_turn"), MessageStop()});
  REQUIRE(d.status.ok());
  CHECK(d.Text() == "Answer.");
  CHECK(d.Finish() == FinishReason::kStop);
}

TEST_CASE("Anthropic stream: usage counts cached prompt tokens as input",
          "[adapters][providers][anthropic]") {
  const Decoded d = Run(
      {Ev("message_start",
          R"({"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":10,)"
          R"("cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}})"),
       TextStart(0), TextDelta(0, "ok"), BlockStop(0),
       Ev("message_delta",
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}})"),
       MessageStop()});
  REQUIRE(d.status.ok());
  CHECK(d.Usage() == core::TokenUsage{3210, 7});
}

TEST_CASE(
    "Anthropic stream: stop reasons map to finish reasons, and refusal and unknown ones "
    "release no tool call",
    "[adapters][providers][anthropic]") {
  auto finish_with = [](std::string_view reason) {
    return Run({MessageStart(), ToolStart(0, "toolu_1", "f"), JsonDelta(0, "{}"), BlockStop(0),
                MessageDelta(reason), MessageStop()});
  };
  Decoded d = finish_with("end_turn");
  REQUIRE(d.status.ok());
  CHECK(d.Calls().size() == 1);
  CHECK(d.Finish() == FinishReason::kToolCalls);

  // A cut or failed response releases no call, however complete its blocks look.
  d = finish_with("max_tokens");
  REQUIRE(d.status.ok());
  CHECK(d.Calls().empty());
  CHECK(d.Finish() == FinishReason::kLength);
  for (std::string_view reason : {"refusal", "a_future_reason"}) {
    d = finish_with(reason);
    REQUIRE(d.status.ok());
    CHECK(d.Calls().empty());
    CHECK(d.Finish() == FinishReason::kError);
  }

  d = Run({MessageStart(), TextStart(0), TextDelta(0, "cut"), BlockStop(0),
           MessageDelta("max_tokens"), MessageStop()});
  CHECK(d.Finish() == FinishReason::kLength);
  d = Run(
      {MessageStart(), TextStart(0), BlockStop(0), MessageDelta("stop_sequence"), MessageStop()});
  CHECK(d.Finish() == FinishReason::kStop);
  d = Run({MessageStart(), TextStart(0), BlockStop(0), MessageDelta("tool_use"), MessageStop()});
  CHECK(d.Finish() == FinishReason::kStop);  // tool_use without a tool_use block
}

TEST_CASE(
    "Anthropic stream: a stream that ends after the stop_reason but before message_stop "
    "still delivers",
    "[adapters][providers][anthropic]") {
  std::vector<Framed> messages = ToolResponse();
  messages.pop_back();  // message_stop
  const Decoded d = Run(messages);
  REQUIRE(d.status.ok());
  CHECK_FALSE(d.complete);
  CHECK(d.Calls().size() == 1);
  CHECK(d.Finish() == FinishReason::kToolCalls);
}

TEST_CASE("Anthropic stream: a stream cut anywhere before the stop_reason delivers no tool call",
          "[adapters][providers][anthropic]") {
  const std::vector<Framed> full = ToolResponse();
  // Every prefix that stops before message_delta: mid tool_use, after its stop, ...
  for (std::size_t cut = 0; cut < full.size() - 2; ++cut) {
    CAPTURE(cut);
    const Decoded d = Run(std::vector<Framed>(full.begin(), full.begin() + cut + 1));
    CHECK(IsIncomplete(d.status));
    CHECK(d.Count(core::LlmStreamEvent::Kind::kToolCall) == 0);
    CHECK(d.Count(core::LlmStreamEvent::Kind::kFinish) == 0);
    CHECK(d.Count(core::LlmStreamEvent::Kind::kUsage) == 0);
  }
}

TEST_CASE(
    "Anthropic stream: tool input that does not parse breaks the stream, unless "
    "max_tokens cut it",
    "[adapters][providers][anthropic]") {
  for (std::string_view fragment : {R"({\"node\": )", R"({\"a\":1}{)", "[1, 2]", R"(\"text\")"}) {
    CAPTURE(fragment);
    for (std::string_view reason : {"tool_use", "end_turn"}) {
      const Decoded d = Run({MessageStart(), ToolStart(0, "toolu_1", "f"), JsonDelta(0, fragment),
                             BlockStop(0), ToolStart(1, "toolu_2", "g"), JsonDelta(1, "{}"),
                             BlockStop(1), MessageDelta(reason), MessageStop()});
      CHECK(IsIncomplete(d.status));
      CHECK_FALSE(d.ended);
      CHECK(d.Calls().empty());
      CHECK(std::string(d.status.message()).find("tool_use block 0 (f) input is not") !=
            std::string::npos);
    }
    const Decoded cut = Run({MessageStart(), ToolStart(0, "toolu_1", "f"), JsonDelta(0, fragment),
                             BlockStop(0), MessageDelta("max_tokens"), MessageStop()});
    REQUIRE(cut.status.ok());
    CHECK(cut.Calls().empty());
    CHECK(cut.Finish() == FinishReason::kLength);
  }
}

TEST_CASE("Anthropic stream: error events are typed errors, and the stream delivers nothing more",
          "[adapters][providers][anthropic]") {
  struct Case {
    std::string_view type;
    LlmErrorKind kind;
  };
  for (const Case& c : {Case{"overloaded_error", LlmErrorKind::kUnavailable},
                        Case{"api_error", LlmErrorKind::kUnavailable},
                        Case{"rate_limit_error", LlmErrorKind::kRateLimited},
                        Case{"invalid_request_error", LlmErrorKind::kInvalidRequest},
                        Case{"authentication_error", LlmErrorKind::kInvalidRequest},
                        Case{"permission_error", LlmErrorKind::kInvalidRequest},
                        Case{"billing_error", LlmErrorKind::kInvalidRequest},
                        Case{"brand_new_error", LlmErrorKind::kUnavailable}}) {
    CAPTURE(c.type);
    const Decoded d = Run({MessageStart(), ToolStart(0, "toolu_1", "f"), JsonDelta(0, "{}"),
                           BlockStop(0), Error(c.type, "Overloaded")});
    CHECK(core::ClassifyLlmError(d.status) == c.kind);
    CHECK(std::string(d.status.message()) ==
          fmt::format("Anthropic stream error {}: Overloaded", c.type));
    CHECK(d.Calls().empty());
  }
}

TEST_CASE("Anthropic stream: impossible event orders break the stream",
          "[adapters][providers][anthropic]") {
  const std::vector<std::vector<Framed>> cases = {
      {TextStart(0)},                                // before message_start
      {MessageStart(), MessageStart()},              // twice
      {MessageStart(), TextDelta(0, "x")},           // delta for a block never started
      {MessageStart(), TextStart(0), TextStart(0)},  // index reused
      {MessageStart(), TextStart(0), BlockStop(0), TextDelta(0, "x")},     // after its stop
      {MessageStart(), TextStart(0), JsonDelta(0, "{}")},                  // JSON into a text block
      {MessageStart(), ToolStart(0, "t", "f"), TextDelta(0, "x")},         // text into a tool block
      {MessageStart(), ToolStart(0, "t", "f"), MessageDelta("tool_use")},  // stop while open
      {MessageStart(), MessageStop()},  // stop without a stop_reason
      {MessageStart(), MessageDelta("end_turn"), MessageDelta("end_turn")},
      {MessageStart(), MessageDelta("end_turn"), TextStart(0)},  // content after the end
      {MessageStart(), TextStart(0), MessageDelta("end_turn"), TextDelta(0, "late")},
      {MessageStart(), MessageDelta("end_turn"), MessageStop(), Ping()},
      {MessageStart(), Ev("content_block_stop", R"({"type":"message_stop"})")},  // name mismatch
      {MessageStart(), ToolStart(0, "t", "f"), BlockStop(0), ToolStart(1, "t", "g"), BlockStop(1)},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    AnthropicProtocol protocol(kModel, kKey);
    std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
    std::vector<core::LlmStreamEvent> events;
    auto emit = [&events](const core::LlmStreamEvent& e) { events.push_back(e); };
    absl::Status status;
    for (const Framed& m : cases[i]) {
      status = decoder->OnMessage(m.event, m.data, emit);
      if (!status.ok()) {
        break;
      }
    }
    CHECK(IsIncomplete(status));
    // The first error sticks: ending the stream does not deliver anything.
    CHECK(decoder->OnEnd(emit) == status);
    for (const core::LlmStreamEvent& e : events) {
      CHECK(e.kind == core::LlmStreamEvent::Kind::kContentDelta);
    }
  }
}

TEST_CASE("Anthropic stream: hostile messages are clear errors, never crashes",
          "[adapters][providers][anthropic]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::vector<Framed> hostile = {
      Ev("", ""),
      Ev("", "not json"),
      Ev("", "[]"),
      Ev("", "42"),
      Ev("", R"("message_start")"),
      Ev("", "null"),
      Ev("", R"({"type":5})"),
      Ev("", R"({"type":"message_start","message":[]})"),
      Ev("", R"({"type":"message_start","message":{"usage":{"input_tokens":"25"}}})"),
      Ev("", R"({"type":"message_start","message":{"usage":{"input_tokens":-1}}})"),
      Ev("", R"({"type":"message_start","type":"ping","message":{}})"),
      Ev("", deep),
      Ev("", R"({"type":"message_start","message":{"x":)" + deep + "}}"),
  };
  for (const Framed& m : hostile) {
    CAPTURE(m.data.substr(0, 80));
    const Decoded d = Run({m});
    CHECK(IsIncomplete(d.status));
    CHECK(d.events.empty());
    CHECK_FALSE(d.status.message().empty());
  }
  const std::vector<Framed> after_start = {
      Ev("", R"({"type":"content_block_start","index":"0","content_block":{"type":"text"}})"),
      Ev("", R"({"type":"content_block_start","index":-1,"content_block":{"type":"text"}})"),
      Ev("", R"({"type":"content_block_start","index":1,"content_block":"text"})"),
      Ev("", R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use"}})"),
      Ev("", R"({"type":"content_block_start","index":1,"content_block":)"
             R"({"type":"tool_use","id":"t","name":"f","input":"{}"}})"),
      Ev("", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":7}})"),
      Ev("", R"({"type":"message_delta","delta":{"stop_reason":42}})"),
      Ev("", R"({"type":"error","error":"boom"})"),
  };
  for (const Framed& m : after_start) {
    CAPTURE(m.data);
    const Decoded d =
        Run({MessageStart(), TextStart(0), m, MessageDelta("end_turn"), MessageStop()});
    CHECK(IsIncomplete(d.status));
    CHECK(d.Finish() == std::nullopt);
  }
}

TEST_CASE("Anthropic stream: a huge text delta and thousands of small ones arrive intact",
          "[adapters][providers][anthropic]") {
  const std::string huge(1 << 20, 'x');
  std::vector<Framed> messages = {MessageStart(), TextStart(0), TextDelta(0, huge)};
  for (int i = 0; i < 5000; ++i) {
    messages.push_back(TextDelta(0, "ab"));
  }
  messages.insert(messages.end(), {BlockStop(0), MessageDelta("end_turn"), MessageStop()});
  const Decoded d = Run(messages);
  REQUIRE(d.status.ok());
  CHECK(d.Text().size() == huge.size() + 10000);
  CHECK(d.Count(core::LlmStreamEvent::Kind::kContentDelta) == 5001);
}

TEST_CASE("Anthropic stream: the raw SSE body split at every byte decodes the same",
          "[adapters][providers][anthropic]") {
  std::string body;
  for (const Framed& m : ToolResponse()) {
    body += fmt::format("event: {}\ndata: {}\n\n", m.event, m.data);
  }
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, body.size()}) {
    CAPTURE(piece);
    AnthropicProtocol protocol(kModel, kKey);
    std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
    std::unique_ptr<MessageFramer> framer =
        NewMessageFramer(protocol.framing(), kDefaultMaxMessageBytes);
    std::vector<core::LlmStreamEvent> events;
    auto emit = [&events](const core::LlmStreamEvent& e) { events.push_back(e); };
    absl::Status decode_status;
    auto on_message = [&](std::string_view event, std::string_view data) {
      decode_status = decoder->OnMessage(event, data, emit);
      return decode_status.ok() && !decoder->Complete();
    };
    for (std::size_t at = 0; at < body.size(); at += piece) {
      REQUIRE(framer->Feed(std::string_view(body).substr(at, piece), on_message).ok());
    }
    REQUIRE(framer->Finish(on_message).ok());
    REQUIRE(decode_status.ok());
    REQUIRE(decoder->OnEnd(emit).ok());
    Decoded d;
    d.events = events;
    CHECK(d.Text() == "Let me check the disks.");
    CHECK(d.Calls() ==
          std::vector<ToolCall>{{"toolu_01A", "get_disks", R"({"node": "pve1", "all": true})"}});
    CHECK(d.Finish() == FinishReason::kToolCalls);
  }
}

}  // namespace
}  // namespace pulse::adapters::providers
