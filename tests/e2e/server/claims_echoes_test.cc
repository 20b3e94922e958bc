// Claims and echoes at the edges of the loop (issue 20 items 1, 7, 8), end to end: the real
// pulse-server, a loopback fake model provider and real SQLite.
//  * a refused "it's fixed" answer is never streamed, stored as an assistant message or served;
//    text beside a refused tool call while a change is unverified is held back;
//  * a secret planted in tool arguments reaches no SSE event, served message, stored session,
//    audit row or served action record;
//  * a write whose adapter throws after dispatching leaves the session verifying.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "SQLiteCpp/SQLiteCpp.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// One streamed answer with `text` and then a call of `tool`.
ScriptedResponse TextAndToolTurn(const std::string& text, const std::string& call_id,
                                 const std::string& tool, const std::string& arguments_json) {
  std::vector<std::string> payloads = ToolTurn(call_id, tool, arguments_json);
  payloads.insert(payloads.begin(), TextTurn(text).front());
  return Turn(payloads);
}

std::vector<std::string> ServerArgs(const FakeProviderServer& fake, const std::string& level) {
  return {"--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
          "--model",    "test-model",        "--control-level",     level};
}

// The shipped demo fleet with one more fault declared, written to `path`.
void WriteFleetWithFault(const std::string& path, const std::string& resource,
                         const std::string& kind) {
  std::ifstream in(PULSE_DEMO_FLEET_PATH);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string anchor = "\"faults\": [";
  const std::size_t at = json.find(anchor);
  REQUIRE(at != std::string::npos);
  json.insert(at + anchor.size(),
              R"({"resource": ")" + resource + R"(", "kind": ")" + kind + R"("},)");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  REQUIRE(out.good());
}

// Every streamed content text of a chat, concatenated.
std::string StreamedText(const ChatStream& chat) {
  std::string text;
  for (const ChatEvent& e : chat.events) {
    if (e.type == "content") {
      text += Str(Json(e.data_json), "text");
    }
  }
  return text;
}

// The data of every event of `type`.
std::vector<rapidjson::Document> EventsOf(const ChatStream& chat, const std::string& type) {
  std::vector<rapidjson::Document> out;
  for (const ChatEvent& e : chat.events) {
    if (e.type == type) {
      out.push_back(Json(e.data_json));
    }
  }
  return out;
}

std::string LastMessageRole(const RecordedRequest& request) {
  const rapidjson::Document body = Json(request.body);
  const rapidjson::Value& messages = body["messages"];
  REQUIRE(messages.Size() > 0);
  return Str(messages[messages.Size() - 1], "role");
}

// Every row of `sql` (one text column) in the server's database, joined by newlines.
std::string DatabaseText(const TempDir& dir, const std::string& sql) {
  std::string out;
  try {
    SQLite::Database db(dir.File("pulse.db"), SQLite::OPEN_READONLY);
    SQLite::Statement query(db, sql);
    while (query.executeStep()) {
      out += query.getColumn(0).getString();
      out += "\n";
    }
  } catch (const std::exception& e) {
    FAIL("query failed: " << sql << ": " << e.what());
  }
  return out;
}

// ---- item 1 ---------------------------------------------------------------------------------

