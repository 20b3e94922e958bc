// Patrol's safety rules end to end (issue 20, items 2, 3 and 5), on the real pulse-server with
// the shipped demo fleet and the loopback fake provider: a proposal from an investigation that
// did not complete is never planned; the autonomy in force is read again at admission and at
// dispatch, so lowering the level or revoking Autopilot during a run stops its fix; and the
// model cannot close a finding on its word. Each scenario failed on the main of 2026-12-01.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

const std::string kWorker =
    core::FindingIdFor("app-container:worker", core::Category::kReliability, "container-exited");
const std::string kBackup =
    core::FindingIdFor("backup-job:db-hourly", core::Category::kBackup, "backup-failed");
const std::string kDbMemory =
    core::FindingIdFor("vm:105", core::Category::kPerformance, "memory-high");

constexpr char kProposeWorkerStart[] =
    R"({"resource_id":"app-container:worker","capability":"start",)"
    R"("rationale":"the worker exited with code 1"})";
constexpr char kProposeBackupRerun[] =
    R"({"resource_id":"backup-job:db-hourly","capability":"run-now",)"
    R"("params":{"mode":"snapshot"},"rationale":"retry the backup"})";
constexpr char kScopes[] = "ai:execute,settings:write,monitoring:read,monitoring:write,"
                           "actions:approve";
constexpr char kWorkerScope[] = R"({"resource_ids":["app-container:worker"]})";

ScriptedResponse Turn(const std::vector<std::string>& payloads,
                      std::shared_ptr<absl::Notification> release = nullptr) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  response.release = std::move(release);
  return response;
}

ServerOptions WithProvider(const FakeProviderServer& fake) {
  return {.args = {"--provider", "openai-compatible", "--provider-base-url",
                   fake.base_url() + "/v1", "--model", "test-model", "--patrol-interval", "0"}};
}

std::string StartRun(int port, const std::string& token, const std::string& body) {
  const Reply reply = Send(port, "POST", "/api/ai/patrol/run", token, body);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Str(Json(reply.body), "run_id");
}

rapidjson::Document WaitRun(int port, const std::string& token, const std::string& id) {
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

// Waits until the fake provider has received `count` requests (the held turn has arrived).
void WaitRequests(const FakeProviderServer& fake, std::size_t count) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (fake.Requests().size() < count && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  REQUIRE(fake.Requests().size() == count);
}

const rapidjson::Value& RemediationFor(const rapidjson::Value& run, const std::string& finding) {
  for (const rapidjson::Value& m : run["remediations"].GetArray()) {
    if (Str(m, "finding_id") == finding) {
      return m;
    }
  }
  FAIL("no remediation for " << finding);
  return run;
}

// Every action in either view of the action list.
std::size_t ActionCount(int port, const std::string& token) {
  std::size_t n = 0;
  for (const char* path : {"/api/actions", "/api/actions?view=settled"}) {
    const Reply reply = Send(port, "GET", path, token);
    REQUIRE(reply.status == 200);
    n += Json(reply.body)["actions"].Size();
  }
  return n;
}

bool Active(int port, const std::string& token, const std::string& finding) {
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  const rapidjson::Document findings = Json(list.body);
  for (const rapidjson::Value& f : findings.GetArray()) {
    if (Str(f, "id") == finding) {
      return true;
    }
  }
  return false;
}

TEST_CASE("a proposal from an investigation that ended in a provider error or a shutdown is "
          "dropped with its reason, never planned",
          "[e2e][patrol][safety]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  auto server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  int port = server->port();
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token,
               R"({"autonomy_level":"assisted","investigation_budget":8})")
              .status == 200);

  // The model proposes the (low_risk, auto-executable) start, then the provider fails.
  fake.Enqueue(Turn(TextTurn("The worker exited.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action", kProposeWorkerStart)));
  ScriptedResponse broken = JsonResponse(400, R"({"error":{"message":"context too long"}})");
  broken.path = "/v1/chat/completions";
  fake.Enqueue(broken);
  rapidjson::Document run = WaitRun(port, token, StartRun(port, token, kWorkerScope));
  INFO(core::ToJsonString(run));
  const rapidjson::Value& dropped = RemediationFor(run, kWorker);
  CHECK(Str(dropped, "outcome") == "proposal_dropped");
  CHECK(Str(dropped, "proposal_dropped_reason") == "provider_error");
  CHECK_FALSE(core::GetMember(dropped, "action_id"));
  CHECK(ActionCount(port, token) == 0);
  CHECK(Active(port, token, kWorker));  // nothing started the worker

  // Shutdown while the backup's investigation waits for its last turn: the captured proposal
  // (a low_risk re-run Patrol's level would execute) dies with the run.
  auto never = std::make_shared<absl::Notification>();
  fake.Enqueue(Turn(TextTurn("The backup failed.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action", kProposeBackupRerun)));
  fake.Enqueue(Turn(TextTurn("Proposed running the backup again."), never));
  const std::size_t before = fake.Requests().size();
  const std::string cut = StartRun(port, token, R"({"resource_ids":["backup-job:db-hourly"]})");
  WaitRequests(fake, before + 3);
  CHECK(server->Stop() == "exited 0");
  server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  port = server->port();
  rapidjson::Document cancelled = WaitRun(port, token, cut);
  INFO(core::ToJsonString(cancelled));
  const rapidjson::Value& m = RemediationFor(cancelled, kBackup);
  CHECK(Str(m, "outcome") == "proposal_dropped");
  CHECK(Str(m, "proposal_dropped_reason") == "cancelled");
  CHECK(ActionCount(port, token) == 0);
  CHECK(Active(port, token, kBackup));
}

