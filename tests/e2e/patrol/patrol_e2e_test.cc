// Patrol end to end: the real pulse-server with the shipped demo fleet (its staged faults: an
// exited worker container, a crash-looping postfix, db-01 under memory pressure, a failed
// db-hourly backup, a filling pool) and, where a model is involved, the loopback fake provider
// speaking the OpenAI wire format. Runs are started over HTTP and read back from the run
// records, the findings list, the action detail and the agent event stream.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

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
const std::string kPool =
    core::FindingIdFor("storage:pve1/local-zfs", core::Category::kCapacity, "storage-capacity");
const std::string kPostfix =
    core::FindingIdFor("service:pve2/postfix", core::Category::kReliability, "service-crash-loop");
const std::string kDbMemory =
    core::FindingIdFor("vm:105", core::Category::kPerformance, "memory-high");

// The arguments of the two fixes the scripted models propose.
constexpr char kProposeWorkerStart[] =
    R"({"resource_id":"app-container:worker","capability":"start",)"
    R"("rationale":"the worker exited with code 1"})";
constexpr char kProposeBackupRerun[] =
    R"({"resource_id":"backup-job:db-hourly","capability":"run-now",)"
    R"("params":{"mode":"snapshot"},"rationale":"retry the backup"})";
constexpr char kScopes[] = "ai:execute,settings:write,monitoring:read,monitoring:write,"
                           "actions:approve";

ScriptedResponse Turn(const std::vector<std::string>& payloads,
                      absl::Duration header_delay = absl::ZeroDuration()) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  response.header_delay = header_delay;
  return response;
}

ServerOptions WithProvider(const FakeProviderServer& fake) {
  return {.args = {"--provider", "openai-compatible", "--provider-base-url",
                   fake.base_url() + "/v1", "--model", "test-model", "--patrol-interval", "0"}};
}

std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const rapidjson::Value& v : array.GetArray()) {
    out.emplace_back(core::StringViewOf(v));
  }
  return out;
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// POSTs a run and returns its id; REQUIREs acceptance.
std::string StartRun(int port, const std::string& token, const std::string& body = "") {
  const Reply reply = Send(port, "POST", "/api/ai/patrol/run", token, body);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  rapidjson::Document doc = Json(reply.body);
  CHECK(doc["accepted"].GetBool());
  return Str(doc, "run_id");
}

// The run's record once it is no longer running (REQUIREs that within 30 s).
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

const rapidjson::Value* RemediationFor(const rapidjson::Value& run, const std::string& finding) {
  for (const rapidjson::Value& m : run["remediations"].GetArray()) {
    if (Str(m, "finding_id") == finding) {
      return &m;
    }
  }
  return nullptr;
}

