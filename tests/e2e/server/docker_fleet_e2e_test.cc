// pulse-server over a --fleet file holding a docker source, against a real private dockerd
// (tests/adapters/docker/private_dockerd.h): fleet-context lists the containers, a container
// that exits 1 under --restart on-failure reads exited with its restarts counted, and an
// operator plans, approves and executes `restart` on a healthy container, the observer
// confirming it by a new StartedAt, and Patrol (a run started by POST /api/ai/patrol/run) finds
// a container exiting 1 under --restart on-failure as crash-looping and the one whose retries
// ran out as exited (docs/patrol.md, the container rules).
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "docker_test_support.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

using docker::testing::Command;
using docker::testing::RunSpec;

std::string Attribute(int port, const std::string& token, const std::string& escaped_id,
                      const std::string& name) {
  const Reply reply = Send(port, "GET", "/api/agent/resource-context/" + escaped_id, token);
  REQUIRE(reply.status == 200);
  const rapidjson::Document doc = Json(reply.body);
  for (const rapidjson::Value& section : doc["contextSections"].GetArray()) {
    if (section.HasMember("facts") && section["facts"].HasMember(name.c_str())) {
      return Str(section["facts"], name.c_str());
    }
  }
  return "";
}

// Starts a Patrol run, waits for it to finish and answers whether the findings list then holds
// `finding_id`.
bool PatrolFinds(int port, const std::string& token, const std::string& finding_id) {
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
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  const rapidjson::Document findings = Json(list.body);
  for (const rapidjson::Value& f : findings.GetArray()) {
    if (Str(f, "id") == finding_id) {
      return true;
    }
  }
  return false;
}

