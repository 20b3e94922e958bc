// Patrol respecting the operator, end to end (issue 28, items 1 and 3): the real pulse-server
// with the demo fleet (db-01, vm:105, is under memory pressure) and the loopback fake provider.
// An intentionally offline VM's finding is dismissed by intent and never investigated, and
// wakes with its history when the intent lifts; a maintenance window does the same until the
// first run after its end. The Watch pass starts from a bounded evidence summary and, after
// reading on every earlier turn, records its verdicts on the last one.
#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

const std::string kDbMemory =
    core::FindingIdFor("vm:105", core::Category::kPerformance, "memory-high");
const std::string kBackup =
    core::FindingIdFor("backup-job:db-hourly", core::Category::kBackup, "backup-failed");
constexpr char kScopes[] =
    "ai:execute,settings:write,monitoring:read,monitoring:write,"
    "actions:approve";
constexpr char kDbState[] = "/api/resources/vm%3A105/operator-state";

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

// Starts a run (scoped when `body` says so) and returns its record once it finished.
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

// db-01's memory finding as the findings route shows it, hidden ones included.
rapidjson::Document DbMemory(int port, const std::string& token) {
  const Reply list =
      Send(port, "GET", "/api/ai/patrol/findings?resource_id=vm%3A105&include_hidden=1", token);
  REQUIRE(list.status == 200);
  rapidjson::Document doc = Json(list.body);
  for (const rapidjson::Value& f : doc.GetArray()) {
    if (Str(f, "id") == kDbMemory) {
      rapidjson::Document one;
      one.CopyFrom(f, one.GetAllocator());
      return one;
    }
  }
  FAIL("db-01's memory finding is not listed");
  return rapidjson::Document();
}

bool Active(int port, const std::string& token) {
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings?resource_id=vm%3A105", token);
  REQUIRE(list.status == 200);
  return list.body.find(kDbMemory) != std::string::npos;
}

std::vector<std::string> EventTypes(const rapidjson::Value& finding) {
  std::vector<std::string> out;
  for (const rapidjson::Value& e : finding["lifecycle"].GetArray()) {
    out.push_back(Str(e, "type"));
  }
  return out;
}

std::string LastMeta(const rapidjson::Value& finding, const char* key) {
  const rapidjson::Value& events = finding["lifecycle"];
  const rapidjson::Value& last = events[events.Size() - 1];
  if (!last.HasMember("metadata") || !last["metadata"].HasMember(key)) {
    return "";
  }
  return Str(last["metadata"], key);
}

// How many of the fake provider's requests were an investigation of `finding`.
int Investigations(const FakeProviderServer& fake, const std::string& finding) {
  int n = 0;
  for (const RecordedRequest& r : fake.Requests()) {
    n += r.body.find("Investigate finding " + finding) != std::string::npos ? 1 : 0;
  }
  return n;
}