TEST_CASE("a refused claim is never streamed, stored as an assistant message or served",
          "[e2e][server][claims]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  constexpr char kPreamble[] = "Done: grafana is fixed. Restarting loki as well.";
  constexpr char kClaim[] = "grafana is fixed, all good.";
  constexpr char kAnswer[] = "grafana is running again after the restart.";
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query",
                             R"({"action":"get","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:grafana",)"
                             R"("capability":"restart","params":{},"reason":"stuck"})")));
  // While the restart is unverified: a claim beside a second write (refused by the FSM), then
  // a bare claim (refused as a final answer), then the verifying read and the answer.
  fake.Enqueue(TextAndToolTurn(kPreamble, "call_l", "pulse_control",
                               R"({"type":"resource","resource_id":"app-container:loki",)"
                               R"("capability":"restart","params":{},"reason":"stuck too"})"));
  fake.Enqueue(Turn(TextTurn(kClaim)));
  fake.Enqueue(Turn(ToolTurn("call_r", "pulse_read",
                             R"({"action":"status","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(TextTurn(kAnswer)));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "autonomous")});

  const ChatStream chat =
      PostStream(server.port(), "/api/ai/chat", token,
                 R"({"message":"restart grafana","control_level":"autonomous"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "answered");
  const std::string session_id = Str(chat.First("session"), "id");

  // Streamed: neither claim, only the verified answer.
  const std::string streamed = StreamedText(chat);
  CHECK(streamed.find("fixed") == std::string::npos);
  CHECK(streamed.find(kAnswer) != std::string::npos);
  // The model still got the refusal feedback: its claim, then a user-role demand for evidence.
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 6);
  CHECK(LastMessageRole(requests[4]) == "user");
  CHECK(requests[4].body.find("Verification required") != std::string::npos);
  CHECK(requests[4].body.find(kClaim) != std::string::npos);

  // Served: no assistant message carries a claim; each is a typed refused_claim entry.
  const Reply messages =
      Send(server.port(), "GET", "/api/ai/sessions/" + session_id + "/messages", token);
  INFO(messages.body);
  REQUIRE(messages.status == 200);
  int refused = 0;
  bool answer_served = false;
  const rapidjson::Document served = Json(messages.body);
  for (const rapidjson::Value& m : served.GetArray()) {
    const std::string role = Str(m, "role");
    const std::string content = Str(m, "content");
    if (role == "assistant") {
      CHECK(content.find("fixed") == std::string::npos);
      answer_served = answer_served || content == kAnswer;
    }
    if (role == "refused_claim") {
      ++refused;
      CHECK((content == kPreamble || content == kClaim));
    }
  }
  CHECK(refused == 2);
  CHECK(answer_served);
  const Reply detail = Send(server.port(), "GET", "/api/ai/sessions/" + session_id, token);
  REQUIRE(detail.status == 200);
  const rapidjson::Document shown = Json(detail.body);
  for (const rapidjson::Value& m : shown["messages"].GetArray()) {
    if (Str(m, "role") == "assistant") {
      CHECK(Str(m, "content").find("fixed") == std::string::npos);
    }
  }
  // Stored: the session record keeps them typed, never as assistant messages.
  const std::string stored =
      DatabaseText(dir, "SELECT record_json FROM sessions WHERE id = '" + session_id + "'");
  const rapidjson::Document record = Json(stored);
  int stored_refused = 0;
  for (const rapidjson::Value& m : record["transcript"].GetArray()) {
    if (Str(m, "role") == "assistant") {
      CHECK(Str(m, "content").find("fixed") == std::string::npos);
    }
    stored_refused += Str(m, "role") == "refused_claim" ? 1 : 0;
  }
  CHECK(stored_refused == 2);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("text beside an admitted call while verifying is released once the change is verified",
          "[e2e][server][claims]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  constexpr char kPreamble[] = "Checking that grafana came back.";
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query",
                             R"({"action":"get","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:grafana",)"
                             R"("capability":"restart","params":{},"reason":"stuck"})")));
  fake.Enqueue(TextAndToolTurn(kPreamble, "call_r", "pulse_read",
                               R"({"action":"status","resource_id":"app-container:grafana"})"));
  fake.Enqueue(Turn(TextTurn("grafana is up.")));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "autonomous")});
  const ChatStream chat =
      PostStream(server.port(), "/api/ai/chat", token,
                 R"({"message":"restart grafana","control_level":"autonomous"})");
  INFO(chat.raw);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "answered");
  // Held until the read ran and verified the change, then shown after that read's result.
  std::size_t read_end = 0;
  std::size_t preamble_at = 0;
  for (std::size_t i = 0; i < chat.events.size(); ++i) {
    const ChatEvent& e = chat.events[i];
    if (e.type == "tool_end" && Str(Json(e.data_json), "id") == "call_r") {
      read_end = i;
    }
    if (e.type == "content" && Str(Json(e.data_json), "text") == kPreamble) {
      preamble_at = i;
    }
  }
  CHECK(read_end > 0);
  CHECK(preamble_at > read_end);
  CHECK(server.Stop() == "exited 0");
}

// ---- item 7 ---------------------------------------------------------------------------------

