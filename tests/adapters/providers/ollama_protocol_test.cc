// OllamaProtocol: the native /api/chat request it builds (and the forced tool call it refuses)
// and how its decoder reads NDJSON chunks, failing closed without "done":true.

#include "pulse/adapters/providers/ollama_protocol.h"

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

constexpr char kModel[] = "qwen3:8b";

LlmRequest Conversation() {
  LlmRequest r;
  r.messages = {
      Message::System("You are Pulse."),
      Message::User("Why is node pve1 slow?"),
      Message::Assistant("Checking.",
                         {ToolCall{"ollama_get_metrics_0", "get_metrics", R"({"node":"pve1"})"},
                          ToolCall{"ollama_list_vms_1", "list_vms", "{}"}}),
      Message::ToolResult("ollama_get_metrics_0", "get_metrics", "cpu 97%", false),
      Message::ToolResult("ollama_list_vms_1", "list_vms", "vm 101 is missing", true),
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
  {"role": "system", "content": "You are Pulse."},
  {"role": "user", "content": "Why is node pve1 slow?"},
  {"role": "assistant", "content": "Checking.", "tool_calls": [
    {"function": {"name": "get_metrics", "arguments": {"node": "pve1"}}},
    {"function": {"name": "list_vms", "arguments": {}}}]},
  {"role": "tool", "content": "cpu 97%", "tool_name": "get_metrics"},
  {"role": "tool", "content": "vm 101 is missing", "tool_name": "list_vms"},
  {"role": "user", "content": "And the disks?"}])";

constexpr char kTools[] = R"([
  {"type": "function", "function": {"name": "get_metrics", "description": "Read node metrics",
   "parameters": {"type": "object", "properties": {"node": {"type": "string"}},
                  "required": ["node"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "list_vms", "description": "List VMs",
   "parameters": {"type": "object"}}}])";

std::string Body(const LlmRequest& request, OllamaProtocolOptions options = {}) {
  OllamaProtocol protocol(kModel, std::move(options));
  absl::StatusOr<HttpRequestSpec> spec = protocol.BuildRequest(request);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  return spec->body;
}

// One chunk of a streamed chat response, as Ollama writes it.
Framed Chunk(std::string_view message_members, bool done = false, std::string_view tail = "") {
  return Data(fmt::format(R"({{"model":"{}","created_at":"2025-05-27T22:54:57.641643Z",)"
                          R"("message":{{"role":"assistant",{}}},"done":{}{}}})",
                          kModel, message_members, done ? "true" : "false", tail));
}

Framed Done(std::string_view reason = "stop", int prompt = 342, int eval = 27) {
  return Chunk(R"("content":"")", true,
               fmt::format(R"(,"done_reason":"{}","total_duration":4883583458,)"
                           R"("load_duration":1334875,"prompt_eval_count":{},)"
                           R"("prompt_eval_duration":79000000,"eval_count":{},)"
                           R"("eval_duration":4289000000)",
                           reason, prompt, eval));
}

Decoded Run(const std::vector<Framed>& messages) {
  OllamaProtocol protocol(kModel);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  return testing::providers::Drive(*decoder, messages);
}

// A thinking model's tool-using response.
std::vector<Framed> CallResponse() {
  return {
      Chunk(R"("content":"","thinking":"The user wants disk data.")"),
      Chunk(R"("content":"Let me check ")"),
      Chunk(R"("content":"the disks.")"),
      Chunk(R"("content":"","tool_calls":[{"function":{"name":"get_disks",)"
            R"("arguments":{"node":"pve1","all":true}}}])"),
      Done(),
  };
}

// ---- request ------------------------------------------------------------------------------

TEST_CASE("Ollama request: native messages, object arguments, tool results named",
          "[adapters][providers][ollama]") {
  CHECK(Canonical(Body(Conversation())) ==
        Canonical(fmt::format(R"({{"model": "{}", "messages": {}, "tools": {}, "stream": true,)"
                              R"("options": {{"num_predict": 1024}}}})",
                              kModel, kMessages, kTools)));
}

TEST_CASE("Ollama request: tool_choice none sends no tools, required is refused, not ignored",
          "[adapters][providers][ollama]") {
  LlmRequest request = Conversation();
  request.tool_choice = ToolChoice::kNone;
  CHECK(Canonical(Body(request)) ==
        Canonical(fmt::format(R"({{"model": "{}", "messages": {}, "stream": true,)"
                              R"("options": {{"num_predict": 1024}}}})",
                              kModel, kMessages)));

  request.tool_choice = ToolChoice::kRequired;
  OllamaProtocol protocol(kModel);
  const absl::Status status = protocol.BuildRequest(request).status();
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(status.message()).starts_with("Ollama cannot force a tool call"));
}

