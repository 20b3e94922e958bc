// The AI settings at runtime (GET/PUT /api/settings/ai, docs/server.md) against the real binary
// and a loopback fake provider speaking the OpenAI-compatible wire: a new model reaches the next
// chat without a restart (the provider's request log names it) and a restart keeps it; the
// Patrol model serves Patrol runs only; the tool-call preflight's result is shown by the
// settings and Patrol's status, and a model that cannot call tools leaves Patrol to its
// deterministic checks with the reason in the run record; the key is sealed (neither the
// database files nor any answer or log line hold it); only a human token with settings:write
// may read or change the settings; a bad body changes nothing; each change is audited; the
// monthly spend cap holds across runs and restarts, the per-session cap across a session's turns.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kChatPath[] = "/v1/chat/completions";
constexpr char kPreflightTool[] = "pulse_preflight_echo";

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = kChatPath;
  response.chunks = SseChunks(payloads);
  return response;
}

// The answer of a model that calls the preflight tool as asked.
ScriptedResponse CallsTheTool() {
  return Turn(ToolTurn("call_pf", kPreflightTool, R"({"word":"ready"})"));
}

// The `model` of every chat-completions request the fake saw, in order.
std::vector<std::string> ModelsRequested(const FakeProviderServer& fake) {
  std::vector<std::string> out;
  for (const RecordedRequest& r : fake.Requests()) {
    if (r.path == kChatPath) {
      out.push_back(Str(Json(r.body), "model"));
    }
  }
  return out;
}

// The last chat-completions request the fake saw; REQUIREs one.
RecordedRequest LastChatRequest(const FakeProviderServer& fake) {
  const std::vector<RecordedRequest> all = fake.Requests();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->path == kChatPath) {
      return *it;
    }
  }
  FAIL("no chat-completions request");
  return {};
}

// Whether a chat-completions request offered the preflight tool.
bool IsPreflight(const RecordedRequest& r) {
  return r.path == kChatPath && r.body.find(kPreflightTool) != std::string::npos;
}

std::vector<std::string> ServerArgs(const FakeProviderServer& fake, const std::string& model) {
  std::vector<std::string> args = {"--provider",          "openai-compatible",
                                   "--provider-base-url", fake.base_url() + "/v1",
                                   "--patrol-interval",   "0"};
  if (!model.empty()) {
    args.insert(args.end(), {"--model", model});
  }
  return args;
}

std::string Chat(int port, const std::string& token, const std::string& message) {
  const ChatStream chat =
      PostStream(port, "/api/ai/chat", token, R"({"message":")" + message + "\"}");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  REQUIRE(chat.Last()->type == "done");
  return Str(Json(chat.Last()->data_json), "outcome");
}

Reply Put(int port, const std::string& token, const std::string& body) {
  return Send(port, "PUT", "/api/settings/ai", token, body);
}

rapidjson::Document GetSettings(int port, const std::string& token) {
  const Reply got = Send(port, "GET", "/api/settings/ai", token);
  INFO(got.body);
  REQUIRE(got.status == 200);
  return Json(got.body);
}

