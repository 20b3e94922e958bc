// Finding identity end to end (issue 20 item 9): the real pulse-server on the shipped demo
// fleet, whose second and third nodes carry the same names as the first (`local-zfs` on
// pve1/pve2/pve3, `nginx` on pve1 and pve2). A finding is keyed by the canonical resource id,
// never by the display name, so a problem on pve2 is never folded into pve1's finding. Driven
// over HTTP: Patrol runs (deterministic triage, and the scripted model's reports through the
// loopback fake provider), read back from the run records and the findings list.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kScopes[] = "ai:execute,settings:write,monitoring:read,monitoring:write";

const std::string kPool1 =
    core::FindingIdFor("storage:pve1/local-zfs", core::Category::kCapacity, "storage-capacity");
const std::string kPool2 =
    core::FindingIdFor("storage:pve2/local-zfs", core::Category::kCapacity, "storage-capacity");

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

// Runs Patrol over `body`'s scope and returns the finished run record.
rapidjson::Document Run(int port, const std::string& token, const std::string& body) {
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

// The active findings, by id: their resource ids.
std::vector<std::pair<std::string, std::string>> Findings(int port, const std::string& token) {
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  std::vector<std::pair<std::string, std::string>> out;
  const rapidjson::Document doc = Json(list.body);
  for (const rapidjson::Value& f : doc.GetArray()) {
    out.emplace_back(Str(f, "id"), Str(f, "resource_id"));
  }
  return out;
}

bool HasFinding(const std::vector<std::pair<std::string, std::string>>& findings,
                const std::string& id, const std::string& resource) {
  return std::find(findings.begin(), findings.end(), std::pair{id, resource}) != findings.end();
}

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

TEST_CASE("pve2's local-zfs is its own finding, not folded into pve1's of the same name",
          "[e2e][patrol][identity]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();

  // pve1's pool is filling: its finding exists first.
  rapidjson::Document first = Run(port, token, R"({"resource_ids":["storage:pve1/local-zfs"]})");
  INFO(core::ToJsonString(first));
  REQUIRE(Has(Strings(first["new_finding_ids"]), kPool1));

  // A scoped run on pve2, whose pool of the same name sits at 85 %, reports pve2's problem.
  rapidjson::Document second =
      Run(port, token, R"({"resource_ids":["storage:pve2/local-zfs"]})");
  INFO(core::ToJsonString(second));
  CHECK(Str(second, "status") == "issues_found");
  CHECK(Str(second, "findings_summary") != "All healthy");
  CHECK(Strings(second["new_finding_ids"]) == std::vector<std::string>{kPool2});
  CHECK_FALSE(Has(Strings(second["existing_finding_ids"]), kPool1));
  CHECK(Strings(second["finding_ids"]) == std::vector<std::string>{kPool2});

  const auto findings = Findings(port, token);
  CHECK(HasFinding(findings, kPool1, "storage:pve1/local-zfs"));
  CHECK(HasFinding(findings, kPool2, "storage:pve2/local-zfs"));
  // pve1's finding was raised once: the pve2 report did not land on it.
  const rapidjson::Document listed =
      Json(Send(port, "GET", "/api/ai/patrol/findings", token).body);
  for (const rapidjson::Value& f : listed.GetArray()) {
    if (Str(f, "id") == kPool1) {
      CHECK(f["times_raised"].GetInt() == 1);
    }
  }
}

TEST_CASE("nginx crash-looping on two nodes, reported in the same words, is two findings",
          "[e2e][patrol][identity]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(
      dir.path(), {.args = {"--provider", "openai-compatible", "--provider-base-url",
                            fake.base_url() + "/v1", "--model", "test-model",
                            "--patrol-interval", "0"}});
  const int port = server.port();

  auto report = [](const std::string& node) {
    return R"({"resource_id":"service:)" + node +
           R"(/nginx","category":"reliability","severity":"warning",)"
           R"("key":"nginx-crash-loop","title":"nginx is crash-looping",)"
           R"("description":"nginx restarts every few seconds.",)"
           R"("evidence":"journal: nginx.service: Main process exited, status=1",)"
           R"("recommendation":"Read the journal and fix the configuration."})";
  };
  fake.Enqueue(Turn(ToolTurn("r1", "patrol_report_finding", report("pve1"))));
  fake.Enqueue(Turn(ToolTurn("r2", "patrol_report_finding", report("pve2"))));
  fake.Enqueue(Turn(TextTurn("nginx is crash-looping on pve1 and on pve2.")));
  // (The handler fills each report's resource name, `nginx`, from the fleet.)
  rapidjson::Document run =
      Run(port, token, R"({"resource_ids":["service:pve1/nginx","service:pve2/nginx"]})");
  INFO(core::ToJsonString(run));
  const std::string nginx1 = core::FindingIdFor("service:pve1/nginx",
                                                core::Category::kReliability, "nginx-crash-loop");
  const std::string nginx2 = core::FindingIdFor("service:pve2/nginx",
                                                core::Category::kReliability, "nginx-crash-loop");
  const std::vector<std::string> found = Strings(run["new_finding_ids"]);
  CHECK(Has(found, nginx1));
  CHECK(Has(found, nginx2));
  const auto findings = Findings(port, token);
  CHECK(HasFinding(findings, nginx1, "service:pve1/nginx"));
  CHECK(HasFinding(findings, nginx2, "service:pve2/nginx"));
  CHECK(findings.size() == 2);
  CHECK(run["tool_call_count"].GetInt() == 2);
}

}  // namespace
}  // namespace pulse::testing::e2e
