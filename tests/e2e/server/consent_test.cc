// Consent and session ownership against the real binary and a loopback fake model provider
// (issue 20 items 4 and 6; docs/security.md "Consent and session ownership"):
//  * at the controlled level, a plan the capability itself would let run without approval waits
//    in pending_approval with the session's posture as its reason; resuming is not an approval;
//    the human's decision is an approval record bound to the plan hash and the deciding token,
//    and the resume runs from that record;
//  * a chat session belongs to the token that created it: to any other token it does not exist
//    (and the owner's pending approval survives their attempts); an admin (`*`) may read it;
//  * Patrol sessions are system sessions, listed apart and never resumed.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kQueryGrafana[] = R"({"action":"get","resource_id":"app-container:grafana"})";
// Restarting grafana is low risk with automatic class low_risk: approval-free by its own rule.
constexpr char kRestartGrafana[] =
    R"({"type":"resource","resource_id":"app-container:grafana","capability":"restart",)"
    R"("params":{},"reason":"grafana is stuck"})";
constexpr char kReadGrafana[] = R"({"action":"status","resource_id":"app-container:grafana"})";
constexpr char kAnswer[] = "grafana was restarted and is running again.";

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

ServerOptions Controlled(const FakeProviderServer& fake) {
  return {.args = {"--provider", "openai-compatible", "--provider-base-url",
                   fake.base_url() + "/v1", "--model", "test-model", "--control-level",
                   "controlled", "--patrol-interval", "0"}};
}

std::string Decision(const std::string& plan_hash) {
  return R"({"outcome":"approved","reason":"restart approved","planHash":")" + plan_hash + "\"}";
}

