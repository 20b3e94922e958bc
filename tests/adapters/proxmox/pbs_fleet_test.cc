// PbsFleet against the loopback fake PBS (HTTPS, pinned certificate): resources and ids, the
// facts Patrol's rules read (datastore usage, job results, backup age and verification), the
// Fleet contract, the proxmox-backup settings and kind in pulse-server, and the faults a real
// server shows (bad or revoked token with PBS's 401 text, fingerprint mismatch before any
// request, a datastore filling, a verification job failing).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "contracts/fleet_contract.h"
#include "fleet_opening.h"
#include "pbs_test_support.h"
#include "pulse/adapters/proxmox/pbs_source.h"
#include "pulse/adapters/proxmox/pve_source.h"
#include "pulse/adapters/server/fleet_credential_command.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/testing/fake_clock.h"

namespace pulse::proxmox::testing {
namespace {

std::vector<std::string> Ids(PbsFleet& fleet) {
  core::FleetResourceQuery all;
  all.limit = core::kFleetMaxResults;
  absl::StatusOr<std::vector<core::FleetResource>> listed = fleet.ListResources(all);
  REQUIRE(listed.ok());
  std::vector<std::string> ids;
  for (const core::FleetResource& r : *listed) {
    ids.push_back(r.id);
  }
  return ids;
}

core::FleetStatus Status(PbsFleet& fleet, const std::string& id) {
  absl::StatusOr<core::FleetStatus> status = fleet.GetStatus(id);
  INFO(id << ": " << status.status().ToString());
  REQUIRE(status.ok());
  return *status;
}

std::vector<std::string> TriageKeys(PbsFleet& fleet, const std::string& id) {
  absl::StatusOr<core::FleetResource> resource = fleet.GetResource(id);
  REQUIRE(resource.ok());
  std::vector<std::string> keys;
  for (const core::FindingReport& r :
       core::TriageResource(*resource, Status(fleet, id), std::nullopt)) {
    keys.push_back(r.key);
  }
  return keys;
}

TEST_CASE("the proxmox-backup source lists the server, datastores and backup groups",
          "[adapters][proxmox][pbs]") {
  PbsHarness pbs;
  std::unique_ptr<PbsFleet> fleet = pbs.Open();
  CHECK(fleet->version() == "3.2.7");
  CHECK(Ids(*fleet) ==
        std::vector<std::string>{"backup-group:pbs/main/ct/201", "backup-group:pbs/main/vm/101",
                                 "backup-group:pbs/main/vm/102",
                                 "backup-group:pbs/offsite/host/files1", "datastore:pbs/main",
                                 "datastore:pbs/offsite", "datastore:pbs/usb", "pbs:pbs"});
  absl::StatusOr<core::FleetResource> main = fleet->GetResource("datastore:pbs/main");
  REQUIRE(main.ok());
  CHECK(main->type == "datastore");
  CHECK(main->status == "available");
  CHECK(main->parent_id == "pbs:pbs");
  CHECK(main->technology == "proxmox-backup");
  absl::StatusOr<core::FleetResource> web = fleet->GetResource("backup-group:pbs/main/vm/101");
  REQUIRE(web.ok());
  CHECK(web->attributes.at("guest") == "vm:101");
  CHECK(web->parent_id == "datastore:pbs/main");
  absl::StatusOr<core::FleetResource> dns = fleet->GetResource("backup-group:pbs/main/ct/201");
  REQUIRE(dns.ok());
  CHECK(dns->attributes.at("guest") == "lxc:201");
  absl::StatusOr<core::FleetResource> host =
      fleet->GetResource("backup-group:pbs/offsite/host/files1");
  REQUIRE(host.ok());
  CHECK(host->attributes.count("guest") == 0);
  core::FleetTopologyQuery around;
  around.root_id = "pbs:pbs";
  absl::StatusOr<core::FleetTopology> topology = fleet->GetTopology(around);
  REQUIRE(topology.ok());
  CHECK(std::count(topology->relationships.begin(), topology->relationships.end(),
                   core::FleetRelationship{"datastore:pbs/main", "pbs:pbs", "member_of"}) == 1);
  around.root_id = "datastore:pbs/main";
  topology = fleet->GetTopology(around);
  REQUIRE(topology.ok());
  CHECK(std::count(topology->relationships.begin(), topology->relationships.end(),
                   core::FleetRelationship{"backup-group:pbs/main/vm/101", "datastore:pbs/main",
                                           "member_of"}) == 1);
  // Read-only: no capabilities anywhere, and a dispatch sends nothing.
  const std::size_t seen = pbs.server->Requests().size();
  for (const std::string& id : Ids(*fleet)) {
    absl::StatusOr<std::vector<core::Capability>> caps = fleet->ListCapabilities(id);
    REQUIRE(caps.ok());
    CHECK(caps->empty());
  }
  core::DispatchRequest d;
  d.resource_id = "datastore:pbs/main";
  d.capability_name = "garbage-collect";
  d.attempt_id = "a.dispatch.1";
  CHECK(absl::IsFailedPrecondition(fleet->Dispatch(d).status()));
  // Every request carried PBS's token header (id and secret split by ':'), and only reads.
  const std::vector<pulse::testing::FakePveRequest> requests = pbs.server->Requests();
  CHECK(requests.size() == seen);
  for (const pulse::testing::FakePveRequest& r : requests) {
    CHECK(r.method == "GET");
    CHECK(r.authorization == std::string("PBSAPIToken=") + kPbsTokenId + ":" + kPbsSecret);
  }
}

TEST_CASE("proxmox-backup facts carry usage, job results, backup age and verification",
          "[adapters][proxmox][pbs]") {
  PbsHarness pbs;
  std::unique_ptr<PbsFleet> fleet = pbs.Open();
  const core::FleetStatus main = Status(*fleet, "datastore:pbs/main");
  CHECK(main.status == "available");
  CHECK(main.facts.at("usage_pct") == "93.0");
  CHECK(main.facts.at("total_bytes") == "1000000000000");
  CHECK(main.facts.at("gc_status") == "OK");
  CHECK(main.facts.at("verify_job_status") ==
        "verification failed - please check the log for details");
  CHECK(main.facts.at("prune_job_status") == "OK");
  CHECK(main.facts.at("failed_verifications") == "1");
  CHECK(main.facts.at("backup_groups") == "3");
  const core::FleetStatus offsite = Status(*fleet, "datastore:pbs/offsite");
  CHECK(offsite.facts.at("usage_pct") == "25.0");
  CHECK(offsite.facts.count("gc_status") == 0);  // its GC is still running; syncs are not read
  const core::FleetStatus usb = Status(*fleet, "datastore:pbs/usb");
  CHECK(usb.status == "error");
  CHECK(usb.facts.at("error") == "datastore is not mounted");
  CHECK(usb.facts.count("usage_pct") == 0);

  const core::FleetStatus web = Status(*fleet, "backup-group:pbs/main/vm/101");
  CHECK(web.status == "ok");
  CHECK(web.facts.at("guest") == "vm:101");
  CHECK(web.facts.at("snapshots") == "2");
  CHECK(web.facts.at("verify_state") == "failed");  // the newest snapshot's
  std::int64_t age = 0;
  REQUIRE(absl::SimpleAtoi(web.facts.at("last_backup_age_seconds"), &age));
  CHECK(age >= 3600);
  CHECK(age < 3700);
  CHECK(web.facts.at("backup_max_age_seconds") == "93600");
  const core::FleetStatus db = Status(*fleet, "backup-group:pbs/main/vm/102");
  CHECK(db.status == "stale");
  CHECK(Status(*fleet, "backup-group:pbs/main/ct/201").facts.at("verify_state") == "none");
  const core::FleetStatus server = Status(*fleet, "pbs:pbs");
  CHECK(server.facts.at("pbs_version") == "3.2.7");
  CHECK(server.facts.at("datastores") == "3");
  CHECK(server.facts.at("datastores_with_failures") == "1");

  core::FleetMetricQuery usage;
  usage.metric = "usage";
  usage.start = absl::Now() - absl::Minutes(5);
  usage.end = absl::Now() + absl::Minutes(1);
  absl::StatusOr<core::FleetMetricSeries> series =
      fleet->ReadMetricHistory("datastore:pbs/main", usage);
  REQUIRE(series.ok());
  REQUIRE_FALSE(series->points.empty());
  CHECK(series->points.back().value == Approx(93.0));
  usage.metric = "cpu";
  CHECK(absl::IsNotFound(fleet->ReadMetricHistory("datastore:pbs/main", usage).status()));
}

TEST_CASE("Patrol's rules find the nearly full datastore, the failed job and the stale backup",
          "[adapters][proxmox][pbs][patrol]") {
  PbsHarness pbs;
  std::unique_ptr<PbsFleet> fleet = pbs.Open();
  CHECK(TriageKeys(*fleet, "datastore:pbs/main") ==
        std::vector<std::string>{"pbs-datastore-full", "pbs-job-failed"});
  CHECK(TriageKeys(*fleet, "datastore:pbs/offsite").empty());
  CHECK(TriageKeys(*fleet, "backup-group:pbs/main/vm/102") ==
        std::vector<std::string>{"pbs-backup-stale"});
  CHECK(TriageKeys(*fleet, "backup-group:pbs/main/ct/201").empty());

  // The datastore is pruned below the threshold and the verification job passes again: the
  // next listing clears both findings' signals.
  pbs.server->SetDatastoreUsed("main", 500000000000);
  pbs.server->AddFinishedTask("verificationjob", "main:v-daily", "OK");
  absl::SleepFor(absl::Milliseconds(250));  // past max_staleness
  CHECK(TriageKeys(*fleet, "datastore:pbs/main") == std::vector<std::string>{"pbs-job-failed"});
  // (The newest snapshot of vm/101 still failed verification.) A failed prune job on the other
  // datastore is found there.
  pbs.server->AddFinishedTask("prunejob", "offsite:p-weekly", "prune failed: EIO");
  absl::SleepFor(absl::Milliseconds(250));
  CHECK(TriageKeys(*fleet, "datastore:pbs/offsite") == std::vector<std::string>{"pbs-job-failed"});
  CHECK(Status(*fleet, "datastore:pbs/offsite").facts.at("prune_job_status") ==
        "prune failed: EIO");
}

TEST_CASE("a job result behind many newer backup tasks is still read", "[adapters][proxmox][pbs]") {
  // A busy server runs hundreds of backup tasks between two weekly garbage collections.
  std::string tasks;
  for (int i = 0; i < 700; ++i) {
    absl::StrAppend(&tasks, R"({"worker_type": "backup", "worker_id": "main:vm/101",)",
                    R"( "age_seconds": )", 10 + i, R"(, "status": "OK"},)");
  }
  const std::string scenario = absl::StrCat(
      R"({"tokens": {"pulse@pbs!pulse": "0b7d3c1e-8a4f-4e26-9c55-2f1d6a9e7b30"},
          "datastores": [{"store": "main", "total": 100, "used": 10}],
          "tasks": [)",
      tasks,
      R"({"worker_type": "garbage_collection", "worker_id": "main", "age_seconds": 500000,
          "status": "TASK ERROR: no space left on device"}]})");
  PbsHarness pbs(scenario.c_str());
  std::unique_ptr<PbsFleet> fleet = pbs.Open();
  const core::FleetStatus main = Status(*fleet, "datastore:pbs/main");
  CHECK(main.facts.at("gc_status") == "TASK ERROR: no space left on device");
  CHECK(TriageKeys(*fleet, "datastore:pbs/main") == std::vector<std::string>{"pbs-job-failed"});
}

