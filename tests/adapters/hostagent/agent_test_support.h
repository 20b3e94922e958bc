// Shared by the agent's tests: a private copy of the stand-in systemctl
// (tests/e2e/agent/fake-systemctl) with units in files, and the agent's parts wired over it
// for host "web1".
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/adapters/hostagent/agent_allowlist.h"
#include "pulse/adapters/hostagent/agent_docker.h"
#include "pulse/adapters/hostagent/agent_executor.h"
#include "pulse/adapters/hostagent/agent_state.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::adapters::hostagent::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
}

// Units nginx (active), pulse-demo-web (active) and sshd (active); allow.json permits restart
// and stop on nginx and pulse-demo-web only.
struct AgentRig {
  pulse::testing::TempDir dir{"pulse-agent-rig"};
  std::string systemctl = dir.File("bin/fake-systemctl");
  pulse::testing::FakeClock clock{absl::Now()};
  AgentAllowlist allowlist;
  std::unique_ptr<AgentStateFile> state;
  std::unique_ptr<agents::LocalHostFleet> fleet;
  std::unique_ptr<AgentExecutor> executor;
  std::optional<AgentDockerOptions> docker_options;  // set by UseDocker
  std::unique_ptr<AgentDocker> docker;
  std::vector<std::string> docker_log;  // the AgentDocker's transition lines

  explicit AgentRig(std::string allow_json = R"({"capabilities": ["restart", "stop"],
      "services": ["nginx", "pulse-demo-web"]})") {
    std::filesystem::create_directories(dir.File("bin/units"));
    std::filesystem::copy_file(PULSE_FAKE_SYSTEMCTL, systemctl);
    std::filesystem::permissions(systemctl, std::filesystem::perms::owner_all);
    for (const char* unit : {"nginx", "pulse-demo-web", "sshd"}) {
      WriteFile(dir.File(std::string("bin/units/") + unit + ".service.state"), "active\n");
    }
    absl::StatusOr<AgentAllowlist> allow = DecodeAllowlist(allow_json);
    REQUIRE(allow.ok());
    allowlist = *allow;
    Restart();
  }

  // The local Docker daemon at `endpoint` for the executor and the reports, with its switches
  // from allow.json as pulse-agent sets them (reads never cached, no background threads).
  void UseDocker(const std::string& endpoint) {
    AgentDockerOptions options;
    options.host = "web1";
    options.endpoint = endpoint;
    options.allow_actions = allowlist.docker;
    options.allow_exec = allowlist.docker && allowlist.exec;
    options.log = [this](bool up, std::string_view line) {
      docker_log.push_back(std::string(up ? "up: " : "down: ") + std::string(line));
    };
    options.fleet.max_staleness = absl::ZeroDuration();
    options.fleet.sample_interval = absl::ZeroDuration();
    options.fleet.watch_events = false;
    options.fleet.engine.call_timeout = absl::Seconds(20);
    docker_options = std::move(options);
    Restart();
  }

  // What a restarted agent process has: the state file read again, a fresh fleet.
  void Restart() {
    executor.reset();
    docker.reset();
    fleet.reset();
    state.reset();
    absl::StatusOr<std::unique_ptr<AgentStateFile>> opened =
        AgentStateFile::Open(dir.File("state"));
    REQUIRE(opened.ok());
    state = std::move(*opened);
    agents::LocalHostFleetOptions options = FleetOptionsFor(allowlist, "web1");
    options.systemctl_path = systemctl;
    absl::StatusOr<std::unique_ptr<agents::LocalHostFleet>> local =
        agents::LocalHostFleet::Open(options);
    REQUIRE(local.ok());
    fleet = std::move(*local);
    if (docker_options.has_value()) {
      absl::StatusOr<std::unique_ptr<AgentDocker>> created = AgentDocker::Create(*docker_options);
      REQUIRE(created.ok());
      docker = std::move(*created);
    }
    executor =
        std::make_unique<AgentExecutor>("web1", *fleet, allowlist, *state, clock, docker.get());
  }

  // How many times the stand-in restarted `unit`.
  int Restarts(const std::string& unit) const {
    const std::string log = ReadFile(dir.File("bin/units/" + unit + ".service.restarts"));
    return static_cast<int>(std::count(log.begin(), log.end(), '\n'));
  }
  std::string UnitState(const std::string& unit) const {
    return ReadFile(dir.File("bin/units/" + unit + ".service.state"));
  }

  Command Dispatch(std::string command_id, std::string action, std::string resource,
                   std::string capability) const {
    Command c;
    c.command_id = std::move(command_id);
    c.kind = CommandKind::kDispatch;
    c.issued_at = clock.Now();
    c.deadline = clock.Now() + absl::Seconds(60);
    c.action_id = action;
    c.attempt_id = action + ".dispatch.1";
    c.plan_hash = "sha256:plan";
    c.resource_id = std::move(resource);
    c.capability = std::move(capability);
    return c;
  }

  Command Exec(std::string command_id, std::string resource, std::string command) const {
    Command c;
    c.command_id = std::move(command_id);
    c.kind = CommandKind::kExec;
    c.issued_at = clock.Now();
    c.deadline = clock.Now() + absl::Seconds(60);
    c.resource_id = std::move(resource);
    c.exec_command = std::move(command);
    return c;
  }
};

}  // namespace pulse::adapters::hostagent::testing
