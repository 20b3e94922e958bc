// SIGKILL of pulse-server while an approved action is executing (admitted, audited and dispatched
// to the demo fleet, whose change lands 300 ms later, result not yet recorded), then a restart on
// the same data dir: the start-up reconciliation settles the action as failed with execution
// inconclusive, executing it again replays that disposition without dispatching, and every
// row written before the kill (plan, decision, admission, audit) is still there, once.
// A kill that lands after the execution finished (a machine too starved to run the test for
// 300 ms) is tried again on a fresh data dir, at most three times.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "fault_support.h"

namespace pulse::testing::fault {
namespace {

using e2e::Json;
using e2e::MintToken;
using e2e::Reply;
using e2e::Str;

// One attempt: plan, approve and execute an action on a server in `dir`, SIGKILL the server as
// soon as the admission is durable. Returns the action's id when the kill landed inside the
// execution (the record still executing); an empty string when the execution finished first,
// which only a machine too starved to run this thread for 300 ms produces.
std::string KillDuringExecution(const std::string& dir) {
  const std::string planner = MintToken(dir, "actions:plan,monitoring:read", "planner");
  const std::string approver = MintToken(dir, "actions:approve,monitoring:read", "approver");
  const std::string executor =
      MintToken(dir, "actions:execute,actions:approve,monitoring:read", "executor");
  auto server = std::make_unique<e2e::ServerProcess>(dir);
  const int port = server->port();
  const Reply planned =
      PlanAction(port, planner, "kill-1", "vm:101", "restart", R"({"mode":"reset"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const rapidjson::Document plan = Json(planned.body);
  const std::string action_id = Str(plan, "actionId");
  const std::string plan_hash = Str(plan, "planHash");
  REQUIRE_FALSE(action_id.empty());
  const Reply decided =
      e2e::Send(port, "POST", "/api/actions/" + action_id + "/decision", approver,
                R"({"outcome":"approved","reason":"go","planHash":")" + plan_hash + "\"}");
  INFO(decided.body);
  REQUIRE(decided.status == 200);

  // Execute on a thread of its own; kill the server as soon as the admission and its
  // dispatch_started audit row are durable. The audit row is a second commit after the
  // admission (the lifecycle events are the authoritative history, committed with it), so
  // polling the admission alone could land the kill between the two (CI did, once).
  Reply executed;
  std::thread execute([&] { executed = ExecuteAction(port, executor, action_id); });
  bool admitted = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!admitted && std::chrono::steady_clock::now() < deadline) {
    admitted = CountRows(dir, "SELECT count(*) FROM action_dispatches WHERE action_id = '" +
                                  action_id + "'") == 1 &&
               CountRows(dir,
                         "SELECT count(*) FROM audit_log WHERE event = 'dispatch_started' AND "
                         "subject_id = '" +
                             action_id + "'") == 1;
    if (!admitted) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  REQUIRE(::kill(server->pid(), SIGKILL) == 0);
  execute.join();
  REQUIRE(admitted);
  CHECK(server->Stop() == "killed by signal 9");
  const ActionRows at_kill = ReadActionRows(dir, action_id);
  if (at_kill.state != "executing") {
    WARN("the execution finished before the kill landed (state " << at_kill.state
                                                                 << "): trying again");
    return "";
  }
  // The kill landed inside the execution: no reply, and the record is still executing.
  CHECK(executed.status == 0);
  CHECK(at_kill.dispatches == 1);
  CHECK(at_kill.executing_events == 1);
  CHECK(at_kill.results == 0);
  CHECK(at_kill.audit_planned == 1);
  CHECK(at_kill.audit_dispatch_started == 1);
  return action_id;
}

TEST_CASE("a server killed while an action executes settles it once and never dispatches again",
          "[fault][server]") {
  // The kill has 300 ms to land between the admission and the result; a machine starved
  // enough to miss that window gets a fresh data dir and another try, never a weaker check.
  std::unique_ptr<e2e::TempDir> dir;
  std::string action_id;
  for (int attempt = 0; attempt < 3 && action_id.empty(); ++attempt) {
    dir = std::make_unique<e2e::TempDir>();
    action_id = KillDuringExecution(dir->path());
  }
  REQUIRE_FALSE(action_id.empty());
  const std::string executor =
      MintToken(dir->path(), "actions:execute,actions:approve,monitoring:read", "executor-2");

  // Restart on the same data dir: the interrupted execution is settled at start-up.
  e2e::ServerProcess restarted(dir->path());
  const int port = restarted.port();
  CHECK(restarted.Log().find("settled 1 action(s) interrupted") != std::string::npos);
  const Reply detail = e2e::Send(port, "GET", "/api/actions/" + action_id, executor);
  INFO(detail.body);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  CHECK(Str(body["audit"], "state") == "failed");
  CHECK(Str(body["audit"]["result"]["execution"], "status") == "inconclusive");
  std::vector<std::string> states;
  for (const rapidjson::Value& e : body["events"].GetArray()) {
    states.push_back(Str(e, "state") + "/" + Str(e, "kind"));
  }
  CHECK(states == std::vector<std::string>{"planned/transition", "pending_approval/transition",
                                           "approved/decision", "approved/transition",
                                           "executing/transition", "failed/transition"});

  // Executing again (twice) replays the stored disposition and dispatches nothing.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const Reply again = ExecuteAction(port, executor, action_id);
    INFO(again.body);
    REQUIRE(again.status == 200);
    const rapidjson::Document replay = Json(again.body);
    CHECK(Str(replay, "state") == "failed");
    CHECK(replay["replayed"].GetBool());
    CHECK_FALSE(replay["dispatched"].GetBool());
  }
  // The demo fleet of this process saw no dispatch: the VM is not restarting.
  const Reply vm = e2e::Send(port, "GET", "/api/agent/resource-context/vm:101", executor);
  REQUIRE(vm.status == 200);
  CHECK(vm.body.find("restarting") == std::string::npos);

  CheckRanOnce(dir->path(), action_id, "failed", "inconclusive");
  CHECK(CountRows(dir->path(),
                  "SELECT count(*) FROM audit_log WHERE event = 'reconciled' AND "
                  "subject_id = '" +
                      action_id + "'") == 1);
  CHECK(CountRows(dir->path(),
                  "SELECT count(*) FROM audit_log WHERE event = 'decided' AND "
                  "subject_id = '" +
                      action_id + "'") == 1);
  CHECK(IntegrityCheck(dir->path()) == "ok");
  CHECK(restarted.Stop() == "exited 0");

  // A third start finds nothing left to settle.
  e2e::ServerProcess third(dir->path());
  CHECK(third.Log().find("settled") == std::string::npos);
  CHECK(ReadActionRows(dir->path(), action_id).terminal_events == 1);
}

}  // namespace
}  // namespace pulse::testing::fault
