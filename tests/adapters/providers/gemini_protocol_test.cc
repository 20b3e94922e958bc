// GeminiProtocol: the streamGenerateContent request it builds (contents, functionCall /
// functionResponse parts with ids, additionalProperties stripped) and how its decoder reads
// GenerateContentResponse chunks, failing closed without a finishReason.

#include "pulse/adapters/providers/gemini_protocol.h"

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
using testing::providers::Data;
using testing::providers::Decoded;
using testing::providers::Framed;
using testing::providers::IsIncomplete;

constexpr char kModel[] = "gemini-2.5-flash";
constexpr char kKey[] = "AIzaSy-test-key-123";

LlmRequest Conversation() {
  LlmRequest r;
  r.messages = {
      Message::System("You are Pulse."),
      Message::User("Why is node pve1 slow?"),
      Message::Assistant("Checking.", {ToolCall{"fc_a", "get_metrics", R"({"node":"pve1"})"},
                                       ToolCall{"fc_b", "list_vms", "{}"}}),
      Message::ToolResult("fc_a", "get_metrics", "cpu 97%", false),
      Message::ToolResult("fc_b", "list_vms", "vm 101 is missing", true),
      Message::User("And the disks?"),
  };
  r.tools = {
      ToolDefinition{"get_metrics", "Read node metrics",
                     R"({"type":"object","properties":{"node":{"type":"string"}},)"
                     R"("required":["node"],"additionalProperties":false})"},
      ToolDefinition{"list_vms", "List VMs",
                     R"({"type":"object","properties":{},"additionalProperties":false})"},
  };
  r.max_tokens = 1024;
  return r;
}

constexpr char kContents[] = R"([
  {"role": "user", "parts": [{"text": "Why is node pve1 slow?"}]},
  {"role": "model", "parts": [
    {"text": "Checking."},
    {"functionCall": {"id": "fc_a", "name": "get_metrics", "args": {"node": "pve1"}}},
    {"functionCall": {"id": "fc_b", "name": "list_vms", "args": {}}}]},
  {"role": "user", "parts": [
    {"functionResponse": {"id": "fc_a", "name": "get_metrics",
                          "response": {"content": "cpu 97%"}}},
    {"functionResponse": {"id": "fc_b", "name": "list_vms",
                          "response": {"content": "vm 101 is missing", "is_error": true}}},
    {"text": "And the disks?"}]}])";

constexpr char kTools[] = R"([{"functionDeclarations": [
  {"name": "get_metrics", "description": "Read node metrics",
   "parameters": {"type": "object", "properties": {"node": {"type": "string"}},
                  "required": ["node"]}},
  {"name": "list_vms", "description": "List VMs"}]}])";

std::string Body(const LlmRequest& request, std::string model = kModel) {
  GeminiProtocol protocol(std::move(model), kKey);
  absl::StatusOr<HttpRequestSpec> spec = protocol.BuildRequest(request);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  return spec->body;
}

std::string Expected(std::string_view contents, std::string_view rest) {
  return fmt::format(
      R"({{"contents": {}, "systemInstruction": {{"parts": [{{"text": "You are Pulse."}}]}},)"
      R"("generationConfig": {{"maxOutputTokens": 1024}}{}}})",
      contents, rest);
}

// One GenerateContentResponse chunk with candidates[0].content.parts = `parts`.
Framed Chunk(std::string_view parts, std::string_view finish = "", int prompt = 120,
             int output = 9) {
  const std::string finish_member =
      finish.empty() ? "" : fmt::format(R"("finishReason": "{}",)", finish);
  return Data(fmt::format(
      R"({{"candidates": [{{"content": {{"parts": {}, "role": "model"}}, {} "index": 0}}],)"
      R"("usageMetadata": {{"promptTokenCount": {}, "candidatesTokenCount": {},)"
      R"("totalTokenCount": {}}}, "modelVersion": "{}", "responseId": "resp_1"}})",
      parts, finish_member, prompt, output, prompt + output, kModel));
}

