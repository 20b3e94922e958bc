// The agentic loop over the real providers (MakeProvider against the loopback fake server), the
// real built-in tool handlers and a fleet whose logs, config and command output hold planted
// secrets: the bytes a hosted model receives hold no secret and no local-only resource, while
// the stored transcript keeps the real results; a local model server receives everything. The
// provider's reported usage is priced from the registry into the session and `done`, and a 429
// with Retry-After is retried by the loop.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../../core/loop/handlers/handlers_test_support.h"
#include "fmt/format.h"
#include "provider_test_support.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/loop/outbound_context.h"
#include "pulse/testing/in_memory_session_store.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/recording_event_sink.h"

namespace pulse::testing::provider_loop {
namespace {

using adapters::providers::KnownPrice;
using adapters::providers::ProviderConfig;
using core::LoopEventType;
using core::RunEnd;

// ---- planted data ---------------------------------------------------------------------------

// In the fleet (the handlers redact these before the loop sees them).
constexpr std::string_view kApiKey = "sk-proj-PLANTEDfleetKey0123456789abcdef";
constexpr std::string_view kPassword = "Pl4ntedFleetPassw0rd";
constexpr std::string_view kBearer = "eyJPLANTEDbearerToken0123456789xyz";
constexpr std::string_view kPemBody = "MIIEpAIBAAKCAQEAplantedPEMbody0123456789";
// In the operator's system prompt and the user's message (only the outbound policy stands
// between these and a hosted model).
constexpr std::string_view kPromptKey = "sk-ant-PLANTEDpromptKey0123456789abcdef";
constexpr std::string_view kUserPassword = "Us3rPlantedPassword";
// The local-only resource (SeedDemoLikeFleet's second VM).
constexpr std::string_view kLocalId = "vm:102";
constexpr std::string_view kLocalName = "db-01";

const std::vector<std::string_view> kSecrets = {kApiKey,  kPassword,  kBearer,
                                                kPemBody, kPromptKey, kUserPassword};

void PlantSecrets(FakeFleet& fleet) {
  fleet.SetLogs("vm:101", {
                              "app[311]: started",
                              fmt::format("app[311]: calling the model API with key {}", kApiKey),
                              fmt::format("app[311]: Authorization: Bearer {}", kBearer),
                              fmt::format("app[311]: db login password={}", kPassword),
                              "app[311]: ERROR write failed: No space left on device",
                          });
  core::FleetConfig config;
  config.format = "ini";
  config.content = fmt::format(
      "[server]\nlisten = 443\npassword={}\n-----BEGIN RSA PRIVATE KEY-----\n{}\nQm9keQ==\n"
      "-----END RSA PRIVATE KEY-----\nworkers = 4\n",
      kPassword, kPemBody);
  fleet.SetConfig("service:pve1/nginx", config);
  fleet.SetExecOutput("vm:101", "cat /etc/app/app.conf",
                      handlers::Output(fmt::format("port=8080\nOPENAI_API_KEY={}\n"
                                                   "upstream_auth=Bearer {}\n",
                                                   kApiKey, kBearer)));
}

// The system prompt and the user message of every run.
std::string SystemPrompt() {
  return fmt::format("You are Pulse. Operator notes: the staging key is {}.", kPromptKey);
}
std::string UserMessage() {
  return fmt::format("Is {} ({}) affected by web-01's trouble? My password={}", kLocalName,
                     kLocalId, kUserPassword);
}

// ---- the scripted model, in each vendor's stream format ----------------------------------------

struct Call {
  std::string id;
  std::string name;
  std::string arguments;  // a JSON object
};

struct Turn {
  std::string text;
  std::vector<Call> calls;
  int input_tokens = 0;
  int output_tokens = 0;
};

std::string Quoted(std::string_view text) {
  core::JsonWriter out;
  out.String(text);
  return out.Take();
}

// Reads logs and config on the secret-bearing resources, reads a file holding keys, and lists
// the fleet (the local-only VM included); then a blank answer, so the loop makes its summary
// call; then the summary.
std::vector<Turn> Investigation() {
  return {
      Turn{"Checking the logs, the config and the fleet.",
           {{"call_logs", "pulse_read", R"({"action":"logs","resource_id":"vm:101"})"},
            {"call_config", "pulse_read",
             R"({"action":"config","resource_id":"service:pve1/nginx"})"},
            {"call_exec", "pulse_read",
             R"({"action":"exec","resource_id":"vm:101","command":"cat /etc/app/app.conf"})"},
            {"call_list", "pulse_query", R"({"action":"list"})"}},
           1000,
           100},
      Turn{"", {}, 1500, 0},
      Turn{"web-01 is out of disk space; nothing else is affected.", {}, 2000, 50},
  };
}

enum class Family { kOpenAi, kAnthropic, kOllama };

ScriptedResponse OpenAiTurn(const Turn& turn) {
  std::vector<std::string> payloads = {
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})"};
  if (!turn.text.empty()) {
    payloads.push_back(fmt::format(
        R"({{"choices":[{{"index":0,"delta":{{"content":{}}},"finish_reason":null}}]}})",
        Quoted(turn.text)));
  }
  for (std::size_t i = 0; i < turn.calls.size(); ++i) {
    const Call& c = turn.calls[i];
    payloads.push_back(fmt::format(
        R"({{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{},"id":"{}","type":)"
        R"("function","function":{{"name":"{}","arguments":{}}}}}]}},"finish_reason":null}}]}})",
        i, c.id, c.name, Quoted(c.arguments)));
  }
  payloads.push_back(
      fmt::format(R"({{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{}"}}]}})",
                  turn.calls.empty() ? "stop" : "tool_calls"));
  payloads.push_back(fmt::format(
      R"({{"choices":[],"usage":{{"prompt_tokens":{},"completion_tokens":{},"total_tokens":{}}}}})",
      turn.input_tokens, turn.output_tokens, turn.input_tokens + turn.output_tokens));
  payloads.push_back("[DONE]");
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