TEST_CASE("hostile datastore names and backup ids never become resource ids",
          "[adapters][proxmox][pbs]") {
  PbsHarness pbs(R"({"tokens": {"pulse@pbs!pulse": "0b7d3c1e-8a4f-4e26-9c55-2f1d6a9e7b30"},
    "datastores": [{"store": "main", "total": 100, "used": 10},
                   {"store": "../etc", "total": 100, "used": 10}],
    "snapshots": [
      {"store": "main", "backup-type": "vm", "backup-id": "101;reboot", "age_seconds": 60},
      {"store": "main", "backup-type": "ct", "backup-id": "abc", "age_seconds": 60},
      {"store": "main", "backup-type": "host", "backup-id": "-x", "age_seconds": 60},
      {"store": "main", "backup-type": "host", "backup-id": "files1", "age_seconds": 60}]})");
  std::unique_ptr<PbsFleet> fleet = pbs.Open();
  CHECK(Ids(*fleet) == std::vector<std::string>{"backup-group:pbs/main/host/files1",
                                                "datastore:pbs/main", "pbs:pbs"});
  CHECK(Status(*fleet, "pbs:pbs").facts.at("datastores") == "1");
  CHECK(Status(*fleet, "datastore:pbs/main").facts.at("backup_groups") == "1");
}