Decoded Run(const std::vector<Framed>& messages) {
  GeminiProtocol protocol(kModel, kKey);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  return testing::providers::Drive(*decoder, messages);
}

// A tool-using response: a thought summary, text, then a functionCall with an id and a thought
// signature, then the finish.
std::vector<Framed> CallResponse() {
  return {
      Chunk(R"([{"text": "The user wants disk data.", "thought": true}])"),
      Chunk(R"([{"text": "Let me check the disks."}])"),
      Chunk(R"([{"functionCall": {"id": " fc_disk_1 ", "name": "get_disks",)"
            R"( "args": {"node": "pve1", "all": true}}, "thoughtSignature": "CiQBcsjafQ=="}])"),
      Data(R"({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"},)"
           R"( "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 120,)"
           R"( "candidatesTokenCount": 30, "thoughtsTokenCount": 50, "totalTokenCount": 200}})"),
  };
}

// ---- request ------------------------------------------------------------------------------

TEST_CASE("Gemini request: contents with model role, function calls and grouped responses",
          "[adapters][providers][gemini]") {
  CHECK(Canonical(Body(Conversation())) ==
        Canonical(Expected(kContents, fmt::format(R"(, "tools": {})", kTools))));
}

TEST_CASE("Gemini request: tool_choice required is mode ANY, none sends no tools",
          "[adapters][providers][gemini]") {
  LlmRequest request = Conversation();
  request.tool_choice = ToolChoice::kRequired;
  CHECK(Canonical(Body(request)) ==
        Canonical(Expected(
            kContents,
            fmt::format(R"(, "tools": {}, "toolConfig": {{"functionCallingConfig": {{"mode": )"
                        R"("ANY"}}}})",
                        kTools))));
  request.tool_choice = ToolChoice::kNone;
  CHECK(Canonical(Body(request)) == Canonical(Expected(kContents, "")));
}

TEST_CASE("Gemini request: the model is a path segment and the key a header, never the URL",
          "[adapters][providers][gemini]") {
  for (std::string model : {"gemini-2.5-flash", "models/gemini-2.5-flash",
                            "gemini:gemini-2.5-flash", "gemini:models/gemini-2.5-flash"}) {
    CAPTURE(model);
    GeminiProtocol protocol(model, kKey);
    absl::StatusOr<HttpRequestSpec> spec = protocol.BuildRequest(Conversation());
    REQUIRE(spec.ok());
    CHECK(spec->method == "POST");
    CHECK(spec->path == "/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    using Headers = std::vector<std::pair<std::string, std::string>>;
    CHECK(spec->headers == Headers{{"x-goog-api-key", kKey}});
    CHECK(spec->body.find(kKey) == std::string::npos);
    CHECK(protocol.framing() == Framing::kServerSentEvents);
  }
  for (std::string model : {"", "models/", "../admin", "gemini-2.5?key=x", "a/b", "a b", "m#x"}) {
    CAPTURE(model);
    GeminiProtocol protocol(model, kKey);
    CHECK(protocol.BuildRequest(Conversation()).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
  GeminiProtocol keyless(kModel, "");
  absl::StatusOr<HttpRequestSpec> spec = keyless.BuildRequest(Conversation());
  REQUIRE(spec.ok());
  CHECK(spec->headers.empty());
}

TEST_CASE("Gemini request: additionalProperties is stripped at every depth, the rest is kept",
          "[adapters][providers][gemini]") {
  LlmRequest request;
  request.messages = {Message::User("go")};
  const std::string schema = R"({
    "type": "object", "additionalProperties": false,
    "properties": {
      "target": {"type": "object", "additionalProperties": {"type": "string"},
                 "properties": {"id": {"type": "string", "description": "additionalProperties"}}},
      "steps": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                "properties": {"op": {"enum": ["start", "stop"]}}}},
      "pair": {"type": "array", "prefixItems": [
                 {"type": "object", "additionalProperties": true},
                 {"type": "object", "properties": {"deep": {"type": "object",
                   "additionalProperties": false, "properties": {"x": {"type": "integer"}}}}}]},
      "choice": {"anyOf": [{"type": "object", "additionalProperties": false,
                            "properties": {"a": {"type": "string"}}},
                           {"type": "null"}]}},
    "required": ["target"]})";
  request.tools = {ToolDefinition{"plan", "Plan steps", schema}};
  const std::string expected_parameters = R"({
    "type": "object",
    "properties": {
      "target": {"type": "object",
                 "properties": {"id": {"type": "string", "description": "additionalProperties"}}},
      "steps": {"type": "array", "items": {"type": "object",
                "properties": {"op": {"enum": ["start", "stop"]}}}},
      "pair": {"type": "array", "prefixItems": [
                 {"type": "object"},
                 {"type": "object", "properties": {"deep": {"type": "object",
                   "properties": {"x": {"type": "integer"}}}}}]},
      "choice": {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                           {"type": "null"}]}},
    "required": ["target"]})";
  const std::string body = Body(request);
  CHECK(body.find("additionalProperties\":") == std::string::npos);
  CHECK(Canonical(body) ==
        Canonical(fmt::format(
            R"({{"contents": [{{"role": "user", "parts": [{{"text": "go"}}]}}],)"
            R"("tools": [{{"functionDeclarations": [{{"name": "plan", "description": "Plan steps",)"
            R"("parameters": {}}}]}}], "generationConfig": {{"maxOutputTokens": 8192}}}})",
            expected_parameters)));
  // The neutral definition keeps its schema.
  CHECK(request.tools[0].input_schema_json == schema);
}

