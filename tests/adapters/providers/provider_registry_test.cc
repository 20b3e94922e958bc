#include "pulse/adapters/providers/provider_registry.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "provider_test_support.h"
#include "pulse/adapters/providers/base_url.h"
#include "pulse/adapters/providers/provider_factory.h"

namespace pulse::adapters::providers {
namespace {

using core::InferenceRoute;
using testing::JsonResponse;
using testing::ScriptedResponse;
using testing::StreamFrom;

ProviderConfig Config(std::string provider, std::string api_key = "key-123456") {
  ProviderConfig config;
  config.provider = std::move(provider);
  config.api_key = std::move(api_key);
  config.timeouts = testing::TestTimeouts();
  return config;
}

// ---- the table ------------------------------------------------------------------------------

TEST_CASE("the registry lists every provider once with usable defaults",
          "[adapters][providers][registry]") {
  std::set<std::string_view> names;
  for (const ProviderEntry& entry : ProviderRegistry()) {
    INFO(entry.name);
    CHECK(names.insert(entry.name).second);
    CHECK(FindProvider(entry.name) == &entry);
    CHECK_FALSE(entry.display_name.empty());
    CHECK(entry.credential_field.size() > 8);
    CHECK(entry.credential_field.substr(entry.credential_field.size() - 8) == "_api_key");
    if (entry.base_url_required) {
      CHECK(entry.default_base_url.empty());
      CHECK(entry.base_url_overridable);
    } else {
      CHECK(ParseBaseUrl(entry.default_base_url).ok());
    }
    if (entry.route != InferenceRoute::kMeteredApi) {
      CHECK_FALSE(KnownPrice(entry.name, entry.default_model).has_value());
    }
  }
  for (std::string_view name :
       {"openai", "openrouter", "deepseek", "groq", "mistral", "together", "fireworks", "zai",
        "zai-coding", "ollama", "anthropic", "gemini", "openai-compatible"}) {
    INFO(name);
    CHECK(names.count(name) == 1);
  }
  CHECK(FindProvider("OpenAI") == nullptr);
  CHECK(FindProvider("") == nullptr);
}

TEST_CASE("registry facts: families, endpoints, routes, keys", "[adapters][providers][registry]") {
  const ProviderEntry& zai = *FindProvider("zai");
  const ProviderEntry& coding = *FindProvider("zai-coding");
  CHECK(zai.default_base_url == "https://api.z.ai/api/paas/v4");
  CHECK(zai.route == InferenceRoute::kMeteredApi);
  CHECK(coding.default_base_url == "https://api.z.ai/api/coding/paas/v4");
  CHECK(coding.route == InferenceRoute::kCodingPlanAllowance);
  CHECK(zai.env_vars == std::array<std::string_view, 2>{"ZHIPU_API_KEY", "ZAI_API_KEY"});

  const ProviderEntry& ollama = *FindProvider("ollama");
  CHECK(ollama.family == ProtocolFamily::kOllama);
  CHECK(ollama.route == InferenceRoute::kLocalModelServer);
  CHECK_FALSE(ollama.requires_api_key);
  CHECK(ollama.default_model == "qwen3:8b");

  const ProviderEntry& generic = *FindProvider("openai-compatible");
  CHECK(generic.family == ProtocolFamily::kOpenAiCompatible);
  CHECK(generic.base_url_required);
  CHECK(generic.route == InferenceRoute::kLocalModelServer);

  CHECK(FindProvider("anthropic")->family == ProtocolFamily::kAnthropic);
  CHECK(FindProvider("gemini")->family == ProtocolFamily::kGemini);
  CHECK(FindProvider("gemini")->env_vars ==
        std::array<std::string_view, 2>{"GEMINI_API_KEY", "GOOGLE_API_KEY"});
  CHECK(FindProvider("openai")->max_tokens_field == "max_completion_tokens");
  CHECK_FALSE(FindProvider("mistral")->stream_usage_option);
  CHECK(ToString(ProtocolFamily::kOpenAiCompatible) == "openai_compatible");
  CHECK(ToString(ProtocolFamily::kGemini) == "gemini");
}

TEST_CASE("known list prices, and no price for the unknown", "[adapters][providers][registry]") {
  CHECK(KnownPrice("openai", "gpt-4o") == core::ModelPrice{2.50, 10.00});
  CHECK(KnownPrice("anthropic", "claude-3-5-sonnet-latest") == core::ModelPrice{3.00, 15.00});
  CHECK_FALSE(KnownPrice("openai", "gpt-unknown").has_value());
  CHECK_FALSE(KnownPrice("ollama", "qwen3:8b").has_value());
}

// ---- model strings --------------------------------------------------------------------------

TEST_CASE("model strings name a provider and a model", "[adapters][providers][registry]") {
  struct Row {
    std::string text;
    ModelRef expected;
  };
  const std::vector<Row> rows = {
      {"anthropic:claude-3-5-sonnet-latest", {"anthropic", "claude-3-5-sonnet-latest"}},
      {"ollama:qwen3:8b", {"ollama", "qwen3:8b"}},
      {"zai-coding:glm-5.2", {"zai-coding", "glm-5.2"}},
      {"openai-compatible:Qwen/Qwen3-32B", {"openai-compatible", "Qwen/Qwen3-32B"}},
      {"qwen3:8b", {"ollama", "qwen3:8b"}},  // "qwen3" is no provider: a guess
      {"openai/gpt-4o-mini", {"openrouter", "openai/gpt-4o-mini"}},
      {"meta-llama/llama-3.3-70b-instruct", {"openrouter", "meta-llama/llama-3.3-70b-instruct"}},
      {"groq/llama-3.3-70b-versatile", {"groq", "llama-3.3-70b-versatile"}},
      {"claude-3-5-haiku-latest", {"anthropic", "claude-3-5-haiku-latest"}},
      {"gpt-4o", {"openai", "gpt-4o"}},
      {"o3-mini", {"openai", "o3-mini"}},
      {"deepseek-chat", {"deepseek", "deepseek-chat"}},
      {"gemini-2.5-pro", {"gemini", "gemini-2.5-pro"}},
      {"llama3.1", {"ollama", "llama3.1"}},
      {"unknownvendor/model", {"ollama", "unknownvendor/model"}},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    auto parsed = ParseModelString(row.text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == row.expected);
  }
  CHECK(ParseModelString("").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ParseModelString("openai:").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ParseModelString("groq/").status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- configuration --------------------------------------------------------------------------

TEST_CASE("configuration is validated with actionable messages",
          "[adapters][providers][registry]") {
  struct Row {
    ProviderConfig config;
    std::string message_part;
  };
  ProviderConfig unknown = Config("chatgpt");
  ProviderConfig no_key = Config("openai", "");
  ProviderConfig no_zai_key = Config("zai-coding", "  ");
  ProviderConfig fixed_url = Config("groq");
  fixed_url.base_url = "https://proxy.example.com/v1";
  ProviderConfig generic_without_url = Config("openai-compatible");
  generic_without_url.model = "llama";
  ProviderConfig generic_without_model = Config("openai-compatible");
  generic_without_model.base_url = "http://localhost:8000/v1";
  ProviderConfig bad_scheme = Config("ollama");
  bad_scheme.base_url = "ftp://localhost:11434";
  ProviderConfig userinfo = Config("ollama");
  userinfo.base_url = "http://admin:s3cret@localhost:11434";
  ProviderConfig injected = Config("openai");
  injected.base_url = "https://api.openai.com/v1\r\nHost: evil";
  ProviderConfig spaced_model = Config("openai");
  spaced_model.model = "gpt 4o";
  ProviderConfig newline_key = Config("openai", "sk-abc\r\nX-Evil: 1");
  const std::vector<Row> rows = {
      {unknown, "unknown provider \"chatgpt\""},
      {no_key, "OpenAI needs an API key: set OPENAI_API_KEY"},
      {no_zai_key, "needs an API key: set ZHIPU_API_KEY or ZAI_API_KEY"},
      {fixed_url, "groq does not take a base URL"},
      {generic_without_url, "openai-compatible needs a base URL"},
      {generic_without_model, "openai-compatible needs a model name"},
      {bad_scheme, "ollama: base URL must use http or https"},
      {userinfo, "must not contain user credentials"},
      {injected, "whitespace, control"},
      {spaced_model, "model name"},
      {newline_key, "API key"},
  };
  for (const Row& row : rows) {
    absl::StatusOr<std::unique_ptr<core::LlmProvider>> made = MakeProvider(row.config);
    INFO(row.config.provider << " / " << row.message_part);
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string message(made.status().message());
    INFO(message);
    CHECK(message.find(row.message_part) != std::string::npos);
    CHECK(message.find("s3cret") == std::string::npos);
    CHECK(message.find("sk-abc") == std::string::npos);
  }
}

TEST_CASE("keys are optional where the registry says so", "[adapters][providers][registry]") {
  CHECK(MakeProvider(Config("ollama", "")).ok());
  ProviderConfig local = Config("openai-compatible", "");
  local.base_url = "http://localhost:1234/v1";
  local.model = "qwen2.5-7b-instruct";
  CHECK(MakeProvider(local).ok());
  ProviderConfig openai_proxy = Config("openai", "");
  openai_proxy.base_url = "http://localhost:8080/v1";
  CHECK(MakeProvider(openai_proxy).ok());
  for (const ProviderEntry& entry : ProviderRegistry()) {
    if (entry.base_url_required) {
      continue;
    }
    INFO(entry.name);
    CHECK(MakeProvider(Config(std::string(entry.name))).ok());
  }
}

TEST_CASE("a route names provider, model, payment and known price",
          "[adapters][providers][registry]") {
  auto openai = ResolveRoute(Config("openai", ""));
  REQUIRE(openai.ok());
  CHECK(*openai == core::ModelRoute{"openai", "gpt-4o", InferenceRoute::kMeteredApi,
                                    core::ModelPrice{2.50, 10.00}});
  ProviderConfig custom_model = Config("openai");
  custom_model.model = "gpt-4.5-preview-unknown";
  auto unpriced = ResolveRoute(custom_model);
  REQUIRE(unpriced.ok());
  CHECK_FALSE(unpriced->price.has_value());
  CHECK(unpriced->route == InferenceRoute::kMeteredApi);

  auto coding = ResolveRoute(Config("zai-coding"));
  REQUIRE(coding.ok());
  CHECK(coding->route == InferenceRoute::kCodingPlanAllowance);
  CHECK_FALSE(coding->price.has_value());
  CHECK(coding->Identity() == "zai-coding:glm-5.2");

  auto ollama = ResolveRoute(Config("ollama"));
  REQUIRE(ollama.ok());
  CHECK(ollama->route == InferenceRoute::kLocalModelServer);
  CHECK_FALSE(ollama->price.has_value());

  CHECK(ResolveRoute(Config("nope")).status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- every family end to end over the fake ---------------------------------------------------

TEST_CASE("MakeProvider speaks each family's wire format to its endpoint",
          "[adapters][providers][registry]") {
  auto server = testing::StartServer();
  const std::string base = server->base_url();

  SECTION("openai-compatible under a path prefix") {
    ScriptedResponse response;
    response.path = "/api/coding/paas/v4/chat/completions";
    response.chunks = testing::SseChunks(
        {R"({"choices":[{"index":0,"delta":{"content":"hi"}}]})",
         R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}})",
         "[DONE]"});
    server->Enqueue(response);
    ProviderConfig config = Config("zai-coding", "zai-key-abcdef");
    config.base_url = base + "/api/coding/paas/v4";
    auto provider = MakeProvider(config);
    REQUIRE(provider.ok());
    const testing::Streamed out = StreamFrom(**provider, testing::HelloRequest());
    REQUIRE(out.status.ok());
    CHECK(out.events == std::vector<core::LlmStreamEvent>{
                            core::LlmStreamEvent::ContentDelta("hi"),
                            core::LlmStreamEvent::Usage(3, 1),
                            core::LlmStreamEvent::Finish(core::FinishReason::kStop)});
    REQUIRE(server->Requests().size() == 1);
    CHECK(server->Requests()[0].Header("Authorization") == "Bearer zai-key-abcdef");
    CHECK(server->Requests()[0].body.find("\"model\":\"glm-5.2\"") != std::string::npos);
  }
  SECTION("ollama native NDJSON") {
    ScriptedResponse response;
    response.path = "/api/chat";
    response.content_type = "application/x-ndjson";
    response.chunks = testing::SplitIntoChunks(
        testing::JoinChunks(testing::NdjsonChunks({
            R"({"model":"qwen3:8b","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hel"},"done":false})",
            R"({"model":"qwen3:8b","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"lo"},"done":false})",
            R"({"model":"qwen3:8b","created_at":"2025-01-01T00:00:01Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":2})",
        })),
        5);
    server->Enqueue(response);
    ProviderConfig config = Config("ollama", "");
    config.base_url = base;
    auto provider = MakeProvider(config);
    REQUIRE(provider.ok());
    const testing::Streamed out = StreamFrom(**provider, testing::HelloRequest());
    REQUIRE(out.status.ok());
    CHECK(out.Text() == "Hello");
    CHECK(out.events.back() == core::LlmStreamEvent::Finish(core::FinishReason::kStop));
    REQUIRE(server->Requests().size() == 1);
    CHECK(server->Requests()[0].Header("Authorization").empty());
  }
  SECTION("anthropic messages SSE") {
    ScriptedResponse response;
    response.path = "/v1/messages";
    response.chunks = {
        testing::Chunk(testing::SseEvent(
            "message_start",
            R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-3-5-sonnet-latest","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}})")),
        testing::Chunk(testing::SseEvent(
            "content_block_start",
            R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})")),
        testing::Chunk(testing::SseEvent(
            "content_block_delta",
            R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}})")),
        testing::Chunk(
            testing::SseEvent("content_block_stop", R"({"type":"content_block_stop","index":0})")),
        testing::Chunk(testing::SseEvent(
            "message_delta",
            R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}})")),
        testing::Chunk(testing::SseEvent("message_stop", R"({"type":"message_stop"})")),
    };
    server->Enqueue(response);
    ProviderConfig config = Config("anthropic", "ant-key-abcdef");
    config.base_url = base + "/v1";
    auto provider = MakeProvider(config);
    REQUIRE(provider.ok());
    const testing::Streamed out = StreamFrom(**provider, testing::HelloRequest());
    REQUIRE(out.status.ok());
    CHECK(out.Text() == "Hello");
    CHECK(out.events.back() == core::LlmStreamEvent::Finish(core::FinishReason::kStop));
    REQUIRE(server->Requests().size() == 1);
    CHECK(server->Requests()[0].Header("x-api-key") == "ant-key-abcdef");
  }
  SECTION("gemini streamGenerateContent SSE") {
    ScriptedResponse response;
    response.path = "/v1beta/models/gemini-1.5-pro:streamGenerateContent";
    response.chunks = testing::SseChunks({
        R"({"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}})",
        R"({"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7}})",
    });
    server->Enqueue(response);
    ProviderConfig config = Config("gemini", "gem-key-abcdef");
    config.base_url = base + "/v1beta";
    auto provider = MakeProvider(config);
    REQUIRE(provider.ok());
    const testing::Streamed out = StreamFrom(**provider, testing::HelloRequest());
    REQUIRE(out.status.ok());
    CHECK(out.Text() == "Hello");
    CHECK(out.events.back() == core::LlmStreamEvent::Finish(core::FinishReason::kStop));
    REQUIRE(server->Requests().size() == 1);
    CHECK(server->Requests()[0].target ==
          "/v1beta/models/gemini-1.5-pro:streamGenerateContent?alt=sse");
    CHECK(server->Requests()[0].Header("x-goog-api-key") == "gem-key-abcdef");
    CHECK(server->Requests()[0].target.find("gem-key") == std::string::npos);
  }
}

