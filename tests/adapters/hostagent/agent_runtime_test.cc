// The agent's runtime against a loopback server speaking the protocol (fake_agent_server.h):
// reports, commands in order with their results, refusals of what the server sent beyond the
// allowlist, malformed and misplaced frames, reconnects with a growing jittered backoff, a
// refused token that stops the agent, and a graceful stop that still posts the running
// command's result.
#include "pulse/adapters/hostagent/agent_runtime.h"

#include <catch2/catch.hpp>
#include <thread>

#include "agent_test_support.h"
#include "fake_agent_server.h"

namespace pulse::adapters::hostagent {
namespace {

using testing::AgentRig;
using testing::FakeAgentServer;

AgentRuntimeOptions Options(const FakeAgentServer& server, std::string token) {
  AgentRuntimeOptions options;
  options.server_url = server.url();
  options.token = std::move(token);
  options.agent_version = "0.1.0";
  options.interval = absl::Seconds(30);
  options.backoff_initial = absl::Milliseconds(100);
  options.backoff_max = absl::Milliseconds(800);
  options.request_timeout = absl::Seconds(10);
  options.stream_idle_timeout = absl::Seconds(5);
  return options;
}

// Runs the runtime on a thread until Stop().
class Running {
 public:
  explicit Running(AgentRuntime& runtime)
      : thread_([this, &runtime] { status_ = runtime.Run(stop_); }) {}
  ~Running() { Stop().IgnoreError(); }  // a failed test's runtime is stopped all the same
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  // Sets the stop flag and returns what Run returned.
  absl::Status Stop() {
    stop_.store(true);
    if (thread_.joinable()) {
      thread_.join();
    }
    return status_;
  }