TEST_CASE("Gemini request: a function response is named after the call with its id",
          "[adapters][providers][gemini]") {
  LlmRequest request;
  request.messages = {
      Message::User("go"),
      Message::Assistant("", {ToolCall{"id_1", "read_logs", "{}"}, ToolCall{"", "nameless", "{}"}}),
      Message::ToolResult("id_1", "", "log lines", false),
      Message::ToolResult("", "nameless", "ok", false),
  };
  CHECK(Canonical(Body(request)) == Canonical(R"({"contents": [
          {"role": "user", "parts": [{"text": "go"}]},
          {"role": "model", "parts": [
            {"functionCall": {"id": "id_1", "name": "read_logs", "args": {}}},
            {"functionCall": {"name": "nameless", "args": {}}}]},
          {"role": "user", "parts": [
            {"functionResponse": {"id": "id_1", "name": "read_logs",
                                  "response": {"content": "log lines"}}},
            {"functionResponse": {"name": "nameless", "response": {"content": "ok"}}}]}],
          "generationConfig": {"maxOutputTokens": 8192}})"));
}

TEST_CASE("Gemini request: unanswered calls are replayed as text, orphan results are dropped",
          "[adapters][providers][gemini]") {
  LlmRequest request;
  request.messages = {
      Message::ToolResult("ghost", "f", "nobody asked", false),
      Message::User("go"),
      Message::Assistant("I will look.", {ToolCall{"c1", "f", "{}"}}),
      Message::User("never mind"),
      Message::Assistant("", {ToolCall{"c2", "f", "{}"}}),
      Message::User("really"),
  };
  CHECK(Canonical(Body(request)) == Canonical(R"({"contents": [
          {"role": "user", "parts": [{"text": "go"}]},
          {"role": "model", "parts": [{"text": "I will look."}]},
          {"role": "user", "parts": [{"text": "never mind"}, {"text": "really"}]}],
          "generationConfig": {"maxOutputTokens": 8192}})"));
}