TEST_CASE("Ollama refuses a forced tool call before anything is sent",
          "[adapters][providers][registry]") {
  auto server = testing::StartServer();
  ProviderConfig config = Config("ollama", "");
  config.base_url = server->base_url();
  auto provider = MakeProvider(config);
  REQUIRE(provider.ok());
  core::LlmRequest request = testing::HelloRequest();
  request.tools = {{"get_status", "Read status.", R"({"type":"object"})"}};
  request.tool_choice = core::ToolChoice::kRequired;
  const testing::Streamed out = StreamFrom(**provider, request);
  CHECK(out.status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(out.status.message()).rfind("ollama: ", 0) == 0);
  CHECK(server->Requests().empty());
}

// ---- model listings --------------------------------------------------------------------------

TEST_CASE("ListModels reads each family's listing", "[adapters][providers][registry]") {
  auto server = testing::StartServer();
  const std::string base = server->base_url();

  SECTION("openai-compatible GET {base}/models") {
    ScriptedResponse response = JsonResponse(
        200, R"({"object":"list","data":[{"id":"gpt-4o","object":"model","owned_by":"openai"},
                {"id":"gpt-4o-mini","object":"model"},{"object":"model"}]})");
    response.path = "/v1/models";
    server->Enqueue(response);
    ProviderConfig config = Config("openai-compatible", "local-key-123");
    config.base_url = base + "/v1";
    auto models = ListModels(config);
    REQUIRE(models.ok());
    CHECK(*models == std::vector<ModelInfo>{{"gpt-4o", ""}, {"gpt-4o-mini", ""}});
    CHECK(server->Requests()[0].method == "GET");
    CHECK(server->Requests()[0].Header("Authorization") == "Bearer local-key-123");
  }
  SECTION("ollama GET /api/tags") {
    ScriptedResponse response =
        JsonResponse(200, R"({"models":[{"name":"qwen3:8b","model":"qwen3:8b","size":5200000000,
                 "details":{"family":"qwen3"}},{"name":"llama3.1:latest","model":"llama3.1:latest"}]})");
    response.path = "/api/tags";
    server->Enqueue(response);
    ProviderConfig config = Config("ollama", "");
    config.base_url = base;
    auto models = ListModels(config);
    REQUIRE(models.ok());
    CHECK(*models ==
          std::vector<ModelInfo>{{"qwen3:8b", "qwen3:8b"}, {"llama3.1:latest", "llama3.1:latest"}});
  }
  SECTION("ollama with nothing pulled") {
    ScriptedResponse response = JsonResponse(200, R"({"models":null})");
    response.path = "/api/tags";
    server->Enqueue(response);
    ProviderConfig config = Config("ollama", "");
    config.base_url = base;
    auto models = ListModels(config);
    REQUIRE(models.ok());
    CHECK(models->empty());
  }
  SECTION("anthropic GET /v1/models") {
    ScriptedResponse response =
        JsonResponse(200, R"({"data":[{"type":"model","id":"claude-3-5-sonnet-20241022",
                 "display_name":"Claude 3.5 Sonnet","created_at":"2024-10-22T00:00:00Z"}],
                 "has_more":false,"first_id":"claude-3-5-sonnet-20241022","last_id":null})");
    response.path = "/v1/models";
    server->Enqueue(response);
    ProviderConfig config = Config("anthropic", "ant-key-abcdef");
    config.base_url = base + "/v1";
    auto models = ListModels(config);
    REQUIRE(models.ok());
    CHECK(*models == std::vector<ModelInfo>{{"claude-3-5-sonnet-20241022", "Claude 3.5 Sonnet"}});
    const testing::RecordedRequest seen = server->Requests()[0];
    CHECK(seen.target == "/v1/models?limit=1000");
    CHECK(seen.Header("x-api-key") == "ant-key-abcdef");
    CHECK(seen.Header("anthropic-version") == "2023-06-01");
  }
  SECTION("gemini GET /models, generateContent models only") {
    ScriptedResponse response = JsonResponse(200, R"({"models":[
          {"name":"models/gemini-1.5-pro","displayName":"Gemini 1.5 Pro",
           "supportedGenerationMethods":["generateContent","countTokens"]},
          {"name":"models/text-embedding-004","displayName":"Text Embedding 004",
           "supportedGenerationMethods":["embedContent"]}],"nextPageToken":"abc"})");
    response.path = "/v1beta/models";
    server->Enqueue(response);
    ProviderConfig config = Config("gemini", "gem-key-abcdef");
    config.base_url = base + "/v1beta";
    auto models = ListModels(config);
    REQUIRE(models.ok());
    CHECK(*models == std::vector<ModelInfo>{{"gemini-1.5-pro", "Gemini 1.5 Pro"}});
    const testing::RecordedRequest seen = server->Requests()[0];
    CHECK(seen.target == "/v1beta/models?pageSize=1000");
    CHECK(seen.Header("x-goog-api-key") == "gem-key-abcdef");
  }
}