ScriptedResponse AnthropicTurn(const Turn& turn) {
  std::vector<ScriptedChunk> chunks;
  auto event = [&chunks](std::string_view type, std::string data) {
    chunks.push_back(Chunk(SseEvent(type, data)));
  };
  event("message_start",
        fmt::format(R"({{"type":"message_start","message":{{"id":"msg_1","type":"message",)"
                    R"("role":"assistant","model":"m","content":[],"stop_reason":null,)"
                    R"("usage":{{"input_tokens":{},"output_tokens":1}}}}}})",
                    turn.input_tokens));
  int index = 0;
  if (!turn.text.empty()) {
    event("content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
    event("content_block_delta", fmt::format(R"({{"type":"content_block_delta","index":0,)"
                                             R"("delta":{{"type":"text_delta","text":{}}}}})",
                                             Quoted(turn.text)));
    event("content_block_stop", R"({"type":"content_block_stop","index":0})");
    ++index;
  }
  for (const Call& c : turn.calls) {
    event("content_block_start",
          fmt::format(R"({{"type":"content_block_start","index":{},"content_block":)"
                      R"({{"type":"tool_use","id":"{}","name":"{}","input":{{}}}}}})",
                      index, c.id, c.name));
    event("content_block_delta",
          fmt::format(R"({{"type":"content_block_delta","index":{},)"
                      R"("delta":{{"type":"input_json_delta","partial_json":{}}}}})",
                      index, Quoted(c.arguments)));
    event("content_block_stop",
          fmt::format(R"({{"type":"content_block_stop","index":{}}})", index));
    ++index;
  }
  event("message_delta",
        fmt::format(R"({{"type":"message_delta","delta":{{"stop_reason":"{}",)"
                    R"("stop_sequence":null}},"usage":{{"output_tokens":{}}}}})",
                    turn.calls.empty() ? "end_turn" : "tool_use", turn.output_tokens));
  event("message_stop", R"({"type":"message_stop"})");
  ScriptedResponse response;
  response.path = "/v1/messages";
  response.chunks = std::move(chunks);
  return response;
}

ScriptedResponse OllamaTurn(const Turn& turn) {
  std::string calls;
  for (const Call& c : turn.calls) {
    calls += fmt::format(R"({}{{"function":{{"name":"{}","arguments":{}}}}})",
                         calls.empty() ? "" : ",", c.name, c.arguments);
  }
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      R"({{"model":"qwen3:8b","message":{{"role":"assistant","content":{}{}}},"done":false}})",
      Quoted(turn.text), calls.empty() ? "" : fmt::format(R"(,"tool_calls":[{}])", calls)));
  lines.push_back(fmt::format(
      R"({{"model":"qwen3:8b","message":{{"role":"assistant","content":""}},"done":true,)"
      R"("done_reason":"stop","prompt_eval_count":{},"eval_count":{}}})",
      turn.input_tokens, turn.output_tokens));
  ScriptedResponse response;
  response.path = "/api/chat";
  response.content_type = "application/x-ndjson";
  response.chunks = NdjsonChunks(lines);
  return response;
}

