// pulse-cli patrol: run (POST /api/ai/patrol/run, which answers at once with a run id, then the
// run record read back until the run has finished), runs, status and autonomy get|set. The
// commands are projected from the manifest capabilities (run_patrol, get_patrol_run, ...),
// never from paths of their own. First against the real pulse-server with the demo fleet and
// no provider (a deterministic-only run finds the staged faults), then against a scripted
// server for what the real one does not easily produce (a record of another shape, a failed
// run, a hostile analysis).
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

std::vector<std::string> Args(int port, std::vector<std::string> rest) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

TEST_CASE("patrol run against the real server waits for the run and shows its record",
          "[e2e][cli][patrol]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "ai:execute,settings:write", "operator");
  const std::string runner = MintToken(dir.path(), "ai:execute", "runner");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const CliOptions auth{.env = {TokenEnv(token)}};
  const int port = server.port();
  const std::string worker =
      core::FindingIdFor("app-container:worker", core::Category::kReliability, "container-exited");
  const std::string backup =
      core::FindingIdFor("backup-job:db-hourly", core::Category::kBackup, "backup-failed");

  // --json: exactly the finished run record, the staged faults among its new findings.
  const Captured json = RunCli(Args(port, {"--json", "patrol", "run"}), auth);
  INFO(json.out << json.err);
  REQUIRE(json.exit_code == 0);
  rapidjson::Document record = Json(json.out);
  CHECK(Str(record, "status") == "issues_found");
  CHECK(Str(record, "trigger_reason") == "manual");
  CHECK(Str(record, "model_pass_skipped_reason") == "no_provider_configured");
  std::string found;
  for (const rapidjson::Value& id : record["new_finding_ids"].GetArray()) {
    found += std::string(id.GetString()) + " ";
  }
  CHECK(found.find(worker) != std::string::npos);
  CHECK(found.find(backup) != std::string::npos);
  const std::string first_run = Str(record, "id");
  // The record printed is the one the server keeps.
  CHECK(Json(Send(port, "GET", "/api/ai/patrol/runs/" + first_run, token).body)["status"] ==
        record["status"]);

  // Human form, scoped: the record's fields, not the acceptance message.
  const Captured human = RunCli(
      Args(port, {"patrol", "run", "--resource", "app-container:worker"}), auth);
  INFO(human.out << human.err);
  REQUIRE(human.exit_code == 0);
  CHECK(human.out.find("issues_found") != std::string::npos);
  CHECK(std::regex_search(human.out, std::regex("resources checked +1\n")));
  CHECK(human.out.find("still present") != std::string::npos);
  CHECK(human.out.find("no_provider_configured") != std::string::npos);
  CHECK(human.out.find("Scoped Patrol run started") == std::string::npos);

  // A resource id holding a slash travels as one %2F-encoded segment, as pulse-mcp sends it.
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const Captured service = RunCli(Args(port, {"--json", "fleet", "show", "service:pve2/postfix"}),
                                  {.env = {TokenEnv(reader)}});
  INFO(service.out << service.err);
  REQUIRE(service.exit_code == 0);
  CHECK(Json(service.out)["context"].IsObject());
  CHECK(service.out.find("service:pve2/postfix") != std::string::npos);

  // An unknown scope is the server's stable code, exit 1.
  const Captured unknown =
      RunCli(Args(port, {"patrol", "run", "--resource", "vm:99999"}), auth);
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("patrol_scope_unresolved") != std::string::npos);

  // runs and status.
  const Captured runs = RunCli(Args(port, {"patrol", "runs"}), auth);
  INFO(runs.out << runs.err);
  REQUIRE(runs.exit_code == 0);
  CHECK(runs.out.rfind("RUN", 0) == 0);
  CHECK(runs.out.find(first_run) != std::string::npos);
  CHECK(runs.out.find("2 runs") != std::string::npos);
  const Captured runs_json = RunCli(Args(port, {"--json", "patrol", "runs"}), auth);
  REQUIRE(runs_json.exit_code == 0);
  CHECK(Json(runs_json.out).Size() == 2);
  const Captured status = RunCli(Args(port, {"patrol", "status"}), auth);
  INFO(status.out << status.err);
  REQUIRE(status.exit_code == 0);
  CHECK(status.out.find("manual runs only") != std::string::npos);
  CHECK(status.out.find("no provider configured") != std::string::npos);
  CHECK(status.out.find("monitor") != std::string::npos);

  // autonomy: get (the default), set; set needs settings:write.
  const Captured get = RunCli(Args(port, {"patrol", "autonomy"}), auth);
  INFO(get.out << get.err);
  REQUIRE(get.exit_code == 0);
  CHECK(get.out.find("effective level") != std::string::npos);
  CHECK(get.out.find("monitor") != std::string::npos);
  const Captured set =
      RunCli(Args(port, {"--json", "patrol", "autonomy", "set", "assisted", "--budget", "99"}),
             auth);
  INFO(set.out << set.err);
  REQUIRE(set.exit_code == 0);
  rapidjson::Document autonomy = Json(set.out);
  CHECK(Str(autonomy, "effective_autonomy_level") == "assisted");
  CHECK(autonomy["investigation_budget"].GetInt() == 30);  // clamped by the server
  const Captured full = RunCli(Args(port, {"patrol", "autonomy", "set", "full"}), auth);
  INFO(full.out << full.err);
  REQUIRE(full.exit_code == 0);
  CHECK(full.out.find("approval") != std::string::npos);  // no acknowledgement: approval
  // A human acknowledges Autopilot from the terminal, then revokes it with a reason.
  const Captured ack =
      RunCli(Args(port, {"patrol", "autonomy", "acknowledge", "ops-cli-1"}), auth);
  INFO(ack.out << ack.err);
  REQUIRE(ack.exit_code == 0);
  CHECK(ack.out.find("ops-cli-1") != std::string::npos);
  CHECK(Str(Json(Send(port, "GET", "/api/ai/patrol/autonomy", token).body),
            "effective_autonomy_level") == "full");
  const Captured revoke = RunCli(
      Args(port, {"--json", "patrol", "autonomy", "revoke", "ops-cli-1", "--reason", "freeze"}),
      auth);
  INFO(revoke.out << revoke.err);
  REQUIRE(revoke.exit_code == 0);
  rapidjson::Document revoked = Json(revoke.out);
  CHECK(Str(revoked["revocation"], "reason") == "freeze");
  CHECK(Str(revoked["autonomy"], "effective_autonomy_level") == "approval");
  const Captured again = RunCli(Args(port, {"patrol", "autonomy", "revoke", "ops-cli-1"}), auth);
  CHECK(again.exit_code == 1);
  CHECK(again.err.find("autopilot_acknowledgement_not_found") != std::string::npos);
  const Captured denied = RunCli(Args(port, {"patrol", "autonomy", "set", "monitor"}),
                                 {.env = {TokenEnv(runner)}});
  CHECK(denied.exit_code == 4);
  CHECK(denied.err.find("missing_scope") != std::string::npos);
  CHECK(RunCli(Args(port, {"patrol", "autonomy", "set", "yolo"}), auth).exit_code == 2);
  CHECK(Str(Json(Send(port, "GET", "/api/ai/patrol/autonomy", token).body),
            "requested_autonomy_level") == "full");
}

