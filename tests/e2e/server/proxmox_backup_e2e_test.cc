// pulse-server over a --fleet file holding a proxmox-ve and a proxmox-backup source, against
// the loopback fakes (tests/fakes: fake_pve_server.h, fake_pbs_server.h): each token secret
// entered with `pulse-server fleet-credential set` (stdin), fleet-context lists the Backup
// Server's datastores and backup groups beside the cluster (a group names the PVE guest it backs
// up), Patrol finds the nearly full datastore, the failed verification job and the stale backup;
// a PBS token revoked while the server runs makes that source down with PBS's 401 named while
// the PVE source stays up. A fingerprint mismatch stops the start before the token is sent.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/testing/fake_pbs_server.h"
#include "pulse/testing/fake_pve_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kPveSecret[] = "0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d";
constexpr char kPbsSecret[] = "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";

constexpr char kPveScenario[] = R"({
  "version": "8.2.4",
  "tokens": {"pulse@pve!pulse": "0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"},
  "nodes": [{"node": "pve1", "status": "online", "cpu": 0.1, "maxcpu": 8, "mem": 4294967296,
             "maxmem": 34359738368, "disk": 1073741824, "maxdisk": 107374182400,
             "uptime": 86400}],
  "guests": [{"type": "qemu", "vmid": 101, "node": "pve1", "name": "web", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296, "uptime": 3600},
             {"type": "qemu", "vmid": 102, "node": "pve1", "name": "db", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296, "uptime": 3600}]
})";

constexpr char kPbsScenario[] = R"({
  "version": "3.2", "release": "7", "hostname": "pbs1",
  "tokens": {"pulse@pbs!pulse": "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"},
  "datastores": [{"store": "main", "total": 1000000000000, "used": 960000000000}],
  "snapshots": [
    {"store": "main", "backup-type": "vm", "backup-id": "101", "age_seconds": 3600,
     "size": 21000000000, "verification": "ok"},
    {"store": "main", "backup-type": "vm", "backup-id": "102", "age_seconds": 259200,
     "size": 50000000000, "verification": "ok"}
  ],
  "tasks": [
    {"worker_type": "verificationjob", "worker_id": "main:v-daily", "age_seconds": 1800,
     "status": "verification failed - please check the log for details"},
    {"worker_type": "garbage_collection", "worker_id": "main", "age_seconds": 40000,
     "status": "OK"}
  ]
})";

std::string SourcesFile(const TempDir& dir, const FakePveServer& pve, const std::string& pve_pin,
                        const FakePbsServer& pbs, const std::string& pbs_pin) {
  const std::string path = dir.File("fleet.json");
  std::ofstream(path) << R"({"sources": [)"
                      << R"({"name": "pve", "kind": "proxmox-ve", "url": ")" << pve.url()
                      << R"(", "token_id": "pulse@pve!pulse", "fingerprint": ")" << pve_pin
                      << R"(", "max_staleness_ms": 0},)"
                      << R"({"name": "pbs", "kind": "proxmox-backup", "url": ")" << pbs.url()
                      << R"(", "token_id": "pulse@pbs!pulse", "fingerprint": ")" << pbs_pin
                      << R"(", "max_staleness_ms": 0}]})";
  return path;
}

Captured SetSecret(const std::string& data_dir, const std::string& source,
                   const std::string& secret) {
  return RunCommand({"/bin/sh", "-c",
                     absl::StrCat("printf '%s\\n' '", secret, "' | '", ServerBinary(),
                                  "' fleet-credential set --data-dir '", data_dir, "' ", source)});
}

// Runs Patrol once and answers the ids of the findings it lists.
std::vector<std::string> PatrolFindings(int port, const std::string& token) {
  const Reply started = Send(port, "POST", "/api/ai/patrol/run", token);
  INFO(started.body);
  REQUIRE(started.status == 200);
  const std::string run_id = Str(Json(started.body), "run_id");
  std::string status = "running";
  for (int i = 0; i < 600 && status == "running"; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    status = Str(Json(Send(port, "GET", "/api/ai/patrol/runs/" + run_id, token).body), "status");
  }
  REQUIRE(status != "running");
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  const rapidjson::Document findings = Json(list.body);
  std::vector<std::string> ids;
  for (const rapidjson::Value& f : findings.GetArray()) {
    ids.push_back(Str(f, "id"));
  }
  return ids;
}

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

struct Fakes {
  TempDir dir;
  TestCertificate pve_cert, pbs_cert;
  std::unique_ptr<FakePveServer> pve;
  std::unique_ptr<FakePbsServer> pbs;

  Fakes() {
    absl::StatusOr<TestCertificate> pve_made = MakeTestCertificate(dir.path(), "pve");
    absl::StatusOr<TestCertificate> pbs_made = MakeTestCertificate(dir.path(), "pbs");
    REQUIRE(pve_made.ok());
    REQUIRE(pbs_made.ok());
    pve_cert = *pve_made;
    pbs_cert = *pbs_made;
    absl::StatusOr<std::unique_ptr<FakePveServer>> pve_started =
        FakePveServer::Start(kPveScenario, pve_cert);
    absl::StatusOr<std::unique_ptr<FakePbsServer>> pbs_started =
        FakePbsServer::Start(kPbsScenario, pbs_cert);
    REQUIRE(pve_started.ok());
    REQUIRE(pbs_started.ok());
    pve = *std::move(pve_started);
    pbs = *std::move(pbs_started);
  }
};

