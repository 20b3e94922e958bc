// Patrol's status tells the truth (docs/patrol.md "Status"): the real pulse-server with the demo
// fleet and, where a model is involved, the loopback fake provider. The status derives
// runtime_state and blocked_reason from the live runtime inputs (provider, the Patrol model's
// preflight, the schedule), dates last_patrol_at by the END of the last full run (a scoped run
// moves only last_scoped_patrol_at and last_activity_at), and a provider that keeps failing
// raises the "Patrol cannot use its model" finding, which clears when the model answers again.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/core/model/finding.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kScopes[] = "ai:execute,settings:write,monitoring:read,monitoring:write";
const std::string kRuntimeFinding = core::FindingIdFor(
    core::kRuntimeFindingResourceId, core::Category::kReliability, core::kRuntimeFindingKey);

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// The provider refuses the key: not retried, a provider failure of the Watch pass.
ScriptedResponse Unauthorized() {
  ScriptedResponse response =
      JsonResponse(401, R"({"error":{"message":"invalid api key","type":"auth_error"}})");
  response.path = "/v1/chat/completions";
  return response;
}

std::vector<std::string> ProviderArgs(const FakeProviderServer& fake,
                                      const std::string& interval = "0") {
  return {"--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
          "--model",    "test-model",        "--patrol-interval",   interval};
}