 private:
  std::atomic<bool> stop_{false};
  absl::Status status_;
  std::thread thread_;
};

std::unique_ptr<AgentRuntime> OpenRuntime(AgentRig& rig, AgentRuntimeOptions options) {
  absl::StatusOr<std::unique_ptr<AgentRuntime>> runtime =
      AgentRuntime::Open(std::move(options), *rig.fleet, *rig.executor, rig.clock);
  REQUIRE(runtime.ok());
  return std::move(*runtime);
}

const Result* FindResult(const std::vector<Result>& results, const std::string& command_id) {
  for (const Result& r : results) {
    if (r.command_id == command_id) {
      return &r;
    }
  }
  return nullptr;
}

TEST_CASE("the agent reports and answers every command the server sends in order",
          "[adapters][hostagent][runtime]") {
  FakeAgentServer server;
  AgentRig rig;
  auto runtime = OpenRuntime(rig, Options(server, server.Token()));
  Running running(*runtime);
  REQUIRE(server.WaitForStreams(1, absl::Seconds(10)));
  REQUIRE(server.WaitForReports(1, absl::Seconds(10)));
  const Report first = server.reports().front();
  CHECK(first.host == "web1");
  CHECK(first.interval_seconds == 30);
  CHECK(first.in_reply_to.empty());

  const absl::Time now = rig.clock.Now();
  auto dispatch = [&](const std::string& id, const std::string& action, const std::string& res,
                      const std::string& cap) {
    return EncodeCommand(rig.Dispatch(id, action, res, cap));
  };
  Command late = rig.Dispatch("cmd_0000000000000005", "act_5", "service:web1/nginx", "restart");
  late.issued_at = now - absl::Seconds(120);
  late.deadline = now - absl::Seconds(60);
  REQUIRE(server.Push("command",
                      EncodeCommand(rig.Exec("cmd_0000000000000001", "node:web1", "uname -s"))));
  REQUIRE(server.Push("command",
                      dispatch("cmd_0000000000000002", "act_2", "service:web1/nginx", "restart")));
  REQUIRE(server.Push("command",
                      dispatch("cmd_0000000000000003", "act_3", "service:web1/sshd", "restart")));
  REQUIRE(server.Push("command", "{\"protocol\":1,\"command_id\":"));  // malformed: ignored
  REQUIRE(server.Push("command",
                      dispatch("cmd_0000000000000004", "act_4", "service:web2/nginx", "restart")));
  REQUIRE(server.Push("command", EncodeCommand(late)));
  REQUIRE(server.Push("command",
                      EncodeCommand(rig.Exec("cmd_0000000000000006", "node:web1", "sh -c id"))));
  Command report;
  report.command_id = "cmd_0000000000000007";
  report.kind = CommandKind::kReport;
  report.issued_at = now;
  report.deadline = now + absl::Seconds(60);
  REQUIRE(server.Push("command", EncodeCommand(report)));
  REQUIRE(server.WaitForResults(6, absl::Seconds(20)));
  REQUIRE(server.WaitForReports(2, absl::Seconds(10)));

  const std::vector<Result> results = server.results();
  REQUIRE(results.size() == 6);
  // One worker, in the order the commands came.
  CHECK(results[0].command_id == "cmd_0000000000000001");
  CHECK(results[5].command_id == "cmd_0000000000000006");
  const Result* exec = FindResult(results, "cmd_0000000000000001");
  REQUIRE(exec != nullptr);
  CHECK(exec->status == core::ExecutionStatus::kSucceeded);
  REQUIRE(exec->exec.has_value());
  CHECK(exec->exec->output == "Linux\n");
  CHECK(FindResult(results, "cmd_0000000000000002")->status == core::ExecutionStatus::kSucceeded);
  CHECK(FindResult(results, "cmd_0000000000000003")->reason_code == "agent_allowlist");
  CHECK(FindResult(results, "cmd_0000000000000004")->reason_code == "wrong_host");
  CHECK(FindResult(results, "cmd_0000000000000005")->reason_code == "deadline_passed");
  CHECK(FindResult(results, "cmd_0000000000000006")->reason_code == "agent_classifier");
  CHECK(rig.Restarts("nginx") == 1);
  CHECK(rig.Restarts("sshd") == 0);
  CHECK(server.reports().back().in_reply_to == "cmd_0000000000000007");
  CHECK(server.malformed() == 0);

  // The server sends the dispatch again (it did not see the result in time): replayed.
  REQUIRE(server.Push("command",
                      dispatch("cmd_0000000000000008", "act_2", "service:web1/nginx", "restart")));
  REQUIRE(server.WaitForResults(7, absl::Seconds(10)));
  const std::vector<Result> after = server.results();  // FindResult points into it
  const Result* replay = FindResult(after, "cmd_0000000000000008");
  REQUIRE(replay != nullptr);
  CHECK(replay->replayed);
  CHECK(replay->status == core::ExecutionStatus::kSucceeded);
  CHECK(rig.Restarts("nginx") == 1);
  CHECK(running.Stop().ok());
}

TEST_CASE("a dropped stream is dialled again after a growing jittered backoff",
          "[adapters][hostagent][runtime]") {
  FakeAgentServer server;
  testing::ServerScript script;
  script.end_streams_after_hello = true;
  server.SetScript(script);
  AgentRig rig;
  auto runtime = OpenRuntime(rig, Options(server, server.Token()));
  Running running(*runtime);
  REQUIRE(server.WaitForStreams(5, absl::Seconds(15)));
  CHECK(running.Stop().ok());
  const std::vector<absl::Time> at = server.stream_times();
  // Delays of 100, 200, 400, 800 ms, each ±20 %, plus the time a dial takes.
  const absl::Duration first = at[1] - at[0];
  const absl::Duration fourth = at[4] - at[3];
  CHECK(first >= absl::Milliseconds(80));
  CHECK(fourth >= absl::Milliseconds(640));
  CHECK(fourth > first * 3);
  CHECK(runtime->streams_opened() >= 5);

  // Backoff: doubling up to the cap, always within ±20 %.
  ReconnectBackoff backoff(absl::Seconds(1), absl::Seconds(60), 42);
  absl::Duration base = absl::Seconds(1);
  for (int i = 0; i < 10; ++i) {
    const absl::Duration d = backoff.Next();
    CHECK(d >= base * 0.8);
    CHECK(d <= base * 1.2);
    base = std::min(base * 2, absl::Seconds(60));
  }
  backoff.Reset();
  CHECK(backoff.Next() <= absl::Milliseconds(1200));
}

TEST_CASE("a hostile stream is dropped and dialled again without running anything",
          "[adapters][hostagent][runtime]") {
  AgentRig rig;
  for (const bool before_hello : {true, false}) {
    FakeAgentServer server;
    testing::ServerScript script;
    script.command_before_hello = before_hello;
    script.hello_host = before_hello ? "" : "web2";  // a greeting for another host
    server.SetScript(script);
    auto runtime = OpenRuntime(rig, Options(server, server.Token()));
    Running running(*runtime);
    REQUIRE(server.WaitForStreams(3, absl::Seconds(15)));
    // Once the server behaves, the agent settles on a stream and answers commands.
    server.SetScript({});
    REQUIRE(server.WaitForStreams(4, absl::Seconds(10)));
    absl::SleepFor(absl::Milliseconds(200));
    CHECK(runtime->streams_opened() >= 1);
    REQUIRE(server.Push("command", EncodeCommand(rig.Exec(before_hello ? "cmd_00000000000000b1"
                                                                       : "cmd_00000000000000b2",
                                                          "node:web1", "uname -s"))));
    REQUIRE(server.WaitForResults(1, absl::Seconds(10)));
    CHECK(server.results().size() == 1);
    CHECK(running.Stop().ok());
  }
  CHECK(rig.Restarts("nginx") == 0);
}

TEST_CASE("a refused token or host stops the agent at once", "[adapters][hostagent][runtime]") {
  AgentRig rig;
  {
    FakeAgentServer server;
    auto runtime = OpenRuntime(rig, Options(server, "pulse_not-a-real-token"));
    std::atomic<bool> stop{false};
    const absl::Time started = absl::Now();
    const absl::Status status = runtime->Run(stop);
    CHECK(absl::IsUnauthenticated(status));
    CHECK(std::string(status.message()).find("401") != std::string::npos);
    CHECK(absl::Now() - started < absl::Seconds(5));
    CHECK(absl::IsUnauthenticated(runtime->PostReport()));
  }
  {
    FakeAgentServer server;
    testing::ServerScript script;
    script.refuse_host = "web1";
    server.SetScript(script);
    auto runtime = OpenRuntime(rig, Options(server, server.Token()));
    std::atomic<bool> stop{false};
    const absl::Status status = runtime->Run(stop);
    CHECK(absl::IsPermissionDenied(status));
    CHECK(std::string(status.message()).find("agent_host_mismatch") != std::string::npos);
    // It did not hammer the server: one stream dial and at most one report.
    CHECK(server.requests() <= 2);
  }
}

TEST_CASE("stopping lets the running command finish and posts its result",
          "[adapters][hostagent][runtime]") {
  FakeAgentServer server;
  AgentRig rig;
  testing::WriteFile(rig.dir.File("bin/restart-sleep"), "1\n");
  auto runtime = OpenRuntime(rig, Options(server, server.Token()));
  auto running = std::make_unique<Running>(*runtime);
  REQUIRE(server.WaitForStreams(1, absl::Seconds(10)));
  REQUIRE(server.Push("command", EncodeCommand(rig.Dispatch("cmd_00000000000000d1", "act_d",
                                                            "service:web1/nginx", "restart"))));
  // The restart has begun (the stand-in logs it before it sleeps): stop now.
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (rig.Restarts("nginx") == 0 && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  REQUIRE(rig.Restarts("nginx") == 1);
  CHECK(running->Stop().ok());
  const std::vector<Result> results = server.results();  // FindResult points into it
  const Result* result = FindResult(results, "cmd_00000000000000d1");
  REQUIRE(result != nullptr);
  CHECK(result->status == core::ExecutionStatus::kSucceeded);
  CHECK(rig.state->Find("act_d", "act_d.dispatch.1")->state == AttemptState::kDone);
}

TEST_CASE("the agent stops promptly while the server is unreachable",
          "[adapters][hostagent][runtime]") {
  FakeAgentServer server;
  AgentRig rig;
  AgentRuntimeOptions options = Options(server, server.Token());
  options.server_url = "http://127.0.0.1:1";  // nothing listens: refused, backing off
  options.backoff_initial = absl::Seconds(30);
  auto runtime = OpenRuntime(rig, options);
  Running running(*runtime);
  absl::SleepFor(absl::Milliseconds(300));
  const absl::Time stopping = absl::Now();
  CHECK(running.Stop().ok());  // not fatal: a refused connection is transient
  CHECK(absl::Now() - stopping < absl::Seconds(2));
  CHECK(runtime->streams_opened() == 0);
}

TEST_CASE("one report is posted and accepted", "[adapters][hostagent][runtime]") {
  FakeAgentServer server;
  AgentRig rig;
  auto runtime = OpenRuntime(rig, Options(server, server.Token()));
  REQUIRE(runtime->PostReport().ok());
  REQUIRE(server.reports().size() == 1);
  CHECK(server.reports()[0].host == "web1");

  AgentRuntimeOptions bad = Options(server, server.Token());
  bad.server_url = "ftp://127.0.0.1:1";
  CHECK(absl::IsInvalidArgument(
      AgentRuntime::Open(bad, *rig.fleet, *rig.executor, rig.clock).status()));
  bad = Options(server, server.Token());
  bad.interval = absl::Milliseconds(10);
  CHECK(absl::IsInvalidArgument(
      AgentRuntime::Open(bad, *rig.fleet, *rig.executor, rig.clock).status()));
  // Nothing listens: Unavailable, not fatal.
  bad = Options(server, server.Token());
  bad.server_url = "http://127.0.0.1:1";
  auto unreachable = OpenRuntime(rig, bad);
  CHECK(absl::IsUnavailable(unreachable->PostReport()));
}

}  // namespace
}  // namespace pulse::adapters::hostagent