TEST_CASE("a proxmox-backup fingerprint mismatch is refused before any request carries the token",
          "[adapters][proxmox][pbs]") {
  PbsHarness pbs;
  PbsFleetOptions options = pbs.Options();
  options.client.fingerprint = std::string(64, 'A');
  absl::StatusOr<std::unique_ptr<PbsFleet>> fleet = PbsFleet::Open(options);
  REQUIRE_FALSE(fleet.ok());
  CHECK(absl::IsFailedPrecondition(fleet.status()));
  CHECK(absl::StrContains(fleet.status().message(), "pinned fingerprint"));
  CHECK(absl::StrContains(fleet.status().message(), "Proxmox Backup Server"));
  CHECK_FALSE(absl::StrContains(fleet.status().message(), kPbsSecret));
  CHECK(pbs.server->Requests().empty());
  CHECK(pbs.server->Handshakes() == 0);
  // The CA file that signed it is trusted instead.
  options.client.fingerprint.clear();
  options.client.ca_file = pbs.cert.cert_file;
  CHECK(PbsFleet::Open(options).ok());
}

TEST_CASE("a bad or revoked PBS token is Unauthenticated with PBS's 401 text",
          "[adapters][proxmox][pbs]") {
  PbsHarness pbs;
  PbsFleetOptions options = pbs.Options();
  options.client.token_secret = "bad-secret-0000";
  absl::StatusOr<std::unique_ptr<PbsFleet>> wrong = PbsFleet::Open(options);
  REQUIRE_FALSE(wrong.ok());
  CHECK(absl::IsUnauthenticated(wrong.status()));
  CHECK(absl::StrContains(wrong.status().message(), "401"));
  CHECK(absl::StrContains(wrong.status().message(), "authentication failed - invalid API token"));
  CHECK_FALSE(absl::StrContains(wrong.status().message(), "bad-secret-0000"));
  options.client.token_id = "pulse@pbs!nosuch";
  CHECK(absl::StrContains(PbsFleet::Open(options).status().message(),
                          "user account or token disabled or expired"));

  std::unique_ptr<PbsFleet> fleet = pbs.Open();
  pbs.server->RevokeToken(kPbsTokenId);
  absl::SleepFor(absl::Milliseconds(250));  // past max_staleness
  core::FleetResourceQuery all;
  absl::Status revoked = fleet->ListResources(all).status();
  CHECK(absl::IsUnauthenticated(revoked));
  CHECK(absl::StrContains(revoked.message(), "401"));
}

