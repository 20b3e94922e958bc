// A fleet dispatch timeout through the real adapter and the real server: pulse-server runs on a
// copy of the shipped demo fleet with a dispatch_hangs fault on vm:101, so the demo agent
// carries out the restart but never answers and the adapter gives up after its own deadline
// (2 s in pulse-server). The execute reply settles the action once as failed with execution
// inconclusive; an execute arriving while the dispatch hangs is refused without dispatching;
// executing again, before and after a server restart on the same data dir, replays the stored
// disposition and never dispatches again; every row is there exactly once.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "fault_support.h"

namespace pulse::testing::fault {
namespace {

using e2e::Json;
using e2e::MintToken;
using e2e::Reply;
using e2e::Str;

// The shipped demo fleet with a dispatch_hangs fault declared on `resource`, written to `path`.
void WriteHangingFleet(const std::string& path, const std::string& resource) {
  std::ifstream in(PULSE_DEMO_FLEET_PATH);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string anchor = "\"faults\": [";
  const std::size_t at = json.find(anchor);
  REQUIRE(at != std::string::npos);
  json.insert(at + anchor.size(),
              R"({"resource": ")" + resource + R"(", "kind": "dispatch_hangs"},)");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  REQUIRE(out.good());
}

// The live status facts of `resource` from GET /api/agent/resource-context.
struct LiveStatus {
  std::string status;
  std::string restart_count;
  std::string faults;
};
LiveStatus ReadLiveStatus(int port, const std::string& token, const std::string& resource) {
  const Reply reply = e2e::Send(port, "GET", "/api/agent/resource-context/" + resource, token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  const rapidjson::Document body = Json(reply.body);
  REQUIRE(body.HasMember("contextSections"));
  for (const rapidjson::Value& section : body["contextSections"].GetArray()) {
    if (Str(section, "id") == "status") {
      const rapidjson::Value& facts = section["facts"];
      return {Str(facts, "status"), Str(facts, "restart_count"), Str(facts, "faults")};
    }
  }
  FAIL("no status section in the resource context");
  return {};
}

// The reply of an execute that replays the stored disposition.
void RequireReplay(const Reply& reply) {
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  const rapidjson::Document body = Json(reply.body);
  CHECK(Str(body, "state") == "failed");
  CHECK(body["replayed"].GetBool());
  CHECK_FALSE(body["dispatched"].GetBool());
  CHECK(Str(body["result"]["execution"], "status") == "inconclusive");
}

std::int64_t RefusedAlreadyExecuting(const std::string& data_dir, const std::string& action_id) {
  return CountRows(data_dir,
                   "SELECT count(*) FROM audit_log WHERE event = 'refused' AND code = "
                   "'action_already_executing' AND subject_id = '" +
                       action_id + "'");
}

TEST_CASE("a demo agent that never answers a dispatch settles the action once as inconclusive",
          "[fault][server][dispatch]") {
  e2e::TempDir dir;
  e2e::TempDir fleet_dir;
  const std::string fleet_file = fleet_dir.File("hanging-fleet.json");
  WriteHangingFleet(fleet_file, "vm:101");
  const std::string planner = MintToken(dir.path(), "actions:plan,monitoring:read", "planner");
  const std::string approver = MintToken(dir.path(), "actions:approve,monitoring:read", "approver");
  const std::string executor =
      MintToken(dir.path(), "actions:execute,actions:approve,monitoring:read", "executor");
  e2e::ServerOptions options;
  options.args = {"--fleet", fleet_file};

  std::string action_id;
  std::string timeout_summary;
  {
    e2e::ServerProcess server(dir.path(), options);
    const int port = server.port();
    const LiveStatus initial = ReadLiveStatus(port, executor, "vm:101");
    REQUIRE(initial.status == "running");
    REQUIRE(initial.faults == "dispatch_hangs");
    REQUIRE_FALSE(initial.restart_count.empty());

    const Reply planned =
        PlanAction(port, planner, "hang-1", "vm:101", "restart", R"({"mode":"reboot"})");
    INFO(planned.body);
    REQUIRE(planned.status == 200);
    const rapidjson::Document plan = Json(planned.body);
    action_id = Str(plan, "actionId");
    REQUIRE_FALSE(action_id.empty());
    const Reply decided = e2e::Send(
        port, "POST", "/api/actions/" + action_id + "/decision", approver,
        R"({"outcome":"approved","reason":"go","planHash":")" + Str(plan, "planHash") + "\"}");
    INFO(decided.body);
    REQUIRE(decided.status == 200);

    // Execute on a thread of its own; it hangs in the dispatch until the adapter's deadline.
    const auto started = std::chrono::steady_clock::now();
    std::future<Reply> first =
        std::async(std::launch::async, [&] { return ExecuteAction(port, executor, action_id); });
    bool admitted = false;
    while (!admitted && std::chrono::steady_clock::now() - started < std::chrono::seconds(10)) {
      admitted = ReadActionRows(dir.path(), action_id).dispatches == 1;
      if (!admitted) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    REQUIRE(admitted);
    // While it hangs the server keeps answering, and a second execute is refused without
    // dispatching.
    const Reply meanwhile = ExecuteAction(port, executor, action_id);
    CHECK(meanwhile.status == 409);
    CHECK(e2e::ErrorCode(meanwhile.body) == "action_already_executing");
    CHECK(ReadLiveStatus(port, executor, "vm:101").faults == "dispatch_hangs");
    CHECK(first.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);

    const Reply executed = first.get();
    const auto took = std::chrono::steady_clock::now() - started;
    INFO(executed.body);
    REQUIRE(executed.status == 200);
    // The adapter's 2 s deadline, plus an observation that finds the change already landed.
    CHECK(took >= std::chrono::seconds(2));
    CHECK(took < std::chrono::seconds(15));
    const rapidjson::Document body = Json(executed.body);
    CHECK(Str(body, "state") == "failed");
    CHECK_FALSE(body["replayed"].GetBool());
    CHECK(body["dispatched"].GetBool());
    const rapidjson::Value& execution = body["result"]["execution"];
    CHECK(Str(execution, "status") == "inconclusive");
    CHECK(Str(execution, "reasonCode") == "executor_outcome_unknown");
    timeout_summary = Str(execution, "summary");
    CHECK(timeout_summary == "restart of vm:101: no answer from demo-agent:pve1 within 2s");
    CHECK(Str(body["result"], "errorMessage") ==
          "execution inconclusive: restart of vm:101: no answer from demo-agent:pve1 within 2s");
    // The outcome was unknown, so the observer was asked: the agent did restart the VM.
    CHECK(Str(body["result"]["verification"], "status") == "confirmed");
    CHECK(Str(body["audit"], "state") == "failed");

    // The restart ran exactly once.
    const LiveStatus after = ReadLiveStatus(port, executor, "vm:101");
    CHECK(after.status == "running");
    CHECK(std::stoi(after.restart_count) == std::stoi(initial.restart_count) + 1);

    // Executing again replays the disposition at once and dispatches nothing.
    const auto replay_started = std::chrono::steady_clock::now();
    RequireReplay(ExecuteAction(port, executor, action_id));
    CHECK(std::chrono::steady_clock::now() - replay_started < std::chrono::seconds(2));
    CHECK(ReadLiveStatus(port, executor, "vm:101").restart_count == after.restart_count);

    CheckRanOnce(dir.path(), action_id, "failed", "inconclusive");
    CHECK(RefusedAlreadyExecuting(dir.path(), action_id) == 1);
    CHECK(server.Stop() == "exited 0");
  }

  // A restart on the same data dir (the fleet file still declares the fault): nothing was
  // left to settle, the action is still failed with the same result, and executing it again
  // does not dispatch.
  e2e::ServerProcess restarted(dir.path(), options);
  const int port = restarted.port();
  CHECK(restarted.Log().find("settled") == std::string::npos);
  const Reply detail = e2e::Send(port, "GET", "/api/actions/" + action_id, executor);
  INFO(detail.body);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  CHECK(Str(body["audit"], "state") == "failed");
  CHECK(Str(body["audit"]["result"]["execution"], "status") == "inconclusive");
  CHECK(Str(body["audit"]["result"]["execution"], "summary") == timeout_summary);
  std::vector<std::string> states;
  for (const rapidjson::Value& e : body["events"].GetArray()) {
    states.push_back(Str(e, "state") + "/" + Str(e, "kind"));
  }
  CHECK(states == std::vector<std::string>{"planned/transition", "pending_approval/transition",
                                           "approved/decision", "approved/transition",
                                           "executing/transition", "failed/transition"});
  const LiveStatus fresh = ReadLiveStatus(port, executor, "vm:101");
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto replay_started = std::chrono::steady_clock::now();
    RequireReplay(ExecuteAction(port, executor, action_id));
    CHECK(std::chrono::steady_clock::now() - replay_started < std::chrono::seconds(2));
  }
  // This process's fleet saw no dispatch: the VM was not restarted again.
  const LiveStatus later = ReadLiveStatus(port, executor, "vm:101");
  CHECK(later.status == "running");
  CHECK(later.restart_count == fresh.restart_count);

  CheckRanOnce(dir.path(), action_id, "failed", "inconclusive");
  CHECK(RefusedAlreadyExecuting(dir.path(), action_id) == 1);
  CHECK(CountRows(dir.path(),
                  "SELECT count(*) FROM audit_log WHERE event = 'decided' AND "
                  "subject_id = '" +
                      action_id + "'") == 1);
  CHECK(CountRows(dir.path(),
                  "SELECT count(*) FROM audit_log WHERE event = 'failed' AND "
                  "subject_id = '" +
                      action_id + "'") == 1);
  CHECK(IntegrityCheck(dir.path()) == "ok");
  CHECK(restarted.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::fault
