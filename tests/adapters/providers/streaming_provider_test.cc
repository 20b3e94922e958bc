// The streaming transport over the wire: the loopback fake provider server plays each failure
// a real provider stream can have, and each test states the exact outcome.
#include "pulse/adapters/providers/streaming_provider.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol_test_support.h"
#include "provider_test_support.h"

namespace pulse::adapters::providers {
namespace {

using core::LlmStreamEvent;
using testing::BodyFraming;
using testing::Chunk;
using testing::JsonResponse;
using testing::ScriptedResponse;
using testing::SseChunks;
using testing::SseData;
using testing::Streamed;
using testing::StreamFrom;

ScriptedResponse Sse(std::vector<testing::ScriptedChunk> chunks) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = std::move(chunks);
  return response;
}

// The message never names the endpoint or the key.
void CheckNeutral(const absl::Status& status) {
  const std::string message(status.message());
  INFO(message);
  CHECK(message.rfind("openai: ", 0) == 0);
  CHECK(message.find("127.0.0.1") == std::string::npos);
  CHECK(message.find(testing::kTestApiKey) == std::string::npos);
}

TEST_CASE("a tool-call stream written one byte at a time decodes completely",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  server->Enqueue(Sse(testing::SplitIntoChunks(testing::OpenAiToolCallBytes(), 1)));
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  REQUIRE(out.status.ok());
  CHECK(out.events == testing::OpenAiToolCallEvents());
}

TEST_CASE("the request goes to the base path with the key, JSON and the conversation",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  server->Enqueue(Sse(SseChunks(testing::OpenAiToolCallPayloads())));
  auto provider = testing::OpenAiOver(*server);
  core::LlmRequest request = testing::HelloRequest();
  request.tools = {{"get_status", "Read status.", R"({"type":"object"})"}};
  request.tool_choice = core::ToolChoice::kRequired;
  REQUIRE(StreamFrom(*provider, request).status.ok());

  const std::vector<testing::RecordedRequest> seen = server->Requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].target == "/v1/chat/completions");
  CHECK(seen[0].Header("Authorization") == "Bearer " + std::string(testing::kTestApiKey));
  CHECK(seen[0].Header("Content-Type") == "application/json");
  CHECK(seen[0].Header("Accept-Encoding") == "identity");
  CHECK(testing::providers::Canonical(seen[0].body) ==
        testing::providers::Canonical(
            R"({"model":"gpt-4o","messages":[{"role":"user","content":"hello"}],
          "tools":[{"type":"function","function":{"name":"get_status","description":"Read status.",
                    "parameters":{"type":"object"}}}],
          "tool_choice":"required","stream":true,"stream_options":{"include_usage":true}})"));
}

TEST_CASE("a disconnect in the middle of a tool call is DataLoss with no tool call",
          "[adapters][providers][transport]") {
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  payloads.resize(7);  // both calls started, arguments unfinished
  const BodyFraming framing = GENERATE(BodyFraming::kChunked, BodyFraming::kContentLength);
  auto server = testing::StartServer();
  ScriptedResponse response = Sse(SseChunks(payloads));
  // Half of one more message, then the connection drops.
  response.chunks.push_back(Chunk(R"(data: {"choices":[{"index":0,"delta":{"tool_ca)"));
  response.disconnect_after_chunks = true;
  response.framing = framing;
  server->Enqueue(response);
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDataLoss);
  CheckNeutral(out.status);
  CHECK(out.Count(LlmStreamEvent::Kind::kToolCall) == 0);
  CHECK(out.Count(LlmStreamEvent::Kind::kFinish) == 0);
  CHECK(out.Text() == "Let me check vm-1 \xE2\x9C\x93 \xC3\xA9t\xC3\xA9");  // content streamed
}

TEST_CASE("a stream that ends after the finish reason but without [DONE] succeeds",
          "[adapters][providers][transport]") {
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  payloads.pop_back();
  auto server = testing::StartServer();
  server->Enqueue(Sse(SseChunks(payloads)));
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  REQUIRE(out.status.ok());
  CHECK(out.events == testing::OpenAiToolCallEvents());
}

TEST_CASE("a stream that ends cleanly before any finish reason is DataLoss",
          "[adapters][providers][transport]") {
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  payloads.resize(9);  // every argument fragment, no finish, no [DONE]
  auto server = testing::StartServer();
  server->Enqueue(Sse(SseChunks(payloads)));
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDataLoss);
  CHECK(out.Count(LlmStreamEvent::Kind::kToolCall) == 0);
  CHECK(out.Count(LlmStreamEvent::Kind::kFinish) == 0);
}

