// pulse_read over the Fleet port: status, logs, config and exec results; secrets redacted from
// every infrastructure text; exec refused before dispatch unless proven read-only; bounded
// output; stable codes for port failures.
#include "pulse/core/builtins/read_handler.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "handlers_test_support.h"
#include "pulse/core/json/json_time.h"

namespace pulse::testing::handlers {
namespace {

using core::GetBool;
using core::GetInt64;
using core::kToolPulseRead;
using core::ToJsonString;

TEST_CASE("pulse_read status returns the live state with facts, secrets redacted",
          "[core][handlers][read]") {
  Fixture f;
  rapidjson::Document r = f.Ok(kToolPulseRead, R"({"action":"status","resource_id":"vm:101"})");
  CHECK(Str(r, "resource_id") == "vm:101");
  CHECK(Str(r, "action") == "status");
  CHECK(Str(r, "status") == "running");
  CHECK(Str(r, "summary") == "web-01 is running; / is 96% full");
  CHECK(Str(r, "observed_at") == core::FormatRfc3339(f.clock.Now()));
  CHECK(ToJsonString(Member(r, "facts")) ==
        R"({"db_password":"[REDACTED]","disk_root_pct":"96","uptime":"3 days"})");
}

TEST_CASE("pulse_read logs returns the newest lines with secrets redacted",
          "[core][handlers][read]") {
  Fixture f;
  rapidjson::Document all = f.Ok(kToolPulseRead, R"({"action":"logs","resource_id":"vm:101"})");
  CHECK(Strings(Member(all, "lines")) ==
        std::vector<std::string>{"app[311]: started",
                                 "app[311]: connecting with password=[REDACTED]",
                                 "kernel: EXT4-fs warning: /dev/sda1 is 96% full",
                                 "app[311]: ERROR write failed: No space left on device"});
  CHECK(GetInt64(all, "line_count") == 4);
  CHECK(GetBool(all, "more_available") == false);
  CHECK(GetBool(all, "redacted") == true);
  CHECK(GetBool(all, "truncated") == false);

  rapidjson::Document two =
      f.Ok(kToolPulseRead, R"({"action":"logs","resource_id":"vm:101","lines":2})");
  CHECK(Strings(Member(two, "lines")) ==
        std::vector<std::string>{"kernel: EXT4-fs warning: /dev/sda1 is 96% full",
                                 "app[311]: ERROR write failed: No space left on device"});
  CHECK(GetBool(two, "more_available") == true);
  CHECK(GetBool(two, "redacted") == false);
}

TEST_CASE("pulse_read logs drops the oldest lines to stay within the text bound",
          "[core][handlers][read]") {
  Fixture f;
  std::vector<std::string> lines;
  for (int i = 0; i < 1000; ++i) {
    lines.push_back("line " + std::to_string(i) + " " + std::string(50, 'x'));
  }
  f.fleet.SetLogs("vm:102", lines);
  core::ToolCallOutcome outcome =
      f.Call(kToolPulseRead, R"({"action":"logs","resource_id":"vm:102","lines":1000})");
  REQUIRE(outcome.result.Ok());
  CHECK(outcome.result.content.size() < core::kMaxToolTextBytes + 512);
  rapidjson::Document r = ParseText(outcome.result.content);
  const std::vector<std::string> kept = Strings(Member(r, "lines"));
  REQUIRE_FALSE(kept.empty());
  CHECK(kept.back() == lines.back());
  CHECK(GetBool(r, "truncated") == true);
  CHECK(GetInt64(r, "lines_omitted") == static_cast<std::int64_t>(1000 - kept.size()));

  // A single newest line longer than the bound is kept, cut, and marked.
  f.fleet.SetLogs("vm:102", {"old line", std::string(40 * 1024, 'y')});
  rapidjson::Document huge = f.Ok(kToolPulseRead, R"({"action":"logs","resource_id":"vm:102"})");
  const std::vector<std::string> one = Strings(Member(huge, "lines"));
  REQUIRE(one.size() == 1);
  CHECK(one[0].size() <= core::kMaxToolTextBytes);
  CHECK(Contains(one[0], "[truncated]"));
  CHECK(GetBool(huge, "truncated") == true);
}

TEST_CASE("pulse_read config redacts assignments and private keys", "[core][handlers][read]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPulseRead, R"({"action":"config","resource_id":"service:pve1/nginx"})");
  CHECK(Str(r, "format") == "ini");
  const std::string content = Str(r, "content");
  CHECK(content == "[server]\nlisten = 443\ndb_password=[REDACTED]\n[REDACTED]\nworkers = 4\n");
  CHECK(GetBool(r, "redacted") == true);
  CHECK(GetBool(r, "truncated") == false);

  core::FleetConfig big;
  big.format = "text";
  big.content = std::string(200 * 1024, 'c');
  f.fleet.SetConfig("vm:102", big);
  core::ToolCallOutcome outcome =
      f.Call(kToolPulseRead, R"({"action":"config","resource_id":"vm:102"})");
  REQUIRE(outcome.result.Ok());
  CHECK(outcome.result.content.size() < core::kMaxToolTextBytes + 512);
  rapidjson::Document cut = ParseText(outcome.result.content);
  CHECK(GetBool(cut, "truncated") == true);
  CHECK(Str(cut, "content").size() == core::kMaxToolTextBytes);
  CHECK(Contains(Str(cut, "content"), "[truncated]"));
}

TEST_CASE("pulse_read exec runs a proven read-only command on the fleet",
          "[core][handlers][read][exec]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPulseRead, R"({"action":"exec","resource_id":"vm:101","command":"df -h"})");
  CHECK(ToJsonString(r) ==
        R"({"resource_id":"vm:101","action":"exec","command":"df -h","exit_code":0,)"
        R"("output":"Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 64G 61G 3G 96% /\n",)"
        R"("redacted":false,"truncated":false,"simulated":false})");
  CHECK(f.fleet.exec_calls() == std::vector<std::string>{"vm:101#df -h"});

  // A non-zero exit is an answer, not a tool failure.
  rapidjson::Document failed =
      f.Ok(kToolPulseRead,
           R"({"action":"exec","resource_id":"vm:101","command":"systemctl status app"})");
  CHECK(GetInt64(failed, "exit_code") == 3);

  rapidjson::Document secret =
      f.Ok(kToolPulseRead,
           R"({"action":"exec","resource_id":"vm:101","command":"cat /etc/app/app.conf"})");
  CHECK(Str(secret, "output") == "port=8080\nDB_PASSWORD=[REDACTED]\n");
  CHECK(GetBool(secret, "redacted") == true);
}

TEST_CASE("pulse_read exec refuses write and shell commands without calling the fleet",
          "[core][handlers][read][exec]") {
  Fixture f;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"rm -rf /var/lib/app", "not_allowlisted"},
      {"systemctl restart nginx", "unsafe_argument"},
      {"df -h; rm -rf /", "shell_syntax"},
      {"uptime && reboot", "shell_syntax"},
      {"ls | sh", "shell_syntax"},
      {"cat /etc/hostname > /etc/motd", "shell_syntax"},
      {"echo $(id)", "shell_syntax"},
      {"bash -c uptime", "interpreter"},
      {"/bin/cat /etc/hostname", "path_command"},
      {"cat /etc/shadow", "sensitive_path"},
      {"tail -f /var/log/syslog", "unsafe_argument"},
  };
  for (const auto& [command, refusal] : refused) {
    INFO(command);
    rapidjson::Document args(rapidjson::kObjectType);
    args.AddMember("action", "exec", args.GetAllocator());
    args.AddMember("resource_id", "vm:101", args.GetAllocator());
    args.AddMember("command", rapidjson::Value(command.c_str(), args.GetAllocator()),
                   args.GetAllocator());
    CHECK(f.Refused(kToolPulseRead, ToJsonString(args)) == "POLICY_BLOCKED");
    CHECK(Contains(f.last_error, R"("refusal":")" + refusal + "\""));
    CHECK(Contains(f.last_error, R"("blocked":true)"));
  }
  CHECK(f.fleet.exec_calls().empty());
}