// The preflight entry of `model` ("provider:model") in a settings answer; REQUIREs one.
rapidjson::Document PreflightOf(const rapidjson::Value& settings, const std::string& model) {
  for (const rapidjson::Value& p : settings["preflight"].GetArray()) {
    if (Str(p, "model") == model) {
      rapidjson::Document copy;
      copy.CopyFrom(p, copy.GetAllocator());
      return copy;
    }
  }
  FAIL("no preflight for " << model);
  return rapidjson::Document();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct AuditRow {
  std::string actor_id;
  std::string message;
  std::string details_json;
};

// Every audit row of the AI settings, oldest first.
std::vector<AuditRow> SettingsAudit(const std::string& data_dir) {
  SQLite::Database db(data_dir + "/pulse.db", SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT actor_id, message, details_json FROM audit_log WHERE "
                      "category = 'settings' AND event = 'ai_settings_changed' ORDER BY seq");
  std::vector<AuditRow> out;
  while (q.executeStep()) {
    out.push_back(
        {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString()});
  }
  return out;
}

// The public id (tok_...) of the token named `name`, from `token list --json`.
std::string TokenId(const std::string& data_dir, const std::string& name) {
  const Captured listed =
      RunCommand({ServerBinary(), "token", "list", "--data-dir", data_dir, "--json"});
  REQUIRE(listed.exit_code == 0);
  const rapidjson::Document doc = Json(listed.out);
  for (const rapidjson::Value& t : doc["tokens"].GetArray()) {
    if (Str(t, "name") == name) {
      return Str(t, "id");
    }
  }
  FAIL("no token named " << name);
  return "";
}

rapidjson::Document WaitPatrolRun(int port, const std::string& token, const std::string& id) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    const Reply reply = Send(port, "GET", "/api/ai/patrol/runs/" + id, token);
    REQUIRE(reply.status == 200);
    rapidjson::Document doc = Json(reply.body);
    if (Str(doc, "status") != "running") {
      return doc;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  FAIL("the Patrol run did not finish within 30 s");
  return rapidjson::Document();
}

std::string StartPatrolRun(int port, const std::string& token) {
  const Reply reply = Send(port, "POST", "/api/ai/patrol/run", token, "{}");
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Str(Json(reply.body), "run_id");
}

TEST_CASE("a model set at runtime serves the next chat without a restart, and a restart keeps it",
          "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  {
    ServerProcess server(dir.path(), {.args = ServerArgs(fake, "first-model")});
    rapidjson::Document before = GetSettings(server.port(), admin);
    CHECK(Str(before, "provider") == "openai-compatible");
    CHECK(Str(before, "model") == "first-model");
    CHECK_FALSE(before["api_key_set"].GetBool());

    fake.Enqueue(Turn(TextTurn("first answer")));
    CHECK(Chat(server.port(), admin, "hello") == "answered");

    fake.Enqueue(CallsTheTool());  // the preflight of the new model
    const Reply put = Put(server.port(), admin, R"({"model":"second-model"})");
    INFO(put.body);
    REQUIRE(put.status == 200);
    const rapidjson::Document changed = Json(put.body);
    CHECK(Str(changed, "model") == "second-model");
    CHECK(Str(changed, "updated_by") == TokenId(dir.path(), "alice"));
    CHECK(Str(PreflightOf(changed, "openai-compatible:second-model"), "outcome") == "ok");

    fake.Enqueue(Turn(TextTurn("second answer")));
    CHECK(Chat(server.port(), admin, "hello again") == "answered");
    CHECK(ModelsRequested(fake) ==
          std::vector<std::string>{"first-model", "second-model", "second-model"});
    std::vector<std::string> preflighted;
    for (const RecordedRequest& r : fake.Requests()) {
      if (IsPreflight(r)) {
        preflighted.push_back(Str(Json(r.body), "model"));
      }
    }
    CHECK(preflighted == std::vector<std::string>{"second-model"});
    CHECK(server.Stop() == "exited 0");
  }
  // Audited: who, and what changed.
  const auto audit = SettingsAudit(dir.path());
  REQUIRE(audit.size() == 1);
  CHECK(audit[0].actor_id == TokenId(dir.path(), "alice"));
  CHECK(Str(Json(audit[0].details_json), "model") == "first-model -> second-model");

  // A restart with the same provider and no --model keeps the model set at runtime.
  {
    ServerProcess server(dir.path(), {.args = ServerArgs(fake, "")});
    CHECK(Str(GetSettings(server.port(), admin), "model") == "second-model");
    fake.Enqueue(Turn(TextTurn("after restart")));
    CHECK(Chat(server.port(), admin, "still there?") == "answered");
    CHECK(ModelsRequested(fake).back() == "second-model");
    CHECK(server.Stop() == "exited 0");
  }
  // A start-up flag wins at start.
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "flag-model")});
  CHECK(Str(GetSettings(server.port(), admin), "model") == "flag-model");
}