TEST_CASE("pulse-server governs a restart on a docker source and the observer sees it",
          "[e2e][server][fleet][docker]") {
  PULSE_NEED_DOCKERD(daemon);
  REQUIRE(daemon->Run(Command({"sleep", "600"}, "e2e-web")).ok());
  RunSpec crashy = Command({"sh", "-c", "exit 1"}, "e2e-crashy");
  crashy.restart_policy = "on-failure";
  crashy.max_retries = 2;
  REQUIRE(daemon->Run(crashy).ok());
  // Restarted without end, with the Engine's growing back-off between the attempts.
  RunSpec looping = Command({"sh", "-c", "echo looping; exit 1"}, "e2e-loop");
  looping.restart_policy = "on-failure";
  REQUIRE(daemon->Run(looping).ok());

  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint()
                       << R"(", "allow_actions": true, "stop_grace_seconds": 0}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  const std::string patrol = MintToken(dir.path(), "ai:execute,monitoring:read", "patrol");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet}});
  const int port = server.port();

  const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  CHECK(context.body.find("app-container:e2e-web") != std::string::npos);
  CHECK(context.body.find("app-container:e2e-crashy") != std::string::npos);
  CHECK(context.body.find(R"("name":"docker1")") != std::string::npos);

  // The crash-looping container ends exited with code 1 after its two restarts (between its
  // second restart and its last exit it reads exit code 0).
  std::string restarts;
  std::string exit_code;
  for (int i = 0; i < 150 && (restarts != "2" || exit_code != "1"); ++i) {
    restarts = Attribute(port, reader, "app-container%3Ae2e-crashy", "restart_count");
    exit_code = Attribute(port, reader, "app-container%3Ae2e-crashy", "exit_code");
    if (restarts != "2" || exit_code != "1") {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  CHECK(restarts == "2");
  CHECK(exit_code == "1");

  // Plan, approve (another human), execute; the observer's inspect confirms a new StartedAt.
  const std::string started_before =
      Attribute(port, reader, "app-container%3Ae2e-web", "started_at");
  REQUIRE_FALSE(started_before.empty());
  const Reply planned =
      Send(port, "POST", "/api/actions/plan", alice,
           R"({"requestId":"e2e-docker-1","resourceId":"app-container:e2e-web",)"
           R"("capabilityName":"restart","params":{},"reason":"docker e2e","requestedBy":"x"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const rapidjson::Document plan = Json(planned.body);
  REQUIRE(plan["requiresApproval"].GetBool());
  const std::string id = Str(plan, "actionId");
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", bob,
                              R"({"outcome":"approved","reason":"docker e2e"})");
  INFO(approved.body);
  REQUIRE(approved.status == 200);
  const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
  INFO(executed.body);
  REQUIRE(executed.status == 200);
  const Reply detail = Send(port, "GET", "/api/actions/" + id, bob);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  INFO(detail.body);
  CHECK(Str(body["audit"], "state") == "completed");
  const rapidjson::Value& result = body["audit"]["result"];
  CHECK(Str(result["execution"], "status") == "succeeded");
  CHECK(Str(result["verification"], "status") == "confirmed");
  CHECK(Str(result["verification"], "evidenceClass") == "independent");
  const std::string started_after =
      Attribute(port, reader, "app-container%3Ae2e-web", "started_at");
  CHECK(started_after > started_before);

  // Patrol: the endless restarts are a crash loop (a restarting container with its restart
  // count at the threshold, or the count rising between two runs); the container whose retries
  // ran out is exited, not crash-looping.
  const std::string loop_finding = core::FindingIdFor(
      "app-container:e2e-loop", core::Category::kReliability, "container-crash-loop");
  bool loop_found = false;
  for (int i = 0; i < 30 && !loop_found; ++i) {
    loop_found = PatrolFinds(port, patrol, loop_finding);
    if (!loop_found) {
      absl::SleepFor(absl::Seconds(1));
    }
  }
  CHECK(loop_found);
  CHECK(PatrolFinds(port, patrol,
                    core::FindingIdFor("app-container:e2e-crashy", core::Category::kReliability,
                                       "container-exited")));
  CHECK_FALSE(
      PatrolFinds(port, patrol,
                  core::FindingIdFor("app-container:e2e-crashy", core::Category::kReliability,
                                     "container-crash-loop")));
  CHECK_FALSE(PatrolFinds(port, patrol,
                          core::FindingIdFor("app-container:e2e-web", core::Category::kReliability,
                                             "container-crash-loop")));

  CHECK(server.Stop() == "exited 0");
  REQUIRE(daemon->Remove("e2e-web").ok());
  REQUIRE(daemon->Remove("e2e-crashy").ok());
  REQUIRE(daemon->Remove("e2e-loop").ok());
}

TEST_CASE("a container recreated between approval and execute is plan drift and is not touched",
          "[e2e][server][fleet][docker][drift]") {
  PULSE_NEED_DOCKERD(daemon);
  REQUIRE(daemon->Run(Command({"sleep", "600"}, "e2e-drift")).ok());
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint()
                       << R"(", "allow_actions": true, "stop_grace_seconds": 0}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet}});
  const int port = server.port();

  const std::string old_id = Attribute(port, reader, "app-container%3Ae2e-drift", "container_id");
  REQUIRE_FALSE(old_id.empty());
  const Reply planned =
      Send(port, "POST", "/api/actions/plan", alice,
           R"({"requestId":"e2e-docker-drift","resourceId":"app-container:e2e-drift",)"
           R"("capabilityName":"restart","params":{},"reason":"docker drift","requestedBy":"x"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const std::string id = Str(Json(planned.body), "actionId");
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", bob,
                              R"({"outcome":"approved","reason":"docker drift"})");
  INFO(approved.body);
  REQUIRE(approved.status == 200);

  // Someone recreates the container under the same name; once Pulse sees the new one, the
  // approved plan no longer describes it.
  REQUIRE(daemon->Remove("e2e-drift").ok());
  REQUIRE(daemon->Run(Command({"sleep", "600"}, "e2e-drift")).ok());
  const auto recreated = daemon->client().Inspect("e2e-drift");
  REQUIRE(recreated.ok());
  std::string seen;
  for (int i = 0; i < 100 && seen != recreated->id; ++i) {
    seen = Attribute(port, reader, "app-container%3Ae2e-drift", "container_id");
    if (seen != recreated->id) {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  REQUIRE(seen == recreated->id);
  const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
  INFO(executed.body);
  CHECK(executed.status == 409);
  CHECK(ErrorCode(executed.body) == "action_plan_drift");
  const auto after = daemon->client().Inspect("e2e-drift");
  REQUIRE(after.ok());
  CHECK(after->started_at == recreated->started_at);
  CHECK(server.Stop() == "exited 0");
  REQUIRE(daemon->Remove("e2e-drift").ok());
}

// The payload of the first fleet.change frame for `resource_id` of change `kind`; empty when
// none has arrived.
std::string ChangePayload(const EventSubscriber& events, const std::string& resource_id,
                          const std::string& kind) {
  for (const AgentEventFrame& f : events.Frames()) {
    if (f.event != "fleet.change") {
      continue;
    }
    const rapidjson::Document doc = Json(f.data);
    const rapidjson::Value& payload = doc["payload"];
    if (Str(payload, "resourceId") == resource_id && Str(payload, "change") == kind) {
      return f.data;
    }
  }
  return "";
}

TEST_CASE("a container stopped through the Engine API reaches the agent event stream",
          "[e2e][server][fleet][docker][events]") {
  PULSE_NEED_DOCKERD(daemon);
  REQUIRE(daemon->Run(Command({"sleep", "600"}, "e2e-events")).ok());
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  // A demo source first: the docker source's ids that collide are namespaced, e2e-events not.
  std::ofstream(fleet) << R"({"sources": [{"name": "lab", "kind": "demo"},)"
                       << R"({"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint() << R"("}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet, "--patrol-interval", "0"}});
  EventSubscriber events(server.port(), reader);
  REQUIRE(events.WaitFor("stream.connected"));

  // Someone stops the container outside Pulse: the Engine's die (and stop) events arrive as
  // fleet.change events in the fleet's ids, naming the source.
  REQUIRE(daemon->client().Stop("e2e-events", absl::ZeroDuration(), absl::Seconds(30)).ok());
  std::string died;
  for (int i = 0; i < 100 && died.empty(); ++i) {
    died = ChangePayload(events, "app-container:e2e-events", "die");
    if (died.empty()) {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  INFO(died);
  REQUIRE_FALSE(died.empty());
  const rapidjson::Document doc = Json(died);
  CHECK(Str(doc, "kind") == "fleet.change");
  CHECK(Str(doc["payload"], "source") == "docker1");
  CHECK(Str(doc["payload"], "detail").rfind("exit code ", 0) == 0);
  CHECK_FALSE(Str(doc["payload"], "occurredAt").empty());
  CHECK(events.WaitFor("fleet.change"));
  // And a start of it through the Engine follows the same way.
  REQUIRE(daemon->client().Start("e2e-events", absl::Seconds(30)).ok());
  std::string started;
  for (int i = 0; i < 100 && started.empty(); ++i) {
    started = ChangePayload(events, "app-container:e2e-events", "start");
    if (started.empty()) {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  CHECK_FALSE(started.empty());
  CHECK(server.Stop() == "exited 0");
  REQUIRE(daemon->Remove("e2e-events").ok());
}

TEST_CASE("a flapping container starts one event-triggered Patrol run per cooldown",
          "[e2e][server][fleet][docker][events][fault]") {
  PULSE_NEED_DOCKERD(daemon);
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint() << R"("}]})";
  const std::string token = MintToken(dir.path(), "ai:execute", "operator");
  // A one-second window, and a cooldown longer than the test: the container's first deaths
  // start one run, every later one is held by the cooldown.
  ServerProcess server(
      dir.path(),
      ServerOptions{{"--fleet", fleet, "--patrol-interval", "0", "--patrol-event-window", "1s",
                     "--patrol-event-cooldown", "1h", "--patrol-event-runs-per-hour", "60"}});
  // Dies half a second after each start; the daemon restarts it (with its growing backoff).
  RunSpec flapping = Command({"sh", "-c", "sleep 0.5; exit 1"}, "e2e-flapping");
  flapping.restart_policy = "always";
  REQUIRE(daemon->Run(flapping).ok());

  int deaths = 0;
  rapidjson::Document triggers;
  const absl::Time deadline = absl::Now() + absl::Seconds(40);
  while (absl::Now() < deadline) {
    const Reply reply = Send(server.port(), "GET", "/api/ai/patrol/triggers", token);
    INFO(reply.body);
    REQUIRE(reply.status == 200);
    triggers = Json(reply.body);
    deaths = 0;
    for (const rapidjson::Value& e : triggers["ledger"].GetArray()) {
      deaths += Str(e, "resource_id") == "app-container:e2e-flapping" && Str(e, "change") == "die"
                    ? 1
                    : 0;
    }
    if (deaths >= 6) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
  INFO(core::ToJsonString(triggers));
  REQUIRE(deaths >= 6);
  CHECK(triggers["enabled"].GetBool());
  CHECK(triggers["cooldown_seconds"].GetInt64() == 3600);
  // Every death is in the ledger: the first window's started the one run, the rest were held.
  std::set<std::string> run_ids;
  int cooled = 0;
  for (const rapidjson::Value& e : triggers["ledger"].GetArray()) {
    if (Str(e, "resource_id") != "app-container:e2e-flapping") {
      continue;
    }
    const std::string decision = Str(e, "decision");
    if (Str(e, "change") != "die") {
      CHECK(decision == "ignored");  // start, restart: nothing broke
    } else if (decision == "started") {
      run_ids.insert(Str(e, "run_id"));
    } else {
      CHECK(decision == "cooldown");
      CHECK(Str(e, "reason").find("cooldown") != std::string::npos);
      ++cooled;
    }
  }
  CHECK(run_ids.size() == 1);
  CHECK(cooled >= 4);
  CHECK(triggers["runs_in_last_hour"].GetInt64() == 1);
  // The run itself: scoped to the container, trigger event.
  rapidjson::Document runs = Json(Send(server.port(), "GET", "/api/ai/patrol/runs", token).body);
  int event_runs = 0;
  for (const rapidjson::Value& r : runs.GetArray()) {
    if (Str(r, "trigger_reason") == "event") {
      ++event_runs;
      CHECK(run_ids.count(Str(r, "id")) == 1);
      REQUIRE(r["scope_resource_ids"].Size() == 1);
      CHECK(core::StringViewOf(r["scope_resource_ids"][0]) == "app-container:e2e-flapping");
    }
  }
  CHECK(event_runs == 1);
  REQUIRE(daemon->Remove("e2e-flapping").ok());
}

