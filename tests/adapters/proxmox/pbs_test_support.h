// A FakePbsServer (tests/fakes/include/pulse/testing/fake_pbs_server.h) with a fresh certificate
// and the scenario the proxmox-backup tests share: a datastore nearly full, a healthy one and
// one PBS cannot read; backups of two VMs (one stale), a container and a host; a garbage
// collection that succeeded, a verification job that failed and a prune job that succeeded.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

#include "pulse/adapters/proxmox/pbs_fleet.h"
#include "pulse/testing/fake_pbs_server.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::proxmox::testing {

inline constexpr char kPbsTokenId[] = "pulse@pbs!pulse";
inline constexpr char kPbsSecret[] = "0b7d3c1e-8a4f-4e26-9c55-2f1d6a9e7b30";

inline constexpr char kPbsScenario[] = R"({
  "version": "3.2", "release": "7", "hostname": "pbs1",
  "tokens": {"pulse@pbs!pulse": "0b7d3c1e-8a4f-4e26-9c55-2f1d6a9e7b30"},
  "datastores": [
    {"store": "main", "total": 1000000000000, "used": 930000000000},
    {"store": "offsite", "total": 4000000000000, "used": 1000000000000},
    {"store": "usb", "error": "datastore is not mounted"}
  ],
  "snapshots": [
    {"store": "main", "backup-type": "vm", "backup-id": "101", "age_seconds": 90000,
     "size": 20000000000, "verification": "ok"},
    {"store": "main", "backup-type": "vm", "backup-id": "101", "age_seconds": 3600,
     "size": 21000000000, "verification": "failed"},
    {"store": "main", "backup-type": "ct", "backup-id": "201", "age_seconds": 7200,
     "size": 800000000},
    {"store": "main", "backup-type": "vm", "backup-id": "102", "age_seconds": 259200,
     "size": 50000000000, "verification": "ok"},
    {"store": "offsite", "backup-type": "host", "backup-id": "files1", "age_seconds": 600,
     "size": 1000000, "verification": "ok"}
  ],
  "tasks": [
    {"worker_type": "garbage_collection", "worker_id": "main", "age_seconds": 40000,
     "status": "OK"},
    {"worker_type": "verificationjob", "worker_id": "main:v-daily", "age_seconds": 1800,
     "status": "verification failed - please check the log for details"},
    {"worker_type": "verificationjob", "worker_id": "main:v-daily", "age_seconds": 88000,
     "status": "OK"},
    {"worker_type": "prunejob", "worker_id": "main:p-daily", "age_seconds": 1200,
     "status": "OK"},
    {"worker_type": "syncjob", "worker_id": "remote1:store:offsite:s-1", "age_seconds": 300,
     "status": "OK"},
    {"worker_type": "backup", "worker_id": "main:vm/101", "age_seconds": 3600, "status": "OK"},
    {"worker_type": "garbage_collection", "worker_id": "offsite", "age_seconds": 10,
     "status": ""}
  ]
})";

// A running fake PBS and the options of a source that pins its certificate.
struct PbsHarness {
  pulse::testing::TempDir dir{"pulse-pbs"};
  pulse::testing::TestCertificate cert;
  std::unique_ptr<pulse::testing::FakePbsServer> server;

  explicit PbsHarness(const char* scenario = kPbsScenario) {
    absl::StatusOr<pulse::testing::TestCertificate> made =
        pulse::testing::MakeTestCertificate(dir.path(), "pbs");
    INFO(made.status().ToString());
    REQUIRE(made.ok());
    cert = *made;
    absl::StatusOr<std::unique_ptr<pulse::testing::FakePbsServer>> started =
        pulse::testing::FakePbsServer::Start(scenario, cert);
    INFO(started.status().ToString());
    REQUIRE(started.ok());
    server = *std::move(started);
  }

  PbsFleetOptions Options() const {
    PbsFleetOptions options;
    options.source_name = "pbs";
    options.client.url = server->url();
    options.client.token_id = kPbsTokenId;
    options.client.token_secret = kPbsSecret;
    options.client.fingerprint = cert.fingerprint;
    options.client.timeouts.connect = absl::Seconds(3);
    options.client.timeouts.response_header = absl::Seconds(3);
    options.max_staleness = absl::Milliseconds(200);
    return options;
  }

  std::unique_ptr<PbsFleet> Open() const {
    absl::StatusOr<std::unique_ptr<PbsFleet>> fleet = PbsFleet::Open(Options());
    INFO(fleet.status().ToString());
    REQUIRE(fleet.ok());
    return *std::move(fleet);
  }
};

}  // namespace pulse::proxmox::testing
