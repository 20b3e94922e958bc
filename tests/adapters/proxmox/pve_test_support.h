// A FakePveServer (tests/fakes/include/pulse/testing/fake_pve_server.h) with a fresh
// certificate and the scenario the proxmox tests share: two nodes, a VM, a container, a
// template, storage on each node and an HA-managed VM.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

#include "pulse/adapters/proxmox/pve_fleet.h"
#include "pulse/testing/fake_pve_server.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::proxmox::testing {

inline constexpr char kTokenId[] = "pulse@pve!pulse";
inline constexpr char kSecret[] = "5f0c4a4e-2f3b-4c1d-9a7e-0d9b8a6c1e21";

inline constexpr char kScenario[] = R"({
  "version": "8.2.4",
  "tokens": {"pulse@pve!pulse": "5f0c4a4e-2f3b-4c1d-9a7e-0d9b8a6c1e21",
             "audit@pve!ro": "another-secret"},
  "nodes": [
    {"node": "pve1", "status": "online", "cpu": 0.12, "maxcpu": 8, "mem": 8589934592,
     "maxmem": 34359738368, "disk": 10737418240, "maxdisk": 107374182400, "uptime": 86400},
    {"node": "pve2", "status": "online", "cpu": 0.5, "maxcpu": 4, "mem": 4294967296,
     "maxmem": 17179869184, "disk": 5368709120, "maxdisk": 53687091200, "uptime": 3600}
  ],
  "guests": [
    {"type": "qemu", "vmid": 101, "node": "pve1", "name": "web", "status": "running",
     "cpus": 2, "cpu": 0.25, "mem": 1073741824, "maxmem": 2147483648, "maxdisk": 34359738368,
     "uptime": 7200},
    {"type": "qemu", "vmid": 102, "node": "pve2", "name": "db", "status": "stopped", "cpus": 4,
     "maxmem": 8589934592, "maxdisk": 68719476736},
    {"type": "lxc", "vmid": 201, "node": "pve1", "name": "dns", "status": "running", "cpus": 1,
     "cpu": 0.01, "mem": 67108864, "maxmem": 536870912, "disk": 1073741824,
     "maxdisk": 8589934592, "uptime": 600},
    {"type": "qemu", "vmid": 9000, "node": "pve1", "name": "debian-tpl", "status": "stopped",
     "template": 1, "maxmem": 2147483648}
  ],
  "storage": [
    {"node": "pve1", "storage": "local", "type": "dir", "content": "iso,vztmpl,backup",
     "total": 107374182400, "used": 96636764160},
    {"node": "pve1", "storage": "local-zfs", "type": "zfspool", "content": "images,rootdir",
     "total": 536870912000, "used": 107374182400},
    {"node": "pve2", "storage": "local", "type": "dir", "content": "iso,vztmpl,backup",
     "total": 53687091200, "used": 5368709120}
  ],
  "ha": [{"sid": "vm:101", "state": "started"}],
  "task_polls": 1
})";

// A running fake PVE and the options of a source that pins its certificate.
struct PveHarness {
  pulse::testing::TempDir dir{"pulse-pve"};
  pulse::testing::TestCertificate cert;
  std::unique_ptr<pulse::testing::FakePveServer> server;

  explicit PveHarness(const char* scenario = kScenario) {
    absl::StatusOr<pulse::testing::TestCertificate> made =
        pulse::testing::MakeTestCertificate(dir.path());
    INFO(made.status().ToString());
    REQUIRE(made.ok());
    cert = *made;
    absl::StatusOr<std::unique_ptr<pulse::testing::FakePveServer>> started =
        pulse::testing::FakePveServer::Start(scenario, cert);
    INFO(started.status().ToString());
    REQUIRE(started.ok());
    server = *std::move(started);
  }

  PveFleetOptions Options(bool allow_actions = true) const {
    PveFleetOptions options;
    options.client.url = server->url();
    options.client.token_id = kTokenId;
    options.client.token_secret = kSecret;
    options.client.fingerprint = cert.fingerprint;
    options.client.timeouts.connect = absl::Seconds(3);
    options.client.timeouts.response_header = absl::Seconds(3);
    options.allow_actions = allow_actions;
    options.action_deadline = absl::Seconds(10);
    options.task_poll_interval = absl::Milliseconds(20);
    options.observe_timeout = absl::Seconds(2);
    options.observe_poll_interval = absl::Milliseconds(20);
    options.max_staleness = absl::Milliseconds(200);
    return options;
  }

  std::unique_ptr<PveFleet> Open(bool allow_actions = true) const {
    absl::StatusOr<std::unique_ptr<PveFleet>> fleet = PveFleet::Open(Options(allow_actions));
    INFO(fleet.status().ToString());
    REQUIRE(fleet.ok());
    return *std::move(fleet);
  }
};

inline core::DispatchRequest Request(std::string id, std::string capability,
                                     std::string attempt = "a1") {
  core::DispatchRequest r;
  r.action_id = "act_" + attempt;
  r.attempt_id = attempt + ".dispatch.1";
  r.resource_id = std::move(id);
  r.capability_name = std::move(capability);
  r.params_json = "{}";
  return r;
}

}  // namespace pulse::proxmox::testing
