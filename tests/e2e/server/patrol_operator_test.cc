// Issue 28, items 7 and 4, end to end: the real pulse-server on the shipped demo fleet (db-01,
// vm:105, is staged under memory pressure; web-01, vm:101, sits near 48 % memory). Patrol's
// thresholds are settings (GET/PUT /api/settings/patrol): a change reaches the next run
// without a restart, a per-resource override beats its type's, which beats the defaults; bad
// bodies are refused with invalid_request and change nothing; each change is audited. An
// operator's note on a resource (PUT /api/ai/notes/resources/{id}, listed by GET
// /api/ai/notes) reaches the prompt of a Patrol pass over that resource, redacted, and not the
// prompt of a pass over another; bad note requests are refused with their code.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kScopes[] = "ai:execute,ai:chat,settings:write,monitoring:read,monitoring:write";

const std::string kDbMemory =
    core::FindingIdFor("vm:105", core::Category::kPerformance, "memory-high");
const std::string kWebMemory =
    core::FindingIdFor("vm:101", core::Category::kPerformance, "memory-high");

// Starts a manual run (full, or the body's scope) and waits (30 s at most) for its record.
rapidjson::Document RunPatrol(int port, const std::string& token, const std::string& body = "") {
  const Reply started = Send(port, "POST", "/api/ai/patrol/run", token, body);
  INFO(started.body);
  REQUIRE(started.status == 200);
  const std::string id = Str(Json(started.body), "run_id");
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

// The open finding with this id in the findings list: its severity, or "" when absent.
std::string SeverityOf(int port, const std::string& token, const std::string& id) {
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  const rapidjson::Document findings = Json(list.body);
  for (const rapidjson::Value& f : findings.GetArray()) {
    if (Str(f, "id") == id) {
      return Str(f, "severity");
    }
  }
  return "";
}

std::vector<std::string> ThresholdAudit(const std::string& data_dir) {
  SQLite::Database db(data_dir + "/pulse.db", SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT details_json FROM audit_log WHERE category = 'settings' AND "
                      "event = 'patrol_thresholds_changed' ORDER BY seq");
  std::vector<std::string> out;
  while (q.executeStep()) {
    out.push_back(q.getColumn(0).getString());
  }
  return out;
}

Reply PutThresholds(int port, const std::string& token, const std::string& body) {
  return Send(port, "PUT", "/api/settings/patrol", token, body);
}

TEST_CASE("Patrol thresholds set at runtime decide the next run's findings without a restart",
          "[e2e][server][patrol][thresholds]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});

  // Before any change: the built-in levels.
  const Reply initial = Send(server.port(), "GET", "/api/settings/patrol", token);
  REQUIRE(initial.status == 200);
  const rapidjson::Document shown = Json(initial.body);
  const rapidjson::Value& defaults = shown["thresholds"]["defaults"];
  CHECK(defaults["memory"]["warning"].GetDouble() == 90);
  CHECK(defaults["memory"]["critical"].GetDouble() == 98);
  CHECK(defaults["disk"]["warning"].GetDouble() == 85);
  CHECK(shown["thresholds"]["resources"].ObjectEmpty());

  // VMs warn at 30 % memory and are critical at 40 %, but db-01 (vm:105) only above 99.5 %.
  const Reply put = PutThresholds(
      server.port(), token,
      R"({"thresholds":{"resource_types":{"vm":{"memory":{"warning":30,"critical":40}}},)"
      R"("resources":{"vm:105":{"memory":{"warning":99.5,"critical":99.9}}}}})");
  INFO(put.body);
  REQUIRE(put.status == 200);
  CHECK(Str(Json(put.body)["thresholds"], "updated_by").rfind("tok_", 0) == 0);
  RunPatrol(server.port(), token);
  CHECK(SeverityOf(server.port(), token, kDbMemory).empty());
  CHECK(SeverityOf(server.port(), token, kWebMemory) == "critical");

  // Without the override, db-01 is flagged by the vm levels on the next run: critical.
  REQUIRE(PutThresholds(server.port(), token,
                        R"({"thresholds":{"resource_types":{"vm":{"memory":)"
                        R"({"warning":30,"critical":40}}}}})")
              .status == 200);
  RunPatrol(server.port(), token);
  CHECK(SeverityOf(server.port(), token, kDbMemory) == "critical");

  // The settings survive a restart and each change was audited with what changed.
  const std::string before = Send(server.port(), "GET", "/api/settings/patrol", token).body;
  server.Stop();
  ServerProcess again(dir.path(), {.args = {"--patrol-interval", "0"}});
  CHECK(Send(again.port(), "GET", "/api/settings/patrol", token).body == before);
  const std::vector<std::string> audit = ThresholdAudit(dir.path());
  REQUIRE(audit.size() == 2);
  CHECK(audit[0].find("resource_types") != std::string::npos);
  CHECK(audit[1].find("resources") != std::string::npos);
}

TEST_CASE("bad Patrol threshold bodies are refused with invalid_request and change nothing",
          "[e2e][server][patrol][thresholds][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  const std::string agent = MintToken(dir.path(), "*", "claude", "agent");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "bob");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const std::string before = Send(server.port(), "GET", "/api/settings/patrol", token).body;
  const std::vector<std::string> bodies = {
      "not json",
      "[]",
      "{}",
      R"({"thresholds":5})",
      R"({"thresholds":{},"extra":1})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":95,"critical":90}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":90,"critical":90}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":-1,"critical":90}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":50,"critical":101}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":"50","critical":90}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":50}}}})",
      R"({"thresholds":{"defaults":{"gpu":{"warning":50,"critical":90}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":50,"critical":90,"x":1}}}})",
      R"({"thresholds":{"resource_types":{"VM":{"cpu":{"warning":50,"critical":90}}}}})",
      R"({"thresholds":{"resource_types":{"vm; drop":{"cpu":{"warning":50,"critical":90}}}}})",
      R"({"thresholds":{"resource_types":{"vm":{}}}})",
      R"({"thresholds":{"resources":{"not an id":{"cpu":{"warning":50,"critical":90}}}}})",
      R"({"thresholds":{"resources":{"vm:":{"cpu":{"warning":50,"critical":90}}}}})",
      R"({"thresholds":{"resources":{"vm:105":{"cpu":{"warning":50,"critical":90}},)"
      R"("vm:105":{"cpu":{"warning":10,"critical":20}}}}})",
      R"({"thresholds":{"defaults":{"cpu":{"warning":50,"critical":90}},)"
      R"("defaults":{"cpu":{"warning":10,"critical":20}}}})",
      std::string(5000, '[') + std::string(5000, ']'),
  };
  for (const std::string& body : bodies) {
    const Reply put = PutThresholds(server.port(), token, body);
    INFO(body.substr(0, 160) << " -> " << put.status << " " << put.body);
    CHECK(put.status == 400);
    CHECK(ErrorCode(put.body) == "invalid_request");
  }
  // Too many overrides.
  std::string many = R"({"thresholds":{"resource_types":{)";
  for (int i = 0; i < 65; ++i) {
    many += (i > 0 ? "," : "") + std::string("\"t") + std::to_string(i) +
            R"(":{"cpu":{"warning":50,"critical":90}})";
  }
  many += "}}}";
  CHECK(ErrorCode(PutThresholds(server.port(), token, many).body) == "invalid_request");
  // Only a human token with settings:write changes them.
  CHECK(ErrorCode(PutThresholds(server.port(), agent,
                                R"({"thresholds":{"defaults":{"cpu":{"warning":1,"critical":2}}}})")
                      .body) == "human_token_required");
  CHECK(ErrorCode(PutThresholds(server.port(), reader,
                                R"({"thresholds":{"defaults":{"cpu":{"warning":1,"critical":2}}}})")
                      .body) == "missing_scope");
  CHECK(Send(server.port(), "GET", "/api/settings/patrol", reader).status == 200);
  CHECK(Send(server.port(), "GET", "/api/settings/patrol", token).body == before);
  CHECK(ThresholdAudit(dir.path()).empty());
  CHECK(server.Running());
}