ScriptedResponse Render(Family family, const Turn& turn) {
  switch (family) {
    case Family::kOpenAi:
      return OpenAiTurn(turn);
    case Family::kAnthropic:
      return AnthropicTurn(turn);
    case Family::kOllama:
      return OllamaTurn(turn);
  }
  return {};
}

// ---- the harness ------------------------------------------------------------------------------

struct Endpoint {
  Family family;
  std::string provider;  // registry name
  std::string model;
  std::string path_prefix;  // under the fake server: the base URL's own path
  std::string api_key;
};

Endpoint OpenAi(std::string model = "gpt-4o") {
  return {Family::kOpenAi, "openai", std::move(model), "/v1", ""};
}
Endpoint Anthropic() {
  return {Family::kAnthropic, "anthropic", "claude-sonnet-4-0", "/v1", "config-key-0123456789"};
}
Endpoint Ollama() { return {Family::kOllama, "ollama", "qwen3:8b", "", ""}; }

// An AgenticLoop over MakeProvider(endpoint) pointed at a fake server, the real built-in
// handlers over the secret-bearing fleet, and vm:102 marked local-only.
struct LoopOverProvider {
  explicit LoopOverProvider(const Endpoint& endpoint) : family(endpoint.family) {
    PlantSecrets(f.fleet);
    core::OperatorState local_only;
    local_only.resource_id = std::string(kLocalId);
    local_only.set_by = "alice";
    local_only.local_only = true;
    REQUIRE(f.operator_state.Set(local_only).ok());

    server = StartServer();
    ProviderConfig config;
    config.provider = endpoint.provider;
    config.model = endpoint.model;
    config.base_url = server->base_url() + endpoint.path_prefix;
    config.api_key = endpoint.api_key;
    config.timeouts = TestTimeouts();
    absl::StatusOr<std::unique_ptr<core::LlmProvider>> made =
        adapters::providers::MakeProvider(config);
    INFO(made.status().ToString());
    REQUIRE(made.ok());
    provider = *std::move(made);
    absl::StatusOr<core::ModelRoute> route = adapters::providers::ResolveRoute(config);
    REQUIRE(route.ok());

    core::LoopOptions options;
    options.system_prompt = SystemPrompt();
    options.route = *route;
    options.local_only = [this]() {
      return core::LoadLocalOnlyResources(f.operator_state, &f.fleet);
    };
    loop = std::make_unique<core::AgenticLoop>(*provider, f.registry, f.executor, runner, f.clock,
                                               sessions, f.actions, f.ids, std::move(options));
  }

  void Script(const std::vector<Turn>& turns) {
    for (const Turn& turn : turns) {
      server->Enqueue(Render(family, turn));
    }
  }

  absl::StatusOr<core::RunOutcome> Run() {
    core::RunRequest request{"ses_int", UserMessage(), handlers::PolicyFor(core::kToolPulseRead)};
    return loop->Run(request, events);
  }

  core::SessionRecord Session() {
    absl::StatusOr<core::SessionRecord> record = sessions.Get("ses_int");
    REQUIRE(record.ok());
    return *record;
  }

  std::vector<std::string> Bodies() const {
    std::vector<std::string> bodies;
    for (const RecordedRequest& r : server->Requests()) {
      bodies.push_back(r.body);
    }
    return bodies;
  }

  rapidjson::Document Done() const {
    std::vector<rapidjson::Document> done = events.DataOf(LoopEventType::kDone);
    REQUIRE(done.size() == 1);
    return std::move(done.front());
  }

  Family family;
  handlers::Fixture f;
  InMemorySessionStore sessions;
  InlineTaskRunner runner;
  RecordingEventSink events;
  std::unique_ptr<FakeProviderServer> server;
  std::unique_ptr<core::LlmProvider> provider;
  std::unique_ptr<core::AgenticLoop> loop;
};

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The stored result of `call_id`.
std::string StoredResult(const core::SessionRecord& session, std::string_view call_id) {
  for (const core::Message& m : session.transcript) {
    if (m.role == core::MessageRole::kTool && m.tool_call_id == call_id) {
      return m.content;
    }
  }
  FAIL("no stored result for " << call_id);
  return "";
}

double CostOf(const core::ModelPrice& price, const Turn& turn) {
  return (turn.input_tokens * price.input_usd_per_mtok +
          turn.output_tokens * price.output_usd_per_mtok) /
         1e6;
}

// ---- the outbound policy on the wire ----------------------------------------------------------