TEST_CASE("Ollama request: POST /api/chat, optional authorization and keep_alive",
          "[adapters][providers][ollama]") {
  using Headers = std::vector<std::pair<std::string, std::string>>;
  OllamaProtocol plain(kModel);
  absl::StatusOr<HttpRequestSpec> spec = plain.BuildRequest(Conversation());
  REQUIRE(spec.ok());
  CHECK(spec->method == "POST");
  CHECK(spec->path == "/api/chat");
  CHECK(spec->headers.empty());
  CHECK(spec->body.find("keep_alive") == std::string::npos);
  CHECK(plain.framing() == Framing::kNdjson);

  OllamaProtocol guarded(kModel, {.authorization = "Basic dXNlcjpwYXNz", .keep_alive = "30m"});
  spec = guarded.BuildRequest(Conversation());
  REQUIRE(spec.ok());
  CHECK(spec->headers == Headers{{"Authorization", "Basic dXNlcjpwYXNz"}});
  CHECK(spec->body.find("dXNlcjpwYXNz") == std::string::npos);
  CHECK(spec->body.find(R"("keep_alive":"30m")") != std::string::npos);
}

TEST_CASE("Ollama request: no max_tokens means no options, unnamed results take the call's name",
          "[adapters][providers][ollama]") {
  LlmRequest request;
  request.messages = {Message::User("go"),
                      Message::Assistant("", {ToolCall{"c1", "read_logs", "not json"}}),
                      Message::ToolResult("c1", "", "log lines", false)};
  CHECK(Canonical(Body(request)) ==
        Canonical(fmt::format(
            R"({{"model": "{}", "stream": true, "messages": [)"
            R"({{"role": "user", "content": "go"}},)"
            R"({{"role": "assistant", "content": "", "tool_calls": [)"
            R"({{"function": {{"name": "read_logs", "arguments": {{}}}}}}]}},)"
            R"({{"role": "tool", "content": "log lines", "tool_name": "read_logs"}}]}})",
            kModel)));
}

TEST_CASE("Ollama request: unusable requests are InvalidArgument",
          "[adapters][providers][ollama]") {
  OllamaProtocol protocol(kModel);
  LlmRequest request = Conversation();
  request.max_tokens = 0;
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
  request = Conversation();
  // push_back, not `= "{"`: GCC 12 -O2 reports a false -Wrestrict on a 1-byte literal assign.
  request.tools[0].input_schema_json.clear();
  request.tools[0].input_schema_json.push_back('{');
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
  request.messages.clear();
  CHECK(protocol.BuildRequest(request).status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- decoder ------------------------------------------------------------------------------

TEST_CASE("Ollama stream: content streams, usage and done_reason arrive at the end",
          "[adapters][providers][ollama]") {
  const Decoded d = Run(
      {Chunk(R"("content":"The node")"), Chunk(R"("content":" is busy.")"), Done("stop", 40, 6)});
  REQUIRE(d.status.ok());
  CHECK(d.complete);
  CHECK(d.Text() == "The node is busy.");
  CHECK(d.before_end == 2);
  CHECK(d.Usage() == core::TokenUsage{40, 6});
  CHECK(d.Finish() == FinishReason::kStop);
}

TEST_CASE("Ollama stream: tool calls are buffered until done, with synthesized ids",
          "[adapters][providers][ollama]") {
  OllamaProtocol protocol(kModel);
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
  CHECK(d.Text() == "Let me check the disks.");  // thinking is not content
  CHECK(d.Calls() == std::vector<ToolCall>{
                         {"ollama_get_disks_0", "get_disks", R"({"node":"pve1","all":true})"}});
  CHECK(d.Usage() == core::TokenUsage{342, 27});
  CHECK(d.Finish() == FinishReason::kToolCalls);
}

TEST_CASE(
    "Ollama stream: several calls across chunks, a given id is kept, string arguments "
    "holding an object are accepted",
    "[adapters][providers][ollama]") {
  const Decoded d = Run(
      {Chunk(R"("content":"","tool_calls":[{"function":{"name":"a","arguments":{}}},)"
             R"({"id":"call_x1","function":{"index":1,"name":"b","arguments":{"k":[1,2]}}}])"),
       Chunk(R"("content":"","tool_calls":[{"function":{"name":"a","arguments":"{\"n\": 2}"}}])"),
       Done()});
  REQUIRE(d.status.ok());
  CHECK(d.Calls() == std::vector<ToolCall>{{"ollama_a_0", "a", "{}"},
                                           {"call_x1", "b", R"({"k":[1,2]})"},
                                           {"ollama_a_2", "a", R"({"n": 2})"}});
}