TEST_CASE("a run in flight when the model changes finishes on the model it started with",
          "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "old-model")});
  // The run's first turn (a tool call) is held until the change is made; its second turn comes
  // after it.
  ScriptedResponse held =
      Turn(ToolTurn("call_q", "pulse_query", R"({"action":"get","resource_id":"vm:105"})"));
  held.release = std::make_shared<absl::Notification>();
  const std::shared_ptr<absl::Notification> release = held.release;
  fake.Enqueue(held);
  StreamReader run(server.port(), "/api/ai/chat", admin, R"({"message":"how is db-01?"})");
  REQUIRE(run.WaitFor("session").has_value());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (ModelsRequested(fake).empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  REQUIRE(ModelsRequested(fake).size() == 1);

  fake.Enqueue(CallsTheTool());                       // the new model's preflight
  fake.Enqueue(Turn(TextTurn("db-01 is running.")));  // the held run's second turn
  const Reply put = Put(server.port(), admin, R"({"model":"new-model"})");
  INFO(put.body);
  REQUIRE(put.status == 200);
  release->Notify();
  const ChatStream finished = run.Finish();
  INFO(finished.raw);
  REQUIRE(finished.Last() != nullptr);
  CHECK(Str(Json(finished.Last()->data_json), "outcome") == "answered");

  fake.Enqueue(Turn(TextTurn("a new run")));
  CHECK(Chat(server.port(), admin, "and now?") == "answered");
  CHECK(ModelsRequested(fake) ==
        std::vector<std::string>{"old-model", "new-model", "old-model", "new-model"});
}

TEST_CASE(
    "the Patrol model serves Patrol runs only, and a model that cannot call tools is reported "
    "and Patrol falls back to its deterministic checks",
    "[e2e][server][ai_settings][patrol]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "chat-model")});

  fake.Enqueue(CallsTheTool());
  const Reply put = Put(server.port(), admin, R"({"patrol_model":"patrol-model"})");
  INFO(put.body);
  REQUIRE(put.status == 200);
  CHECK(Str(Json(put.body), "effective_patrol_model") == "patrol-model");
  CHECK(Str(PreflightOf(Json(put.body), "openai-compatible:patrol-model"), "outcome") == "ok");
  const std::size_t before_patrol = ModelsRequested(fake).size();
  for (int i = 0; i < 4; ++i) {
    fake.Enqueue(Turn(TextTurn("Nothing further to report.")));
  }
  const rapidjson::Document run =
      WaitPatrolRun(server.port(), admin, StartPatrolRun(server.port(), admin));
  INFO(core::ToJsonString(run));
  CHECK(run["model_pass_ran"].GetBool());
  std::vector<std::string> models = ModelsRequested(fake);
  REQUIRE(models.size() > before_patrol);
  for (std::size_t i = before_patrol; i < models.size(); ++i) {
    CHECK(models[i] == "patrol-model");
  }
  // Chats (which take what the Watch pass left of the script) stay on the chat model.
  fake.Enqueue(Turn(TextTurn("chat answer")));
  const std::size_t before_chats = ModelsRequested(fake).size();
  for (int i = 0; i < 5 && fake.PendingResponses() > 0; ++i) {
    CHECK(Chat(server.port(), admin, "hello") == "answered");
  }
  REQUIRE(fake.PendingResponses() == 0);
  models = ModelsRequested(fake);
  REQUIRE(models.size() > before_chats);
  for (std::size_t i = before_chats; i < models.size(); ++i) {
    CHECK(models[i] == "chat-model");
  }

  // A Patrol model that answers without calling the tool.
  fake.Enqueue(Turn(TextTurn("I would rather just talk.")));
  const Reply no_tools = Put(server.port(), admin, R"({"patrol_model":"chatty-model"})");
  INFO(no_tools.body);
  REQUIRE(no_tools.status == 200);
  const rapidjson::Document settings = GetSettings(server.port(), admin);
  const rapidjson::Document preflight = PreflightOf(settings, "openai-compatible:chatty-model");
  CHECK(Str(preflight, "outcome") == "no_tool_call");
  CHECK_FALSE(Str(preflight, "checked_at").empty());
  const rapidjson::Document status =
      Json(Send(server.port(), "GET", "/api/ai/patrol/status", admin).body);
  CHECK(Str(status, "model") == "openai-compatible:chatty-model");
  CHECK(Str(status["model_preflight"], "outcome") == "no_tool_call");
  const std::size_t before_fallback = ModelsRequested(fake).size();
  const rapidjson::Document fallback =
      WaitPatrolRun(server.port(), admin, StartPatrolRun(server.port(), admin));
  INFO(core::ToJsonString(fallback));
  CHECK_FALSE(fallback["model_pass_ran"].GetBool());
  CHECK(Str(fallback, "model_pass_skipped_reason") == "model_cannot_call_tools");
  CHECK(ModelsRequested(fake).size() == before_fallback);  // the model was not asked

  // A chat model whose provider fails the preflight (the fake has no answer scripted: 500).
  const Reply failing = Put(server.port(), admin, R"({"model":"broken-model"})");
  INFO(failing.body);
  REQUIRE(failing.status == 200);
  CHECK(Str(PreflightOf(Json(failing.body), "openai-compatible:broken-model"), "outcome") ==
        "provider_failed");
}

TEST_CASE("the API key set at runtime is sealed, used, kept across a restart and never shown",
          "[e2e][server][ai_settings][security]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  const std::string key = "sk-runtime-e2e-9f8e7d6c5b4a";
  std::string log;
  {
    ServerProcess server(dir.path(), {.args = ServerArgs(fake, "m1")});
    fake.Enqueue(CallsTheTool());
    const Reply put = Put(server.port(), admin, R"({"api_key":")" + key + "\"}");
    INFO(put.body);
    REQUIRE(put.status == 200);
    CHECK(put.body.find(key) == std::string::npos);
    const Reply got = Send(server.port(), "GET", "/api/settings/ai", admin);
    CHECK(got.body.find(key) == std::string::npos);
    CHECK(Json(got.body)["api_key_set"].GetBool());
    CHECK(LastChatRequest(fake).Header("authorization") == "Bearer " + key);
    CHECK(server.Stop() == "exited 0");
    log = server.Log();
  }
  CHECK(log.find(key) == std::string::npos);
  for (const char* file : {"pulse.db", "pulse.db-wal", "pulse.db-shm"}) {
    const std::string path = dir.File(file);
    if (std::filesystem::exists(path)) {
      CHECK(ReadFile(path).find(key) == std::string::npos);
    }
  }
  const auto audit = SettingsAudit(dir.path());
  REQUIRE(audit.size() == 1);
  CHECK(audit[0].details_json.find(key) == std::string::npos);
  CHECK(audit[0].message.find(key) == std::string::npos);
  CHECK(audit[0].message == "the AI settings were changed; the API key was replaced");

  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "")});
  fake.Enqueue(Turn(TextTurn("hello")));
  CHECK(Chat(server.port(), admin, "hi") == "answered");
  CHECK(LastChatRequest(fake).Header("authorization") == "Bearer " + key);

  fake.Enqueue(CallsTheTool());
  const Reply removed = Put(server.port(), admin, R"({"api_key":null})");
  REQUIRE(removed.status == 200);
  CHECK_FALSE(Json(removed.body)["api_key_set"].GetBool());
  fake.Enqueue(Turn(TextTurn("keyless")));
  CHECK(Chat(server.port(), admin, "hi") == "answered");
  CHECK(LastChatRequest(fake).Header("authorization").empty());
}

