// (e) The process around the routes: `token create` prints exactly one token line; without a
// provider the Assistant answers assistant_not_configured and everything else works; SIGTERM
// during a chat ends the stream with error + done and the process exits 0; abort and a client
// that goes away cancel a run; a question is answered through its route; pulse.json supplies
// settings the command line overrides and refuses unknown keys; the agent event stream opens
// with stream.connected and redacts commands for callers without ai:execute.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

ScriptedResponse Turn(const std::vector<std::string>& payloads,
                      absl::Duration header_delay = absl::ZeroDuration()) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  response.header_delay = header_delay;
  return response;
}

ServerOptions WithProvider(const FakeProviderServer& fake, const std::string& level) {
  return ServerOptions{.args = {"--provider", "openai-compatible", "--provider-base-url",
                                fake.base_url() + "/v1", "--model", "test-model", "--control-level",
                                level}};
}

// Waits until the fake provider has received `n` requests.
bool ProviderSaw(const FakeProviderServer& fake, std::size_t n) {
  for (int i = 0; i < 1000; ++i) {
    if (fake.Requests().size() >= n) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The stream ended the way a cancelled run ends: error (cancelled), then done (failed).
void CheckCancelled(const ChatStream& stream) {
  INFO(stream.raw);
  REQUIRE(stream.events.size() >= 3);
  CHECK(stream.events.front().type == "session");
  const ChatEvent& error = stream.events[stream.events.size() - 2];
  const ChatEvent& done = stream.events.back();
  REQUIRE(error.type == "error");
  REQUIRE(done.type == "done");
  CHECK(Str(Json(error.data_json), "reason") == "cancelled");
  CHECK(Str(Json(done.data_json), "outcome") == "failed");
}

TEST_CASE("token create prints exactly one token line and nothing else",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  const std::string data = dir.File("data");
  const Captured first = RunCommand({ServerBinary(), "token", "create", "--data-dir", data,
                                     "--name", "ci bot", "--scopes", "monitoring:read, ai:chat"});
  CHECK(first.exit_code == 0);
  CHECK(std::regex_match(first.out, std::regex("pulse_[A-Za-z0-9_-]{43}\n")));
  // stderr names the data dir the token went into, with a warning when it was new there.
  CHECK(first.err.find("warning: " + data + " had no token store") != std::string::npos);
  const Captured second = RunCommand(
      {ServerBinary(), "token", "create", "--data-dir", data, "--name", "other", "--scopes", "*"});
  CHECK(second.exit_code == 0);
  CHECK(second.out != first.out);
  CHECK(second.err == "pulse-server token create: stored in " + data + "/pulse.db\n");

  const Captured bad = RunCommand({ServerBinary(), "token", "create", "--data-dir", data, "--name",
                                   "x", "--scopes", "monitoring:read,root"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("root") != std::string::npos);
  const Captured unnamed =
      RunCommand({ServerBinary(), "token", "create", "--data-dir", data, "--scopes", "*"});
  CHECK(unnamed.exit_code != 0);
  CHECK(unnamed.out.empty());

  // The token works, with exactly its scopes.
  const std::string token = first.out.substr(0, first.out.size() - 1);
  ServerProcess server(data);
  CHECK(Send(server.port(), "GET", "/api/agent/fleet-context", token).status == 200);
  CHECK(ErrorCode(Send(server.port(), "GET", "/api/ai/patrol/findings", token).body) ==
        "missing_scope");
  CHECK(server.Stop() == "exited 0");
  CHECK(server.Log().find(token) == std::string::npos);
}

TEST_CASE("without a provider the Assistant reports it is not configured and the rest works",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const int port = server.port();
  for (const auto& [method, path, body] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"POST", "/api/ai/chat", R"({"message":"hello"})"},
           {"POST", "/api/ai/sessions/ses_1/resume", "{}"},
           {"POST", "/api/ai/question/q_1/answer", R"({"answers":[{"id":"a","value":"b"}]})"},
           {"GET", "/api/ai/models", ""}}) {
    INFO(path);
    const Reply reply = Send(port, method, path, token, body);
    CHECK(reply.status == 503);
    CHECK(ErrorCode(reply.body) == "assistant_not_configured");
  }
  CHECK(Send(port, "GET", "/api/agent/fleet-context", token).status == 200);
  CHECK(Send(port, "GET", "/api/ai/sessions", token).body == "[]");
  CHECK(ErrorCode(Send(port, "GET", "/api/ai/sessions/ses_1", token).body) == "session_not_found");
  CHECK(ErrorCode(Send(port, "POST", "/api/ai/sessions/ses_1/abort", token, "{}").body) ==
        "session_not_found");
  // The legacy alias serves the same document (its clock fields aside).
  const std::regex clock_fields(R"re("(generatedAt|windowStart)":"[^"]*")re");
  CHECK(std::regex_replace(Send(port, "GET", "/api/agent/operations-loop/status", token).body,
                           clock_fields, "") ==
        std::regex_replace(Send(port, "GET", "/api/agent/patrol-control/status", token).body,
                           clock_fields, ""));
  CHECK(server.Log().find("assistant not configured") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("SIGTERM during a chat ends its stream with error and done and exits 0",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(TextTurn("never sent"), absl::Seconds(30)));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), WithProvider(fake, "read_only"));
  StreamReader reader(server.port(), "/api/ai/chat", token, R"({"message":"how is the fleet?"})");
  REQUIRE(reader.WaitFor("session").has_value());
  REQUIRE(ProviderSaw(fake, 1));  // the run is waiting on the model
  const auto started = std::chrono::steady_clock::now();
  CHECK(server.Stop() == "exited 0");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
  CheckCancelled(reader.Finish());
  const std::string log = server.Log();
  CHECK(log.find("received SIGTERM") != std::string::npos);
  CHECK(log.find("pulse-server: stopped") != std::string::npos);
}

TEST_CASE("abort and a client that goes away cancel the run in flight",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(TextTurn("never sent"), absl::Seconds(30)));
  fake.Enqueue(Turn(TextTurn("never sent either"), absl::Seconds(30)));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), WithProvider(fake, "read_only"));
  const int port = server.port();

  // Abort by session id.
  StreamReader aborted(port, "/api/ai/chat", token, R"({"message":"first question"})");
  const std::optional<ChatEvent> session = aborted.WaitFor("session");
  REQUIRE(session.has_value());
  const std::string id = Str(Json(session->data_json), "id");
  REQUIRE(ProviderSaw(fake, 1));
  const Reply abort = Send(port, "POST", "/api/ai/sessions/" + id + "/abort", token, "{}");
  CHECK(abort.status == 200);
  CHECK(abort.body == R"({"session_id":")" + id + R"(","aborted":true})");
  CheckCancelled(aborted.Finish());
  const Reply again = Send(port, "POST", "/api/ai/sessions/" + id + "/abort", token, "{}");
  CHECK(again.body == R"({"session_id":")" + id + R"(","aborted":false})");

  // The client goes away: the run is cancelled and releases its session.
  std::string gone_id;
  {
    StreamReader gone(port, "/api/ai/chat", token, R"({"message":"second question"})");
    const std::optional<ChatEvent> started = gone.WaitFor("session");
    REQUIRE(started.has_value());
    gone_id = Str(Json(started->data_json), "id");
    REQUIRE(ProviderSaw(fake, 2));
    gone.Disconnect();
  }
  std::string status = "running";
  for (int i = 0; i < 300 && status == "running"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = Str(Json(Send(port, "GET", "/api/ai/sessions/" + gone_id, token).body), "status");
  }
  CHECK(status == "idle");
  CHECK(Send(port, "DELETE", "/api/ai/sessions/" + gone_id, token).status == 200);
  CHECK(ErrorCode(Send(port, "GET", "/api/ai/sessions/" + gone_id, token).body) ==
        "session_not_found");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a question is answered through its route and the run goes on",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(ToolTurn("call_ask", "pulse_question",
                             R"({"question":"Which nginx do you mean?",)"
                             R"("options":["service:pve1/nginx","service:pve2/nginx"]})")));
  fake.Enqueue(Turn(TextTurn("service:pve2/nginx is active and healthy.")));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), WithProvider(fake, "read_only"));
  const int port = server.port();

  // The model list comes from the configured provider.
  ScriptedResponse models = JsonResponse(
      200, R"({"object":"list","data":[{"id":"test-model","object":"model"},{"id":"other"}]})");
  models.path = "/v1/models";
  fake.Enqueue(models);
  const Reply listed = Send(port, "GET", "/api/ai/models", token);
  INFO(listed.body);
  REQUIRE(listed.status == 200);
  CHECK(
      listed.body ==
      R"({"provider":"openai-compatible","model":"test-model","destination":"local",)"
      R"("destination_reason":"the base URL's host is a loopback address",)"
      R"("models":[{"id":"test-model"},{"id":"other"}]})");
  fake.Enqueue(JsonResponse(500, R"({"error":{"message":"boom"}})"));
  const Reply failed = Send(port, "GET", "/api/ai/models", token);
  CHECK(failed.status == 502);
  CHECK(ErrorCode(failed.body) == "provider_unavailable");

  const ChatStream asked = PostStream(port, "/api/ai/chat", token, R"({"message":"is nginx ok?"})");
  INFO(asked.raw);
  REQUIRE(asked.Last() != nullptr);
  CHECK(Str(Json(asked.Last()->data_json), "outcome") == "awaiting_input");
  const rapidjson::Document question = asked.First("question");
  const std::string question_id = Str(question, "question_id");
  REQUIRE_FALSE(question_id.empty());

  const Reply unknown = Send(port, "POST", "/api/ai/question/q_unknown/answer", token,
                             R"({"answers":[{"id":"a","value":"b"}]})");
  CHECK(unknown.status == 404);
  CHECK(ErrorCode(unknown.body) == "question_not_found");

  const ChatStream answered =
      PostStream(port, "/api/ai/question/" + question_id + "/answer", token,
                 R"({"answers":[{"id":"which","value":"service:pve2/nginx"}]})");
  INFO(answered.raw);
  REQUIRE(answered.Last() != nullptr);
  CHECK(Str(Json(answered.Last()->data_json), "outcome") == "answered");
  CHECK(Str(answered.First("session"), "id") == Str(question, "session_id"));
  std::vector<RecordedRequest> requests;
  for (const RecordedRequest& seen : fake.Requests()) {
    if (seen.path == "/v1/chat/completions") {
      requests.push_back(seen);
    }
  }
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].body.find("service:pve2/nginx") != std::string::npos);
  // Answered once: the same question is not open any more.
  CHECK(ErrorCode(Send(port, "POST", "/api/ai/question/" + question_id + "/answer", token,
                       R"({"answers":[{"id":"which","value":"again"}]})")
                      .body) == "question_not_found");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("pulse.json supplies settings, flags override it, unknown keys are refused",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  {
    std::ofstream config(dir.File("pulse.json"));
    config << R"({"listen":"127.0.0.1:1","control_level":"controlled","fleet":"demo"})";
  }
  {
    ServerProcess server(dir.path());  // --listen 127.0.0.1:0 overrides the file's port
    CHECK(server.Log().find("control level controlled") != std::string::npos);
    CHECK(server.Stop() == "exited 0");
  }
  {
    ServerProcess server(dir.path(), {.args = {"--control-level", "read_only"}});
    CHECK(server.Log().find("control level read_only") != std::string::npos);
    CHECK(server.Stop() == "exited 0");
  }
  {
    std::ofstream config(dir.File("pulse.json"));
    config << R"({"listen":"127.0.0.1:0","contrl_level":"autonomous"})";
  }
  const Captured unknown =
      RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen", "127.0.0.1:0"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("pulse.json: unknown key \"contrl_level\"") != std::string::npos);
  {
    std::ofstream config(dir.File("pulse.json"));
    config << R"({"api_key":"sk-secret-value"})";
  }
  const Captured key =
      RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen", "127.0.0.1:0"});
  CHECK(key.exit_code == 2);
  CHECK(key.err.find("PULSE_PROVIDER_API_KEY") != std::string::npos);
  CHECK(key.err.find("sk-secret-value") == std::string::npos);
  std::remove(dir.File("pulse.json").c_str());
  const Captured level = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                     "127.0.0.1:0", "--control-level", "Autonomous"});
  CHECK(level.exit_code == 2);
  CHECK(level.err.find("--control-level") != std::string::npos);
  const Captured listen =
      RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen", "127.0.0.1"});
  CHECK(listen.exit_code == 2);
  // The retired hidden --http-transport (issue 22) is an unknown option like any other.
  const Captured transport = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                         "127.0.0.1:0", "--http-transport", "httplib"});
  CHECK(transport.exit_code == 2);
  CHECK(transport.err.find("--http-transport") != std::string::npos);
  const Captured provider = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                        "127.0.0.1:0", "--provider", "no-such-provider"});
  CHECK(provider.exit_code == 1);
  CHECK(provider.err.find("no-such-provider") != std::string::npos);
}