TEST_CASE("pulse-server reads a proxmox-backup source and Patrol finds its full datastore",
          "[e2e][server][fleet][proxmox][pbs]") {
  Fakes fakes;
  const std::string fleet = SourcesFile(fakes.dir, *fakes.pve, fakes.pve_cert.fingerprint,
                                        *fakes.pbs, fakes.pbs_cert.fingerprint);
  REQUIRE(SetSecret(fakes.dir.path(), "pve", kPveSecret).exit_code == 0);
  const Captured set = SetSecret(fakes.dir.path(), "pbs", kPbsSecret);
  INFO(set.err);
  REQUIRE(set.exit_code == 0);
  CHECK(set.out.find(kPbsSecret) == std::string::npos);

  const std::string reader = MintToken(fakes.dir.path(), "monitoring:read", "reader");
  const std::string patrol = MintToken(fakes.dir.path(), "ai:execute,monitoring:read", "patrol");
  ServerProcess server(fakes.dir.path(), ServerOptions{{"--fleet", fleet}});
  const int port = server.port();

  const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  CHECK(context.body.find("vm:101") != std::string::npos);
  CHECK(context.body.find("datastore:pbs/main") != std::string::npos);
  CHECK(context.body.find("backup-group:pbs/main/vm/101") != std::string::npos);
  CHECK(context.body.find(R"("kind":"proxmox-backup")") != std::string::npos);
  // Only the token header ever reached the Backup Server, never a secret in a URL or body.
  for (const FakePveRequest& r : fakes.pbs->Requests()) {
    CHECK(r.method == "GET");
    CHECK(r.target.find(kPbsSecret) == std::string::npos);
    CHECK(r.authorization == absl::StrCat("PBSAPIToken=pulse@pbs!pulse:", kPbsSecret));
  }

  const std::vector<std::string> found = PatrolFindings(port, patrol);
  CHECK(Has(found, core::FindingIdFor("datastore:pbs/main", core::Category::kCapacity,
                                      "pbs-datastore-full")));
  CHECK(Has(found,
            core::FindingIdFor("datastore:pbs/main", core::Category::kBackup, "pbs-job-failed")));
  CHECK(Has(found, core::FindingIdFor("backup-group:pbs/main/vm/102", core::Category::kBackup,
                                      "pbs-backup-stale")));
  CHECK_FALSE(Has(found, core::FindingIdFor("backup-group:pbs/main/vm/101", core::Category::kBackup,
                                            "pbs-backup-stale")));

  // The PBS token is revoked while the server runs: that source is down with PBS's 401 named,
  // its resources still listed; the PVE source stays up.
  fakes.pbs->RevokeToken("pulse@pbs!pulse");
  const Reply down = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(down.body);
  REQUIRE(down.status == 200);
  const rapidjson::Document down_doc = Json(down.body);
  REQUIRE(down_doc["sources"].Size() == 3);  // and the host agents' source
  for (const rapidjson::Value& s : down_doc["sources"].GetArray()) {
    if (Str(s, "name") == "pbs") {
      CHECK(Str(s, "state") == "down");
      CHECK(Str(s, "error").find("401") != std::string::npos);
      CHECK(Str(s, "error").find("user account or token disabled or expired") != std::string::npos);
      CHECK(Str(s, "error").find(kPbsSecret) == std::string::npos);
    } else {
      CHECK(Str(s, "state") == "up");
    }
  }
  CHECK(down.body.find("datastore:pbs/main") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a proxmox-backup fingerprint mismatch stops pulse-server before the token is sent",
          "[e2e][server][fleet][proxmox][pbs]") {
  Fakes fakes;
  const std::string data = fakes.dir.File("data");
  REQUIRE(SetSecret(data, "pve", kPveSecret).exit_code == 0);
  REQUIRE(SetSecret(data, "pbs", kPbsSecret).exit_code == 0);
  const std::string wrong = SourcesFile(fakes.dir, *fakes.pve, fakes.pve_cert.fingerprint,
                                        *fakes.pbs, std::string(64, 'b'));
  Captured mismatch =
      RunCommand({ServerBinary(), "--data-dir", data, "--listen", "127.0.0.1:0", "--fleet", wrong});
  CHECK(mismatch.exit_code != 0);
  CHECK(mismatch.err.find("fleet source \"pbs\"") != std::string::npos);
  CHECK(mismatch.err.find("pinned fingerprint") != std::string::npos);
  CHECK(mismatch.err.find(kPbsSecret) == std::string::npos);
  CHECK(fakes.pbs->Requests().empty());
  CHECK(fakes.pbs->Handshakes() == 0);
}

}  // namespace
}  // namespace pulse::testing::e2e