TEST_CASE(
    "a provider configured at start-up without a model starts with the first chat model "
    "it lists, or the registry's default when the list cannot be read",
    "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  const std::vector<std::string> args = {"--provider",          "openai-compatible",
                                         "--provider-base-url", fake.base_url() + "/v1",
                                         "--patrol-interval",   "0"};
  {
    ScriptedResponse list = JsonResponse(
        200, R"({"object":"list","data":[{"id":"text-embedding-3-small"},{"id":"whisper-1"},)"
             R"({"id":"listed-chat-model"},{"id":"another-chat-model"}]})");
    list.path = "/v1/models";
    fake.Enqueue(list);
    ServerProcess server(dir.path(), {.args = args});
    CHECK(Str(GetSettings(server.port(), admin), "model") == "listed-chat-model");
    fake.Enqueue(Turn(TextTurn("hello from the listed model")));
    CHECK(Chat(server.port(), admin, "hi") == "answered");
    CHECK(ModelsRequested(fake).back() == "listed-chat-model");
    CHECK(server.Stop() == "exited 0");
    CHECK(server.Log().find("(model: the first chat model the provider lists)") !=
          std::string::npos);
  }
  {
    // Ollama's list unreadable (nothing scripted: 500): the registry's default, said so.
    TempDir other;
    const std::string token = MintToken(other.path(), "*", "alice");
    ServerProcess server(other.path(), {.args = {"--provider", "ollama", "--provider-base-url",
                                                 fake.base_url(), "--patrol-interval", "0"}});
    CHECK(Str(GetSettings(server.port(), token), "model") == "qwen3:8b");
    CHECK(server.Stop() == "exited 0");
    CHECK(server.Log().find("model list could not be read") != std::string::npos);
  }
}