TEST_CASE("the agent event stream opens with stream.connected and redacts commands by scope",
          "[e2e][server][lifecycle]") {
  TempDir dir;
  const std::string full = MintToken(dir.path(), "monitoring:read,ai:execute", "full");
  const std::string limited = MintToken(dir.path(), "monitoring:read", "limited");
  const std::string planner = MintToken(dir.path(), "actions:plan", "planner");
  ServerProcess server(dir.path());
  EventSubscriber sees_commands(server.port(), full);
  EventSubscriber redacted(server.port(), limited);
  REQUIRE(sees_commands.WaitFor("stream.connected"));
  REQUIRE(redacted.WaitFor("stream.connected"));
  const Reply planned =
      Send(server.port(), "POST", "/api/actions/plan", planner,
           R"({"requestId":"ev-1","resourceId":"vm:101","capabilityName":)"
           R"("restart","params":{"mode":"reset"},"reason":"hung","requestedBy":"ci"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  REQUIRE(sees_commands.WaitFor("approval.pending"));
  REQUIRE(redacted.WaitFor("approval.pending"));
  const std::vector<AgentEventFrame> a = sees_commands.Frames();
  const std::vector<AgentEventFrame> b = redacted.Frames();
  REQUIRE(a.size() >= 2);
  CHECK(a[0].event == "stream.connected");
  CHECK_FALSE(a[0].id.has_value());
  CHECK(a[1].event == "approval.pending");
  CHECK(a[1].id == std::optional<std::uint64_t>(1));
  const rapidjson::Document shown = Json(a[1].data);
  CHECK(Str(shown, "kind") == "approval.pending");
  CHECK(Str(shown["payload"], "approvalId") == Str(Json(planned.body), "actionId"));
  CHECK(Str(shown["payload"], "command") == R"(restart {"mode":"reset"})");
  CHECK(Str(shown["payload"], "riskLevel") == "medium");
  REQUIRE(b.size() >= 2);
  const rapidjson::Document hidden = Json(b[1].data);
  CHECK(hidden["payload"]["commandRedacted"].GetBool());
  CHECK(core::GetMember(hidden["payload"], "command") == nullptr);
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