TEST_CASE("pulse-server keeps a docker source's samples in its metrics history",
          "[e2e][server][fleet][docker][history]") {
  PULSE_NEED_DOCKERD(daemon);
  REQUIRE(daemon->Run(Command({"sleep", "600"}, "e2e-sampled")).ok());
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  // A demo source first: it keeps its own generated history, the docker samples go to storage.
  std::ofstream(fleet) << R"({"sources": [{"name": "lab", "kind": "demo"},)"
                       << R"({"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint() << R"(", "sample_interval_seconds": 1}]})";
  {
    ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet, "--patrol-interval", "0"}});
    // A few rounds of the sampler; the last samples are recorded when the server stops.
    absl::SleepFor(absl::Seconds(3));
    CHECK(server.Stop() == "exited 0");
  }
  SQLite::Database db(dir.File("pulse.db"), SQLite::OPEN_READONLY);
  SQLite::Statement count(db,
                          "SELECT COUNT(*), MIN(value), MAX(value) FROM metric_samples WHERE "
                          "target_id = 'app-container:e2e-sampled' AND metric = ?");
  count.bind(1, "memory_pct");
  REQUIRE(count.executeStep());
  CHECK(count.getColumn(0).getInt() >= 2);
  CHECK(count.getColumn(1).getDouble() >= 0);
  CHECK(count.getColumn(2).getDouble() < 100);
  count.reset();
  count.bind(1, "cpu");
  REQUIRE(count.executeStep());
  CHECK(count.getColumn(0).getInt() >= 2);
  // Nothing of the demo source's generated history was copied.
  SQLite::Statement demo(db, "SELECT COUNT(*) FROM metric_samples WHERE target_id LIKE 'vm:%'");
  REQUIRE(demo.executeStep());
  CHECK(demo.getColumn(0).getInt() == 0);
  REQUIRE(daemon->Remove("e2e-sampled").ok());
}

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