TEST_CASE(
    "a provider named without a model gets the first model its list names, and the old "
    "provider's key stays behind",
    "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "m1")});
  fake.Enqueue(CallsTheTool());
  REQUIRE(Put(server.port(), admin, R"({"api_key":"sk-old-provider-key-42"})").status == 200);

  ScriptedResponse tags = JsonResponse(
      200, R"({"models":[{"model":"llama-listed:8b","name":"Llama"},{"model":"other:1b"}]})");
  tags.path = "/api/tags";
  fake.Enqueue(tags);
  const Reply switched =
      Put(server.port(), admin, R"({"provider":"ollama","base_url":")" + fake.base_url() + R"("})");
  INFO(switched.body);
  REQUIRE(switched.status == 200);
  const rapidjson::Document settings = Json(switched.body);
  CHECK(Str(settings, "provider") == "ollama");
  CHECK(Str(settings, "model") == "llama-listed:8b");
  CHECK_FALSE(settings["api_key_set"].GetBool());
  bool listed = false;
  for (const RecordedRequest& r : fake.Requests()) {
    if (r.path == "/api/tags") {
      listed = true;
      CHECK(r.Header("authorization").empty());  // the old key went to no one else
    }
  }
  CHECK(listed);
  const auto audit = SettingsAudit(dir.path());
  REQUIRE(audit.size() == 2);
  CHECK(audit[1].message == "the AI settings were changed; the API key was removed");
  CHECK(Str(Json(audit[1].details_json), "model") == "m1 -> llama-listed:8b");

  // No model and a list that cannot be read (the fake answers 500): refused, nothing changed.
  const Reply unlisted = Put(server.port(), admin, R"({"model":""})");
  INFO(unlisted.body);
  CHECK(unlisted.status == 502);
  CHECK(ErrorCode(unlisted.body) == "provider_unavailable");
  CHECK(Str(GetSettings(server.port(), admin), "model") == "llama-listed:8b");
  CHECK(SettingsAudit(dir.path()).size() == 2);
}

TEST_CASE("a spend cap set at runtime refuses the next run that it cannot bound, with its code",
          "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  // Declared remote: a metered route whose price is unknown, so any money cap fails closed.
  std::vector<std::string> args = ServerArgs(fake, "unpriced-model");
  args.insert(args.end(), {"--provider-locality", "remote"});
  ServerProcess server(dir.path(), {.args = args});
  fake.Enqueue(Turn(TextTurn("uncapped")));
  CHECK(Chat(server.port(), admin, "hello") == "answered");

  const Reply capped = Put(server.port(), admin, R"({"session_budget_usd":0.25})");
  INFO(capped.body);
  REQUIRE(capped.status == 200);
  CHECK(Json(capped.body)["session_budget_usd"].GetDouble() == 0.25);
  const std::size_t before = ModelsRequested(fake).size();
  const ChatStream refused =
      PostStream(server.port(), "/api/ai/chat", admin, R"({"message":"hello again"})");
  INFO(refused.raw);
  REQUIRE(refused.status == 200);
  CHECK(Str(refused.First("error"), "reason") == "cost_unknown");
  CHECK(Str(Json(refused.Last()->data_json), "outcome") == "failed");
  CHECK(ModelsRequested(fake).size() == before);  // refused before the provider was called

  REQUIRE(Put(server.port(), admin, R"({"session_budget_usd":0})").status == 200);
  fake.Enqueue(Turn(TextTurn("uncapped again")));
  CHECK(Chat(server.port(), admin, "and now?") == "answered");
}

// A priced route: OpenAI's gpt-4o-mini ($0.15 / $0.60 per million tokens) served by the fake,
// declared remote so it is metered. Each scripted answer uses 100 + 20 tokens: $0.000027.
std::vector<std::string> PricedArgs(const FakeProviderServer& fake) {
  return {"--provider",
          "openai",
          "--provider-base-url",
          fake.base_url() + "/v1",
          "--model",
          "gpt-4o-mini",
          "--provider-locality",
          "remote",
          "--patrol-interval",
          "0"};
}
constexpr double kCallCost = (100 * 0.15 + 20 * 0.60) / 1e6;