TEST_CASE("Gemini request: malformed arguments replay as {}, unusable requests are refused",
          "[adapters][providers][gemini]") {
  LlmRequest request;
  request.messages = {Message::User("go"),
                      Message::Assistant("", {ToolCall{"c1", "f", R"({"x": )"}}),
                      Message::ToolResult("c1", "f", "malformed", true)};
  CHECK(Body(request).find(R"({"functionCall":{"id":"c1","name":"f","args":{}}})") !=
        std::string::npos);

  GeminiProtocol protocol(kModel, kKey);
  request = Conversation();
  request.tools.clear();
  request.tool_choice = ToolChoice::kRequired;
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
  request = Conversation();
  request.tools[1].input_schema_json = R"("string")";
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
  request = Conversation();
  request.max_tokens = -5;
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
  request.max_tokens.reset();
  request.messages = {Message::System("alone")};
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- decoder ------------------------------------------------------------------------------

TEST_CASE("Gemini stream: text parts stream, usage and STOP arrive at the end",
          "[adapters][providers][gemini]") {
  const Decoded d = Run({Chunk(R"([{"text": "The node"}])", "", 120, 2),
                         Chunk(R"([{"text": " is overloaded."}])", "STOP", 120, 9)});
  REQUIRE(d.status.ok());
  CHECK(d.complete);
  CHECK(d.Text() == "The node is overloaded.");
  CHECK(d.before_end == 2);
  CHECK(d.Usage() == core::TokenUsage{120, 9});
  CHECK(d.Finish() == FinishReason::kStop);
}

TEST_CASE("Gemini stream: a functionCall keeps its id and is delivered only at the end",
          "[adapters][providers][gemini]") {
  GeminiProtocol protocol(kModel, kKey);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  std::vector<core::LlmStreamEvent> events;
  auto emit = [&events](const core::LlmStreamEvent& e) { events.push_back(e); };
  for (const Framed& m : CallResponse()) {
    REQUIRE(decoder->OnMessage(m.event, m.data, emit).ok());
    for (const core::LlmStreamEvent& e : events) {
      CHECK(e.kind == core::LlmStreamEvent::Kind::kContentDelta);
    }
  }
  REQUIRE(decoder->Complete());
  REQUIRE(decoder->OnEnd(emit).ok());
  Decoded d;
  d.events = events;
  CHECK(d.Text() == "Let me check the disks.");  // the thought summary is not content
  CHECK(d.Calls() == std::vector<ToolCall>{{"fc_disk_1", "get_disks",
                                            R"({"node":"pve1","all":true})", "CiQBcsjafQ=="}});
  CHECK(d.Usage() == core::TokenUsage{120, 80});
  CHECK(d.Finish() == FinishReason::kToolCalls);
}

TEST_CASE(
    "Gemini stream: calls without ids get <name>_<index>, and ids round-trip to "
    "functionResponse",
    "[adapters][providers][gemini]") {
  const Decoded d = Run(
      {Chunk(R"([{"functionCall": {"name": "get_a", "args": {"n": 1}}},)"
             R"( {"functionCall": {"name": "get_b", "id": ""}}])"),
       Chunk(R"([{"functionCall": {"name": "get_c", "id": "server_id_9", "args": {}}}])", "STOP")});
  REQUIRE(d.status.ok());
  const std::vector<ToolCall> calls = d.Calls();
  CHECK(calls == std::vector<ToolCall>{{"get_a_0", "get_a", R"({"n":1})"},
                                       {"get_b_1", "get_b", "{}"},
                                       {"server_id_9", "get_c", "{}"}});

  LlmRequest next;
  next.messages = {Message::User("go"), Message::Assistant("", calls)};
  for (const ToolCall& call : calls) {
    next.messages.push_back(Message::ToolResult(call.id, "", "result of " + call.name, false));
  }
  CHECK(Canonical(Body(next)) == Canonical(R"({"contents": [
          {"role": "user", "parts": [{"text": "go"}]},
          {"role": "model", "parts": [
            {"functionCall": {"id": "get_a_0", "name": "get_a", "args": {"n": 1}}},
            {"functionCall": {"id": "get_b_1", "name": "get_b", "args": {}}},
            {"functionCall": {"id": "server_id_9", "name": "get_c", "args": {}}}]},
          {"role": "user", "parts": [
            {"functionResponse": {"id": "get_a_0", "name": "get_a",
                                  "response": {"content": "result of get_a"}}},
            {"functionResponse": {"id": "get_b_1", "name": "get_b",
                                  "response": {"content": "result of get_b"}}},
            {"functionResponse": {"id": "server_id_9", "name": "get_c",
                                  "response": {"content": "result of get_c"}}}]}],
          "generationConfig": {"maxOutputTokens": 8192}})"));
}