TEST_CASE("a malformed JSON message breaks the stream and no tool call is delivered",
          "[adapters][providers][transport]") {
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  payloads.insert(payloads.begin() + 8, R"({"choices":[{"index":0,"delta":{"tool_calls":[)");
  auto server = testing::StartServer();
  server->Enqueue(Sse(SseChunks(payloads)));
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDataLoss);
  CHECK(out.Count(LlmStreamEvent::Kind::kToolCall) == 0);
  CHECK(out.Count(LlmStreamEvent::Kind::kFinish) == 0);
}

TEST_CASE("429 with Retry-After is RateLimited carrying the delay",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  ScriptedResponse response = JsonResponse(
      429, R"({"error":{"message":"Rate limit reached for gpt-4o","type":"requests"}})");
  response.headers = {{"Retry-After", "7"}};
  server->Enqueue(response);
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kResourceExhausted);
  CHECK(core::RetryAfter(out.status) == absl::Seconds(7));
  CHECK(out.status.message() == "openai: rate limited (HTTP 429): Rate limit reached for gpt-4o");
  CHECK(out.events.empty());
}

TEST_CASE("503 is Unavailable, or RateLimited when it says when to retry",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  server->Enqueue(JsonResponse(503, R"({"error":{"message":"overloaded"}})"));
  ScriptedResponse with_hint = JsonResponse(503, "<html>busy</html>");
  with_hint.headers = {{"Retry-After", "2"}};
  server->Enqueue(with_hint);
  auto provider = testing::OpenAiOver(*server);

  const Streamed plain = StreamFrom(*provider, testing::HelloRequest());
  CHECK(plain.status.code() == absl::StatusCode::kUnavailable);
  CHECK(plain.status.message() == "openai: temporarily unavailable (HTTP 503): overloaded");

  const Streamed hinted = StreamFrom(*provider, testing::HelloRequest());
  CHECK(hinted.status.code() == absl::StatusCode::kResourceExhausted);
  CHECK(core::RetryAfter(hinted.status) == absl::Seconds(2));
  CHECK(std::string(hinted.status.message()).find("html") == std::string::npos);
}

TEST_CASE("401 is Unauthenticated and never repeats the key", "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  // The provider echoes the key back, in a shape RedactSecrets does not know.
  server->Enqueue(JsonResponse(401, R"({"error":{"message":"Incorrect API key provided: )" +
                                        std::string(testing::kTestApiKey) +
                                        R"(","code":"invalid_api_key"}})"));
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kUnauthenticated);
  CheckNeutral(out.status);
  CHECK(out.status.message() ==
        "openai: the API key was rejected (HTTP 401): Incorrect API key provided: [REDACTED]");
  REQUIRE(server->Requests().size() == 1);
  CHECK(server->Requests()[0].Header("Authorization") ==
        "Bearer " + std::string(testing::kTestApiKey));
}

TEST_CASE("other statuses map to their kinds over the wire", "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  server->Enqueue(JsonResponse(403, "{}"));
  server->Enqueue(JsonResponse(404, R"({"error":{"message":"The model `gpt-9` does not exist"}})"));
  server->Enqueue(JsonResponse(500, "Internal Server Error"));
  auto provider = testing::OpenAiOver(*server);
  CHECK(StreamFrom(*provider, testing::HelloRequest()).status.code() ==
        absl::StatusCode::kPermissionDenied);
  const Streamed missing = StreamFrom(*provider, testing::HelloRequest());
  CHECK(missing.status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(missing.status.message() ==
        "openai: unknown model or endpoint (HTTP 404): The model `gpt-9` does not exist");
  CHECK(StreamFrom(*provider, testing::HelloRequest()).status.code() ==
        absl::StatusCode::kUnavailable);
}

TEST_CASE("a stream idle past the idle-chunk timeout is DeadlineExceeded, promptly",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  ScriptedResponse response = Sse(SseChunks({payloads[0], payloads[2]}));
  response.chunks.push_back(Chunk(SseData(payloads[3]), absl::Seconds(5)));
  server->Enqueue(response);
  auto timeouts = testing::TestTimeouts();
  timeouts.idle_chunk = absl::Milliseconds(200);
  auto provider = testing::OpenAiOver(*server, timeouts);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDeadlineExceeded);
  CheckNeutral(out.status);
  CHECK(out.Text() == "Let me check ");
  CHECK(out.elapsed >= std::chrono::milliseconds(200));
  CHECK(out.elapsed < std::chrono::milliseconds(1500));
}

