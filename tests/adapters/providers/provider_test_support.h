// Helpers for the transport, OpenAI and registry tests: a running fake provider server, a
// provider over it with short timeouts, a sink that records what Stream delivered, and one
// canned OpenAI tool-call stream with the events it must decode to.
#pragma once

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pulse/adapters/providers/openai_protocol.h"
#include "pulse/adapters/providers/streaming_provider.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing {

inline constexpr std::string_view kTestApiKey = "test-key-0123456789abcdef";

inline std::unique_ptr<FakeProviderServer> StartServer() {
  auto server = FakeProviderServer::Start();
  REQUIRE(server.ok());
  return *std::move(server);
}

// Short timeouts so a failing case fails fast; the request timeout stays out of the way.
inline adapters::providers::HttpTimeouts TestTimeouts() {
  adapters::providers::HttpTimeouts t;
  t.connect = absl::Seconds(2);
  t.response_header = absl::Seconds(2);
  t.idle_chunk = absl::Seconds(2);
  t.request = absl::Seconds(10);
  return t;
}

// An OpenAI-protocol StreamingProvider named "openai" talking to `server` under /v1.
inline std::unique_ptr<adapters::providers::StreamingProvider> OpenAiOver(
    const FakeProviderServer& server, adapters::providers::HttpTimeouts timeouts = TestTimeouts(),
    std::size_t max_message_bytes = adapters::providers::kDefaultMaxMessageBytes) {
  auto url = adapters::providers::ParseBaseUrl(server.base_url() + "/v1");
  REQUIRE(url.ok());
  adapters::providers::StreamingProviderOptions options;
  options.provider = "openai";
  options.base_url = *url;
  options.timeouts = timeouts;
  options.max_message_bytes = max_message_bytes;
  adapters::providers::OpenAiProtocolOptions protocol;
  protocol.model = "gpt-4o";
  protocol.api_key = std::string(kTestApiKey);
  auto provider = adapters::providers::StreamingProvider::Open(
      std::move(options), std::make_unique<adapters::providers::OpenAiProtocol>(protocol));
  REQUIRE(provider.ok());
  return *std::move(provider);
}

// What one Stream call delivered.
struct Streamed {
  absl::Status status;
  std::vector<core::LlmStreamEvent> events;
  std::chrono::milliseconds elapsed{0};

  std::string Text() const {
    std::string text;
    for (const core::LlmStreamEvent& e : events) {
      if (e.kind == core::LlmStreamEvent::Kind::kContentDelta) {
        text += e.text;
      }
    }
    return text;
  }
  std::size_t Count(core::LlmStreamEvent::Kind kind) const {
    std::size_t n = 0;
    for (const core::LlmStreamEvent& e : events) {
      n += e.kind == kind ? 1 : 0;
    }
    return n;
  }
};

inline Streamed StreamFrom(core::LlmProvider& provider, const core::LlmRequest& request) {
  Streamed out;
  const auto start = std::chrono::steady_clock::now();
  out.status =
      provider.Stream(request, [&out](const core::LlmStreamEvent& e) { out.events.push_back(e); });
  out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  return out;
}

inline core::LlmRequest HelloRequest() {
  core::LlmRequest request;
  request.messages.push_back(core::Message::User("hello"));
  return request;
}

// ---- the canned OpenAI tool-call stream ------------------------------------------------------

// SSE payloads of one streamed turn: a role chunk, reasoning (never content), two content
// deltas (one with multi-byte UTF-8), two parallel tool calls whose argument fragments
// interleave, the finish, a usage chunk, and [DONE].
inline std::vector<std::string> OpenAiToolCallPayloads() {
  return {
      R"({"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"thinking about vm-1"},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"content":"Let me check "},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"content":"vm-1 \u2713 \u00e9t\u00e9"},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_status","arguments":""}}]},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"resource\""}}]},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"get_logs","arguments":"{\"lines\":"}}]},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"vm-1\"}"}}]},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"50}"}}]},"finish_reason":null}]})",
      R"({"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
      R"({"id":"c1","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":31,"total_tokens":151}})",
      "[DONE]",
  };
}

inline std::vector<core::LlmStreamEvent> OpenAiToolCallEvents() {
  return {
      core::LlmStreamEvent::ContentDelta("Let me check "),
      core::LlmStreamEvent::ContentDelta("vm-1 \xE2\x9C\x93 \xC3\xA9t\xC3\xA9"),
      core::LlmStreamEvent::ToolCallDone({"call_abc", "get_status", R"({"resource":"vm-1"})"}),
      core::LlmStreamEvent::ToolCallDone({"call_def", "get_logs", R"({"lines":50})"}),
      core::LlmStreamEvent::Usage(120, 31),
      core::LlmStreamEvent::Finish(core::FinishReason::kToolCalls),
  };
}

// The canned stream as SSE bytes.
inline std::string OpenAiToolCallBytes() { return JoinChunks(SseChunks(OpenAiToolCallPayloads())); }

// Sets `flag` after `delay` on its own thread; joins on destruction.
class DelayedCancel {
 public:
  DelayedCancel(const std::shared_ptr<std::atomic<bool>>& flag, absl::Duration delay)
      : thread_([flag, delay] {
          std::this_thread::sleep_for(std::chrono::microseconds(absl::ToInt64Microseconds(delay)));
          flag->store(true);
        }) {}
  DelayedCancel(const DelayedCancel&) = delete;
  DelayedCancel& operator=(const DelayedCancel&) = delete;
  ~DelayedCancel() { thread_.join(); }

 private:
  std::thread thread_;
};

}  // namespace pulse::testing