TEST_CASE("a deterministic-only run finds the staged faults and streams finding.created",
          "[e2e][patrol]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  EventSubscriber events(server.port(), token);
  REQUIRE(events.WaitFor("stream.connected"));

  const std::string id = StartRun(server.port(), token);
  rapidjson::Document run = WaitRun(server.port(), token, id);
  INFO(core::ToJsonString(run));
  CHECK(Str(run, "status") == "issues_found");
  CHECK(Str(run, "trigger_reason") == "manual");
  CHECK_FALSE(run["model_pass_ran"].GetBool());
  CHECK(Str(run, "model_pass_skipped_reason") == "no_provider_configured");
  const std::vector<std::string> found = Strings(run["new_finding_ids"]);
  for (const std::string& f : {kWorker, kBackup, kPool, kPostfix, kDbMemory}) {
    CHECK(Has(found, f));
  }
  CHECK(run["remediations"].Empty());

  // The filling pool carries its forecast in the findings list.
  const Reply list = Send(server.port(), "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  bool pool_forecast = false;
  const rapidjson::Document findings = Json(list.body);
  for (const rapidjson::Value& f : findings.GetArray()) {
    if (Str(f, "id") == kPool) {
      const rapidjson::Value* forecast = core::GetMember(f, "capacity_forecast");
      REQUIRE(forecast != nullptr);
      CHECK(core::ToJsonString(*forecast).find("filling") != std::string::npos);
      pool_forecast = true;
    }
  }
  CHECK(pool_forecast);

  // Each new finding was announced on the agent event stream.
  REQUIRE(events.WaitFor("finding.created"));
  bool worker_event = false;
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!worker_event && absl::Now() < deadline) {
    for (const AgentEventFrame& frame : events.Frames()) {
      if (frame.event == "finding.created" && frame.data.find(kWorker) != std::string::npos) {
        worker_event = true;
      }
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  CHECK(worker_event);

  // A second run re-detects: heartbeats, no duplicates, nothing new announced.
  const std::string second = StartRun(server.port(), token);
  rapidjson::Document again = WaitRun(server.port(), token, second);
  CHECK(again["new_finding_ids"].Empty());
  CHECK(Has(Strings(again["existing_finding_ids"]), kWorker));

  // History, newest first; the status names the last run.
  const Reply runs = Send(server.port(), "GET", "/api/ai/patrol/runs", token);
  REQUIRE(runs.status == 200);
  rapidjson::Document history = Json(runs.body);
  REQUIRE(history.Size() == 2);
  CHECK(Str(history[0], "id") == second);
  const Reply status = Send(server.port(), "GET", "/api/ai/patrol/status", token);
  REQUIRE(status.status == 200);
  rapidjson::Document st = Json(status.body);
  CHECK(Str(st, "last_run_id") == second);
  CHECK_FALSE(st["enabled"].GetBool());
  CHECK_FALSE(st["model_configured"].GetBool());
  CHECK(Str(st, "autonomy_level") == "monitor");
}

TEST_CASE("bad Patrol requests get a stable code and change nothing", "[e2e][patrol]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  const std::string reader = MintToken(dir.path(), "monitoring:read,ai:chat", "reader");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  for (const char* body :
       {"{", "[]", "\"x\"", R"({"resource_ids":"vm:101"})", R"({"resource_ids":[7]})",
        R"({"alert_type":"x"})", R"({"resource_ids":["vm:101"],"resource_ids":["vm:102"]})",
        R"({"resource_ids":[""]})"}) {
    const Reply reply = Send(port, "POST", "/api/ai/patrol/run", token, body);
    INFO(body << " -> " << reply.body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_patrol_scope");
  }
  std::string many = R"({"resource_ids":[)";
  for (int i = 0; i < 101; ++i) {
    many += (i ? ",\"vm:" : "\"vm:") + std::to_string(100 + i) + "\"";
  }
  many += "]}";
  CHECK(ErrorCode(Send(port, "POST", "/api/ai/patrol/run", token, many).body) ==
        "invalid_patrol_scope");
  // Over the server's body limit: refused (or the connection reset before the reply lands).
  const Reply huge = Send(port, "POST", "/api/ai/patrol/run", token,
                          R"({"resource_ids":[")" + std::string(2 << 20, 'a') + "\"]}");
  CHECK((huge.status == 0 || ErrorCode(huge.body) == "request_too_large"));
  const Reply unknown =
      Send(port, "POST", "/api/ai/patrol/run", token, R"({"resource_ids":["vm:99999"]})");
  CHECK(unknown.status == 422);
  CHECK(ErrorCode(unknown.body) == "patrol_scope_unresolved");
  CHECK(ErrorCode(Send(port, "POST", "/api/ai/patrol/run", token,
                       R"({"resource_types":["toaster"]})")
                      .body) == "patrol_scope_unresolved");
  // Scopes: running needs ai:execute, autonomy needs settings:write.
  CHECK(ErrorCode(Send(port, "POST", "/api/ai/patrol/run", reader).body) == "missing_scope");
  CHECK(ErrorCode(Send(port, "GET", "/api/ai/patrol/autonomy", reader).body) == "missing_scope");
  CHECK(ErrorCode(Send(port, "PUT", "/api/ai/patrol/autonomy", reader,
                       R"({"autonomy_level":"full"})")
                      .body) == "missing_scope");
  // Nothing ran.
  CHECK(Json(Send(port, "GET", "/api/ai/patrol/runs", token).body).Empty());
  CHECK(ErrorCode(Send(port, "GET", "/api/ai/patrol/runs/patrol-nope", token).body) ==
        "patrol_run_not_found");

  for (const char* body :
       {"", "{", R"({"autonomy_level":"yolo"})", R"({"autonomy_level":"full","admin":true})",
        R"({"autonomy_level":3})", R"({"investigation_budget":10})",
        R"({"autonomy_level":"assisted","investigation_budget":"ten"})"}) {
    const Reply reply = Send(port, "PUT", "/api/ai/patrol/autonomy", token, body);
    INFO(body << " -> " << reply.body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_autonomy_level");
  }
  rapidjson::Document autonomy =
      Json(Send(port, "GET", "/api/ai/patrol/autonomy", token).body);
  CHECK(Str(autonomy, "autonomy_level") == "monitor");
  CHECK(Str(autonomy, "requested_autonomy_level") == "monitor");
}

TEST_CASE("a Watch run reports its verdicts, a missing verdict is an error, one run per scope",
          "[e2e][patrol]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();

  // Run 1: the model looks at the failed backup and confirms it, then reports a new problem.
  fake.Enqueue(Turn(ToolTurn("c1", "patrol_get_findings",
                             R"({"resource_id":"backup-job:db-hourly"})")));
  fake.Enqueue(Turn(ToolTurn("c2", "patrol_assess_finding",
                             R"({"finding_id":")" + kBackup +
                                 R"(","verdict":"present","evidence":"last_result failed"})")));
  fake.Enqueue(Turn(ToolTurn(
      "c3", "patrol_report_finding",
      R"({"resource_id":"backup-job:db-hourly","category":"backup","severity":"critical",)"
      R"("key":"backup-storage-unreachable","title":"db-hourly cannot reach its storage",)"
      R"("description":"Every run of db-hourly fails because backup-nfs is unreachable.",)"
      R"("evidence":"job log: storage unreachable","recommendation":"Restore the NFS mount."})")));
  fake.Enqueue(Turn(TextTurn("The db-hourly backup still fails; its storage is unreachable.")));
  rapidjson::Document first = WaitRun(port, token, StartRun(port, token));
  INFO(core::ToJsonString(first));
  CHECK(Str(first, "status") == "issues_found");
  CHECK(first["model_pass_ran"].GetBool());
  REQUIRE(first["finding_assessments"].Size() == 1);
  CHECK(Str(first["finding_assessments"][0], "finding_id") == kBackup);
  CHECK(Str(first["finding_assessments"][0], "verdict") == "present");
  CHECK(first["tool_call_count"].GetInt() == 3);
  CHECK(Str(first, "ai_analysis").find("db-hourly") != std::string::npos);
  const std::string reported = core::FindingIdFor("backup-job:db-hourly", core::Category::kBackup,
                                                  "backup-storage-unreachable");
  CHECK(Has(Strings(first["new_finding_ids"]), reported));
  // Monitor: no investigation, nothing planned.
  CHECK(first["remediations"].Empty());
  CHECK(fake.Requests().size() == 4);

  // Run 2: shown the backup finding, the model never gives a verdict.
  fake.Enqueue(Turn(ToolTurn("c1", "patrol_get_findings",
                             R"({"resource_id":"backup-job:db-hourly"})")));
  fake.Enqueue(Turn(TextTurn("All good.")));
  rapidjson::Document second = WaitRun(port, token, StartRun(port, token));
  CHECK(Str(second, "status") == "error");
  CHECK(Str(second, "error_summary").find("missing verdicts") != std::string::npos);
  CHECK(Str(second, "error_detail").find(kBackup) != std::string::npos);

  // Run 3 holds the scope while its model is slow: a second start is refused with its id.
  fake.Enqueue(Turn(TextTurn("Nothing new."), absl::Seconds(2)));
  const std::string slow = StartRun(port, token);
  const Reply busy = Send(port, "POST", "/api/ai/patrol/run", token);
  CHECK(busy.status == 409);
  CHECK(ErrorCode(busy.body) == "patrol_already_running");
  CHECK(Str(Json(busy.body)["details"], "current_run_id") == slow);
  rapidjson::Document st = Json(Send(port, "GET", "/api/ai/patrol/status", token).body);
  CHECK(st["running"].GetBool());
  CHECK(Str(WaitRun(port, token, slow), "status") == "issues_found");
  // No action was ever planned in monitor.
  CHECK(Json(Send(port, "GET", "/api/actions", token).body)["actions"].Empty());
  CHECK(Json(Send(port, "GET", "/api/actions?view=settled", token).body)["actions"].Empty());
}

TEST_CASE("assisted fixes a low_risk fault and verifies it, never an elevated or locked one",
          "[e2e][patrol]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();
  const Reply set = Send(port, "PUT", "/api/ai/patrol/autonomy", token,
                         R"({"autonomy_level":"assisted","investigation_budget":8})");
  REQUIRE(set.status == 200);
  CHECK(Str(Json(set.body), "effective_autonomy_level") == "assisted");
  // The db-hourly backup job is locked against automatic remediation.
  REQUIRE(Send(port, "PUT", "/api/resources/backup-job%3Adb-hourly/operator-state", token,
               R"({"resourceId":"backup-job:db-hourly","intentionallyOffline":false,)"
               R"("neverAutoRemediate":true})")
              .status == 200);

  // Run 1, scoped to db-01: the model proposes a reboot, an elevated capability.
  fake.Enqueue(Turn(TextTurn("db-01 is under memory pressure.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             R"({"resource_id":"vm:105","capability":"restart",)"
                             R"("params":{"mode":"reboot"},"rationale":"memory at 96%"})")));
  fake.Enqueue(Turn(TextTurn("Proposed a reboot of db-01.")));
  rapidjson::Document scoped =
      WaitRun(port, token, StartRun(port, token, R"({"resource_ids":["vm:105"]})"));
  INFO(core::ToJsonString(scoped));
  const rapidjson::Value* reboot = RemediationFor(scoped, kDbMemory);
  REQUIRE(reboot != nullptr);
  CHECK(Str(*reboot, "outcome") == "fix_queued");
  CHECK(Str(*reboot, "action_state") == "pending_approval");

  // Run 2, the fleet, investigated in id order: the worker (start, low_risk), db-hourly
  // (run-now, low_risk but locked), postfix (no proposal).
  fake.Enqueue(Turn(TextTurn("Five findings.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             kProposeWorkerStart)));
  fake.Enqueue(Turn(TextTurn("Proposed starting the worker.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             kProposeBackupRerun)));
  fake.Enqueue(Turn(TextTurn("Proposed running the backup again.")));
  fake.Enqueue(Turn(TextTurn("postfix needs a human to read its journal.")));
  rapidjson::Document run = WaitRun(port, token, StartRun(port, token));
  INFO(core::ToJsonString(run));
  const rapidjson::Value* worker = RemediationFor(run, kWorker);
  REQUIRE(worker != nullptr);
  CHECK(Str(*worker, "outcome") == "fix_verified");
  CHECK(Str(*worker, "execution") == "succeeded");
  CHECK(Str(*worker, "verification") == "confirmed");
  const rapidjson::Value* backup = RemediationFor(run, kBackup);
  REQUIRE(backup != nullptr);
  CHECK(Str(*backup, "outcome") == "fix_queued");
  CHECK(Str(*backup, "action_state") == "planned");
  CHECK(Str(*backup, "note").find("never_auto_remediate") != std::string::npos);
  CHECK(Str(*RemediationFor(run, kPostfix), "outcome") == "no_proposal");

  // The worker's action verified independently; only it ever reached the fleet.
  const Reply detail =
      Send(port, "GET", "/api/actions/" + Str(*worker, "action_id"), token);
  REQUIRE(detail.status == 200);
  CHECK(detail.body.find(R"("evidenceClass":"independent")") != std::string::npos);
  const Reply settled = Send(port, "GET", "/api/actions?view=settled", token);
  REQUIRE(settled.status == 200);
  rapidjson::Document done = Json(settled.body);
  REQUIRE(done["actions"].Size() == 1);
  CHECK(Str(done["actions"][0], "state") == "completed");

  // The next run re-checks the worker through the verifier: the finding resolves.
  fake.Enqueue(Turn(TextTurn("Quiet.")));
  rapidjson::Document after = WaitRun(port, token, StartRun(port, token));
  CHECK(Has(Strings(after["resolved_finding_ids"]), kWorker));
}

TEST_CASE("a service and a pool whose ids hold a slash are locked over HTTP and Patrol obeys",
          "[e2e][patrol]") {
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
  // The client encodes each id as one path segment ("/" -> %2F); the server decodes it once.
  const std::string postfix = "/api/resources/service%3Apve2%2Fpostfix/operator-state";
  const std::string pool = "/api/resources/storage%3Apve1%2Flocal-zfs/operator-state";
  for (const auto& [path, id] : {std::pair{postfix, std::string("service:pve2/postfix")},
                                 std::pair{pool, std::string("storage:pve1/local-zfs")}}) {
    const Reply locked = Send(port, "PUT", path, token,
                              R"({"resourceId":")" + id +
                                  R"(","intentionallyOffline":false,"neverAutoRemediate":true})");
    INFO(path << " -> " << locked.body);
    REQUIRE(locked.status == 200);
    const Reply read = Send(port, "GET", path, token);
    REQUIRE(read.status == 200);
    rapidjson::Document state = Json(read.body);
    CHECK(Str(state, "canonicalId") == id);
    CHECK(state["neverAutoRemediate"].GetBool());
  }
  // The context of a slash id is reachable the same way.
  CHECK(Send(port, "GET", "/api/agent/resource-context/service%3Apve2%2Fpostfix", token).status ==
        200);

  // Hostile spellings are refused before any handler and lock nothing.
  const std::vector<std::string> hostile = {
      "service%3Apve2%2F..%2Fpostfix",  // a dot segment inside the id
      "..%2F..%2Fetc%2Fpasswd",
      "service%3Apve2%252Fnginx",  // double encoding decodes once, to a literal "%2F"
      "service%3Apve2%2Fnginx%00",
      "service%3Apve2%2F%2Fnginx",
      "%2Fservice%3Apve2",
      "service%3Apve2%5Cnginx",
      "service%3Apve2%2F" + std::string(300, 'a')};
  for (const std::string& id : hostile) {
    for (const char* method : {"PUT", "GET", "DELETE"}) {
      const Reply reply =
          Send(port, method, "/api/resources/" + id + "/operator-state", token,
               std::string(method) == "PUT"
                   ? R"({"resourceId":"service:pve2/nginx","intentionallyOffline":false,)"
                     R"("neverAutoRemediate":true})"
                   : "");
      INFO(method << " " << id << " -> " << reply.body);
      CHECK(reply.status == 400);
      CHECK(ErrorCode(reply.body) == "invalid_request");
    }
  }
  CHECK(ErrorCode(Send(port, "GET", "/api/resources/service%3Apve2%2Fnginx/operator-state",
                       token)
                      .body) == "operator_state_not_set");
  CHECK(Send(port, "GET", postfix, token).status == 200);  // still locked

  // Assisted Patrol would restart the crash-looping postfix (low_risk), but it is locked.
  fake.Enqueue(Turn(TextTurn("postfix is crash-looping.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             R"({"resource_id":"service:pve2/postfix","capability":"restart",)"
                             R"("rationale":"postfix keeps crashing"})")));
  fake.Enqueue(Turn(TextTurn("Proposed restarting postfix.")));
  rapidjson::Document run = WaitRun(
      port, token, StartRun(port, token, R"({"resource_ids":["service:pve2/postfix"]})"));
  INFO(core::ToJsonString(run));
  const rapidjson::Value* held = RemediationFor(run, kPostfix);
  REQUIRE(held != nullptr);
  CHECK(Str(*held, "outcome") == "fix_queued");
  CHECK(Str(*held, "note").find("never_auto_remediate") != std::string::npos);
  CHECK_FALSE(core::GetMember(*held, "execution"));
  CHECK(Json(Send(port, "GET", "/api/actions?view=settled", token).body)["actions"].Empty());

  // The note names the lock, nothing else held it; the lock clears by the same encoded id.
  REQUIRE(Send(port, "DELETE", postfix, token).status == 200);
  CHECK(ErrorCode(Send(port, "GET", postfix, token).body) == "operator_state_not_set");
  CHECK(Send(port, "GET", pool, token).status == 200);
}

TEST_CASE("Autopilot without an acknowledgement acts as approval", "[e2e][patrol]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  const std::string robot = MintToken(dir.path(), kScopes, "robot", "agent");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();
  // An agent cannot record the acknowledgement; a human PUT without one saves full.
  const Reply agent = Send(port, "PUT", "/api/ai/patrol/autonomy", robot,
                           R"({"autonomy_level":"full","acknowledgement_id":"ack-1"})");
  CHECK(ErrorCode(agent.body) == "invalid_autonomy_level");
  const Reply set =
      Send(port, "PUT", "/api/ai/patrol/autonomy", token, R"({"autonomy_level":"full"})");
  REQUIRE(set.status == 200);
  rapidjson::Document autonomy = Json(set.body);
  CHECK(Str(autonomy, "requested_autonomy_level") == "full");
  CHECK(Str(autonomy, "effective_autonomy_level") == "approval");
  CHECK_FALSE(autonomy["full_mode_unlocked"].GetBool());

  fake.Enqueue(Turn(TextTurn("The worker exited.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             kProposeWorkerStart)));
  fake.Enqueue(Turn(TextTurn("Proposed starting the worker.")));
  rapidjson::Document run = WaitRun(
      port, token, StartRun(port, token, R"({"resource_ids":["app-container:worker"]})"));
  INFO(core::ToJsonString(run));
  CHECK(Str(run, "autonomy_level") == "approval");
  const rapidjson::Value* worker = RemediationFor(run, kWorker);
  REQUIRE(worker != nullptr);
  CHECK(Str(*worker, "outcome") == "fix_queued");
  CHECK(Str(*worker, "action_state") == "planned");
  CHECK_FALSE(core::GetMember(*worker, "execution"));
}

TEST_CASE("a human's Autopilot acknowledgement unlocks full, an agent's is refused, and revoking "
          "clamps back to approval",
          "[e2e][patrol]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  const std::string reader = MintToken(dir.path(), "monitoring:read,ai:execute", "reader");
  const std::string robot = MintToken(dir.path(), kScopes, "robot", "agent");
  const std::string acks = "/api/ai/patrol/autonomy/acknowledgements";
  auto unlocked = [&](int port) {
    rapidjson::Document a = Json(Send(port, "GET", "/api/ai/patrol/autonomy", token).body);
    return a["full_mode_unlocked"].GetBool() && Str(a, "effective_autonomy_level") == "full";
  };
  auto server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  int port = server->port();
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token, R"({"autonomy_level":"full"})")
              .status == 200);

  // Refused, each with its stable code, and nothing recorded.
  const Reply by_agent = Send(port, "POST", acks, robot, R"({"acknowledgement_id":"ops-1"})");
  CHECK(by_agent.status == 403);
  CHECK(ErrorCode(by_agent.body) == "autopilot_acknowledgement_forbidden");
  CHECK(ErrorCode(Send(port, "POST", acks, reader, R"({"acknowledgement_id":"ops-1"})").body) ==
        "missing_scope");
  for (const std::string& body :
       {std::string(""), std::string("{"), std::string("[]"), std::string("{}"),
        std::string(R"({"acknowledgement_id":""})"), std::string(R"({"acknowledgement_id":" "})"),
        std::string(R"({"acknowledgement_id":7})"),
        std::string(R"({"acknowledgement_id":"ops-1","actor_id":"tok_boss"})"),
        std::string(R"({"acknowledgement_id":"a\u001bb"})"),
        std::string(R"({"acknowledgement_id":")") + std::string(129, 'a') + "\"}"}) {
    const Reply reply = Send(port, "POST", acks, token, body);
    INFO(body << " -> " << reply.body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_autopilot_acknowledgement");
  }
  CHECK_FALSE(unlocked(port));

  // A human records it once; repeating it changes nothing.
  const Reply created =
      Send(port, "POST", acks, token, R"({"acknowledgement_id":"ops-2026-11-30"})");
  INFO(created.body);
  REQUIRE(created.status == 201);
  rapidjson::Document first = Json(created.body);
  CHECK(first["created"].GetBool());
  CHECK(Str(first["acknowledgement"], "acknowledgement_id") == "ops-2026-11-30");
  CHECK(Str(first["acknowledgement"], "actor_id").rfind("tok_", 0) == 0);
  CHECK(Str(first["autonomy"], "effective_autonomy_level") == "full");
  const Reply repeated =
      Send(port, "POST", acks, token, R"({"acknowledgement_id":"ops-2026-11-30"})");
  REQUIRE(repeated.status == 200);
  rapidjson::Document second = Json(repeated.body);
  CHECK_FALSE(second["created"].GetBool());
  CHECK(Str(second["acknowledgement"], "acknowledged_at") ==
        Str(first["acknowledgement"], "acknowledged_at"));

  // It is stored: a restarted server still runs Autopilot.
  CHECK(server->Stop() == "exited 0");
  server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  port = server->port();
  CHECK(unlocked(port));

  // Full acts as full: the exited worker is started and verified with no human in the loop.
  fake.Enqueue(Turn(TextTurn("The worker exited.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             kProposeWorkerStart)));
  fake.Enqueue(Turn(TextTurn("Proposed starting the worker.")));
  rapidjson::Document run = WaitRun(
      port, token, StartRun(port, token, R"({"resource_ids":["app-container:worker"]})"));
  INFO(core::ToJsonString(run));
  CHECK(Str(run, "autonomy_level") == "full");
  const rapidjson::Value* worker = RemediationFor(run, kWorker);
  REQUIRE(worker != nullptr);
  CHECK(Str(*worker, "outcome") == "fix_verified");
  CHECK(Str(*worker, "verification") == "confirmed");

  // Revoking: an agent may not, an unknown id or a bad body is refused, a human revokes.
  const std::string mine = acks + "/ops-2026-11-30";
  CHECK(ErrorCode(Send(port, "DELETE", mine, robot).body) == "autopilot_acknowledgement_forbidden");
  const Reply unknown = Send(port, "DELETE", acks + "/ops-1999", token);
  CHECK(unknown.status == 404);
  CHECK(ErrorCode(unknown.body) == "autopilot_acknowledgement_not_found");
  for (const char* body : {"{", R"({"reason":7})", R"({"reason":"x","by":"y"})", "[]"}) {
    const Reply reply = Send(port, "DELETE", mine, token, body);
    INFO(body << " -> " << reply.body);
    CHECK(ErrorCode(reply.body) == "invalid_autopilot_acknowledgement");
  }
  CHECK(ErrorCode(Send(port, "DELETE", acks + "/..%2Fops", token).body) == "invalid_request");
  CHECK(unlocked(port));
  const Reply revoked = Send(port, "DELETE", mine, token, R"({"reason":"change freeze"})");
  INFO(revoked.body);
  REQUIRE(revoked.status == 200);
  rapidjson::Document r = Json(revoked.body);
  CHECK(r["revoked"].GetBool());
  CHECK(Str(r["revocation"], "reason") == "change freeze");
  CHECK(Str(r["autonomy"], "effective_autonomy_level") == "approval");
  rapidjson::Document after = Json(Send(port, "GET", "/api/ai/patrol/autonomy", token).body);
  CHECK(Str(after, "requested_autonomy_level") == "full");
  CHECK(Str(after, "effective_autonomy_level") == "approval");
  CHECK_FALSE(after.HasMember("autopilot_acknowledgement"));
  CHECK(Str(after["autopilot_revocation"], "acknowledgement_id") == "ops-2026-11-30");
  CHECK(Send(port, "DELETE", mine, token).status == 404);

  // Approval behaviour again: the failed backup's low-risk re-run waits for a human.
  fake.Enqueue(Turn(TextTurn("The backup failed.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action",
                             kProposeBackupRerun)));
  fake.Enqueue(Turn(TextTurn("Proposed running the backup again.")));
  rapidjson::Document clamped = WaitRun(
      port, token, StartRun(port, token, R"({"resource_ids":["backup-job:db-hourly"]})"));
  INFO(core::ToJsonString(clamped));
  CHECK(Str(clamped, "autonomy_level") == "approval");
  const rapidjson::Value* backup = RemediationFor(clamped, kBackup);
  REQUIRE(backup != nullptr);
  CHECK(Str(*backup, "outcome") == "fix_queued");
  CHECK_FALSE(core::GetMember(*backup, "execution"));
  CHECK(server->Stop() == "exited 0");
}

TEST_CASE("the schedule starts full runs on its own and shutdown stays prompt", "[e2e][patrol]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "1s"}});
  CHECK(server.Log().find("patrol every 1s") != std::string::npos);
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  std::string scheduled;
  while (scheduled.empty() && absl::Now() < deadline) {
    const rapidjson::Document runs = Json(Send(server.port(), "GET", "/api/ai/patrol/runs",
                                               token).body);
    for (const rapidjson::Value& r : runs.GetArray()) {
      if (Str(r, "trigger_reason") == "scheduled" && Str(r, "status") != "running") {
        scheduled = Str(r, "id");
      }
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  REQUIRE_FALSE(scheduled.empty());
  rapidjson::Document st = Json(Send(server.port(), "GET", "/api/ai/patrol/status", token).body);
  CHECK(st["enabled"].GetBool());
  CHECK(st["interval_ms"].GetInt() == 1000);
  const absl::Time stop_started = absl::Now();
  CHECK(server.Stop() == "exited 0");
  CHECK(absl::Now() - stop_started < absl::Seconds(5));
  // A bad interval is refused at start-up.
  const Captured bad = RunCommand({ServerBinary(), "--data-dir", dir.path(), "--listen",
                                   "127.0.0.1:0", "--patrol-interval", "15"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--patrol-interval") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