rapidjson::Document Status(int port, const std::string& token) {
  const Reply reply = Send(port, "GET", "/api/ai/patrol/status", token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Json(reply.body);
}

// Starts a run (scoped to `resources_json` unless empty) and returns its finished record.
rapidjson::Document RunToEnd(int port, const std::string& token,
                             const std::string& resources_json = "") {
  const Reply started =
      Send(port, "POST", "/api/ai/patrol/run", token,
           resources_json.empty() ? std::string() : R"({"resource_ids":)" + resources_json + "}");
  INFO(started.body);
  REQUIRE(started.status == 200);
  const std::string id = Str(Json(started.body), "run_id");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    rapidjson::Document run = Json(Send(port, "GET", "/api/ai/patrol/runs/" + id, token).body);
    if (Str(run, "status") != "running") {
      return run;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  FAIL("the Patrol run did not finish within 30 s");
  return rapidjson::Document();
}

// The runtime finding as the findings list serves it (resolved included); null when absent.
std::string RuntimeFinding(int port, const std::string& token) {
  const Reply list =
      Send(port, "GET", "/api/ai/patrol/findings?resource_id=ai-service&include_resolved=1", token);
  REQUIRE(list.status == 200);
  const rapidjson::Document all = Json(list.body);
  for (const rapidjson::Value& f : all.GetArray()) {
    if (Str(f, "id") == kRuntimeFinding) {
      return core::ToJsonString(f);
    }
  }
  return {};
}

TEST_CASE(
    "Patrol's status derives blocked from the live inputs and dates the last full run by "
    "its end",
    "[e2e][patrol][patrol-status]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  {
    // No provider: blocked, pointing at where to configure one.
    ServerProcess server(dir.path(), {.args = {"--patrol-interval", "1h"}});
    const int port = server.port();
    rapidjson::Document st = Status(port, token);
    CHECK(Str(st, "runtime_state") == "blocked");
    CHECK(Str(st, "blocked_reason") == "no_provider");
    CHECK(Str(st, "blocked_message").find("Provider & Models") != std::string::npos);
    CHECK_FALSE(Str(st, "next_patrol_at").empty());
    CHECK_FALSE(st.HasMember("last_patrol_at"));

    // A scoped run advances the activity, not the full patrol.
    const rapidjson::Document scoped = RunToEnd(port, token, R"(["vm:105"])");
    st = Status(port, token);
    CHECK_FALSE(st.HasMember("last_patrol_at"));
    CHECK(Str(st, "last_scoped_patrol_at") == Str(scoped, "completed_at"));
    CHECK(Str(st, "last_activity_at") == Str(scoped, "completed_at"));

    // A full run: last_patrol_at is when it ENDED.
    const rapidjson::Document full = RunToEnd(port, token);
    INFO(core::ToJsonString(full));
    st = Status(port, token);
    CHECK(Str(st, "last_patrol_at") == Str(full, "completed_at"));
    CHECK(Str(st, "last_full_run_id") == Str(full, "id"));
    CHECK(Str(st, "last_patrol_at") != Str(full, "started_at"));
    CHECK(Str(st, "last_scoped_patrol_at") == Str(scoped, "completed_at"));
    CHECK(Str(st, "last_activity_at") == Str(full, "completed_at"));
    CHECK(server.Stop() == "exited 0");
  }

  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  {
    // A provider and a schedule: idle, the next run time given; the last full run is still
    // the stored one.
    ServerProcess server(dir.path(), {.args = ProviderArgs(fake, "1h")});
    const int port = server.port();
    rapidjson::Document st = Status(port, token);
    CHECK(Str(st, "runtime_state") == "idle");
    CHECK_FALSE(st.HasMember("blocked_reason"));
    CHECK_FALSE(Str(st, "next_patrol_at").empty());
    CHECK_FALSE(Str(st, "last_patrol_at").empty());

    // A Patrol model that answers without calling the preflight's tool blocks Patrol; one that
    // calls it unblocks it.
    fake.Enqueue(Turn(TextTurn("I would rather just talk.")));
    REQUIRE(
        Send(port, "PUT", "/api/settings/ai", token, R"({"patrol_model":"chatty-model"})").status ==
        200);
    st = Status(port, token);
    CHECK(Str(st, "runtime_state") == "blocked");
    CHECK(Str(st, "blocked_reason") == "preflight_failed");
    CHECK(Str(st, "blocked_message").find("chatty-model") != std::string::npos);
    fake.Enqueue(Turn(ToolTurn("call_pf", "pulse_preflight_echo", R"({"word":"ready"})")));
    REQUIRE(
        Send(port, "PUT", "/api/settings/ai", token, R"({"patrol_model":"tool-model"})").status ==
        200);
    st = Status(port, token);
    CHECK(Str(st, "runtime_state") == "idle");
    CHECK(server.Stop() == "exited 0");
  }
  {
    // No schedule: paused.
    ServerProcess server(dir.path(), {.args = ProviderArgs(fake, "0")});
    rapidjson::Document st = Status(server.port(), token);
    CHECK(Str(st, "runtime_state") == "blocked");
    CHECK(Str(st, "blocked_reason") == "paused");
    CHECK_FALSE(st.HasMember("next_patrol_at"));
    CHECK(server.Stop() == "exited 0");
  }
}

TEST_CASE(
    "a provider that keeps failing raises 'Patrol cannot use its model', which operators "
    "cannot dismiss and which clears when the model answers",
    "[e2e][patrol][patrol-status]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), {.args = ProviderArgs(fake)});
  const int port = server.port();

  for (int failure = 1; failure <= 3; ++failure) {
    fake.Enqueue(Unauthorized());
    const rapidjson::Document run = RunToEnd(port, token, R"(["vm:105"])");
    INFO(core::ToJsonString(run));
    CHECK(Str(run, "status") == "error");
    const rapidjson::Document st = Status(port, token);
    CHECK(st["model_failures"]["consecutive"].GetInt() == failure);
    CHECK(Str(st["model_failures"], "last_reason").rfind("provider_", 0) == 0);
    // Below the threshold (3) there is no finding yet.
    CHECK(RuntimeFinding(port, token).empty() == (failure < 3));
  }
  const std::string raised = RuntimeFinding(port, token);
  INFO(raised);
  CHECK(raised.find(R"("title":"Patrol cannot use its model")") != std::string::npos);
  CHECK(raised.find(R"("loop_state":"detected")") != std::string::npos);
  CHECK(raised.find("resolved_at") == std::string::npos);
  CHECK(raised.find("3 consecutive failures") != std::string::npos);

  // It describes Patrol, not the fleet: an operator cannot dismiss it.
  const Reply dismiss = Send(
      port, "POST", "/api/ai/patrol/dismiss", token,
      R"({"finding_id":")" + kRuntimeFinding + R"(","reason":"not_an_issue","note":"go away"})");
  CHECK(ErrorCode(dismiss.body) == "finding_action_not_allowed");

  // The model answers again: the finding resolves and the count starts afresh.
  fake.Enqueue(Turn(TextTurn("db-01 is under memory pressure; nothing else to report.")));
  const rapidjson::Document ok = RunToEnd(port, token, R"(["vm:105"])");
  INFO(core::ToJsonString(ok));
  CHECK(ok["model_pass_ran"].GetBool());
  const std::string cleared = RuntimeFinding(port, token);
  INFO(cleared);
  CHECK(cleared.find("resolved_at") != std::string::npos);
  CHECK(cleared.find(R"("loop_state":"resolved")") != std::string::npos);
  const rapidjson::Document st = Status(port, token);
  CHECK(st["model_failures"]["consecutive"].GetInt() == 0);
  CHECK_FALSE(Str(st["model_failures"], "last_succeeded_at").empty());
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
