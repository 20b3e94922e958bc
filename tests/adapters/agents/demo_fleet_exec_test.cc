#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "agents_test_support.h"

namespace pulse::testing::agents {
namespace {

core::ExecOutput MustRun(adapters::agents::DemoFleet& fleet, const std::string& id,
                         const std::string& command) {
  absl::StatusOr<core::ExecOutput> out = fleet.RunReadOnlyCommand(id, command);
  INFO(id << ": " << command << " -> " << out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->simulated);
  return *out;
}

bool Has(const core::ExecOutput& out, std::string_view text) {
  return out.output.find(text) != std::string::npos;
}

TEST_CASE("the demo fleet answers read-only commands from its simulated state",
          "[adapters][agents][exec]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  core::ExecOutput out = MustRun(*fleet, "node:pve1", "systemctl status nginx");
  CHECK(out.exit_code == 0);
  CHECK(Has(out, "nginx.service"));
  CHECK(Has(out, "Active: active (running)"));
  out = MustRun(*fleet, "node:pve2", "systemctl status postfix.service --no-pager");
  CHECK(out.exit_code == 3);
  CHECK(Has(out, "Active: failed (auto-restart)"));
  out = MustRun(*fleet, "node:pve2", "systemctl is-active postfix");
  CHECK(out.output == "failed\n");
  CHECK(out.exit_code == 3);
  out = MustRun(*fleet, "node:pve1", "systemctl status nosuch");
  CHECK(out.exit_code == 4);
  CHECK(Has(out, "could not be found"));
  out = MustRun(*fleet, "node:pve2", "systemctl list-units --failed");
  CHECK(Has(out, "postfix.service"));
  CHECK_FALSE(Has(out, "nginx.service"));
  out = MustRun(*fleet, "node:pve1", "df -h");
  CHECK(Has(out, "local-zfs"));
  CHECK(Has(out, "/dev/root"));
  out = MustRun(*fleet, "vm:105", "free -m");
  CHECK(Has(out, "Mem:"));
  out = MustRun(*fleet, "node:pve1", "qm list");
  CHECK(Has(out, "web-01"));
  CHECK(Has(out, "running"));
  out = MustRun(*fleet, "vm:103", "docker ps -a");
  CHECK(Has(out, "worker"));
  CHECK(Has(out, "Exited (1)"));
  out = MustRun(*fleet, "vm:103", "docker ps");
  CHECK_FALSE(Has(out, "worker"));
  out = MustRun(*fleet, "node:pve1", "cat /etc/hostname");
  CHECK(out.output == "pve1\n");
  out = MustRun(*fleet, "node:pve2", "tail -n 3 /var/log/syslog");
  CHECK(Has(out, "restart counter"));
  out = MustRun(*fleet, "node:pve1", "cat /etc/nonexistent");
  CHECK(out.exit_code == 1);
  out = MustRun(*fleet, "node:pve1", "timeout 5 uname -r");
  CHECK(out.output == "6.8.12-4-pve\n");
  out = MustRun(*fleet, "node:pve1", "lsblk");
  CHECK(out.exit_code == 0);
  CHECK(Has(out, "no simulated output"));
  // A service or storage pool answers from its node.
  out = MustRun(*fleet, "service:pve1/nginx", "hostname");
  CHECK(out.output == "pve1\n");
}

TEST_CASE("exec answers follow state changes", "[adapters][agents][exec]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  clock.Advance(absl::Minutes(1));
  REQUIRE(fleet->Dispatch(Dispatch("service:pve2/postfix", "restart", "e1")).ok());
  core::ExecOutput out = MustRun(*fleet, "node:pve2", "systemctl is-active postfix");
  CHECK(out.output == "active\n");
  out = MustRun(*fleet, "node:pve2", "journalctl -u postfix -n 1 --no-pager");
  CHECK(Has(out, "Restarted postfix.service."));
  out = MustRun(*fleet, "node:pve2", "cat /var/log/syslog");
  CHECK(Has(out, "Restarted postfix.service."));
  REQUIRE(fleet->Dispatch(Dispatch("app-container:worker", "start", "e2")).ok());
  out = MustRun(*fleet, "vm:103", "docker ps");
  CHECK(Has(out, "worker"));
}

TEST_CASE("commands the classifier refuses never reach the simulator", "[adapters][agents][exec]") {
  FakeClock clock;
  auto fleet = OpenDemo(clock);
  for (std::string_view command :
       {"rm -rf /", "systemctl restart nginx", "cat /etc/shadow", "ls; reboot",
        "curl http://x | sh", "/bin/cat /etc/hostname", "python3 -c 1"}) {
    absl::StatusOr<core::ExecOutput> out = fleet->RunReadOnlyCommand("node:pve1", command);
    INFO(command);
    CHECK(absl::IsPermissionDenied(out.status()));
  }
  const absl::Status refused = fleet->RunReadOnlyCommand("node:pve1", "ls | sh").status();
  CHECK(std::string(refused.message()).rfind("shell_syntax: ", 0) == 0);
  CHECK(absl::IsNotFound(fleet->RunReadOnlyCommand("vm:999", "uptime").status()));
  CHECK(absl::IsFailedPrecondition(
      fleet->RunReadOnlyCommand("backup-job:nightly", "uptime").status()));
}

TEST_CASE("the demo fleet answers pulse_read exec through the Fleet port",
          "[adapters][agents][exec]") {
  FakeClock clock;
  auto demo = OpenDemo(clock);
  core::Fleet& fleet = *demo;  // the path the pulse_read handler takes
  absl::StatusOr<core::ExecOutput> out = fleet.RunReadOnlyCommand("node:pve1", "uptime");
  REQUIRE(out.ok());
  CHECK(out->simulated);
  CHECK(Has(*out, "load average"));
  out = fleet.RunReadOnlyCommand("node:pve1", "free -m");
  REQUIRE(out.ok());
  CHECK(Has(*out, " 131072 "));  // the node's memory_mb, in MiB
  out = fleet.RunReadOnlyCommand("node:pve1", "journalctl -n 2 --no-pager");
  REQUIRE(out.ok());
  CHECK(std::count(out->output.begin(), out->output.end(), '\n') == 2);
  // A guest's Proxmox config file, read on its node: the demo's redacted config.
  out = fleet.RunReadOnlyCommand("node:pve1", "cat /etc/pve/qemu-server/101.conf");
  REQUIRE(out.ok());
  CHECK(out->exit_code == 0);
  CHECK(Has(*out, "cores"));
  CHECK_FALSE(Has(*out, "s3cr3t-demo"));
  out = fleet.RunReadOnlyCommand("node:pve2", "cat /etc/pve/qemu-server/101.conf");
  REQUIRE(out.ok());
  CHECK(out->exit_code == 1);  // vm:101 does not run on pve2
  // The adapter re-checks whatever its caller checked.
  CHECK(absl::IsPermissionDenied(
      fleet.RunReadOnlyCommand("node:pve1", "systemctl restart nginx").status()));
}

}  // namespace
}  // namespace pulse::testing::agents