std::vector<std::string> OfferedTools(const RecordedRequest& request) {
  std::vector<std::string> names;
  rapidjson::Document body = Json(request.body);
  if (body.HasMember("tools")) {
    for (const rapidjson::Value& t : body["tools"].GetArray()) {
      names.push_back(Str(t["function"], "name"));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE(
    "an intentionally offline VM's finding is dismissed by intent and not investigated, "
    "and wakes with its history when the intent lifts or the window ends",
    "[e2e][patrol][operator_state]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();
  REQUIRE(Send(port, "PUT", "/api/ai/patrol/autonomy", token, R"({"autonomy_level":"approval"})")
              .status == 200);
  const std::string scoped = R"({"resource_ids":["vm:105"]})";

  // db-01 is declared intentionally offline before Patrol first sees it.
  REQUIRE(Send(port, "PUT", kDbState, token,
               R"({"resourceId":"vm:105","intentionallyOffline":true,"neverAutoRemediate":false})")
              .status == 200);
  fake.Enqueue(Turn(TextTurn("db-01 is offline on purpose.")));
  rapidjson::Document quiet = RunPatrol(port, token, scoped);
  INFO(core::ToJsonString(quiet));
  CHECK(Str(quiet, "status") == "healthy");
  CHECK(quiet["remediations"].Empty());
  CHECK(fake.Requests().size() == 1);  // the Watch pass only
  CHECK(Investigations(fake, kDbMemory) == 0);
  CHECK_FALSE(Active(port, token));
  rapidjson::Document held = DbMemory(port, token);
  CHECK(Str(held, "dismissed_reason") == "expected_behavior");
  CHECK(Str(held, "loop_state") == "dismissed");
  CHECK(EventTypes(held) == std::vector<std::string>{"detected", "dismissed"});
  CHECK(LastMeta(held, "operator_state_cause") == "intentionally_offline");

  // Lifted: the next run re-detects it, wakes it with its history and investigates it.
  REQUIRE(Send(port, "PUT", kDbState, token,
               R"({"resourceId":"vm:105","intentionallyOffline":false,"neverAutoRemediate":false})")
              .status == 200);
  fake.Enqueue(Turn(TextTurn("db-01 is back and under memory pressure.")));
  fake.Enqueue(Turn(TextTurn("db-01's memory pressure needs a human to size the VM.")));
  rapidjson::Document woke = RunPatrol(port, token, scoped);
  INFO(core::ToJsonString(woke));
  CHECK(Str(woke, "status") == "issues_found");
  CHECK(Investigations(fake, kDbMemory) == 1);
  REQUIRE(woke["remediations"].Size() == 1);
  CHECK(Str(woke["remediations"][0], "finding_id") == kDbMemory);
  CHECK(Active(port, token));
  rapidjson::Document awake = DbMemory(port, token);
  CHECK(EventTypes(awake) == std::vector<std::string>{"detected", "dismissed", "suppression_lifted",
                                                      "investigation_record_updated"});

  // A maintenance window from now for a few seconds: dismissed with its end, not investigated.
  const absl::Time end = absl::Now() + absl::Seconds(4);
  const std::string window = R"({"resourceId":"vm:105","intentionallyOffline":false,)"
                             R"("neverAutoRemediate":false,"maintenanceStartAt":")" +
                             core::FormatRfc3339(absl::Now() - absl::Seconds(5)) +
                             R"(","maintenanceEndAt":")" + core::FormatRfc3339(end) + R"("})";
  REQUIRE(Send(port, "PUT", kDbState, token, window).status == 200);
  fake.Enqueue(Turn(TextTurn("db-01 is in maintenance.")));
  rapidjson::Document maintained = RunPatrol(port, token, scoped);
  INFO(core::ToJsonString(maintained));
  CHECK(Str(maintained, "status") == "healthy");
  CHECK(maintained["remediations"].Empty());
  CHECK(Investigations(fake, kDbMemory) == 1);
  CHECK_FALSE(Active(port, token));
  rapidjson::Document during = DbMemory(port, token);
  CHECK(LastMeta(during, "operator_state_cause") == "maintenance_window");
  const std::optional<absl::Time> ends = core::ParseRfc3339(LastMeta(during, "maintenance_end_at"));
  REQUIRE(ends.has_value());
  CHECK(absl::AbsDuration(*ends - end) < absl::Seconds(1));

  // The first run after the window's end wakes it; the state itself was not touched.
  absl::SleepFor(end + absl::Milliseconds(300) - absl::Now());
  fake.Enqueue(Turn(TextTurn("db-01's maintenance is over.")));
  fake.Enqueue(Turn(TextTurn("Still under memory pressure; a human should look.")));
  rapidjson::Document after = RunPatrol(port, token, scoped);
  INFO(core::ToJsonString(after));
  CHECK(Investigations(fake, kDbMemory) == 2);
  CHECK(Active(port, token));
  const std::vector<std::string> history = EventTypes(DbMemory(port, token));
  REQUIRE(history.size() >= 3);
  CHECK(history[history.size() - 2] == "suppression_lifted");
}

TEST_CASE(
    "the Watch pass starts from the evidence and, after reading on every earlier turn, "
    "records its verdicts on the last",
    "[e2e][patrol][watch]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), WithProvider(fake));
  const int port = server.port();

  fake.Enqueue(
      Turn(ToolTurn("c1", "patrol_get_findings", R"({"resource_id":"backup-job:db-hourly"})")));
  fake.Enqueue(Turn(
      ToolTurn("c2", "pulse_query", R"({"action":"get","resource_id":"backup-job:db-hourly"})")));
  fake.Enqueue(Turn(ToolTurn("c3", "pulse_query", R"({"action":"get","resource_id":"vm:105"})")));
  fake.Enqueue(Turn(ToolTurn("c4", "patrol_assess_finding",
                             R"({"finding_id":")" + kBackup +
                                 R"(","verdict":"present","evidence":"last_result failed"})")));
  fake.Enqueue(Turn(TextTurn("The db-hourly backup still fails.")));
  rapidjson::Document run = RunPatrol(port, token);
  INFO(core::ToJsonString(run));
  CHECK(Str(run, "status") == "issues_found");
  CHECK(run["error_count"].GetInt() == 0);
  CHECK_FALSE(run.HasMember("error_summary"));
  REQUIRE(run["finding_assessments"].Size() == 1);
  CHECK(Str(run["finding_assessments"][0], "finding_id") == kBackup);
  CHECK(Str(run["finding_assessments"][0], "verdict") == "present");
  CHECK(Str(run, "ai_analysis") == "The db-hourly backup still fails.");

  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 5);
  // The seed holds the evidence: metrics against the thresholds and the known findings.
  const std::string& seed = requests[0].body;
  CHECK(seed.find("Evidence at the start of this run") != std::string::npos);
  CHECK(seed.find("- vm:105 ") != std::string::npos);
  CHECK(seed.find("memory_pct 9") != std::string::npos);
  CHECK(seed.find("(warning >= 90, critical >= 98: WARNING)") != std::string::npos);
  CHECK(seed.find("finding " + kBackup + " [backup-failed]") != std::string::npos);
  // Reads on turns 1-3; the last turn offers exactly the report and assess tools; the summary
  // after the write offers none.
  CHECK(OfferedTools(requests[2]).size() > 2);
  CHECK(OfferedTools(requests[3]) ==
        std::vector<std::string>{"patrol_assess_finding", "patrol_report_finding"});
  CHECK(requests[3].body.find("This is the final turn") != std::string::npos);
  CHECK(OfferedTools(requests[4]).empty());
}

}  // namespace
}  // namespace pulse::testing::e2e