TEST_CASE("proxmox-backup settings are read strictly and never hold the secret",
          "[adapters][proxmox][pbs]") {
  absl::StatusOr<PbsFleetOptions> ok = ParsePbsSource(
      R"({"name": "pbs", "kind": "proxmox-backup", "url": "https://pbs1:8007",
          "token_id": "pulse@pbs!pulse", "backup_max_age_hours": 30,
          "fingerprint": "ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89"})");
  REQUIRE(ok.ok());
  CHECK(ok->source_name == "pbs");
  CHECK(ok->client.api == ProxmoxApi::kBackupServer);
  CHECK(ok->backup_max_age == absl::Hours(30));
  CHECK(ok->client.token_secret.empty());
  for (const char* bad :
       {R"({"url": "https://pbs1:8007", "token_id": "pulse@pbs!pulse", "token_secret": "x"})",
        R"({"url": "http://pbs1:8007", "token_id": "pulse@pbs!pulse"})",
        R"({"url": "https://pbs1:8007/api2", "token_id": "pulse@pbs!pulse"})",
        R"({"url": "https://pbs1:8007", "token_id": "pulse"})",
        R"({"url": "https://pbs1:8007", "token_id": "pulse@pbs!pulse", "fingerprint": "AB"})",
        R"({"url": "https://pbs1:8007", "token_id": "pulse@pbs!pulse", "ca_file": "ca.pem"})",
        R"({"url": "https://pbs1:8007", "token_id": "pulse@pbs!pulse", "allow_actions": true})",
        R"({"url": "https://pbs1:8007", "token_id": "pulse@pbs!pulse",
               "backup_max_age_hours": 0})"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(ParsePbsSource(bad).status()));
  }
  CHECK(absl::StrContains(
      ParsePbsSource(R"({"url": "https://p:8007", "token_id": "a@b!c", "secret": "x"})")
          .status()
          .message(),
      "fleet-credential set"));
}

