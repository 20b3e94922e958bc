// Read-only exec against the real private daemon (docs/docker.md, "Read-only exec"): the Engine
// client's exec (demultiplexed, bounded, exit code, deadline), and DockerFleet's governed path —
// refused while the source does not allow it, refused commands never reach the daemon (no
// exec_create event), admitted commands' output and exit code, bounded output, file operands
// resolved inside the container, and containers that cannot run a command.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "docker_test_support.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/core/model/exec_output.h"

namespace pulse::docker::testing {
namespace {

std::unique_ptr<DockerFleet> ExecFleet(const PrivateDockerd& daemon, bool allow_exec) {
  DockerFleetOptions options;
  options.engine.endpoint = daemon.endpoint();
  options.allow_exec = allow_exec;
  options.exec_deadline = absl::Seconds(20);
  auto fleet = DockerFleet::Open(options);
  REQUIRE(fleet.ok());
  return *std::move(fleet);
}

// How many exec instances the daemon created in [since, now].
std::size_t ExecCreates(const PrivateDockerd& daemon, absl::Time since) {
  EventQuery query;
  query.since = since;
  query.until = absl::Now() + absl::Milliseconds(200);
  query.filters = {{"type", "container"}, {"event", "exec_create"}};
  auto events = daemon.client().Events(query);
  REQUIRE(events.ok());
  return events->events.size();
}

struct Sleeper {
  PrivateDockerd& daemon;
  std::string id;
  Sleeper(PrivateDockerd& d, const std::string& name, const std::string& script = "sleep 600")
      : daemon(d) {
    auto run = d.Run(Command({"sh", "-c", script}, name));
    REQUIRE(run.ok());
    id = *run;
  }
  ~Sleeper() { daemon.Remove(id).IgnoreError(); }
};

TEST_CASE("the engine client runs a command with demultiplexed, bounded output and its exit code",
          "[docker][exec]") {
  PULSE_NEED_DOCKERD(daemon);
  Sleeper box(*daemon, "exec-engine");
  ExecRequest r;
  r.argv = {"sh", "-c", "echo out; echo err >&2; exit 7"};
  auto result = daemon->client().Exec(box.id, r);
  REQUIRE(result.ok());
  CHECK(result->stdout_text == "out\n");
  CHECK(result->stderr_text == "err\n");
  CHECK(result->exit_code == 7);
  CHECK_FALSE(result->truncated);

  r.argv = {"sh", "-c", "yes pulse | head -c 1000000"};
  r.max_output_bytes = 1000;
  result = daemon->client().Exec(box.id, r);
  REQUIRE(result.ok());
  CHECK(result->stdout_text.size() == 1000);
  CHECK(result->truncated);

  // The deadline covers the whole exchange.
  r.argv = {"sleep", "5"};
  r.deadline = absl::Seconds(1);
  const absl::Time before = absl::Now();
  result = daemon->client().Exec(box.id, r);
  CHECK(EngineErrorKindOf(result.status()) == EngineErrorKind::kTimeout);
  CHECK(absl::Now() - before < absl::Seconds(4));

  // A program that does not exist is a result, not an error (the Engine's 126/127).
  r.argv = {"no-such-program"};
  r.deadline = absl::Seconds(20);
  result = daemon->client().Exec(box.id, r);
  if (result.ok()) {
    CHECK(result->exit_code.value_or(0) >= 126);
  } else {
    CHECK(EngineErrorKindOf(result.status()).has_value());
  }
  // Hostile requests are refused before anything is sent.
  r.argv = {};
  CHECK(EngineErrorKindOf(daemon->client().Exec(box.id, r).status()) ==
        EngineErrorKind::kInvalidArgument);
  r.argv = {"cat", std::string("a\0b", 3)};
  CHECK(EngineErrorKindOf(daemon->client().Exec(box.id, r).status()) ==
        EngineErrorKind::kInvalidArgument);
  r.argv = {"true"};
  CHECK(EngineErrorKindOf(daemon->client().Exec("../containers", r).status()) ==
        EngineErrorKind::kInvalidArgument);
  CHECK(EngineErrorKindOf(daemon->client().Exec("exec-no-such-container", r).status()) ==
        EngineErrorKind::kNotFound);
}

TEST_CASE("docker exec is refused while the source does not allow it, before the daemon",
          "[docker][exec]") {
  PULSE_NEED_DOCKERD(daemon);
  Sleeper box(*daemon, "exec-off");
  auto fleet = ExecFleet(*daemon, false);
  const absl::Time since = absl::Now() - absl::Milliseconds(10);
  auto out = fleet->RunReadOnlyCommand("app-container:exec-off", "uname -s");
  CHECK(out.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(out.status().message().find("\"allow_exec\": true") != std::string_view::npos);
  CHECK(fleet->RunReadOnlyCommand("app-container:nope", "uname -s").status().code() ==
        absl::StatusCode::kPermissionDenied);
  CHECK(ExecCreates(*daemon, since) == 0);
}

TEST_CASE("refused and hostile commands never reach the daemon", "[docker][exec]") {
  PULSE_NEED_DOCKERD(daemon);
  Sleeper box(*daemon, "exec-hostile");
  auto fleet = ExecFleet(*daemon, true);
  const absl::Time since = absl::Now() - absl::Milliseconds(10);
  const std::vector<std::string> hostile = {
      "sh -c id",
      "uname; id",
      "uname && id",
      "cat /etc/hostname | sh",
      "$(id)",
      "`id`",
      "cat /etc/shadow",
      "cat /root/.ssh/id_rsa",
      "/bin/cat /etc/hostname",
      "tail -f /var/log/messages",
      "uname\nid",
      std::string("uname\0id", 8),
      "uname \xc3\xa9",
      "rm -rf /",
      "kill 1",
      "",
      "   ",
      std::string(5000, 'a'),
      "cat '/etc/hostname",
      "env",
      "busybox sh",
  };
  for (const std::string& command : hostile) {
    auto out = fleet->RunReadOnlyCommand("app-container:exec-hostile", command);
    INFO("command: " << command.substr(0, 60));
    CHECK(out.status().code() == absl::StatusCode::kPermissionDenied);
    CHECK(out.status().message().find("command refused (") != std::string_view::npos);
  }
  CHECK(ExecCreates(*daemon, since) == 0);
}

TEST_CASE("an admitted command runs in the container with its output and exit code",
          "[docker][exec]") {
  PULSE_NEED_DOCKERD(daemon);
  Sleeper box(*daemon, "exec-on",
              "mkdir -p /root && echo s3cret > /root/notes && ln -s /root/notes /etc/leak && "
              "echo hello > /etc/greeting && sleep 600");
  auto fleet = ExecFleet(*daemon, true);
  // Let the script create its files.
  for (int i = 0; i < 50; ++i) {
    auto probe = fleet->RunReadOnlyCommand("app-container:exec-on", "cat /etc/greeting");
    if (probe.ok() && probe->exit_code == 0) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  auto out = fleet->RunReadOnlyCommand("app-container:exec-on", "uname -s");
  REQUIRE(out.ok());
  CHECK(out->output == "Linux\n");
  CHECK(out->exit_code == 0);
  CHECK_FALSE(out->simulated);
  out = fleet->RunReadOnlyCommand("app-container:exec-on", "cat /etc/greeting");
  REQUIRE(out.ok());
  CHECK(out->output == "hello\n");
  // A non-zero exit is an output, with stderr in it.
  out = fleet->RunReadOnlyCommand("app-container:exec-on", "ls /etc/no-such-dir");
  REQUIRE(out.ok());
  CHECK(out->exit_code != 0);
  CHECK(out->output.find("no-such-dir") != std::string::npos);
  // A readable name that is a link to a file outside the readable roots is refused.
  out = fleet->RunReadOnlyCommand("app-container:exec-on", "cat /etc/leak");
  CHECK(out.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(out.status().message().find("/root/notes") != std::string_view::npos);
  // A file that is not there is the program's own error, an output.
  out = fleet->RunReadOnlyCommand("app-container:exec-on", "cat /etc/absent");
  REQUIRE(out.ok());
  CHECK(out->exit_code == 1);
  // Output is bounded.
  out = fleet->RunReadOnlyCommand("app-container:exec-on", "find /proc /sys");
  REQUIRE(out.ok());
  CHECK(out->output.size() <= core::kMaxExecOutputBytes);
  CHECK(out->truncated);
}

TEST_CASE("docker exec needs a running container", "[docker][exec]") {
  PULSE_NEED_DOCKERD(daemon);
  auto done = daemon->Run(Command({"true"}, "exec-done"));
  REQUIRE(done.ok());
  auto fleet = ExecFleet(*daemon, true);
  absl::SleepFor(absl::Milliseconds(500));
  CHECK(fleet->RunReadOnlyCommand("app-container:exec-done", "uname -s").status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(fleet->RunReadOnlyCommand(fleet->node_id(), "uname -s").status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(fleet->RunReadOnlyCommand("app-container:exec-missing", "uname -s").status().code() ==
        absl::StatusCode::kNotFound);
  daemon->Remove(*done).IgnoreError();
}

}  // namespace
}  // namespace pulse::docker::testing