TEST_CASE("Ollama stream: without done:true nothing but content is delivered",
          "[adapters][providers][ollama]") {
  const std::vector<Framed> full = CallResponse();
  for (std::size_t n = 0; n < full.size(); ++n) {
    CAPTURE(n);
    const Decoded d = Run(std::vector<Framed>(full.begin(), full.begin() + n));
    CHECK(IsIncomplete(d.status));
    CHECK(d.Count(core::LlmStreamEvent::Kind::kToolCall) == 0);
    CHECK(d.Count(core::LlmStreamEvent::Kind::kFinish) == 0);
  }
}

TEST_CASE("Ollama stream: done reasons map, length and unknown reasons release no call",
          "[adapters][providers][ollama]") {
  const Framed call = Chunk(R"("content":"","tool_calls":[{"function":{"name":"f"}}])");
  Decoded d = Run({Chunk(R"("content":"cut")"), call, Done("length")});
  REQUIRE(d.status.ok());
  CHECK(d.Calls().empty());
  CHECK(d.Finish() == FinishReason::kLength);
  d = Run({call, Done("mystery")});
  REQUIRE(d.status.ok());
  CHECK(d.Calls().empty());
  CHECK(d.Finish() == FinishReason::kError);
  d = Run({call, Data(R"({"model":"qwen3:8b","done":true})")});
  CHECK(d.Calls().size() == 1);
  CHECK(d.Finish() == FinishReason::kToolCalls);
  CHECK(d.Usage() == std::nullopt);
}

TEST_CASE("Ollama stream: an error line is a typed error and releases nothing",
          "[adapters][providers][ollama]") {
  const Decoded d = Run(
      {Chunk(R"("content":"","tool_calls":[{"function":{"name":"f"}}])"),
       Data(R"({"error":"an error was encountered while running the model: unexpected EOF"})")});
  CHECK(core::ClassifyLlmError(d.status) == LlmErrorKind::kUnavailable);
  CHECK(std::string(d.status.message()) ==
        "Ollama stream error: an error was encountered while running the model: unexpected EOF");
  CHECK(d.Calls().empty());
}

TEST_CASE("Ollama stream: hostile lines are clear errors, never crashes",
          "[adapters][providers][ollama]") {
  const std::vector<std::string> hostile = {
      "",
      "{",
      "[]",
      "true",
      R"({"done":"yes"})",
      R"({"message":"hi","done":false})",
      R"({"message":{"content":5}})",
      R"({"message":{"tool_calls":{}}})",
      R"({"message":{"tool_calls":[1]}})",
      R"({"message":{"tool_calls":[{"function":{"arguments":{}}}]}})",
      R"({"message":{"tool_calls":[{"function":{"name":"f","arguments":"nope"}}]}})",
      R"({"message":{"tool_calls":[{"function":{"name":"f","arguments":[1]}}]}})",
      R"({"message":{"tool_calls":[{"function":"f"}]}})",
      R"({"prompt_eval_count":-3,"done":false})",
      R"({"done":false,"done":true})",
      std::string(200000, '['),
  };
  for (const std::string& line : hostile) {
    CAPTURE(line.substr(0, 100));
    const Decoded d = Run({Data(line), Done()});
    CHECK(IsIncomplete(d.status));
    CHECK(d.events.empty());
    CHECK_FALSE(d.status.message().empty());
  }
}

TEST_CASE("Ollama stream: a huge content chunk arrives intact", "[adapters][providers][ollama]") {
  const std::string huge(3 << 20, 'z');
  const Decoded d = Run({Chunk(fmt::format(R"("content":"{}")", huge)), Done()});
  REQUIRE(d.status.ok());
  CHECK(d.Text() == huge);
}

TEST_CASE("Ollama stream: the raw NDJSON body split at every byte decodes the same",
          "[adapters][providers][ollama]") {
  std::string body;
  for (const Framed& m : CallResponse()) {
    body += m.data + "\n";
  }
  for (std::size_t piece : {std::size_t{1}, std::size_t{3}, body.size()}) {
    CAPTURE(piece);
    OllamaProtocol protocol(kModel);
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
