// The README's "A Proxmox source without a cluster", step by step: `pulse-fake-pve --demo
// --background` serves the demo fleet as a Proxmox VE API and writes a sources file and the
// token's secret; `pulse-server fleet-credential set` seals the secret from that file; a
// pulse-server on that sources file lists the demo's nodes, VMs and storage as a proxmox-ve
// source. Also: the tool's refusals (both or neither of --demo and --scenario, no --dir).
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

// Stops the backgrounded fake (its pid file) when the test ends, however it ends.
struct StopFake {
  std::string pid_file;
  ~StopFake() {
    std::ifstream in(pid_file);
    std::string text;
    int pid = 0;
    if (std::getline(in, text) && absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &pid) &&
        pid > 1) {
      ::kill(pid, SIGTERM);
    }
  }
};

TEST_CASE("the README's Proxmox source without a cluster: pulse-fake-pve serves the demo fleet",
          "[e2e][server][fleet][proxmox]") {
  TempDir dir;
  const std::string fake_dir = dir.File("fake-pve");
  const Captured started =
      RunCommand({PULSE_FAKE_PVE_BINARY, "--demo", "--dir", fake_dir, "--background"});
  StopFake stop{fake_dir + "/pid"};
  INFO(started.err);
  REQUIRE(started.exit_code == 0);
  CHECK(started.out.find(R"("url": "https://127.0.0.1:)") != std::string::npos);
  CHECK(started.out.find(R"("fingerprint": ")") != std::string::npos);

  const Captured set = RunCommand(
      {"/bin/sh", "-c",
       absl::StrCat("'", ServerBinary(), "' fleet-credential set --data-dir '", dir.path(),
                    "' pve < '", fake_dir, "/token-secret'")});
  INFO(set.err);
  REQUIRE(set.exit_code == 0);

  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fake_dir + "/fleet.json"}});
  const Reply context = Send(server.port(), "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  CHECK(context.body.find(R"("kind":"proxmox-ve")") != std::string::npos);
  for (const char* id : {"node:pve1", "node:pve3", "vm:101", "vm:105", "vm:109",
                         "storage:pve2/local-zfs", "storage:pve3/backup-nfs"}) {
    INFO(id);
    CHECK(context.body.find(absl::StrCat("\"", id, "\"")) != std::string::npos);
  }
  CHECK(context.body.find("app-container:") == std::string::npos);  // not PVE resources
}

TEST_CASE("pulse-fake-pve refuses a bad command line", "[e2e][server][fleet][proxmox]") {
  TempDir dir;
  CHECK(RunCommand({PULSE_FAKE_PVE_BINARY, "--dir", dir.path()}).exit_code == 2);
  CHECK(RunCommand({PULSE_FAKE_PVE_BINARY, "--demo", "--scenario", "x.json", "--dir", dir.path()})
            .exit_code == 2);
  CHECK(RunCommand({PULSE_FAKE_PVE_BINARY, "--demo"}).exit_code != 0);
  const Captured missing =
      RunCommand({PULSE_FAKE_PVE_BINARY, "--scenario", dir.File("none.json"), "--dir",
                  dir.File("d"), "--background"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("cannot read") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