// The chat that plans the grafana restart and suspends on it; returns the stream.
ChatStream PlanRestart(int port, const std::string& token) {
  ChatStream chat = PostStream(port, "/api/ai/chat", token, R"({"message":"restart grafana"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "awaiting_approval");
  return chat;
}

rapidjson::Document ActionAudit(int port, const std::string& token, const std::string& id) {
  const Reply reply = Send(port, "GET", "/api/actions/" + id, token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  rapidjson::Document body = Json(reply.body);
  rapidjson::Document audit;
  audit.CopyFrom(body["audit"], audit.GetAllocator());
  return audit;
}

TEST_CASE(
    "a chat confirmation is not an approval: a controlled session's plan waits for a "
    "recorded approval bound to its plan hash, and resume runs from it",
    "[e2e][server][consent]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query", kQueryGrafana)));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control", kRestartGrafana)));
  fake.Enqueue(Turn(ToolTurn("call_r", "pulse_read", kReadGrafana)));
  fake.Enqueue(Turn(TextTurn(kAnswer)));
  const std::string operator_token = MintToken(dir.path(), "ai:chat,ai:execute", "operator");
  const std::string approver = MintToken(dir.path(), "actions:approve", "approver");
  ServerProcess server(dir.path(), Controlled(fake));
  const int port = server.port();

  // 1. The plan is pending_approval, with the session's posture as the reason.
  const ChatStream chat = PlanRestart(port, operator_token);
  const rapidjson::Document announced = chat.First("approval_needed");
  const std::string action_id = Str(announced, "action_id");
  const std::string plan_hash = Str(announced, "plan_hash");
  const std::string session_id = Str(chat.First("session"), "id");
  CHECK(Str(announced, "state") == "pending_approval");
  CHECK(Str(announced, "approval_reason").find("control_level:controlled") != std::string::npos);
  const rapidjson::Document pending = ActionAudit(port, approver, action_id);
  CHECK(Str(pending, "state") == "pending_approval");
  CHECK(Str(pending["plan"], "message").find("control_level:controlled") != std::string::npos);

  // 2. Resuming without a decision is refused and runs nothing; the session stays suspended.
  const ChatStream early =
      PostStream(port, "/api/ai/sessions/" + session_id + "/resume", operator_token, "{}");
  INFO(early.raw);
  REQUIRE(early.Last() != nullptr);
  CHECK(Str(Json(early.Last()->data_json), "outcome") == "awaiting_approval");
  CHECK(Str(early.First("error"), "reason") == "approval_pending");
  CHECK(Str(ActionAudit(port, approver, action_id), "state") == "pending_approval");
  CHECK(fake.Requests().size() == 2);

  // 3. A decision presenting another plan hash is refused and records nothing.
  const Reply stale = Send(port, "POST", "/api/actions/" + action_id + "/decision", approver,
                           Decision("sha256:" + std::string(64, '0')));
  CHECK(stale.status == 409);
  CHECK(ErrorCode(stale.body) == "action_plan_identity_mismatch");
  const rapidjson::Document still = ActionAudit(port, approver, action_id);
  CHECK(Str(still, "state") == "pending_approval");
  CHECK(still["approvals"].Size() == 0);

  // 4. The decision route records the approval: the deciding token, the plan hash.
  const Reply decided =
      Send(port, "POST", "/api/actions/" + action_id + "/decision", approver, Decision(plan_hash));
  INFO(decided.body);
  REQUIRE(decided.status == 200);
  const rapidjson::Document decision = Json(decided.body);
  CHECK(Str(decision, "state") == "approved");
  const std::string approver_id = Str(decision["approval"]["actor"], "id");
  CHECK(approver_id.rfind("tok_", 0) == 0);
  CHECK(Str(decision["approval"], "planHash") == plan_hash);

  // 5. The resume runs from that record: the action carries who consented.
  const ChatStream resumed =
      PostStream(port, "/api/ai/sessions/" + session_id + "/resume", operator_token, "{}");
  INFO(resumed.raw);
  REQUIRE(resumed.Last() != nullptr);
  CHECK(Str(Json(resumed.Last()->data_json), "outcome") == "answered");
  const rapidjson::Document done = ActionAudit(port, approver, action_id);
  CHECK(Str(done, "state") == "completed");
  REQUIRE(done["approvals"].Size() == 1);
  const rapidjson::Value& approval = done["approvals"][0];
  CHECK(Str(approval["actor"], "id") == approver_id);
  CHECK(Str(approval["actor"], "kind") == "human");
  CHECK(Str(approval, "planHash") == plan_hash);
  CHECK(Str(approval, "outcome") == "approved");
  // The executor is the resuming operator, not the approver: two distinct tokens on record.
  const Reply session = Send(port, "GET", "/api/ai/sessions/" + session_id, operator_token);
  REQUIRE(session.status == 200);
  CHECK(Str(Json(session.body)["owner"], "token_id") != approver_id);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE(
    "a session belongs to the token that created it: others get session_not_found and "
    "the owner's pending approval survives, and an admin may read it",
    "[e2e][server][consent]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(ToolTurn("call_q", "pulse_query", kQueryGrafana)));
  fake.Enqueue(Turn(ToolTurn("call_c", "pulse_control", kRestartGrafana)));
  fake.Enqueue(Turn(ToolTurn("call_ask", "pulse_question",
                             R"({"question":"Which grafana?","options":["a","b"]})")));
  const std::string alice = MintToken(dir.path(), "ai:chat,ai:execute", "alice");
  const std::string bob = MintToken(dir.path(), "ai:chat,ai:execute", "bob");
  const std::string admin = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path(), Controlled(fake));
  const int port = server.port();

  const ChatStream chat = PlanRestart(port, alice);
  const std::string session_id = Str(chat.First("session"), "id");
  const std::string action_id = Str(chat.First("approval_needed"), "action_id");
  // A second session of alice's waits on a question.
  const ChatStream asked = PostStream(port, "/api/ai/chat", alice, R"({"message":"grafana?"})");
  INFO(asked.raw);
  const std::string question_id = Str(asked.First("question"), "question_id");
  const std::string path = "/api/ai/sessions/" + session_id;
  const std::size_t provider_calls = fake.Requests().size();

  // Bob: nothing of alice's exists for him.
  CHECK(ErrorCode(Send(port, "GET", path, bob).body) == "session_not_found");
  CHECK(Send(port, "GET", path, bob).status == 404);
  CHECK(ErrorCode(Send(port, "GET", path + "/messages", bob).body) == "session_not_found");
  const Reply resume = Send(port, "POST", path + "/resume", bob, "{}");
  CHECK(resume.status == 404);
  CHECK(ErrorCode(resume.body) == "session_not_found");
  const Reply cont = Send(port, "POST", "/api/ai/chat", bob,
                          R"({"message":"forget that","session_id":")" + session_id + "\"}");
  CHECK(cont.status == 404);
  CHECK(ErrorCode(cont.body) == "session_not_found");
  CHECK(ErrorCode(Send(port, "POST", path + "/abort", bob, "{}").body) == "session_not_found");
  CHECK(ErrorCode(Send(port, "DELETE", path, bob).body) == "session_not_found");
  const Reply answer = Send(port, "POST", "/api/ai/question/" + question_id + "/answer", bob,
                            R"({"answers":[{"id":"which","value":"a"}]})");
  CHECK(answer.status == 404);
  CHECK(ErrorCode(answer.body) == "question_not_found");
  const Reply bobs = Send(port, "GET", "/api/ai/sessions", bob);
  REQUIRE(bobs.status == 200);
  CHECK(Json(bobs.body).Size() == 0);
  CHECK(fake.Requests().size() == provider_calls);  // nothing of bob's reached the model

  // Alice's suspension and her pending approval survived all of it.
  const Reply mine = Send(port, "GET", path, alice);
  REQUIRE(mine.status == 200);
  const rapidjson::Document detail = Json(mine.body);
  CHECK(Str(detail, "status") == "awaiting_approval");
  CHECK(Str(detail["awaiting_action"], "action_id") == action_id);
  CHECK(Str(detail, "kind") == "chat");
  CHECK(Str(detail["owner"], "token_name") == "alice");
  CHECK(Str(detail["owner"], "token_id").rfind("tok_", 0) == 0);
  const Reply listed = Send(port, "GET", "/api/ai/sessions", alice);
  REQUIRE(listed.status == 200);
  CHECK(Json(listed.body).Size() == 2);

  // An admin may read it (and sees whose it is), but cannot run it.
  const Reply read = Send(port, "GET", path, admin);
  REQUIRE(read.status == 200);
  CHECK(Str(Json(read.body)["owner"], "token_name") == "alice");
  CHECK(Send(port, "GET", path + "/messages", admin).status == 200);
  CHECK(ErrorCode(Send(port, "POST", path + "/resume", admin, "{}").body) == "session_not_found");
  CHECK(Str(Json(Send(port, "GET", path, alice).body), "status") == "awaiting_approval");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("Patrol sessions are system sessions: listed apart and never resumed",
          "[e2e][server][consent]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(TextTurn("Reviewed the fleet; nothing new.")));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute,monitoring:read", "operator");
  ServerProcess server(dir.path(), Controlled(fake));
  const int port = server.port();

  const Reply started = Send(port, "POST", "/api/ai/patrol/run", token);
  INFO(started.body);
  REQUIRE(started.status == 200);
  const std::string run_id = Str(Json(started.body), "run_id");
  std::string status = "running";
  for (int i = 0; i < 600 && status == "running"; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    status = Str(Json(Send(port, "GET", "/api/ai/patrol/runs/" + run_id, token).body), "status");
  }
  REQUIRE(status != "running");

  // Not among the caller's chat sessions; listed with kind=patrol.
  const Reply chats = Send(port, "GET", "/api/ai/sessions", token);
  REQUIRE(chats.status == 200);
  CHECK(Json(chats.body).Size() == 0);
  const Reply patrol = Send(port, "GET", "/api/ai/sessions?kind=patrol", token);
  INFO(patrol.body);
  REQUIRE(patrol.status == 200);
  const rapidjson::Document listed = Json(patrol.body);
  REQUIRE(listed.Size() >= 1);
  const std::string session_id = Str(listed[0], "id");
  CHECK(Str(listed[0], "kind") == "patrol");
  CHECK(ErrorCode(Send(port, "GET", "/api/ai/sessions?kind=other", token).body) ==
        "invalid_request");

  // Readable, but never resumed or continued.
  const Reply read = Send(port, "GET", "/api/ai/sessions/" + session_id, token);
  REQUIRE(read.status == 200);
  CHECK(Str(Json(read.body), "kind") == "patrol");
  const Reply resume =
      Send(port, "POST", "/api/ai/sessions/" + session_id + "/resume", token, "{}");
  CHECK(resume.status == 409);
  CHECK(ErrorCode(resume.body) == "session_not_resumable");
  const Reply cont = Send(port, "POST", "/api/ai/chat", token,
                          R"({"message":"go on","session_id":")" + session_id + "\"}");
  CHECK(ErrorCode(cont.body) == "session_not_resumable");
  CHECK(ErrorCode(Send(port, "DELETE", "/api/ai/sessions/" + session_id, token).body) ==
        "session_not_found");
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