ScriptedResponse TextOnly(const std::string& text) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(TextTurn(text));
  return response;
}

// The body of the newest chat request the provider saw; REQUIREs one.
std::string LastPrompt(const FakeProviderServer& fake) {
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE_FALSE(requests.empty());
  return requests.back().body;
}

TEST_CASE("an operator note on a resource is in the Patrol prompt for it, redacted, and no other",
          "[e2e][server][patrol][notes]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(
      dir.path(), {.args = {"--provider", "openai-compatible", "--provider-base-url",
                            fake.base_url() + "/v1", "--model", "test-model", "--provider-locality",
                            "remote", "--patrol-interval", "0"}});
  const int port = server.port();

  const Reply set = Send(port, "PUT", "/api/ai/notes/resources/vm:105", token,
                         R"({"note":"db-01 is a cold spare; its memory is expected. )"
                         R"(password=hunter2-e2e-28"})");
  INFO(set.body);
  REQUIRE(set.status == 200);
  CHECK(Str(Json(set.body), "resource_id") == "vm:105");
  const rapidjson::Document listed = Json(Send(port, "GET", "/api/ai/notes", token).body);
  REQUIRE(listed["resource_notes"].Size() == 1);
  CHECK(Str(listed["resource_notes"][0], "resource_id") == "vm:105");
  CHECK(Str(listed["resource_notes"][0], "note").find("cold spare") != std::string::npos);

  // A pass over db-01 is told the note, its secret redacted like all outbound context to a
  // model that is not served locally.
  fake.Enqueue(TextOnly("Nothing new on db-01."));
  RunPatrol(port, token, R"({"resource_ids":["vm:105"]})");
  std::string prompt = LastPrompt(fake);
  CHECK(prompt.find("db-01 is a cold spare") != std::string::npos);
  CHECK(prompt.find("hunter2-e2e-28") == std::string::npos);
  CHECK(prompt.find("[REDACTED]") != std::string::npos);
  // A pass over web-01 is not.
  fake.Enqueue(TextOnly("Nothing new on web-01."));
  RunPatrol(port, token, R"({"resource_ids":["vm:101"]})");
  prompt = LastPrompt(fake);
  CHECK(prompt.find("vm:101") != std::string::npos);
  CHECK(prompt.find("cold spare") == std::string::npos);

  // The note is the resource's operator-state note: the rest of the state is kept.
  REQUIRE(Send(port, "PUT", "/api/resources/vm:105/operator-state", token,
               R"({"resourceId":"vm:105","intentionallyOffline":false,"neverAutoRemediate":true,)"
               R"("note":"db-01 is a cold spare"})")
              .status == 200);
  REQUIRE(Send(port, "PUT", "/api/ai/notes/resources/vm:105", token,
               R"({"note":"db-01 is a cold spare until March"})")
              .status == 200);
  const rapidjson::Document state =
      Json(Send(port, "GET", "/api/resources/vm:105/operator-state", token).body);
  CHECK(state["neverAutoRemediate"].GetBool());
  CHECK(Str(state, "note") == "db-01 is a cold spare until March");

  // Deleted: gone from the list and from the next pass's prompt.
  const Reply deleted = Send(port, "DELETE", "/api/ai/notes/resources/vm:105", token);
  REQUIRE(deleted.status == 200);
  CHECK(Json(deleted.body)["deleted"].GetBool());
  CHECK_FALSE(Json(Send(port, "DELETE", "/api/ai/notes/resources/vm:105", token).body)["deleted"]
                  .GetBool());
  CHECK(Json(Send(port, "GET", "/api/ai/notes", token).body)["resource_notes"].Empty());
  fake.Enqueue(TextOnly("Nothing new on db-01."));
  RunPatrol(port, token, R"({"resource_ids":["vm:105"]})");
  CHECK(LastPrompt(fake).find("cold spare") == std::string::npos);
}

