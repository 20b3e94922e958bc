// Opaque provider state on tool calls (core::ToolCall::provider_state): Gemini's thought
// signature survives the whole trip a real run takes it on — decoded from the stream, stored in
// the session record, reloaded, passed through the outbound policy, and replayed on the same
// functionCall part — while every other protocol leaves it off the wire.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "protocol_test_support.h"
#include "pulse/adapters/providers/anthropic_protocol.h"
#include "pulse/adapters/providers/gemini_protocol.h"
#include "pulse/adapters/providers/ollama_protocol.h"
#include "pulse/adapters/providers/openai_protocol.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/core/loop/session_record_json.h"

namespace pulse::adapters::providers {
namespace {

using core::LlmRequest;
using core::Message;
using core::ToolCall;
using testing::providers::Data;
using testing::providers::Decoded;
using testing::providers::Framed;
using testing::providers::IsIncomplete;

constexpr char kModel[] = "gemini-3-pro-preview";
constexpr char kKey[] = "AIzaSy-test-key-123";
// Base64 as Gemini sends it, holding a shape the secret redactor would rewrite in text.
constexpr char kSignature[] = "CiQBcsjafQ/AKIAIOSFODNN7EXAMPLE+Zm9vYmFyYmF6cXV4==";

Framed Parts(std::string_view parts, std::string_view finish = "") {
  const std::string finish_member =
      finish.empty() ? "" : fmt::format(R"(, "finishReason": "{}")", finish);
  return Data(fmt::format(R"({{"candidates": [{{"content": {{"parts": {}, "role": "model"}}{},)"
                          R"( "index": 0}}]}})",
                          parts, finish_member));
}

Decoded Decode(const std::vector<Framed>& messages) {
  GeminiProtocol protocol(kModel, kKey);
  std::unique_ptr<StreamDecoder> decoder = protocol.NewDecoder();
  return testing::providers::Drive(*decoder, messages);
}

// Gemini's parallel calls: only the first part carries the signature.
std::vector<Framed> SignedParallelCalls() {
  return {Parts(fmt::format(R"([{{"functionCall": {{"id": "fc_1", "name": "pulse_read",)"
                            R"( "args": {{"resource_id": "vm:101"}}}}, "thoughtSignature": "{}"}},)"
                            R"( {{"functionCall": {{"id": "fc_2", "name": "pulse_query",)"
                            R"( "args": {{"action": "list"}}}}}}])",
                            kSignature),
                "STOP")};
}

LlmRequest Followup(std::vector<ToolCall> calls) {
  LlmRequest r;
  r.messages.push_back(Message::User("why is vm:101 slow?"));
  r.messages.push_back(Message::Assistant("", calls));
  for (const ToolCall& call : calls) {
    r.messages.push_back(Message::ToolResult(call.id, call.name, "result", false));
  }
  return r;
}

std::string Body(const WireProtocol& protocol, const LlmRequest& request) {
  absl::StatusOr<HttpRequestSpec> spec = protocol.BuildRequest(request);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  return spec->body;
}

TEST_CASE("a Gemini thought signature survives decode, storage, reload, policy and replay",
          "[adapters][providers][gemini][provider_state]") {
  REQUIRE(core::RedactSecrets(kSignature) != kSignature);  // text handling would corrupt it

  const Decoded d = Decode(SignedParallelCalls());
  REQUIRE(d.status.ok());
  const std::vector<ToolCall> calls = d.Calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].provider_state == kSignature);
  CHECK(calls[1].provider_state.empty());

  core::SessionRecord record;
  record.id = "ses_sig";
  record.transcript = Followup(calls).messages;
  absl::StatusOr<core::SessionRecord> reloaded =
      core::SessionRecordFromJson(core::SessionRecordToJson(record));
  REQUIRE(reloaded.ok());
  CHECK(reloaded->transcript == record.transcript);

  LlmRequest next;
  next.messages = reloaded->transcript;
  const core::OutboundContextPolicy policy(core::InferenceRoute::kMeteredApi,
                                           {core::LocalOnlyResource{"vm:101", {"web-01"}}});
  const std::string body = Body(GeminiProtocol(kModel, kKey), policy.Apply(next));
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  REQUIRE(doc.ok());
  const rapidjson::Value& model_parts = (*doc)["contents"][1]["parts"];
  REQUIRE(model_parts.Size() == 2);
  const rapidjson::Value& first = model_parts[rapidjson::SizeType{0}];
  CHECK(core::GetString(first, "thoughtSignature") == std::string_view(kSignature));
  CHECK(core::GetString(first["functionCall"], "id") == std::string_view("fc_1"));
  CHECK(core::GetMember(model_parts[1], "thoughtSignature") == nullptr);
  CHECK(body.find("vm:101") == std::string::npos);  // the policy still ran on the text
}

TEST_CASE("a Gemini thought signature is read in snake case, dropped when oversized",
          "[adapters][providers][gemini][provider_state]") {
  const Decoded snake = Decode(
      {Parts(R"([{"functionCall": {"name": "f", "args": {}}, "thought_signature": "c25ha2U="}])",
             "STOP")});
  REQUIRE(snake.status.ok());
  REQUIRE(snake.Calls().size() == 1);
  CHECK(snake.Calls()[0].provider_state == "c25ha2U=");

  const std::string at_bound(core::kMaxProviderStateBytes, 'A');
  const std::string over_bound(core::kMaxProviderStateBytes + 1, 'A');
  for (const std::string& signature : {at_bound, over_bound}) {
    CAPTURE(signature.size());
    const Decoded d = Decode({Parts(fmt::format(R"([{{"functionCall": {{"name": "f"}},)"
                                                R"( "thoughtSignature": "{}"}}])",
                                                signature),
                                    "STOP")});
    REQUIRE(d.status.ok());
    REQUIRE(d.Calls().size() == 1);  // the call itself is kept either way
    CHECK(d.Calls()[0].provider_state == (signature.size() == at_bound.size() ? at_bound : ""));
  }

  const Decoded bad =
      Decode({Parts(R"([{"functionCall": {"name": "f"}, "thoughtSignature": 7}])", "STOP")});
  CHECK(IsIncomplete(bad.status));
  CHECK(bad.Calls().empty());

  // A signature on a text part belongs to no call and is not content.
  const Decoded text =
      Decode({Parts(R"([{"text": "done", "thoughtSignature": "dGV4dA=="}])", "STOP")});
  REQUIRE(text.status.ok());
  CHECK(text.Text() == "done");
}

TEST_CASE("other protocols never send a call's provider state",
          "[adapters][providers][provider_state]") {
  const LlmRequest request = Followup(
      {ToolCall{"c1", "pulse_read", R"({"resource_id":"vm:1"})", "GEMINI-ONLY-signature"}});
  OpenAiProtocolOptions openai;
  openai.model = "gpt-4o";
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"openai", Body(OpenAiProtocol(openai), request)},
      {"anthropic", Body(AnthropicProtocol("claude-sonnet-4-0", "key"), request)},
      {"ollama", Body(OllamaProtocol("qwen3:8b"), request)},
  };
  for (const auto& [name, body] : bodies) {
    INFO(name << ": " << body);
    CHECK(body.find("GEMINI-ONLY") == std::string::npos);
    CHECK(body.find("pulse_read") != std::string::npos);  // the call itself is replayed
  }
  CHECK(Body(GeminiProtocol(kModel, kKey), request).find("GEMINI-ONLY-signature") !=
        std::string::npos);
}

}  // namespace
}  // namespace pulse::adapters::providers