TEST_CASE("headers that do not arrive in time are DeadlineExceeded, promptly",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  ScriptedResponse response = Sse(SseChunks(testing::OpenAiToolCallPayloads()));
  response.header_delay = absl::Seconds(5);
  server->Enqueue(response);
  auto timeouts = testing::TestTimeouts();
  timeouts.response_header = absl::Milliseconds(200);
  auto provider = testing::OpenAiOver(*server, timeouts);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(out.status.message()).find("response headers") != std::string::npos);
  CHECK(out.events.empty());
  CHECK(out.elapsed < std::chrono::milliseconds(1500));
}

TEST_CASE("a stream that trickles past the whole-request timeout is DeadlineExceeded",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  std::vector<testing::ScriptedChunk> chunks;
  chunks.reserve(40);
  for (int i = 0; i < 40; ++i) {
    chunks.push_back(Chunk(SseData(R"({"choices":[{"index":0,"delta":{"content":"."}}]})"),
                           absl::Milliseconds(50)));
  }
  server->Enqueue(Sse(chunks));
  auto timeouts = testing::TestTimeouts();
  timeouts.idle_chunk = absl::Milliseconds(500);
  timeouts.request = absl::Milliseconds(400);
  auto provider = testing::OpenAiOver(*server, timeouts);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(out.status.message()).find("longer than") != std::string::npos);
  CHECK(out.elapsed < std::chrono::milliseconds(1500));
}

TEST_CASE("cancellation during a slow stream wins promptly and delivers nothing more",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  std::vector<std::string> payloads = testing::OpenAiToolCallPayloads();
  ScriptedResponse response = Sse(SseChunks({payloads[0], payloads[2]}));
  response.chunks.push_back(Chunk(SseData(payloads[3]), absl::Seconds(5)));
  server->Enqueue(response);
  auto provider = testing::OpenAiOver(*server);  // idle timeout 2 s: cancellation comes first
  core::LlmRequest request = testing::HelloRequest();
  auto flag = std::make_shared<std::atomic<bool>>(false);
  request.cancelled = flag;
  Streamed out;
  // Timed from before the cancellation is armed: StreamFrom's own clock starts a moment after
  // it, so its elapsed time can read 149 ms for a cancellation at 150 (seen under ASan).
  const auto armed = std::chrono::steady_clock::now();
  {
    testing::DelayedCancel cancel(flag, absl::Milliseconds(150));
    out = StreamFrom(*provider, request);
  }
  const auto until_end = std::chrono::steady_clock::now() - armed;
  CHECK(out.status.code() == absl::StatusCode::kCancelled);
  CHECK(out.Text() == "Let me check ");
  CHECK(until_end >= std::chrono::milliseconds(150));
  CHECK(out.elapsed < std::chrono::milliseconds(150 + 250));
}

TEST_CASE("cancellation while waiting for headers wins promptly",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  ScriptedResponse response = Sse(SseChunks(testing::OpenAiToolCallPayloads()));
  response.header_delay = absl::Seconds(5);
  server->Enqueue(response);
  auto provider = testing::OpenAiOver(*server);
  core::LlmRequest request = testing::HelloRequest();
  auto flag = std::make_shared<std::atomic<bool>>(false);
  request.cancelled = flag;
  Streamed out;
  {
    testing::DelayedCancel cancel(flag, absl::Milliseconds(100));
    out = StreamFrom(*provider, request);
  }
  CHECK(out.status.code() == absl::StatusCode::kCancelled);
  CHECK(out.events.empty());
  CHECK(out.elapsed < std::chrono::milliseconds(100 + 250));
}

TEST_CASE("a request cancelled before it starts sends nothing",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();
  auto provider = testing::OpenAiOver(*server);
  core::LlmRequest request = testing::HelloRequest();
  request.cancelled = std::make_shared<std::atomic<bool>>(true);
  CHECK(StreamFrom(*provider, request).status.code() == absl::StatusCode::kCancelled);
  CHECK(server->Requests().empty());
}

