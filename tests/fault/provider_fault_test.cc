// Provider faults in the middle of a governed chat, against the real pulse-server and the
// loopback fake provider (OpenAI-compatible streams): a stream cut after a tool call was
// streamed but before its finish reason (fail closed: the call never runs), a 5xx answered by
// a retry (the write runs once), and a disconnect after a write ran (the write is recorded
// once, the transcript keeps it, and resubmitting the chat does not dispatch it again).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "fault_support.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::fault {
namespace {

using e2e::ChatStream;
using e2e::Json;
using e2e::Reply;
using e2e::Str;

constexpr char kQueryArgs[] = R"({"action":"get","resource_id":"app-container:grafana"})";
constexpr char kRestartArgs[] =
    R"({"type":"resource","resource_id":"app-container:grafana","capability":"restart",)"
    R"("params":{},"reason":"grafana is stuck"})";
constexpr char kReadArgs[] = R"({"action":"status","resource_id":"app-container:grafana"})";
constexpr char kGrafana[] = "app-container:grafana";

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// The first frame of a tool-call turn (the call itself), then the connection is cut: no finish
// reason, no [DONE], no chunked terminator.
ScriptedResponse CutAfterToolCall(const std::string& call_id, const std::string& tool,
                                  const std::string& args) {
  const std::vector<std::string> full = e2e::ToolTurn(call_id, tool, args);
  ScriptedResponse response = Turn({full.front()});
  response.disconnect_after_chunks = true;
  return response;
}

ScriptedResponse Status(int status) {
  ScriptedResponse response =
      JsonResponse(status, R"({"error":{"message":"upstream overloaded","type":"server_error"}})");
  response.path = "/v1/chat/completions";
  return response;
}

struct Assistant {
  e2e::TempDir dir;
  std::unique_ptr<FakeProviderServer> fake;
  std::string token;
  std::string reader;
  std::unique_ptr<e2e::ServerProcess> server;