void CheckHostedRun(const Endpoint& endpoint) {
  LoopOverProvider h(endpoint);
  h.Script(Investigation());
  absl::StatusOr<core::RunOutcome> out = h.Run();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == Investigation()[2].text);

  // Three requests: the tool turn, the blank answer, the summary call.
  const std::vector<std::string> bodies = h.Bodies();
  REQUIRE(bodies.size() == 3);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const std::string& body = bodies[i];
    INFO("request " << i << ": " << body.substr(0, 4000));
    for (std::string_view secret : kSecrets) {
      CHECK_FALSE(Contains(body, secret));
    }
    CHECK_FALSE(Contains(body, kLocalId));
    CHECK_FALSE(Contains(body, kLocalName));
    CHECK(Contains(body, core::kLocalOnlyPlaceholder));  // the user asked about it by name
  }
  // The later requests carry the tool results: sanitized, not missing.
  for (std::size_t i = 1; i < bodies.size(); ++i) {
    INFO("request " << i);
    CHECK(Contains(bodies[i], "No space left on device"));
    CHECK(Contains(bodies[i], "listen = 443"));
    CHECK(Contains(bodies[i], "port=8080"));
    CHECK(Contains(bodies[i], "service:pve1/nginx"));
    CHECK(Contains(bodies[i], core::kWithheldLocalOnlyMember));
  }

  // The stored transcript keeps what the tools really returned and what the user wrote, except
  // secrets, which no stored or served copy holds (issue 20 item 7).
  const core::SessionRecord session = h.Session();
  CHECK_FALSE(Contains(session.transcript.at(0).content, kUserPassword));
  CHECK(Contains(session.transcript.at(0).content, kLocalId));
  const std::string listing = StoredResult(session, "call_list");
  CHECK(Contains(listing, kLocalId));
  CHECK(Contains(listing, kLocalName));
  CHECK(Contains(StoredResult(session, "call_logs"), "No space left on device"));
  CHECK(Contains(StoredResult(session, "call_config"), "listen = 443"));
  CHECK(Contains(StoredResult(session, "call_exec"), "port=8080"));
}

TEST_CASE("an OpenAI-family provider never receives planted secrets or local-only resources",
          "[adapters][providers][loop][outbound]") {
  CheckHostedRun(OpenAi());
}

TEST_CASE("an Anthropic provider never receives planted secrets or local-only resources",
          "[adapters][providers][loop][outbound]") {
  CheckHostedRun(Anthropic());
}

TEST_CASE("a local model server (Ollama, NDJSON) receives the full context",
          "[adapters][providers][loop][outbound]") {
  LoopOverProvider h(Ollama());
  h.Script(Investigation());
  absl::StatusOr<core::RunOutcome> out = h.Run();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  const std::vector<std::string> bodies = h.Bodies();
  REQUIRE(bodies.size() == 3);
  for (const std::string& body : bodies) {
    INFO(body.substr(0, 4000));
    CHECK(Contains(body, kPromptKey));
    CHECK(Contains(body, kUserPassword));
    CHECK(Contains(body, kLocalId));
    CHECK(Contains(body, kLocalName));
    CHECK_FALSE(Contains(body, core::kLocalOnlyPlaceholder));
  }
  // The listing reaches the model whole, the local-only VM included.
  CHECK(Contains(bodies[1], R"(\"id\":\"vm:102\")"));
  CHECK_FALSE(Contains(bodies[1], core::kWithheldLocalOnlyMember));
}

// ---- usage and cost ---------------------------------------------------------------------------

void CheckPricedUsage(const Endpoint& endpoint) {
  const std::optional<core::ModelPrice> price = KnownPrice(endpoint.provider, endpoint.model);
  REQUIRE(price.has_value());
  LoopOverProvider h(endpoint);
  const std::vector<Turn> turns = Investigation();
  h.Script(turns);
  REQUIRE(h.Run().ok());

  const core::SessionRecord session = h.Session();
  REQUIRE(session.usage.size() == turns.size());
  double total = 0;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    INFO("call " << i);
    const core::TurnUsage& usage = session.usage[i];
    CHECK(usage.route == endpoint.provider + ":" + endpoint.model);
    CHECK(usage.input_tokens == turns[i].input_tokens);
    CHECK(usage.output_tokens == turns[i].output_tokens);
    CHECK(usage.budget_applicable);
    REQUIRE(usage.cost_usd.has_value());
    CHECK(*usage.cost_usd == Approx(CostOf(*price, turns[i])));
    total += CostOf(*price, turns[i]);
  }
  CHECK(session.usage_totals.provider_calls == 3);
  CHECK(session.usage_totals.unpriced_calls == 0);
  CHECK(session.usage_totals.priced_cost_usd == Approx(total));

  const rapidjson::Document done = h.Done();
  CHECK(core::GetInt64(done, "input_tokens") == 4500);
  CHECK(core::GetInt64(done, "output_tokens") == 150);
  CHECK(core::GetString(done, "route") == endpoint.provider + ":" + endpoint.model);
  REQUIRE(done["cost_usd"].IsNumber());
  CHECK(done["cost_usd"].GetDouble() == Approx(total));
  CHECK(core::GetBool(done, "budget_applicable") == true);
}