TEST_CASE(
    "the chat Assistant resolves a docker container, reads its stats and logs, and plans a "
    "restart that waits for approval",
    "[e2e][server][fleet][docker][chat]") {
  PULSE_NEED_DOCKERD(daemon);
  REQUIRE(
      daemon->Run(Command({"sh", "-c", "echo chat-e2e-ready; exec sleep 600"}, "e2e-chat")).ok());
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(
      Turn(ToolTurn("call_q", "pulse_query", R"({"action":"search","query":"e2e-chat"})")));
  fake.Enqueue(Turn(ToolTurn("call_s", "pulse_read",
                             R"({"action":"status","resource_id":"app-container:e2e-chat"})")));
  fake.Enqueue(Turn(ToolTurn("call_l", "pulse_read",
                             R"({"action":"logs","resource_id":"app-container:e2e-chat"})")));
  fake.Enqueue(Turn(ToolTurn(
      "call_c", "pulse_control",
      R"({"type":"resource","resource_id":"app-container:e2e-chat","capability":"restart",)"
      R"("params":{},"reason":"the operator asked for a restart"})")));

  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "docker1", "kind": "docker", "endpoint": ")"
                       << daemon->endpoint() << R"(", "allow_actions": true}]})";
  const std::string operator_token = MintToken(dir.path(), "ai:chat,ai:execute", "operator");
  const std::string approver = MintToken(dir.path(), "actions:approve", "approver");
  ServerProcess server(
      dir.path(),
      ServerOptions{{"--fleet", fleet, "--provider", "openai-compatible", "--provider-base-url",
                     fake.base_url() + "/v1", "--model", "test-model", "--control-level",
                     "controlled", "--patrol-interval", "0"}});
  const int port = server.port();
  const auto before = daemon->client().Inspect("e2e-chat");
  REQUIRE(before.ok());

  const ChatStream chat =
      PostStream(port, "/api/ai/chat", operator_token, R"({"message":"restart e2e-chat"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  CHECK(Str(Json(chat.Last()->data_json), "outcome") == "awaiting_approval");
  const rapidjson::Document announced = chat.First("approval_needed");
  CHECK(Str(announced, "state") == "pending_approval");
  const std::string action_id = Str(announced, "action_id");

  // Each tool's answer went back to the model: the resolved id, the container's stats (sampled
  // on demand) and the log line it printed.
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[1].body.find("app-container:e2e-chat") != std::string::npos);
  CHECK(requests[2].body.find("memory_bytes") != std::string::npos);
  CHECK(requests[2].body.find("cpu_pct") != std::string::npos);
  CHECK(requests[3].body.find("chat-e2e-ready") != std::string::npos);

  // The restart waits: nothing ran, the container was not restarted.
  const Reply detail = Send(port, "GET", "/api/actions/" + action_id, approver);
  INFO(detail.body);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  CHECK(Str(body["audit"], "state") == "pending_approval");
  CHECK(detail.body.find("app-container:e2e-chat") != std::string::npos);
  const auto after = daemon->client().Inspect("e2e-chat");
  REQUIRE(after.ok());
  CHECK(after->state == "running");
  CHECK(after->started_at == before->started_at);
  CHECK(server.Stop() == "exited 0");
  REQUIRE(daemon->Remove("e2e-chat").ok());
}

}  // namespace
}  // namespace pulse::testing::e2e