TEST_CASE(
    "the monthly spend cap counts every run's metered spend, survives a restart and stops "
    "chats and Patrol's model once reached",
    "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  const std::string month = absl::FormatTime("%Y-%m", absl::Now(), absl::UTCTimeZone());
  {
    ServerProcess server(dir.path(), {.args = PricedArgs(fake)});
    rapidjson::Document fresh = GetSettings(server.port(), admin);
    CHECK(Str(fresh["month_spend"], "month") == month);
    CHECK(fresh["month_spend"]["cost_usd"].GetDouble() == 0);
    CHECK_FALSE(fresh["month_spend"]["cap_reached"].GetBool());

    // Below one call's cost: the first chat is admitted (nothing spent yet), the next is not.
    const Reply capped = Put(server.port(), admin, R"({"monthly_budget_usd":0.00002})");
    INFO(capped.body);
    REQUIRE(capped.status == 200);
    fake.Enqueue(Turn(TextTurn("first answer")));
    CHECK(Chat(server.port(), admin, "hello") == "answered");
    rapidjson::Document spent = GetSettings(server.port(), admin);
    CHECK(spent["month_spend"]["cost_usd"].GetDouble() == Approx(kCallCost));
    CHECK(spent["month_spend"]["cap_reached"].GetBool());

    const std::size_t before = ModelsRequested(fake).size();
    const ChatStream refused =
        PostStream(server.port(), "/api/ai/chat", admin, R"({"message":"hello again"})");
    INFO(refused.raw);
    REQUIRE(refused.status == 200);
    const rapidjson::Document error = refused.First("error");
    CHECK(Str(error, "reason") == "spend_cap_reached");
    CHECK(Str(error, "message").find("monthly spend cap") != std::string::npos);
    CHECK(Str(Json(refused.Last()->data_json), "outcome") == "failed");
    // Patrol keeps its deterministic checks and says why its model did not run.
    const rapidjson::Document run =
        WaitPatrolRun(server.port(), admin, StartPatrolRun(server.port(), admin));
    INFO(core::ToJsonString(run));
    CHECK_FALSE(run["model_pass_ran"].GetBool());
    CHECK(Str(run, "model_pass_skipped_reason") == "spend_cap_reached");
    CHECK(ModelsRequested(fake).size() == before);  // the provider was asked nothing
    const rapidjson::Document status =
        Json(Send(server.port(), "GET", "/api/ai/patrol/status", admin).body);
    CHECK(Str(status, "runtime_state") == "blocked");
    CHECK(Str(status, "blocked_reason") == "budget_exhausted");
  }
  {
    // The month's spend is durable: a restart does not reset the cap.
    ServerProcess server(dir.path(), {.args = PricedArgs(fake)});
    rapidjson::Document after = GetSettings(server.port(), admin);
    CHECK(after["month_spend"]["cost_usd"].GetDouble() == Approx(kCallCost));
    const ChatStream refused =
        PostStream(server.port(), "/api/ai/chat", admin, R"({"message":"after restart"})");
    REQUIRE(refused.status == 200);
    CHECK(Str(refused.First("error"), "reason") == "spend_cap_reached");

    // Raising the cap lets the next chat run, and its cost adds to the month.
    REQUIRE(Put(server.port(), admin, R"({"monthly_budget_usd":5})").status == 200);
    fake.Enqueue(Turn(TextTurn("second answer")));
    CHECK(Chat(server.port(), admin, "and now?") == "answered");
    CHECK(GetSettings(server.port(), admin)["month_spend"]["cost_usd"].GetDouble() ==
          Approx(2 * kCallCost));
  }
}

TEST_CASE("the per-session spend cap counts the session's earlier turns, not other sessions",
          "[e2e][server][ai_settings]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  ServerProcess server(dir.path(), {.args = PricedArgs(fake)});
  // Room for one call and a half: the second turn of a session starts under the cap, the third
  // starts over it.
  REQUIRE(Put(server.port(), admin, R"({"session_budget_usd":0.00004})").status == 200);
  fake.Enqueue(Turn(TextTurn("one")));
  const ChatStream first =
      PostStream(server.port(), "/api/ai/chat", admin, R"({"message":"first"})");
  REQUIRE(first.status == 200);
  const std::string session = Str(first.First("session"), "id");
  REQUIRE_FALSE(session.empty());
  const std::string more = R"({"message":"more","session_id":")" + session + "\"}";
  fake.Enqueue(Turn(TextTurn("two")));
  const ChatStream second = PostStream(server.port(), "/api/ai/chat", admin, more);
  INFO(second.raw);
  CHECK(Str(Json(second.Last()->data_json), "outcome") == "answered");
  const ChatStream third = PostStream(server.port(), "/api/ai/chat", admin, more);
  INFO(third.raw);
  CHECK(Str(third.First("error"), "reason") == "cost_budget_exhausted");
  CHECK(Str(third.First("error"), "message").find("session") != std::string::npos);
  // A new session has its own allowance.
  fake.Enqueue(Turn(TextTurn("fresh")));
  CHECK(Chat(server.port(), admin, "a new session") == "answered");
}