TEST_CASE("Gemini stream: without a finishReason nothing but content is delivered",
          "[adapters][providers][gemini]") {
  const std::vector<Framed> full = CallResponse();
  for (std::size_t n = 0; n < full.size(); ++n) {
    CAPTURE(n);
    const Decoded d = Run(std::vector<Framed>(full.begin(), full.begin() + n));
    CHECK(IsIncomplete(d.status));
    CHECK(d.Count(core::LlmStreamEvent::Kind::kToolCall) == 0);
    CHECK(d.Count(core::LlmStreamEvent::Kind::kFinish) == 0);
  }
}

TEST_CASE("Gemini stream: finish reasons map, and any reason but STOP releases no call",
          "[adapters][providers][gemini]") {
  const std::string call = R"([{"functionCall": {"id": "c1", "name": "f", "args": {}}}])";
  Decoded d = Run({Chunk(call, "STOP")});
  REQUIRE(d.status.ok());
  CHECK(d.Calls().size() == 1);
  CHECK(d.Finish() == FinishReason::kToolCalls);
  // A cut or failed response releases no call, although Gemini sends each one whole.
  d = Run({Chunk(call, "MAX_TOKENS")});
  REQUIRE(d.status.ok());
  CHECK(d.Calls().empty());
  CHECK(d.Finish() == FinishReason::kLength);
  for (std::string_view reason : {"SAFETY", "RECITATION", "OTHER", "MALFORMED_FUNCTION_CALL",
                                  "UNEXPECTED_TOOL_CALL", "FINISH_REASON_UNSPECIFIED", "NEW"}) {
    CAPTURE(reason);
    d = Run({Chunk(call, reason)});
    REQUIRE(d.status.ok());
    CHECK(d.Calls().empty());
    CHECK(d.Finish() == FinishReason::kError);
  }
  d = Run({Chunk(R"([{"text": "cut"}])", "MAX_TOKENS")});
  CHECK(d.Finish() == FinishReason::kLength);
  d = Run({Data(R"({"candidates": [{"finishReason": "STOP", "index": 0}]})")});
  CHECK(d.Finish() == FinishReason::kStop);
  CHECK(d.Usage() == std::nullopt);
}

TEST_CASE("Gemini stream: a blocked prompt and in-stream errors are typed errors",
          "[adapters][providers][gemini]") {
  Decoded d = Run({Data(R"({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},)"
                        R"( "usageMetadata": {"promptTokenCount": 8}})")});
  CHECK(core::ClassifyLlmError(d.status) == LlmErrorKind::kInvalidRequest);
  CHECK(std::string(d.status.message()).find("SAFETY") != std::string::npos);

  struct Case {
    std::string_view error;
    LlmErrorKind kind;
  };
  for (const Case& c :
       {Case{R"({"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"})",
             LlmErrorKind::kRateLimited},
        Case{R"({"code": 503, "message": "The model is overloaded", "status": "UNAVAILABLE"})",
             LlmErrorKind::kUnavailable},
        Case{R"({"code": 500, "message": "Internal error", "status": "INTERNAL"})",
             LlmErrorKind::kUnavailable},
        Case{R"({"code": 400, "message": "Bad schema", "status": "INVALID_ARGUMENT"})",
             LlmErrorKind::kInvalidRequest},
        Case{R"({"code": 429, "message": "slow down"})", LlmErrorKind::kRateLimited},
        Case{R"({"code": 404, "message": "no such model"})", LlmErrorKind::kInvalidRequest},
        Case{R"("boom")", LlmErrorKind::kUnavailable}}) {
    CAPTURE(c.error);
    d = Run({Chunk(R"([{"functionCall": {"name": "f"}}])"),
             Data(fmt::format(R"({{"error": {}}})", c.error))});
    CHECK(core::ClassifyLlmError(d.status) == c.kind);
    CHECK(std::string(d.status.message()).starts_with("Gemini stream error"));
    CHECK(d.Calls().empty());
  }
}