server::FleetCredentialLookup FromDataDir(const std::string& data_dir) {
  return [data_dir](std::string_view name) -> absl::StatusOr<std::string> {
    absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> storage =
        adapters::storage::OpenSqliteStorage(data_dir);
    if (!storage.ok()) {
      return storage.status();
    }
    return (*storage)->credentials->Get(FleetCredentialName(name));
  };
}

TEST_CASE("pulse-server opens a proxmox-backup source with its sealed secret",
          "[adapters][proxmox][pbs][server]") {
  PbsHarness pbs;
  pulse::testing::FakeClock clock;
  server::ServerConfig config;
  config.fleet_sources = absl::StrCat(
      R"({"sources": [{"name": "backups", "kind": "proxmox-backup", "url": ")", pbs.server->url(),
      R"(", "token_id": ")", kPbsTokenId, R"(", "fingerprint": ")", pbs.cert.fingerprint, "\"}]}");
  const std::string data = pbs.dir.File("data");
  REQUIRE(server::SetFleetCredential(data, "other", "x", absl::Now()).ok());
  absl::Status missing = server::OpenConfiguredFleet(config, clock, FromDataDir(data)).status();
  CHECK(absl::IsFailedPrecondition(missing));
  CHECK(absl::StrContains(missing.message(), "fleet-credential set"));
  CHECK(pbs.server->Requests().empty());

  REQUIRE(server::SetFleetCredential(data, "backups", kPbsSecret, absl::Now()).ok());
  absl::StatusOr<server::OpenedFleet> opened =
      server::OpenConfiguredFleet(config, clock, FromDataDir(data));
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  absl::StatusOr<core::FleetResource> main = opened->fleet->GetResource("datastore:backups/main");
  REQUIRE(main.ok());
  CHECK(main->attributes.at("pulse.source") == "backups");
  CHECK(opened->fleet->GetResource("pbs:backups").ok());
}

// Catch2 runs a test case's body once per section, so each section gets a fresh fake server
// (the harness outlives the fleet the subject holds).
TEST_CASE("PbsFleet honours the Fleet contract", "[adapters][proxmox][pbs][contract]") {
  PbsHarness pbs;
  pulse::testing::RunFleetContract([&pbs] {
    pulse::testing::FleetContractSubject subject;
    subject.fleet = pbs.Open();
    subject.metric_resource = "datastore:pbs/main";
    subject.metric = "usage";
    subject.now = absl::Now();
    return subject;  // read-only: no harmless dispatch to offer
  });
}

}  // namespace
}  // namespace pulse::proxmox::testing