TEST_CASE("a secret planted in tool arguments is echoed by no outward copy",
          "[e2e][server][echoes]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  // Three planted secrets, each in a shape the outbound redactor recognises.
  const std::vector<std::string> secrets = {"Zq7plantedExecPw", "Zq7plantedParamPw",
                                            "Zq7plantedReasonKey"};
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query",
                             R"({"action":"get","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(ToolTurn("call_x", "pulse_read",
                             R"({"action":"exec","resource_id":"app-container:grafana",)"
                             R"("command":"mysql -pZq7plantedExecPw -e status"})")));
  fake.Enqueue(Turn(ToolTurn("call_p", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:grafana",)"
                             R"("capability":"restart","params":{"password":"Zq7plantedParamPw"},)"
                             R"("reason":"stuck"})")));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:grafana",)"
                             R"("capability":"restart","params":{},)"
                             R"("reason":"stuck; api_key=Zq7plantedReasonKey"})")));
  fake.Enqueue(Turn(ToolTurn("call_r", "pulse_read",
                             R"({"action":"status","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(TextTurn("grafana was restarted and is running.")));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute,monitoring:read");
  const std::string auditor = MintToken(dir.path(), "*", "auditor");
  ServerProcess server(dir.path(), {.args = ServerArgs(fake, "autonomous")});

  const ChatStream chat =
      PostStream(server.port(), "/api/ai/chat", token,
                 R"({"message":"restart grafana","control_level":"autonomous"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "answered");
  const std::string session_id = Str(chat.First("session"), "id");
  // The calls really went out with the secrets (the fake provider's requests are the model's
  // side, outside Pulse): the test plants what it checks for.
  REQUIRE(chat.raw.find("tool_start") != std::string::npos);
  CHECK(chat.raw.find("[REDACTED]") != std::string::npos);

  // Every outward copy, collected.
  std::string action_id;
  for (const rapidjson::Document& end : EventsOf(chat, "tool_end")) {
    if (Str(end, "id") == "call_c") {
      const std::string output = Str(end, "output");
      const std::size_t at = output.find("act_");
      REQUIRE(at != std::string::npos);
      action_id = output.substr(at, output.find('"', at) - at);
    }
  }
  REQUIRE_FALSE(action_id.empty());
  const Reply messages =
      Send(server.port(), "GET", "/api/ai/sessions/" + session_id + "/messages", token);
  const Reply detail = Send(server.port(), "GET", "/api/ai/sessions/" + session_id, token);
  const Reply action = Send(server.port(), "GET", "/api/actions/" + action_id, auditor);
  const Reply actions = Send(server.port(), "GET", "/api/actions", auditor);
  REQUIRE(messages.status == 200);
  REQUIRE(detail.status == 200);
  REQUIRE(action.status == 200);
  REQUIRE(actions.status == 200);
  CHECK(server.Stop() == "exited 0");
  const std::string stored_session = DatabaseText(dir, "SELECT record_json FROM sessions");
  const std::string audit =
      DatabaseText(dir, "SELECT message || ' ' || details_json || ' ' || code FROM audit_log");
  REQUIRE_FALSE(stored_session.empty());
  REQUIRE_FALSE(audit.empty());
  const std::vector<std::pair<std::string, std::string>> copies = {
      {"SSE events", chat.raw},      {"GET messages", messages.body},
      {"GET session", detail.body},  {"GET action", action.body},
      {"GET actions", actions.body}, {"stored session", stored_session},
      {"audit rows", audit}};
  for (const auto& [where, text] : copies) {
    for (const std::string& secret : secrets) {
      INFO(where << " must not contain " << secret);
      CHECK(text.find(secret) == std::string::npos);
    }
  }
  // The redaction keeps what an operator needs: the tool, the command shape, the reason.
  CHECK(messages.body.find("mysql") != std::string::npos);
  CHECK(action.body.find("stuck") != std::string::npos);
}

// ---- item 8 ---------------------------------------------------------------------------------

TEST_CASE("a write whose adapter throws after dispatching leaves the session verifying",
          "[e2e][server][claims]") {
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  WriteFleetWithFault(fleet, "app-container:grafana", "dispatch_throws");
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  constexpr char kClaim[] = "grafana has been restarted and is healthy.";
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query",
                             R"({"action":"get","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:grafana",)"
                             R"("capability":"restart","params":{},"reason":"stuck"})")));
  fake.Enqueue(Turn(TextTurn(kClaim)));
  fake.Enqueue(Turn(ToolTurn("call_r", "pulse_read",
                             R"({"action":"status","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(TextTurn("grafana is running again.")));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute");
  std::vector<std::string> args = ServerArgs(fake, "autonomous");
  args.insert(args.end(), {"--fleet", fleet});
  ServerProcess server(dir.path(), {.args = args});

  const ChatStream chat =
      PostStream(server.port(), "/api/ai/chat", token,
                 R"({"message":"restart grafana","control_level":"autonomous"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  REQUIRE(chat.Last()->type == "done");
  // The throwing dispatch is reported as a failure that may have changed the target...
  bool control_failed = false;
  for (const rapidjson::Document& end : EventsOf(chat, "tool_end")) {
    if (Str(end, "id") == "call_c") {
      control_failed = !end["success"].GetBool() &&
                       Str(end, "output").find("EXECUTION_FAILED") != std::string::npos;
    }
  }
  CHECK(control_failed);
  // ...and counts as a dispatched change: the unverified claim is refused, the model is asked
  // for evidence in a user-role message, reads, and only then answers.
  CHECK(StreamedText(chat).find(kClaim) == std::string::npos);
  CHECK(StreamedText(chat).find("grafana is running again.") != std::string::npos);
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 5);
  CHECK(LastMessageRole(requests[3]) == "user");
  CHECK(requests[3].body.find("Verification required") != std::string::npos);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "answered");
  // The dispatch really happened: the container logged the restart request.
  CHECK(server.Running());
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