TEST_CASE("8 MB of content streams through", "[adapters][providers][transport]") {
  const std::string piece(4096, 'x');
  std::string body;
  constexpr int kMessages = 2048;  // 8 MiB of content
  for (int i = 0; i < kMessages; ++i) {
    body +=
        SseData(absl::StrCat(R"({"choices":[{"index":0,"delta":{"content":")", piece, R"("}}]})"));
  }
  body += SseData(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})");
  body += SseData("[DONE]");
  auto server = testing::StartServer();
  server->Enqueue(Sse(testing::SplitIntoChunks(body, std::size_t{64} << 10)));
  auto provider = testing::OpenAiOver(*server);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  REQUIRE(out.status.ok());
  CHECK(out.Count(LlmStreamEvent::Kind::kContentDelta) == kMessages);
  CHECK(out.Text().size() == static_cast<std::size_t>(kMessages) * piece.size());
  CHECK(out.events.back() == LlmStreamEvent::Finish(core::FinishReason::kStop));
}

TEST_CASE("a single message over the size cap fails closed", "[adapters][providers][transport]") {
  const std::string huge = absl::StrCat(R"({"choices":[{"index":0,"delta":{"content":")",
                                        std::string(100'000, 'y'), R"("}}]})");
  auto server = testing::StartServer();
  ScriptedResponse response = Sse(SseChunks({
      R"({"choices":[{"index":0,"delta":{"content":"before"}}]})",
      huge,
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
  }));
  server->Enqueue(response);
  auto provider = testing::OpenAiOver(*server, testing::TestTimeouts(), std::size_t{64} << 10);
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(out.status.message()).find("65536-byte limit") != std::string::npos);
  CHECK(out.Text() == "before");
  CHECK(out.Count(LlmStreamEvent::Kind::kFinish) == 0);
}

// Accepts one connection, reads the request and closes it without a word.
class SilentCloser {
 public:
  SilentCloser() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    socklen_t length = sizeof(address);
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      const int connection = ::accept(listener_, nullptr, nullptr);
      if (connection >= 0) {
        char buffer[4096];
        (void)::recv(connection, buffer, sizeof(buffer), 0);
        ::close(connection);
      }
    });
  }
  SilentCloser(const SilentCloser&) = delete;
  SilentCloser& operator=(const SilentCloser&) = delete;
  ~SilentCloser() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }

  std::string BaseUrl() const { return absl::StrCat("http://127.0.0.1:", port_); }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::unique_ptr<StreamingProvider> OpenAiAt(const std::string& base_url) {
  auto url = ParseBaseUrl(base_url);
  REQUIRE(url.ok());
  StreamingProviderOptions options;
  options.provider = "openai";
  options.base_url = *url;
  options.timeouts = testing::TestTimeouts();
  OpenAiProtocolOptions protocol;
  protocol.model = "gpt-4o";
  auto provider = StreamingProvider::Open(options, std::make_unique<OpenAiProtocol>(protocol));
  REQUIRE(provider.ok());
  return *std::move(provider);
}

TEST_CASE("no server listening is Unavailable", "[adapters][providers][transport]") {
  std::string closed_url;
  {
    auto server = testing::StartServer();
    closed_url = server->base_url();
  }
  auto provider = OpenAiAt(closed_url + "/v1");
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kUnavailable);
  CHECK(out.status.message() == "openai: the connection was refused (nothing listens there)");
}

TEST_CASE("a connection closed before any response is Unavailable",
          "[adapters][providers][transport]") {
  SilentCloser closer;
  auto provider = OpenAiAt(closer.BaseUrl() + "/v1");
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kUnavailable);
  CHECK(out.status.message() == "openai: the server closed the connection without a response");
}

TEST_CASE("an https base URL speaks TLS, and a failed handshake is Unavailable",
          "[adapters][providers][transport]") {
  auto server = testing::StartServer();  // plain HTTP: the TLS handshake cannot succeed
  auto provider = OpenAiAt("https://127.0.0.1:" + std::to_string(server->port()) + "/v1");
  const Streamed out = StreamFrom(*provider, testing::HelloRequest());
  CHECK(out.status.code() == absl::StatusCode::kUnavailable);
  CHECK(out.status.message() == "openai: the TLS handshake with the server failed");
  CHECK(server->Requests().empty());
}

TEST_CASE("Open refuses a provider without a protocol or with a zero timeout",
          "[adapters][providers][transport]") {
  StreamingProviderOptions options;
  options.provider = "openai";
  CHECK(StreamingProvider::Open(options, nullptr).status().code() ==
        absl::StatusCode::kInvalidArgument);
  options.timeouts.idle_chunk = absl::ZeroDuration();
  CHECK(StreamingProvider::Open(options, std::make_unique<OpenAiProtocol>(OpenAiProtocolOptions{}))
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  StreamingProviderOptions unnamed;
  CHECK(StreamingProvider::Open(unnamed, std::make_unique<OpenAiProtocol>(OpenAiProtocolOptions{}))
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pulse::adapters::providers