TEST_CASE("pulse_read exec output is bounded and marked when cut", "[core][handlers][read][exec]") {
  Fixture f;
  core::ExecOutput big = Output(std::string(core::kMaxExecOutputBytes, 'z'));
  big.truncated = true;
  f.fleet.SetExecOutput("vm:102", "dmesg", big);
  core::ToolCallOutcome outcome =
      f.Call(kToolPulseRead, R"({"action":"exec","resource_id":"vm:102","command":"dmesg"})");
  REQUIRE(outcome.result.Ok());
  CHECK(outcome.result.content.size() < core::kMaxToolTextBytes + 512);
  rapidjson::Document r = ParseText(outcome.result.content);
  CHECK(GetBool(r, "truncated") == true);
  CHECK(Str(r, "output").size() == core::kMaxToolTextBytes);
}

TEST_CASE("pulse_read answers unknown resources and fleet failures with stable codes",
          "[core][handlers][read]") {
  Fixture f;
  CHECK(f.Refused(kToolPulseRead, R"({"action":"status","resource_id":"vm:999"})") == "NOT_FOUND");
  CHECK(f.Refused(kToolPulseRead, R"({"action":"logs","resource_id":"vm:999"})") == "NOT_FOUND");
  CHECK(f.Refused(kToolPulseRead,
                  R"({"action":"exec","resource_id":"vm:999","command":"uptime"})") == "NOT_FOUND");
  // No config for this resource.
  CHECK(f.Refused(kToolPulseRead, R"({"action":"config","resource_id":"vm:101"})") == "NOT_FOUND");

  f.fleet.SetError(FakeFleet::Method::kReadLogs, absl::DeadlineExceededError("agent timed out"));
  CHECK(f.Refused(kToolPulseRead, R"({"action":"logs","resource_id":"vm:101"})") ==
        "EXECUTION_FAILED");
  CHECK(Contains(f.last_error, R"("retryable":true)"));

  // A fleet without a command path (the port's default) cannot serve exec.
  f.fleet.SetError(FakeFleet::Method::kRunReadOnlyCommand,
                   absl::UnimplementedError("this fleet does not run commands"));
  CHECK(f.Refused(kToolPulseRead,
                  R"({"action":"exec","resource_id":"vm:101","command":"uptime"})") == "NO_AGENT");
  // An adapter that refuses on its own re-check is a policy refusal too.
  f.fleet.SetError(FakeFleet::Method::kRunReadOnlyCommand,
                   absl::PermissionDeniedError("commands are disabled on this host"));
  CHECK(
      f.Refused(kToolPulseRead, R"({"action":"exec","resource_id":"vm:101","command":"uptime"})") ==
      "POLICY_BLOCKED");
}