TEST_CASE("OpenAI stream usage is priced from the registry into the session and done",
          "[adapters][providers][loop][usage]") {
  CheckPricedUsage(OpenAi());
}

TEST_CASE("Anthropic message_start and message_delta usage is priced into the session and done",
          "[adapters][providers][loop][usage]") {
  CheckPricedUsage(Anthropic());
}

TEST_CASE("an unpriced model reports its tokens with cost_usd null",
          "[adapters][providers][loop][usage]") {
  const Endpoint endpoint = OpenAi("gpt-unpriced-test");
  REQUIRE_FALSE(KnownPrice(endpoint.provider, endpoint.model).has_value());
  LoopOverProvider h(endpoint);
  h.Script({Turn{"All good.", {}, 700, 30}});
  REQUIRE(h.Run().ok());
  const rapidjson::Document done = h.Done();
  CHECK(core::GetInt64(done, "input_tokens") == 700);
  CHECK(core::GetInt64(done, "output_tokens") == 30);
  CHECK(done["cost_usd"].IsNull());
  CHECK(core::GetBool(done, "budget_applicable") == true);
  const core::SessionRecord session = h.Session();
  REQUIRE(session.usage.size() == 1);
  CHECK(session.usage[0].input_tokens == 700);
  CHECK_FALSE(session.usage[0].cost_usd.has_value());
  CHECK(session.usage_totals.unpriced_calls == 1);
}

TEST_CASE("a local model server's usage is recorded with no cost and no budget",
          "[adapters][providers][loop][usage]") {
  LoopOverProvider h(Ollama());
  h.Script({Turn{"All good.", {}, 400, 20}});
  REQUIRE(h.Run().ok());
  const rapidjson::Document done = h.Done();
  CHECK(core::GetInt64(done, "input_tokens") == 400);
  CHECK(done["cost_usd"].IsNull());
  CHECK(core::GetBool(done, "budget_applicable") == false);
  CHECK_FALSE(h.Session().usage.at(0).budget_applicable);
}

// ---- retries ----------------------------------------------------------------------------------

TEST_CASE("a 429 with Retry-After is retried by the loop after the advertised wait",
          "[adapters][providers][loop][retry]") {
  LoopOverProvider h(OpenAi());
  ScriptedResponse limited =
      JsonResponse(429, R"({"error":{"message":"Rate limit reached","type":"rate_limit"}})");
  limited.path = "/v1/chat/completions";
  limited.headers = {{"Retry-After", "1"}};
  h.server->Enqueue(limited);
  h.Script({Turn{"Recovered.", {}, 100, 10}});
  // The wait is recorded, not slept; the hook proves the loop waited before the retry.
  std::size_t requests_at_sleep = 0;
  h.runner.OnSleep([&h, &requests_at_sleep](absl::Duration) {
    requests_at_sleep = h.server->Requests().size();
  });

  absl::StatusOr<core::RunOutcome> out = h.Run();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "Recovered.");
  CHECK(h.server->Requests().size() == 2);
  CHECK(h.server->Requests()[0].body == h.server->Requests()[1].body);
  CHECK(h.runner.sleeps() == std::vector<absl::Duration>{absl::Seconds(1)});
  CHECK(requests_at_sleep == 1);

  std::vector<rapidjson::Document> retries;
  for (rapidjson::Document& d : h.events.DataOf(LoopEventType::kWorkflowState)) {
    if (core::GetString(d, "phase") == std::string_view("provider_retry")) {
      retries.push_back(std::move(d));
    }
  }
  REQUIRE(retries.size() == 1);
  CHECK(core::GetInt64(retries[0], "attempt") == 2);
  CHECK(core::GetInt64(retries[0], "max_attempts") == 3);
  CHECK(core::GetInt64(retries[0], "retry_after_ms") == 1000);
  CHECK(h.events.Count(LoopEventType::kError) == 0);
  CHECK(h.Session().usage.size() == 2);  // the refused attempt counts as a call
}

}  // namespace
}  // namespace pulse::testing::provider_loop