  Assistant() {
    auto started = FakeProviderServer::Start();
    REQUIRE(started.ok());
    fake = *std::move(started);
    token = e2e::MintToken(dir.path(), "ai:chat,ai:execute", "operator");
    reader = e2e::MintToken(dir.path(), "monitoring:read,ai:execute", "reader");
  }
  void Start() {
    server = std::make_unique<e2e::ServerProcess>(
        dir.path(),
        e2e::ServerOptions{.args = {"--provider", "openai-compatible", "--provider-base-url",
                                    fake->base_url() + "/v1", "--model", "test-model",
                                    "--control-level", "autonomous"}});
  }
  ChatStream Chat(const std::string& body) {
    return e2e::PostStream(server->port(), "/api/ai/chat", token, body);
  }
  // Actions on grafana admitted into executing (one row per dispatch, ever).
  std::int64_t GrafanaDispatches() const {
    return CountRows(dir.path(),
                     "SELECT count(*) FROM action_dispatches d JOIN actions a ON a.id = "
                     "d.action_id WHERE a.resource_id = 'app-container:grafana'");
  }
  std::int64_t GrafanaActions() const {
    return CountRows(dir.path(),
                     "SELECT count(*) FROM actions WHERE resource_id = 'app-container:grafana'");
  }
};

int CountTools(const ChatStream& chat, const std::string& event_type, const std::string& name) {
  int n = 0;
  for (const e2e::ChatEvent& e : chat.events) {
    if (e.type == event_type && Str(Json(e.data_json), "name") == name) {
      ++n;
    }
  }
  return n;
}

int CountType(const ChatStream& chat, const std::string& type) {
  int n = 0;
  for (const e2e::ChatEvent& e : chat.events) {
    n += e.type == type ? 1 : 0;
  }
  return n;
}

TEST_CASE("a provider stream cut after a streamed tool call and before its finish runs no tool",
          "[fault][provider]") {
  Assistant a;
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_q", "pulse_query", kQueryArgs)));
  // The call arrives, the finish never does; the retry is cut the same way.
  a.fake->Enqueue(CutAfterToolCall("call_c", "pulse_control", kRestartArgs));
  a.fake->Enqueue(CutAfterToolCall("call_c", "pulse_control", kRestartArgs));
  a.Start();
  const ChatStream chat = a.Chat(R"({"message":"grafana is stuck, restart it"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(chat.Last()->type == "done");
  CHECK(CountType(chat, "error") == 1);
  CHECK(Str(chat.First("error"), "reason") == "provider_stream_incomplete");
  CHECK(CountTools(chat, "tool_start", "pulse_query") == 1);
  CHECK(CountTools(chat, "tool_start", "pulse_control") == 0);
  CHECK(a.fake->Requests().size() == 3);
  CHECK(a.fake->PendingResponses() == 0);

  // Fail closed: nothing was planned, nothing dispatched, the container did not restart.
  CHECK(a.GrafanaActions() == 0);
  CHECK(a.GrafanaDispatches() == 0);
  const Reply grafana = e2e::Send(a.server->port(), "GET",
                                  std::string("/api/agent/resource-context/") + kGrafana, a.reader);
  REQUIRE(grafana.status == 200);
  CHECK(grafana.body.find("restarting") == std::string::npos);
  // The session kept the user's message and the completed read; no call of the cut turn.
  const std::string session_id = Str(chat.First("session"), "id");
  const Reply session =
      e2e::Send(a.server->port(), "GET", "/api/ai/sessions/" + session_id, a.token);
  INFO(session.body);
  REQUIRE(session.status == 200);
  CHECK(session.body.find("grafana is stuck, restart it") != std::string::npos);
  std::vector<std::string> tool_results;
  const rapidjson::Document stored = Json(session.body);
  for (const rapidjson::Value& m : stored["messages"].GetArray()) {
    if (Str(m, "role") == "tool") {
      tool_results.push_back(Str(m["tool_result"], "tool_name"));
    }
  }
  CHECK(tool_results == std::vector<std::string>{"pulse_query"});
  CHECK(session.body.find("pulse_control") == std::string::npos);
  CHECK(a.server->Stop() == "exited 0");
}

TEST_CASE("a provider 5xx mid-run is retried and the write runs exactly once",
          "[fault][provider]") {
  Assistant a;
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_q", "pulse_query", kQueryArgs)));
  a.fake->Enqueue(Status(503));
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_c", "pulse_control", kRestartArgs)));
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_r", "pulse_read", kReadArgs)));
  a.fake->Enqueue(Turn(e2e::TextTurn("grafana was restarted and is running again.")));
  a.Start();
  const ChatStream chat = a.Chat(R"({"message":"grafana is stuck, restart it"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  REQUIRE(chat.Last()->type == "done");
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "answered");
  CHECK(CountType(chat, "error") == 0);
  CHECK(chat.raw.find("provider_retry") != std::string::npos);
  CHECK(CountTools(chat, "tool_start", "pulse_control") == 1);
  // The verification read shows the demo fleet restarted the container once.
  CHECK(chat.raw.find(R"(\"restart_count\":\"1\")") != std::string::npos);
  CHECK(a.fake->Requests().size() == 5);
  CHECK(a.fake->PendingResponses() == 0);

  CHECK(a.GrafanaActions() == 1);
  CHECK(a.GrafanaDispatches() == 1);
  const std::vector<std::string> ids =
      TextRows(a.dir.path(), "SELECT id FROM actions WHERE resource_id = 'app-container:grafana'");
  REQUIRE(ids.size() == 1);
  CheckRanOnce(a.dir.path(), ids.front(), "completed", "");
  CHECK(a.server->Stop() == "exited 0");
}

TEST_CASE(
    "a provider disconnect after a write ran keeps the write once and resubmitting "
    "does not dispatch again",
    "[fault][provider]") {
  Assistant a;
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_q", "pulse_query", kQueryArgs)));
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_c", "pulse_control", kRestartArgs)));
  // The turn after the write: the provider drops the connection, twice (the retry too).
  ScriptedResponse cut = Turn({});
  cut.chunks = {Chunk(": keep-alive\n\n")};
  cut.disconnect_after_chunks = true;
  a.fake->Enqueue(cut);
  a.fake->Enqueue(cut);
  a.Start();
  const ChatStream chat = a.Chat(R"({"message":"grafana is stuck, restart it"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(chat.Last()->type == "done");
  CHECK(CountType(chat, "error") == 1);
  CHECK(CountTools(chat, "tool_end", "pulse_control") == 1);
  const std::string session_id = Str(chat.First("session"), "id");

  // The write is recorded once, completed.
  REQUIRE(a.GrafanaActions() == 1);
  CHECK(a.GrafanaDispatches() == 1);
  const std::string action_id =
      TextRows(a.dir.path(), "SELECT id FROM actions WHERE resource_id = 'app-container:grafana'")
          .front();
  CheckRanOnce(a.dir.path(), action_id, "completed", "");

  // The transcript is intact: the user's message, both calls and both results.
  const Reply session =
      e2e::Send(a.server->port(), "GET", "/api/ai/sessions/" + session_id, a.token);
  INFO(session.body);
  REQUIRE(session.status == 200);
  const rapidjson::Document stored = Json(session.body);
  int tool_results = 0;
  bool saw_user = false;
  for (const rapidjson::Value& m : stored["messages"].GetArray()) {
    saw_user = saw_user || (Str(m, "role") == "user" &&
                            Str(m, "content").find("grafana is stuck") != std::string::npos);
    tool_results += Str(m, "role") == "tool" ? 1 : 0;
  }
  CHECK(saw_user);
  CHECK(tool_results == 2);
  CHECK(session.body.find(action_id) != std::string::npos);

  // The user resubmits; the model asks for the same restart again. The session's safety state
  // still owes a verification of the first write, so the second one never runs.
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_c2", "pulse_control", kRestartArgs)));
  a.fake->Enqueue(Turn(e2e::ToolTurn("call_r", "pulse_read", kReadArgs)));
  a.fake->Enqueue(Turn(e2e::TextTurn("grafana was restarted once and is running.")));
  const ChatStream again =
      a.Chat(R"({"message":"grafana is stuck, restart it","session_id":")" + session_id + "\"}");
  INFO(again.raw);
  REQUIRE(again.status == 200);
  REQUIRE(again.Last() != nullptr);
  CHECK(again.Last()->type == "done");
  CHECK(Str(Json(again.Last()->data_json), "outcome") == "answered");
  bool blocked = false;
  for (const e2e::ChatEvent& e : again.events) {
    if (e.type == "tool_end" && Str(Json(e.data_json), "id") == "call_c2") {
      const rapidjson::Document end = Json(e.data_json);
      blocked =
          !end["success"].GetBool() && Str(end, "output").find("FSM_BLOCKED") != std::string::npos;
    }
  }
  CHECK(blocked);
  // The demo fleet itself counts one restart of the container.
  CHECK(again.raw.find(R"(\"restart_count\":\"1\")") != std::string::npos);
  CHECK(a.GrafanaDispatches() == 1);
  CHECK(ReadActionRows(a.dir.path(), action_id).executing_events == 1);
  CHECK(CountRows(a.dir.path(),
                  "SELECT count(*) FROM audit_log WHERE event = "
                  "'dispatch_started'") == 1);
  CHECK(a.server->Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::fault