TEST_CASE("lowering the level or revoking Autopilot during a run stops the fix it would have "
          "dispatched, with the reason recorded",
          "[e2e][patrol][safety]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token,
               R"({"autonomy_level":"assisted","investigation_budget":8})")
              .status == 200);

  // The run starts at assisted; its last investigation turn holds until the operator has
  // lowered the level to approval.
  auto lowered = std::make_shared<absl::Notification>();
  fake.Enqueue(Turn(TextTurn("The worker exited.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action", kProposeWorkerStart)));
  fake.Enqueue(Turn(TextTurn("Proposed starting the worker."), lowered));
  const std::string id = StartRun(port, token, kWorkerScope);
  WaitRequests(fake, 3);
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token, R"({"autonomy_level":"approval"})")
              .status == 200);
  lowered->Notify();
  rapidjson::Document run = WaitRun(port, token, id);
  INFO(core::ToJsonString(run));
  CHECK(Str(run, "autonomy_level") == "assisted");  // what the run started at
  const rapidjson::Value& held = RemediationFor(run, kWorker);
  CHECK(Str(held, "outcome") == "fix_queued");
  CHECK(Str(held, "hold_reason") == "autonomy_lowered");
  CHECK(Str(held, "action_state") == "planned");  // there for a human
  CHECK_FALSE(core::GetMember(held, "execution"));
  const Reply settled = Send(port, "GET", "/api/actions?view=settled", token);
  CHECK(Json(settled.body)["actions"].Empty());  // nothing was dispatched
  CHECK(Active(port, token, kWorker));

  // Autopilot acknowledged, then revoked while the run investigates: no dispatch either.
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token, R"({"autonomy_level":"full"})")
              .status == 200);
  REQUIRE(Send(port, "POST", "/api/ai/patrol/autonomy/acknowledgements", token,
               R"({"acknowledgement_id":"ops-1"})")
              .status == 201);
  auto revoked = std::make_shared<absl::Notification>();
  fake.Enqueue(Turn(TextTurn("The backup failed.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action", kProposeBackupRerun)));
  fake.Enqueue(Turn(TextTurn("Proposed running the backup again."), revoked));
  const std::string second =
      StartRun(port, token, R"({"resource_ids":["backup-job:db-hourly"]})");
  WaitRequests(fake, 6);
  REQUIRE(Send(port, "DELETE", "/api/ai/patrol/autonomy/acknowledgements/ops-1", token).status ==
          200);
  revoked->Notify();
  rapidjson::Document autopilot = WaitRun(port, token, second);
  INFO(core::ToJsonString(autopilot));
  CHECK(Str(autopilot, "autonomy_level") == "full");
  const rapidjson::Value& backup = RemediationFor(autopilot, kBackup);
  CHECK(Str(backup, "outcome") == "fix_queued");
  CHECK(Str(backup, "hold_reason") == "autopilot_revoked");
  CHECK_FALSE(core::GetMember(backup, "execution"));
  CHECK(Json(Send(port, "GET", "/api/actions?view=settled", token).body)["actions"].Empty());
  CHECK(Active(port, token, kBackup));
}

TEST_CASE("Patrol's model cannot close a finding on its word: resolve is not offered and a "
          "resolved verdict needs the verifier",
          "[e2e][patrol][safety]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();

  // db-01 (vm:105) is still at 96 % memory; the model claims otherwise, twice.
  fake.Enqueue(Turn(ToolTurn("r1", "patrol_resolve_finding",
                             R"({"finding_id":")" + kDbMemory +
                                 R"(","resolution_note":"memory is fine now",)"
                                 R"("evidence":"I looked and it is fine"})")));
  fake.Enqueue(Turn(ToolTurn("a1", "patrol_assess_finding",
                             R"({"finding_id":")" + kDbMemory +
                                 R"(","verdict":"resolved","evidence":"memory at 40%"})")));
  fake.Enqueue(Turn(TextTurn("db-01 looks fine.")));
  rapidjson::Document run =
      WaitRun(port, token, StartRun(port, token, R"({"resource_ids":["vm:105"]})"));
  INFO(core::ToJsonString(run));
  // The resolve tool was never offered to the model.
  REQUIRE_FALSE(fake.Requests().empty());
  CHECK(fake.Requests()[0].body.find("patrol_resolve_finding") == std::string::npos);
  CHECK(fake.Requests()[0].body.find("patrol_assess_finding") != std::string::npos);
  // The verifier re-read the metric and still sees the pressure: the verdict changed nothing.
  bool refused = false;
  for (const rapidjson::Value& call : run["tool_calls"].GetArray()) {
    if (Str(call, "tool_name") == "patrol_assess_finding") {
      refused = Str(call, "output").find("verifier_still_detects") != std::string::npos;
    }
  }
  CHECK(refused);
  CHECK(run["resolved_finding_ids"].Empty());
  CHECK(Active(port, token, kDbMemory));
}

}  // namespace
}  // namespace pulse::testing::e2e