TEST_CASE("exec on a resource with nowhere to run a command is EXECUTION_CONTEXT_UNAVAILABLE",
          "[core][handlers][read][exec]") {
  Fixture f;
  // The port's FailedPrecondition: the resource exists but has no execution context (the demo
  // fleet's backup jobs). Nothing ran, so it is a refusal, not a failure.
  f.fleet.SetError(FakeFleet::Method::kRunReadOnlyCommand,
                   absl::FailedPreconditionError(
                       "backup-job:nightly is a backup job; run commands on a node, VM or "
                       "container"));
  CHECK(
      f.Refused(kToolPulseRead, R"({"action":"exec","resource_id":"vm:101","command":"uptime"})") ==
      "EXECUTION_CONTEXT_UNAVAILABLE");
  CHECK(Contains(f.last_error, R"("blocked":true)"));
  CHECK_FALSE(Contains(f.last_error, R"("failed":true)"));
  CHECK(Contains(f.last_error, R"("resource_id":"vm:101")"));
  CHECK(Contains(f.last_error, "run commands on a node, VM or container"));
  // Other reads keep their port mapping: FailedPrecondition elsewhere is not about exec.
  f.fleet.SetError(FakeFleet::Method::kReadLogs, absl::FailedPreconditionError("no journal"));
  CHECK(f.Refused(kToolPulseRead, R"({"action":"logs","resource_id":"vm:101"})") ==
        "EXECUTION_FAILED");
}

// A Fleet written before the command path existed: it still compiles, and exec reaches the
// port's default answer.
class CommandlessFleet final : public core::Fleet {
 public:
  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery&) override {
    return Unused();
  }
  absl::StatusOr<core::FleetResource> GetResource(std::string_view) override { return Unused(); }
  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery&) override {
    return Unused();
  }
  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view) override { return Unused(); }
  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view,
                                                 const core::FleetLogQuery&) override {
    return Unused();
  }
  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view) override { return Unused(); }
  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view, const core::FleetMetricQuery&) override {
    return Unused();
  }
  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view) override {
    return Unused();
  }
  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest&) override {
    return Unused();
  }
  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery&) override {
    return Unused();
  }

 private:
  static absl::Status Unused() { return absl::InternalError("not used by this test"); }
};

TEST_CASE("a fleet without a command path answers exec with NO_AGENT",
          "[core][handlers][read][exec]") {
  CommandlessFleet fleet;
  CHECK(absl::IsUnimplemented(fleet.RunReadOnlyCommand("vm:101", "uptime").status()));
  core::PulseReadHandler handler(fleet);
  const core::InvocationPolicy policy = PolicyFor(kToolPulseRead);
  const core::ToolContext context{
      kToolPulseRead, {core::ToolKind::kRead, core::MutationTarget::kNone}, policy};
  rapidjson::Document args =
      ParseText(R"({"action":"exec","resource_id":"vm:101","command":"uptime"})");
  const core::ToolResult result = handler.Run(args, context);
  CHECK(core::ExtractToolErrorCode(result.content) == "NO_AGENT");
}

TEST_CASE("pulse_read refuses arguments that pass the schema but make no sense",
          "[core][handlers][read]") {
  Fixture f;
  CHECK(
      f.Refused(kToolPulseRead, R"({"action":"logs","resource_id":"vm:101","command":"df -h"})") ==
      "INVALID_INPUT");
  CHECK(Contains(f.last_error, R"("argument":"command")"));
  CHECK(f.Refused(kToolPulseRead, R"({"action":"status","resource_id":"vm:101","lines":5})") ==
        "INVALID_INPUT");
  CHECK(f.Refused(kToolPulseRead, R"({"action":"exec","resource_id":"vm:101"})") ==
        "INVALID_INPUT");
  CHECK(f.Refused(kToolPulseRead, R"({"action":"status","resource_id":"web-01"})") ==
        "INVALID_INPUT");
  CHECK(f.fleet.exec_calls().empty());
}

}  // namespace
}  // namespace pulse::testing::handlers
