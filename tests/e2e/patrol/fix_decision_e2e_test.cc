// A human's decision on a Patrol fix reaches the finding (docs/patrol.md "Finding states"): the
// real pulse-server with the demo fleet and the loopback fake provider. Patrol at `approval`
// queues an elevated reboot of db-01 (vm:105) for a human; the human approves and executes it
// (fix_verified), or rejects it (fix_rejected) through /api/actions. A restart between the
// decision and its projection onto the finding is reconciled when the server starts again.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

const std::string kDbMemory =
    core::FindingIdFor("vm:105", core::Category::kPerformance, "memory-high");
constexpr char kScopes[] =
    "ai:execute,settings:write,monitoring:read,monitoring:write,actions:approve,actions:execute";
constexpr char kProposeReboot[] = R"({"resource_id":"vm:105","capability":"restart",)"
                                  R"("params":{"mode":"reboot"},"rationale":"memory at 96%"})";

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

ServerOptions WithProvider(const FakeProviderServer& fake) {
  return {.args = {"--provider", "openai-compatible", "--provider-base-url",
                   fake.base_url() + "/v1", "--model", "test-model", "--patrol-interval", "0"}};
}

// Runs Patrol over db-01 with the model proposing the reboot; returns the queued action's id.
std::string QueueReboot(int port, const std::string& token, FakeProviderServer& fake) {
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token, R"({"autonomy_level":"approval"})")
              .status == 200);
  fake.Enqueue(Turn(TextTurn("db-01 is under memory pressure.")));
  fake.Enqueue(Turn(ToolTurn("p1", "patrol_propose_action", kProposeReboot)));
  fake.Enqueue(Turn(TextTurn("Proposed a reboot of db-01.")));
  const Reply started =
      Send(port, "POST", "/api/ai/patrol/run", token, R"({"resource_ids":["vm:105"]})");
  REQUIRE(started.status == 200);
  const std::string run_id = Str(Json(started.body), "run_id");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  rapidjson::Document run;
  while (absl::Now() < deadline) {
    run = Json(Send(port, "GET", "/api/ai/patrol/runs/" + run_id, token).body);
    if (Str(run, "status") != "running") {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  INFO(core::ToJsonString(run));
  for (const rapidjson::Value& fix : run["remediations"].GetArray()) {
    if (Str(fix, "finding_id") == kDbMemory) {
      CHECK(Str(fix, "outcome") == "fix_queued");
      CHECK(Str(fix, "action_state") == "pending_approval");
      return Str(fix, "action_id");
    }
  }
  FAIL("no remediation for db-01's memory finding");
  return {};
}

// The finding as the findings list serves it (hidden and resolved ones included).
rapidjson::Document FindingOf(int port, const std::string& token, const std::string& id) {
  const Reply list = Send(port, "GET",
                          "/api/ai/patrol/findings?resource_id=vm:105&include_resolved=1&"
                          "include_hidden=1",
                          token);
  REQUIRE(list.status == 200);
  const rapidjson::Document all = Json(list.body);
  for (const rapidjson::Value& f : all.GetArray()) {
    if (Str(f, "id") == id) {
      rapidjson::Document out;
      out.CopyFrom(f, out.GetAllocator());
      return out;
    }
  }
  FAIL("finding " << id << " is not listed: " << list.body);
  return rapidjson::Document();
}

// How many lifecycle events of the finding say its fix outcome was projected from the action.
int Projections(const rapidjson::Value& finding) {
  int n = 0;
  if (const rapidjson::Value* lifecycle = core::GetMember(finding, "lifecycle")) {
    for (const rapidjson::Value& e : lifecycle->GetArray()) {
      const rapidjson::Value* metadata = core::GetMember(e, "metadata");
      n += Str(e, "type") == "investigation_record_updated" && metadata != nullptr &&
           core::GetMember(*metadata, "action_state") != nullptr;
    }
  }
  return n;
}

std::string Decide(int port, const std::string& token, const std::string& action,
                   const std::string& outcome) {
  const Reply decided =
      Send(port, "POST", "/api/actions/" + action + "/decision", token,
           R"({"outcome":")" + outcome + R"(","reason":"operator decision in the e2e test"})");
  INFO(decided.body);
  REQUIRE(decided.status == 200);
  return decided.body;
}

TEST_CASE("a human approving and executing a Patrol fix moves its finding to fix_verified",
          "[e2e][patrol][fix-decision]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  auto server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  int port = server->port();
  const std::string action = QueueReboot(port, token, fake);

  rapidjson::Document queued = FindingOf(port, token, kDbMemory);
  CHECK(Str(queued, "investigation_outcome") == "fix_queued");
  CHECK(Str(queued, "loop_state") == "remediation_planned");
  CHECK(Str(queued, "fix_action_id") == action);

  // Approved but not yet run: still planned, never an all-clear.
  Decide(port, token, action, "approved");
  CHECK(Str(FindingOf(port, token, kDbMemory), "investigation_outcome") == "fix_queued");

  const Reply executed = Send(port, "POST", "/api/actions/" + action + "/execute", token, "{}");
  INFO(executed.body);
  REQUIRE(executed.status == 200);
  const rapidjson::Document detail = Json(Send(port, "GET", "/api/actions/" + action, token).body);
  CHECK(Str(detail["audit"], "state") == "completed");
  CHECK(Str(detail["audit"]["result"]["verification"], "status") == "confirmed");

  rapidjson::Document verified = FindingOf(port, token, kDbMemory);
  INFO(core::ToJsonString(verified));
  CHECK(Str(verified, "investigation_outcome") == "fix_verified");
  CHECK(Str(verified, "loop_state") == "resolved");
  const int projections = Projections(verified);
  CHECK(projections >= 1);

  // Idempotent: a restart reconciles nothing more, the log gains no event.
  CHECK(server->Stop() == "exited 0");
  server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  port = server->port();
  rapidjson::Document again = FindingOf(port, token, kDbMemory);
  CHECK(Str(again, "investigation_outcome") == "fix_verified");
  CHECK(Projections(again) == projections);
  CHECK(server->Log().find("projected the outcome") == std::string::npos);
  CHECK(server->Stop() == "exited 0");
}

TEST_CASE(
    "a human rejecting a Patrol fix moves its finding to fix_rejected, and a restart "
    "before the projection is reconciled at start-up",
    "[e2e][patrol][fix-decision]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  auto server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  int port = server->port();
  const std::string action = QueueReboot(port, token, fake);
  CHECK(server->Stop() == "exited 0");

  // The finding as it stood before the decision, read from the stopped server's database.
  core::StoredFinding before;
  {
    auto storage = adapters::storage::OpenSqliteStorage(dir.path());
    REQUIRE(storage.ok());
    absl::StatusOr<core::StoredFinding> read = (*storage)->findings->Get(kDbMemory);
    REQUIRE(read.ok());
    before = *read;
    CHECK(before.finding.investigation_outcome == core::InvestigationOutcome::kFixQueued);
  }

  server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  port = server->port();
  Decide(port, token, action, "rejected");
  rapidjson::Document rejected = FindingOf(port, token, kDbMemory);
  INFO(core::ToJsonString(rejected));
  CHECK(Str(rejected, "investigation_outcome") == "fix_rejected");
  CHECK(Str(rejected, "loop_state") == "needs_attention");
  CHECK(Projections(rejected) == 1);
  // Nothing reached the fleet.
  const rapidjson::Document detail = Json(Send(port, "GET", "/api/actions/" + action, token).body);
  CHECK(Str(detail["audit"], "state") == "rejected");
  CHECK(server->Stop() == "exited 0");

  // The process died after the decision committed and before the finding was written: the
  // finding on disk is the one from before the decision.
  {
    auto storage = adapters::storage::OpenSqliteStorage(dir.path());
    REQUIRE(storage.ok());
    absl::StatusOr<core::StoredFinding> now = (*storage)->findings->Get(kDbMemory);
    REQUIRE(now.ok());
    REQUIRE((*storage)->findings->Put(before.finding, now->version).ok());
  }

  server = std::make_unique<ServerProcess>(dir.path(), WithProvider(fake));
  port = server->port();
  rapidjson::Document reconciled = FindingOf(port, token, kDbMemory);
  INFO(core::ToJsonString(reconciled));
  CHECK(Str(reconciled, "investigation_outcome") == "fix_rejected");
  CHECK(Str(reconciled, "loop_state") == "needs_attention");
  CHECK(Projections(reconciled) == 1);
  CHECK(server->Log().find("projected the outcome of 1 Patrol fix") != std::string::npos);
  CHECK(server->Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