TEST_CASE("ListModels fails with typed, neutral errors", "[adapters][providers][registry]") {
  auto server = testing::StartServer();
  ProviderConfig config = Config("openai-compatible", "listing-key-123456");
  config.base_url = server->base_url() + "/v1";

  server->Enqueue(JsonResponse(
      401, R"({"error":{"message":"bad key listing-key-123456","type":"invalid_request_error"}})"));
  auto unauthorized = ListModels(config);
  CHECK(unauthorized.status().code() == absl::StatusCode::kUnauthenticated);
  CHECK(std::string(unauthorized.status().message()).find("listing-key") == std::string::npos);
  CHECK(std::string(unauthorized.status().message()).rfind("openai-compatible: ", 0) == 0);

  server->Enqueue(JsonResponse(200, "<html>not json</html>"));
  CHECK(ListModels(config).status().code() == absl::StatusCode::kDataLoss);

  ScriptedResponse limited = JsonResponse(429, "{}");
  limited.headers = {{"Retry-After", "3"}};
  server->Enqueue(limited);
  auto rate_limited = ListModels(config);
  CHECK(rate_limited.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(core::RetryAfter(rate_limited.status()) == absl::Seconds(3));

  CHECK(ListModels(Config("nope")).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("the fake server answers unscripted requests with 500 and records them",
          "[adapters][providers][fake]") {
  auto server = testing::StartServer();
  ScriptedResponse tags = JsonResponse(200, R"({"models":[]})");
  tags.path = "/api/tags";
  server->Enqueue(tags);
  ProviderConfig config = Config("openai-compatible", "");
  config.base_url = server->base_url() + "/v1";
  auto unmatched = ListModels(config);  // asks /v1/models: nothing scripted for it
  CHECK(unmatched.status().code() == absl::StatusCode::kUnavailable);
  CHECK(server->PendingResponses() == 1);
  REQUIRE(server->Requests().size() == 1);
  CHECK_FALSE(server->Requests()[0].matched);
  CHECK(server->Requests()[0].path == "/v1/models");
}

TEST_CASE("a configuration without a model starts with the first chat model listed",
          "[adapters][providers][registry]") {
  // OpenAI's own list, in its order: embeddings, speech and image models come first.
  const std::vector<ModelInfo> openai = {{"text-embedding-3-large", ""},
                                         {"whisper-1", ""},
                                         {"tts-1-hd", ""},
                                         {"dall-e-3", ""},
                                         {"gpt-image-1", ""},
                                         {"omni-moderation-latest", ""},
                                         {"gpt-4o-realtime-preview", ""},
                                         {"gpt-4o-audio-preview", ""},
                                         {"gpt-4o-transcribe", ""},
                                         {"davinci-002", ""},
                                         {"babbage-002", ""},
                                         {"gpt-4.1-mini", ""},
                                         {"gpt-4o", ""}};
  CHECK(FirstChatModel(openai) == "gpt-4.1-mini");
  CHECK(FirstChatModel({{"Llama-Guard-3-8B", ""}, {"BGE-Reranker", ""}, {"qwen3:8b", ""}}) ==
        "qwen3:8b");
  CHECK(FirstChatModel({{"nomic-embed-text", "Nomic Embed"}}) == std::nullopt);
  CHECK(FirstChatModel({{"", ""}}) == std::nullopt);
  CHECK(FirstChatModel({}) == std::nullopt);
}

}  // namespace
}  // namespace pulse::adapters::providers
