// (a) The governed chat flow against the real binary and a loopback fake model provider: a
// chat resolves db-01, plans a restart through pulse_control at the controlled level and
// suspends with approval_needed; a human approves it through the decision route; the resume
// executes it against the demo fleet, the loop refuses the model's unverified claim and asks
// for evidence, the model reads the VM again and answers. The action's detail then shows every
// lifecycle transition, and the agent event stream saw approval.pending and action.completed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kQueryArgs[] = R"({"action":"get","resource_id":"vm:105"})";
constexpr char kRestartArgs[] =
    R"({"type":"resource","resource_id":"vm:105","capability":"restart",)"
    R"("params":{"mode":"reboot"},"reason":"db-01 is at 96% memory"})";
constexpr char kReadArgs[] = R"({"action":"status","resource_id":"vm:105"})";
constexpr char kClaim[] = "db-01 has been restarted.";
constexpr char kAnswer[] = "db-01 was rebooted and is running again; memory is back to normal.";

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// The messages of a recorded provider request.
std::vector<rapidjson::Document> Messages(const RecordedRequest& request) {
  rapidjson::Document body = Json(request.body);
  std::vector<rapidjson::Document> out;
  for (const rapidjson::Value& m : body["messages"].GetArray()) {
    rapidjson::Document copy;
    copy.CopyFrom(m, copy.GetAllocator());
    out.push_back(std::move(copy));
  }
  return out;
}

std::string ContentOf(const rapidjson::Value& message) {
  const rapidjson::Value* content = core::GetMember(message, "content");
  return content != nullptr && content->IsString() ? std::string(core::StringViewOf(*content)) : "";
}