TEST_CASE("Gemini stream: hostile chunks are clear errors, never crashes",
          "[adapters][providers][gemini]") {
  const std::string deep = std::string(100000, '{');
  const std::vector<std::string> hostile = {
      "",
      "[DONE]",
      "[]",
      "null",
      "3.5",
      R"({"candidates": {}})",
      R"({"candidates": [7]})",
      R"({"candidates": [{"content": []}]})",
      R"({"candidates": [{"content": {"parts": {}}}]})",
      R"({"candidates": [{"content": {"parts": ["text"]}}]})",
      R"({"candidates": [{"content": {"parts": [{"text": 5}]}}]})",
      R"({"candidates": [{"content": {"parts": [{"text": "x", "thought": "yes"}]}}]})",
      R"({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]})",
      R"({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": []}}]}}]})",
      R"({"candidates": [{"content": {"parts": [{"functionCall": "f"}]}}]})",
      R"({"candidates": [{"finishReason": 1}]})",
      R"({"usageMetadata": {"promptTokenCount": 1.5}})",
      R"({"usageMetadata": []})",
      R"({"promptFeedback": {"blockReason": 3}})",
      R"({"candidates": [], "candidates": []})",
      deep,
      std::string(R"({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", )"
                  R"("args": )") +
          std::string(70, '[') + std::string(70, ']') + "}}]}}]}",
  };
  for (const std::string& data : hostile) {
    CAPTURE(data.substr(0, 100));
    const Decoded d = Run({Data(data), Chunk("[]", "STOP")});
    CHECK(IsIncomplete(d.status));
    CHECK(d.events.empty());
    CHECK_FALSE(d.status.message().empty());
  }
  // A chunk after the finish is itself an error.
  const Decoded d = Run({Chunk("[]", "STOP"), Chunk("[]")});
  CHECK(d.status.ok());  // the driver stops at Complete(), like the transport
  GeminiProtocol protocol(kModel, kKey);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  auto ignore = [](const core::LlmStreamEvent&) {};
  REQUIRE(decoder->OnMessage("", Chunk("[]", "STOP").data, ignore).ok());
  CHECK(IsIncomplete(decoder->OnMessage("", Chunk("[]").data, ignore)));
}

TEST_CASE("Gemini stream: a huge text part arrives intact", "[adapters][providers][gemini]") {
  const std::string huge(2 << 20, 'y');
  const Decoded d =
      Run({Chunk(fmt::format(R"([{{"text": "{}"}}])", huge)), Chunk(R"([{"text": "!"}])", "STOP")});
  REQUIRE(d.status.ok());
  CHECK(d.Text() == huge + "!");
}

TEST_CASE("Gemini stream: the raw SSE body (CRLF) split at every byte decodes the same",
          "[adapters][providers][gemini]") {
  std::string body;
  for (const Framed& m : CallResponse()) {
    body += "data: " + m.data + "\r\n\r\n";
  }
  for (std::size_t piece : {std::size_t{1}, std::size_t{5}, body.size()}) {
    CAPTURE(piece);
    GeminiProtocol protocol(kModel, kKey);
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
    CHECK(d.Calls().size() == 1);
    CHECK(d.Finish() == FinishReason::kToolCalls);
  }
}

}  // namespace
}  // namespace pulse::adapters::providers