TEST_CASE("only a human token with settings:write reads or changes the AI settings",
          "[e2e][server][ai_settings][security]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  const std::string agent = MintToken(dir.path(), "*", "claude", "agent");
  const std::string service = MintToken(dir.path(), "*", "ci", "service");
  const std::string reader = MintToken(dir.path(), "monitoring:read,ai:chat", "bob");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "m1")});
  for (const std::string& token : {agent, service}) {
    CHECK(ErrorCode(Send(server.port(), "GET", "/api/settings/ai", token).body) ==
          "human_token_required");
    const Reply put = Put(server.port(), token, R"({"model":"agent-choice"})");
    CHECK(put.status == 403);
    CHECK(ErrorCode(put.body) == "human_token_required");
  }
  // A human token marked as the agent surface acts as an agent.
  const Reply marked = Send(server.port(), "PUT", "/api/settings/ai", admin,
                            R"({"model":"agent-choice"})", {{"X-Pulse-Agent-Surface", "1"}});
  CHECK(ErrorCode(marked.body) == "human_token_required");
  const Reply scoped = Put(server.port(), reader, R"({"model":"reader-choice"})");
  CHECK(scoped.status == 403);
  CHECK(ErrorCode(scoped.body) == "missing_scope");
  CHECK(Str(GetSettings(server.port(), admin), "model") == "m1");
  CHECK(ModelsRequested(fake).empty());  // no preflight: nothing was set
  CHECK(SettingsAudit(dir.path()).empty());
}

TEST_CASE("malformed, oversized and hostile settings bodies are refused and change nothing",
          "[e2e][server][ai_settings][hostile]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string admin = MintToken(dir.path(), "*", "alice");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "m1")});
  const std::string before = Send(server.port(), "GET", "/api/settings/ai", admin).body;
  const std::vector<std::string> bodies = {
      "not json",
      "[]",
      R"("model")",
      R"({"model":5})",
      R"({"model":"a b"})",
      R"({"model":"tab\there"})",
      R"({"model":"nul\u0000model"})",
      R"({"model":")" + std::string(257, 'm') + "\"}",
      R"({"patrol_model":"two words"})",
      R"({"unknown":true})",
      R"({"provider":"no-such-provider","model":"x"})",
      R"({"provider":""})",
      R"({"base_url":"ftp://127.0.0.1/v1"})",
      R"({"base_url":"http://user:pass@127.0.0.1/v1"})",
      R"({"api_key":""})",
      R"({"api_key":5})",
      R"({"api_key":"sk-with space"})",
      R"({"monthly_budget_usd":-1})",
      R"({"session_budget_usd":1e9})",
      R"({"session_budget_usd":"5"})",
      R"({"model":"m2","model":"m3"})",
      std::string(5000, '[') + std::string(5000, ']'),
  };
  for (const std::string& body : bodies) {
    const Reply put = Put(server.port(), admin, body);
    INFO(body.substr(0, 120) << " -> " << put.status << " " << put.body);
    CHECK(put.status == 400);
    CHECK(ErrorCode(put.body) == "invalid_request");
  }
  // A body announced over the limit is refused from its headers, unread (sent without the
  // body, so the reply cannot be lost to a reset while the client still writes).
  const std::string huge =
      Raw(server.port(),
          "PUT /api/settings/ai HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
          "X-API-Token: " +
              admin + "\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n");
  CHECK(huge.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(huge.find("\"error\":\"request_too_large\"") != std::string::npos);
  CHECK(Send(server.port(), "GET", "/api/settings/ai", admin).body == before);
  for (const RecordedRequest& r : fake.Requests()) {
    CHECK(r.path != kChatPath);  // no preflight: nothing was set
  }
  CHECK(SettingsAudit(dir.path()).empty());
  CHECK(server.Running());
}

}  // namespace
}  // namespace pulse::testing::e2e