TEST_CASE("a governed chat plans, waits for approval, executes, verifies and answers",
          "[e2e][server][chat]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query", kQueryArgs)));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control", kRestartArgs)));
  fake.Enqueue(Turn(TextTurn(kClaim)));
  fake.Enqueue(Turn(ToolTurn("call_r", "pulse_read", kReadArgs)));
  fake.Enqueue(Turn(TextTurn(kAnswer)));

  const std::string operator_token = MintToken(dir.path(), "ai:chat,ai:execute", "operator");
  const std::string approver = MintToken(dir.path(), "actions:approve,monitoring:read", "approver");
  const std::string watcher = MintToken(dir.path(), "monitoring:read,ai:execute", "watcher");
  ServerProcess server(
      dir.path(),
      {.args = {"--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
                "--model", "test-model", "--control-level", "controlled"}});
  EventSubscriber events(server.port(), watcher);
  REQUIRE(events.WaitFor("stream.connected"));

  // 1. The chat: resolve, plan, suspend.
  const ChatStream chat = PostStream(
      server.port(), "/api/ai/chat", operator_token,
      R"({"message":"db-01 is nearly out of memory, please restart it","control_level":"controlled"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE_FALSE(chat.events.empty());
  CHECK(chat.events.front().type == "session");
  REQUIRE(chat.Last()->type == "done");
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "awaiting_approval");
  const std::vector<std::string> types = chat.Types();
  CHECK(std::count(types.begin(), types.end(), "error") == 0);
  const rapidjson::Document approval = chat.First("approval_needed");
  const std::string action_id = Str(approval, "action_id");
  const std::string plan_hash = Str(approval, "plan_hash");
  CHECK(action_id.rfind("act_", 0) == 0);
  CHECK(Str(approval, "capability") == "restart");
  CHECK(Str(approval, "resource_id") == "vm:105");
  const std::string session_id = Str(chat.First("session"), "id");
  REQUIRE_FALSE(session_id.empty());
  REQUIRE(fake.Requests().size() == 2);

  REQUIRE(events.WaitFor("approval.pending"));
  // Nothing was dispatched: the VM is still running with its memory fault.
  Reply pending = Send(server.port(), "GET", "/api/actions/" + action_id, approver);
  REQUIRE(pending.status == 200);
  CHECK(Str(Json(pending.body)["audit"], "state") == "pending_approval");

  // 2. A human approves, bound to the plan hash.
  const Reply decided =
      Send(server.port(), "POST", "/api/actions/" + action_id + "/decision", approver,
           R"({"outcome":"approved","reason":"restart approved","planHash":")" + plan_hash + "\"}");
  INFO(decided.body);
  REQUIRE(decided.status == 200);
  CHECK(Str(Json(decided.body), "state") == "approved");

  // 3. The resume executes the approved plan, is made to verify, and answers.
  const ChatStream resumed =
      PostStream(server.port(), "/api/ai/sessions/" + session_id + "/resume", operator_token, "{}");
  INFO(resumed.raw);
  REQUIRE(resumed.status == 200);
  REQUIRE(resumed.Last() != nullptr);
  REQUIRE(resumed.Last()->type == "done");
  const rapidjson::Document done = Json(resumed.Last()->data_json);
  CHECK(Str(done, "outcome") == "answered");
  CHECK(Str(done, "session_id") == session_id);
  std::string text;
  for (const ChatEvent& e : resumed.events) {
    if (e.type == "content") {
      text += Str(Json(e.data_json), "text");
    }
  }
  CHECK(text.find(kAnswer) != std::string::npos);
  const std::vector<std::string> resumed_types = resumed.Types();
  CHECK(std::count(resumed_types.begin(), resumed_types.end(), "error") == 0);

  // What the model saw: the stored call answered with the completed action (no re-emission),
  // then a user-role demand for evidence after the unverified claim, then the read's result.
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 5);
  CHECK(fake.PendingResponses() == 0);
  bool saw_completed = false;
  for (const rapidjson::Document& m : Messages(requests[2])) {
    if (Str(m, "role") == "tool" && Str(m, "tool_call_id") == "call_c") {
      saw_completed = ContentOf(m).find("\"status\":\"completed\"") != std::string::npos;
    }
  }
  CHECK(saw_completed);
  const std::vector<rapidjson::Document> after_claim = Messages(requests[3]);
  REQUIRE(after_claim.size() >= 2);
  CHECK(Str(after_claim.back(), "role") == "user");
  CHECK(ContentOf(after_claim[after_claim.size() - 2]).find(kClaim) != std::string::npos);
  bool saw_read = false;
  for (const rapidjson::Document& m : Messages(requests[4])) {
    saw_read = saw_read || (Str(m, "role") == "tool" && Str(m, "tool_call_id") == "call_r");
  }
  CHECK(saw_read);

  // 4. The action's detail shows every lifecycle step, in order.
  const Reply detail = Send(server.port(), "GET", "/api/actions/" + action_id, approver);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  CHECK(Str(body["audit"], "state") == "completed");
  std::vector<std::string> states;
  for (const rapidjson::Value& e : body["events"].GetArray()) {
    states.push_back(Str(e, "state") + "/" + Str(e, "kind"));
  }
  CHECK(states == std::vector<std::string>{"planned/transition", "pending_approval/transition",
                                           "approved/decision", "approved/transition",
                                           "executing/transition", "completed/transition"});
  const rapidjson::Value& result = body["audit"]["result"];
  CHECK(Str(result["execution"], "status") == "succeeded");
  CHECK(Str(result["verification"], "status") == "confirmed");
  CHECK(Str(result["verification"], "evidenceClass") == "independent");

  // 5. The event stream saw the completion; the session is idle again.
  REQUIRE(events.WaitFor("action.completed"));
  for (const AgentEventFrame& f : events.Frames()) {
    if (f.event == "action.completed") {
      const rapidjson::Document event = Json(f.data);
      CHECK(Str(event["payload"], "actionId") == action_id);
      CHECK(Str(event["payload"], "state") == "completed");
      CHECK(Str(event["payload"], "command") == R"(restart {"mode":"reboot"})");
    }
  }
  const Reply session =
      Send(server.port(), "GET", "/api/ai/sessions/" + session_id, operator_token);
  REQUIRE(session.status == 200);
  CHECK(Str(Json(session.body), "status") == "idle");

  // 6. The metrics counted the calls, the FSM-governed write and the action's end state.
  const Reply metrics = Send(server.port(), "GET", "/metrics", watcher);
  REQUIRE(metrics.status == 200);
  INFO(metrics.body);
  CHECK(metrics.body.find(
            R"(pulse_tool_calls_total{tool="pulse_control",kind="write",outcome="ok"} 1)") !=
        std::string::npos);
  CHECK(metrics.body.find(R"(pulse_tool_calls_total{tool="pulse_control",kind="write",)"
                          R"(outcome="awaiting_approval"} 1)") != std::string::npos);
  CHECK(metrics.body.find(R"(pulse_action_transitions_total{state="completed"} 1)") !=
        std::string::npos);
  CHECK(metrics.body.find(R"(pulse_provider_tokens_total{route="openai-compatible:test-model",)"
                          R"(direction="input"} 500)") != std::string::npos);
  // The reads above ran on the SQLite read pool (1..4 connections), none fell back to the writer.
  CHECK(metrics.body.find(R"(pulse_sqlite_read_connections{state="max"} 4)") !=
        std::string::npos);
  const std::string open_prefix = R"(pulse_sqlite_read_connections{state="open"} )";
  const std::size_t open_at = metrics.body.find(open_prefix);
  REQUIRE(open_at != std::string::npos);
  const int open_readers = std::atoi(metrics.body.c_str() + open_at + open_prefix.size());
  CHECK(open_readers >= 1);
  CHECK(open_readers <= 4);
  CHECK(metrics.body.find("\npulse_sqlite_reader_fallbacks_total 0\n") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a resumed run keeps the lower control level its chat asked for", "[e2e][server][chat]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  // Approval-free restarts (low risk, automatic class low_risk): an autonomous run executes
  // them at once, a controlled one waits for a recorded approval.
  fake.Enqueue(Turn(ToolTurn("call_0", "pulse_query",
                             R"({"action":"get","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(ToolTurn("call_1", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:grafana",)"
                             R"("capability":"restart","params":{},"reason":"stuck"})")));
  fake.Enqueue(Turn(ToolTurn("call_2", "pulse_read",
                             R"({"action":"status","resource_id":"app-container:grafana"})")));
  fake.Enqueue(Turn(
      ToolTurn("call_q", "pulse_query", R"({"action":"get","resource_id":"app-container:loki"})")));
  fake.Enqueue(Turn(ToolTurn("call_3", "pulse_control",
                             R"({"type":"resource","resource_id":"app-container:loki",)"
                             R"("capability":"restart","params":{},"reason":"stuck too"})")));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute,actions:approve");
  ServerProcess server(
      dir.path(),
      {.args = {"--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
                "--model", "test-model", "--control-level", "autonomous"}});
  const ChatStream chat =
      PostStream(server.port(), "/api/ai/chat", token,
                 R"({"message":"restart grafana, then loki","control_level":"controlled"})");
  INFO(chat.raw);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "awaiting_approval");
  const std::string session_id = Str(chat.First("session"), "id");

  // The first plan is approved; the resume runs it, still at the controlled level, so the
  // second plan waits for an approval instead of running.
  const rapidjson::Document first = chat.First("approval_needed");
  CHECK(Str(first, "state") == "pending_approval");
  const Reply approved =
      Send(server.port(), "POST", "/api/actions/" + Str(first, "action_id") + "/decision", token,
           R"({"outcome":"approved","planHash":")" + Str(first, "plan_hash") + "\"}");
  INFO(approved.body);
  REQUIRE(approved.status == 200);
  const ChatStream resumed =
      PostStream(server.port(), "/api/ai/sessions/" + session_id + "/resume", token, "{}");
  INFO(resumed.raw);
  REQUIRE(resumed.Last() != nullptr);
  CHECK(Str(Json(resumed.Last()->data_json), "outcome") == "awaiting_approval");
  const rapidjson::Document second = resumed.First("approval_needed");
  CHECK(Str(second, "resource_id") == "app-container:loki");
  CHECK(Str(second, "state") == "pending_approval");
  CHECK(fake.PendingResponses() == 0);
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