constexpr char kAccepted[] =
    R"({"success":true,"accepted":true,"message":"Patrol run started","run_id":"run_7",)"
    R"("started_at":"2026-11-30T04:00:00Z"})";
constexpr char kRunning[] = R"({"id":"run_7","status":"running","trigger_reason":"manual"})";
constexpr char kRun[] =
    R"({"id":"run_7","trigger_reason":"manual","status":"issues_found","resources_checked":12,)"
    R"("new_findings":2,"existing_findings":1,"resolved_findings":0,)"
    R"("findings_summary":"1 warning, 1 critical","model_pass_ran":true,)"
    R"("remediations":[{"finding_id":"f1","outcome":"fix_queued","action_id":"act_1",)"
    R"("note":"waits for a human"}],)"
    R"("ai_analysis":"db-01 is short of memory.\u001b[2J"})";

ScriptedResponse JsonReply(const std::string& path, int status, const std::string& body) {
  ScriptedResponse r;
  r.path = path;
  r.status = status;
  r.content_type = "application/json";
  r.framing = BodyFraming::kContentLength;
  r.chunks = {Chunk(body)};
  return r;
}

TEST_CASE("patrol run sends its scope, polls the record and shows it safely",
          "[e2e][cli][patrol]") {
  auto server = FakeProviderServer::Start();
  REQUIRE(server.ok());
  FakeProviderServer& fake = **server;
  fake.Enqueue(JsonReply("/api/ai/patrol/run", 200, kAccepted));
  fake.Enqueue(JsonReply("/api/ai/patrol/runs/run_7", 200, kRunning));
  fake.Enqueue(JsonReply("/api/ai/patrol/runs/run_7", 200, kRun));
  const std::vector<std::string> base = {"--server", fake.base_url()};
  const CliOptions auth{.env = {TokenEnv("tok")}};

  std::vector<std::string> scoped = base;
  scoped.insert(scoped.end(), {"patrol", "run", "--resource", "vm:105", "--resource", "vm:106",
                               "--type", "vm"});
  const Captured human = RunCli(scoped, auth);
  INFO(human.out << human.err);
  CHECK(human.exit_code == 0);
  CHECK(human.out.find("run_7") != std::string::npos);
  CHECK(human.out.find("issues_found") != std::string::npos);
  CHECK(human.out.find("resources checked  12") != std::string::npos);
  CHECK(human.out.find("new findings       2") != std::string::npos);
  CHECK(human.out.find("1 warning, 1 critical") != std::string::npos);
  CHECK(human.out.find("fix_queued") != std::string::npos);
  CHECK(human.out.find("db-01 is short of memory.^[[2J") != std::string::npos);
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].Header("X-API-Token") == "tok");
  const rapidjson::Document body = Json(requests[0].body);
  REQUIRE(body["resource_ids"].Size() == 2);
  CHECK(std::string(body["resource_ids"][1].GetString()) == "vm:106");
  CHECK(std::string(body["resource_types"][0].GetString()) == "vm");
  CHECK(requests[1].method == "GET");
  CHECK(requests[2].path == "/api/ai/patrol/runs/run_7");

  // A run that ended in error: the record is still the one document, the exit code is 1.
  fake.Enqueue(JsonReply("/api/ai/patrol/run", 200, kAccepted));
  fake.Enqueue(JsonReply("/api/ai/patrol/runs/run_7", 200,
                         R"({"id":"run_7","status":"error","error_summary":"missing verdicts"})"));
  std::vector<std::string> json = base;
  json.insert(json.end(), {"--json", "patrol", "run"});
  const Captured failed = RunCli(json, auth);
  INFO(failed.out << failed.err);
  CHECK(failed.exit_code == 1);
  CHECK(Str(Json(failed.out), "status") == "error");
  CHECK(failed.err.find("patrol_run_failed: missing verdicts") != std::string::npos);
  CHECK(Json(fake.Requests()[3].body).ObjectEmpty());  // no scope: the whole fleet

  // An acceptance without a run id is not usable.
  fake.Enqueue(JsonReply("/api/ai/patrol/run", 200, R"({"unexpected":{"shape":[1,2]}})"));
  std::vector<std::string> plain = base;
  plain.insert(plain.end(), {"patrol", "run"});
  const Captured other = RunCli(plain, auth);
  INFO(other.out << other.err);
  CHECK(other.exit_code == 1);
  CHECK(other.err.find("invalid_response") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
