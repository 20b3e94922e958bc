// The agent's governance at the host: refusals the server cannot override, exactly-once
// dispatch across restarts, classifier-checked exec, and reports the server's decoder accepts.
#include "pulse/adapters/hostagent/agent_executor.h"

#include <catch2/catch.hpp>

#include "agent_test_support.h"
#include "pulse/adapters/hostagent/agent_report.h"

namespace pulse::adapters::hostagent {
namespace {

using testing::AgentRig;

TEST_CASE("the agent refuses what its allowlist and its host and the deadline do not admit",
          "[adapters][hostagent][executor]") {
  AgentRig rig;
  struct Case {
    Command command;
    std::string reason;
  };
  Command late = rig.Dispatch("cmd_0000000000000006", "act_6", "service:web1/nginx", "restart");
  late.deadline = rig.clock.Now() - absl::Seconds(1);
  Command late_exec = rig.Exec("cmd_0000000000000009", "node:web1", "uptime");
  late_exec.deadline = rig.clock.Now() - absl::Seconds(1);
  for (const Case& c : std::vector<Case>{
           {rig.Dispatch("cmd_0000000000000001", "act_1", "service:web2/nginx", "restart"),
            "wrong_host"},
           {rig.Dispatch("cmd_0000000000000002", "act_2", "service:web1/postgres", "restart"),
            "unknown_resource"},
           {rig.Dispatch("cmd_0000000000000003", "act_3", "service:web1/nginx", "reboot"),
            "unknown_capability"},
           {rig.Dispatch("cmd_0000000000000004", "act_4", "node:web1", "restart"),
            "unknown_capability"},
           {rig.Dispatch("cmd_0000000000000005", "act_5", "service:web1/nginx", "start"),
            "agent_allowlist"},
           {rig.Dispatch("cmd_0000000000000007", "act_7", "service:web1/sshd", "restart"),
            "agent_allowlist"},
           {late, "deadline_passed"},
           {rig.Exec("cmd_0000000000000008", "node:web1", "rm -rf /tmp/x"), "agent_classifier"},
           {rig.Exec("cmd_000000000000000a", "node:web1", "cat /etc/shadow"), "agent_classifier"},
           {rig.Exec("cmd_000000000000000b", "node:web2", "uptime"), "wrong_host"},
           {late_exec, "deadline_passed"},
       }) {
    INFO(c.command.command_id << " " << c.reason);
    const Result result = rig.executor->Execute(c.command);
    CHECK(result.status == core::ExecutionStatus::kNotRun);
    CHECK(result.reason_code == c.reason);
    CHECK(result.command_id == c.command.command_id);
    CHECK(result.host == "web1");
    CHECK_FALSE(result.exec.has_value());
    CHECK_FALSE(result.summary.empty());
  }
  // Nothing ran: no unit was restarted or stopped, and no attempt was claimed.
  CHECK(rig.Restarts("nginx") == 0);
  CHECK(rig.Restarts("sshd") == 0);
  CHECK(rig.UnitState("sshd") == "active\n");
  CHECK(rig.state->size() == 0);

  AgentRig no_exec(R"({"exec": false})");
  const Result refused =
      no_exec.executor->Execute(no_exec.Exec("cmd_000000000000000c", "node:web1", "uptime"));
  CHECK(refused.status == core::ExecutionStatus::kNotRun);
  CHECK(refused.reason_code == "agent_allowlist");
}

TEST_CASE("a dispatch runs once and a repeat is answered from the state file",
          "[adapters][hostagent][executor]") {
  AgentRig rig;
  const Command restart =
      rig.Dispatch("cmd_00000000000000a1", "act_a", "service:web1/nginx", "restart");
  Result first = rig.executor->Execute(restart);
  CHECK(first.status == core::ExecutionStatus::kSucceeded);
  CHECK(first.action_id == "act_a");
  CHECK(first.attempt_id == "act_a.dispatch.1");
  CHECK_FALSE(first.replayed);
  CHECK(rig.Restarts("nginx") == 1);

  // The server sends it again after a reconnect (a new command id), and again after the
  // agent restarted: answered from the state file, never run again.
  Command again = restart;
  again.command_id = "cmd_00000000000000a2";
  Result replay = rig.executor->Execute(again);
  CHECK(replay.replayed);
  CHECK(replay.status == first.status);
  CHECK(replay.summary == first.summary);
  CHECK(replay.command_id == "cmd_00000000000000a2");
  rig.Restart();
  again.deadline = rig.clock.Now() - absl::Seconds(5);  // a replay runs nothing, even late
  replay = rig.executor->Execute(again);
  CHECK(replay.replayed);
  CHECK(replay.status == core::ExecutionStatus::kSucceeded);
  CHECK(rig.Restarts("nginx") == 1);

  // A second attempt of the action is a new key and runs.
  Command second = restart;
  second.command_id = "cmd_00000000000000a3";
  second.attempt_id = "act_a.dispatch.2";
  CHECK(rig.executor->Execute(second).status == core::ExecutionStatus::kSucceeded);
  CHECK(rig.Restarts("nginx") == 2);

  Command stop =
      rig.Dispatch("cmd_00000000000000a4", "act_b", "service:web1/pulse-demo-web", "stop");
  CHECK(rig.executor->Execute(stop).status == core::ExecutionStatus::kSucceeded);
  CHECK(rig.UnitState("pulse-demo-web") == "inactive\n");
}

TEST_CASE("an attempt a crash interrupted is answered inconclusive and never run again",
          "[adapters][hostagent][executor]") {
  AgentRig rig;
  // The agent claimed the attempt and died before systemctl ran: `started` is on disk.
  REQUIRE(rig.state->Begin("act_c", "act_c.dispatch.1").ok());
  rig.Restart();
  const Result result = rig.executor->Execute(
      rig.Dispatch("cmd_00000000000000c1", "act_c", "service:web1/nginx", "restart"));
  CHECK(result.status == core::ExecutionStatus::kInconclusive);
  CHECK(result.reason_code == "interrupted");
  CHECK(result.replayed);
  CHECK(rig.Restarts("nginx") == 0);
}

TEST_CASE("exec runs classifier-admitted commands on the host", "[adapters][hostagent][executor]") {
  AgentRig rig;
  const Result result =
      rig.executor->Execute(rig.Exec("cmd_00000000000000e1", "node:web1", "uname -s"));
  CHECK(result.status == core::ExecutionStatus::kSucceeded);
  CHECK(result.kind == CommandKind::kExec);
  REQUIRE(result.exec.has_value());
  CHECK(result.exec->exit_code == 0);
  CHECK(result.exec->output == "Linux\n");
  // What the agent posts is what the server's decoder accepts.
  absl::StatusOr<Result> decoded = DecodeResult(EncodeResult(result));
  REQUIRE(decoded.ok());
  CHECK(*decoded == result);
}

TEST_CASE("the host report passes the server's decoder and offers only allowlisted actions",
          "[adapters][hostagent][report]") {
  AgentRig rig;
  ReportContext context;
  context.agent_version = "0.1.0";
  context.interval_seconds = 30;
  context.in_reply_to = "cmd_00000000000000f1";
  context.now = rig.clock.Now();
  absl::StatusOr<Report> report = BuildHostReport(*rig.fleet, *rig.executor, context);
  REQUIRE(report.ok());
  absl::StatusOr<Report> decoded = DecodeReport(EncodeReport(*report));
  REQUIRE(decoded.ok());
  CHECK(decoded->host == "web1");
  CHECK(decoded->in_reply_to == "cmd_00000000000000f1");
  auto has = [&](const std::string& id) {
    return std::any_of(decoded->resources.begin(), decoded->resources.end(),
                       [&](const core::FleetResource& r) { return r.id == id; });
  };
  CHECK(has("node:web1"));
  CHECK(has("service:web1/nginx"));
  CHECK(has("service:web1/sshd"));
  CHECK(std::any_of(decoded->resources.begin(), decoded->resources.end(),
                    [](const core::FleetResource& r) { return r.type == "storage"; }));
  CHECK(std::any_of(decoded->metrics.begin(), decoded->metrics.end(),
                    [](const ReportMetric& m) { return m.metric == "cpu"; }));
  CHECK(std::any_of(decoded->statuses.begin(), decoded->statuses.end(),
                    [](const ReportStatus& s) { return s.resource_id == "node:web1"; }));
  // nginx is running: LocalHostFleet offers restart and stop, allow.json keeps both; sshd is
  // not in allow.json and offers nothing.
  std::map<std::string, std::vector<std::string>> caps;
  for (const ReportCapabilities& c : decoded->capabilities) {
    caps[c.resource_id] = c.names;
  }
  CHECK(caps["service:web1/nginx"] == std::vector<std::string>{"restart", "stop"});
  CHECK(caps.count("service:web1/sshd") == 0);
}

}  // namespace
}  // namespace pulse::adapters::hostagent