TEST_CASE("bad note requests are refused with their code and change nothing",
          "[e2e][server][patrol][notes][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "bob");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  REQUIRE(Send(port, "PUT", "/api/ai/notes/resources/vm:101", token, R"({"note":"keep"})").status ==
          200);
  const std::string before = Send(port, "GET", "/api/ai/notes", token).body;
  const std::vector<std::string> bodies = {
      "not json",
      "[]",
      "{}",
      R"({"note":""})",
      R"({"note":5})",
      R"({"note":null})",
      R"({"note":"x","extra":1})",
      R"({"note":"a","note":"b"})",
      R"({"note":")" + std::string(2049, 'n') + "\"}",
      R"({"note":"bad \ud800 surrogate"})",
      std::string(5000, '[') + std::string(5000, ']'),
  };
  for (const std::string& body : bodies) {
    const Reply put = Send(port, "PUT", "/api/ai/notes/resources/vm:101", token, body);
    INFO(body.substr(0, 120) << " -> " << put.status << " " << put.body);
    CHECK(put.status == 400);
    CHECK(ErrorCode(put.body) == "invalid_request");
  }
  // A resource the fleet does not have; an id that is not canonical (refused by the path's
  // rule before the handler).
  const Reply unknown =
      Send(port, "PUT", "/api/ai/notes/resources/vm:99999", token, R"({"note":"hello"})");
  CHECK(unknown.status == 404);
  CHECK(ErrorCode(unknown.body) == "resource_not_found");
  const Reply malformed =
      Send(port, "PUT", "/api/ai/notes/resources/not-an-id", token, R"({"note":"hello"})");
  CHECK(malformed.status == 400);
  CHECK(ErrorCode(malformed.body) == "invalid_request");
  CHECK(ErrorCode(
            Send(port, "PUT", "/api/ai/notes/resources/vm:101", reader, R"({"note":"x"})").body) ==
        "missing_scope");
  CHECK(ErrorCode(Send(port, "DELETE", "/api/ai/notes/resources/vm:101", reader).body) ==
        "missing_scope");
  CHECK(Send(port, "GET", "/api/ai/notes", reader).body == before);
  CHECK(server.Running());
}

}  // namespace
}  // namespace pulse::testing::e2e
