// pulse-server over a --fleet file holding a proxmox-ve source, against the loopback fake PVE
// (tests/fakes/include/pulse/testing/fake_pve_server.h): the token secret entered with
// `pulse-server fleet-credential set` (stdin), fleet-context lists the cluster, Patrol finds
// the nearly full storage, and an operator plans, approves and executes `shutdown` on a VM: the
// fake's task goes running -> stopped with exitstatus OK and the observer confirms `stopped`;
// a start of the VM while a backup locks it is not_run (guest_locked) with nothing sent; a
// shutdown whose task ends "command 'qm shutdown' failed: timeout" is failed (task_failed); a
// token revoked while the server runs makes the source down, its resources still listed.
// Faults: a fingerprint mismatch and a missing secret stop the start before the token is sent.
// Patrol over a three-node cluster finds the staged faults: a storage filling at a known rate
// (its forecast starts from a day of PVE's rrddata, copied by the sample recorder), a guest
// stopped while HA wants it started, a failed and an overdue backup job, a guest locked for
// hours, a node whose proxy answers 596 and a node the cluster lost; the source stays up with
// every node's resources listed. A task that ends while it runs is a fleet.change event.
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/testing/fake_pve_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kSecret[] = "0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d";

constexpr char kScenario[] = R"({
  "version": "8.2.4",
  "tokens": {"pulse@pve!pulse": "0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"},
  "nodes": [{"node": "pve1", "status": "online", "cpu": 0.1, "maxcpu": 8, "mem": 4294967296,
             "maxmem": 34359738368, "disk": 1073741824, "maxdisk": 107374182400,
             "uptime": 86400}],
  "guests": [{"type": "qemu", "vmid": 101, "node": "pve1", "name": "web", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296,
              "uptime": 3600},
             {"type": "qemu", "vmid": 102, "node": "pve1", "name": "db", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296,
              "uptime": 3600}],
  "storage": [{"node": "pve1", "storage": "local", "type": "dir", "content": "iso,backup",
               "total": 107374182400, "used": 103079215104}],
  "task_polls": 2
})";

std::string SourcesFile(const TempDir& dir, const FakePveServer& pve, const std::string& pin) {
  const std::string path = dir.File("fleet.json");
  std::ofstream(path) << R"({"sources": [{"name": "pve", "kind": "proxmox-ve", "url": ")"
                      << pve.url() << R"(", "token_id": "pulse@pve!pulse", "fingerprint": ")" << pin
                      << R"(", "allow_actions": true, "max_staleness_ms": 0}]})";
  return path;
}

Captured SetSecret(const std::string& data_dir, const std::string& secret) {
  return RunCommand({"/bin/sh", "-c",
                     absl::StrCat("printf '%s\\n' '", secret, "' | '", ServerBinary(),
                                  "' fleet-credential set --data-dir '", data_dir, "' pve")});
}

bool PatrolFinds(int port, const std::string& token, const std::string& finding_id) {
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
  for (const rapidjson::Value& f : findings.GetArray()) {
    if (Str(f, "id") == finding_id) {
      return true;
    }
  }
  return false;
}

TEST_CASE("pulse-server governs a shutdown on a proxmox-ve source and the observer confirms it",
          "[e2e][server][fleet][proxmox]") {
  TempDir dir;
  absl::StatusOr<TestCertificate> cert = MakeTestCertificate(dir.path());
  REQUIRE(cert.ok());
  absl::StatusOr<std::unique_ptr<FakePveServer>> pve = FakePveServer::Start(kScenario, *cert);
  REQUIRE(pve.ok());
  const std::string fleet = SourcesFile(dir, **pve, cert->fingerprint);

  const Captured set = SetSecret(dir.path(), kSecret);
  INFO(set.err);
  REQUIRE(set.exit_code == 0);
  CHECK(set.out.find("stored the secret of fleet source \"pve\"") != std::string::npos);
  CHECK(set.out.find(kSecret) == std::string::npos);
  CHECK(SetSecret(dir.path(), "two words").exit_code == 2);

  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
  const std::string bob = MintToken(dir.path(), "actions:approve,actions:execute", "bob");
  const std::string patrol = MintToken(dir.path(), "ai:execute,monitoring:read", "patrol");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet}});
  const int port = server.port();

  const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  CHECK(context.body.find("vm:101") != std::string::npos);
  CHECK(context.body.find("storage:pve1/local") != std::string::npos);
  CHECK(context.body.find(R"("kind":"proxmox-ve")") != std::string::npos);

  CHECK(PatrolFinds(
      port, patrol,
      core::FindingIdFor("storage:pve1/local", core::Category::kCapacity, "storage-capacity")));

  const Reply planned =
      Send(port, "POST", "/api/actions/plan", alice,
           R"({"requestId":"e2e-pve-1","resourceId":"vm:101","capabilityName":"shutdown",)"
           R"("params":{},"reason":"proxmox e2e","requestedBy":"x"})");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const rapidjson::Document plan = Json(planned.body);
  REQUIRE(plan["requiresApproval"].GetBool());
  const std::string id = Str(plan, "actionId");
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", bob,
                              R"({"outcome":"approved","reason":"proxmox e2e"})");
  INFO(approved.body);
  REQUIRE(approved.status == 200);
  const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", bob, "{}");
  INFO(executed.body);
  REQUIRE(executed.status == 200);
  const Reply detail = Send(port, "GET", "/api/actions/" + id, bob);
  REQUIRE(detail.status == 200);
  const rapidjson::Document body = Json(detail.body);
  INFO(detail.body);
  CHECK(Str(body["audit"], "state") == "completed");
  const rapidjson::Value& result = body["audit"]["result"];
  CHECK(Str(result["execution"], "status") == "succeeded");
  CHECK(Str(result["verification"], "status") == "confirmed");
  CHECK(Str(result["verification"], "evidenceClass") == "independent");
  CHECK((*pve)->GuestStatus(101) == "stopped");

  // A backup locks the VM: its start is refused before anything is sent (guest_locked).
  (*pve)->SetGuestLock(101, "backup");
  const Reply planned_start =
      Send(port, "POST", "/api/actions/plan", alice,
           R"({"requestId":"e2e-pve-2","resourceId":"vm:101","capabilityName":"start",)"
           R"("params":{},"reason":"proxmox e2e lock","requestedBy":"x"})");
  INFO(planned_start.body);
  REQUIRE(planned_start.status == 200);
  const std::string start_id = Str(Json(planned_start.body), "actionId");
  REQUIRE(Send(port, "POST", "/api/actions/" + start_id + "/decision", bob,
               R"({"outcome":"approved","reason":"proxmox e2e lock"})")
              .status == 200);
  std::size_t posts = 0;
  for (const FakePveRequest& r : (*pve)->Requests()) {
    posts += r.method == "POST" ? 1 : 0;
  }
  const Reply refused = Send(port, "POST", "/api/actions/" + start_id + "/execute", bob, "{}");
  INFO(refused.body);
  const Reply refused_detail = Send(port, "GET", "/api/actions/" + start_id, bob);
  REQUIRE(refused_detail.status == 200);
  INFO(refused_detail.body);
  const rapidjson::Document refused_body = Json(refused_detail.body);
  CHECK(Str(refused_body["audit"]["result"]["execution"], "status") == "not_run");
  CHECK(Str(refused_body["audit"]["result"]["execution"], "reasonCode") == "guest_locked");
  std::size_t posts_after = 0;
  for (const FakePveRequest& r : (*pve)->Requests()) {
    posts_after += r.method == "POST" ? 1 : 0;
  }
  CHECK(posts_after == posts);
  CHECK((*pve)->GuestStatus(101) == "stopped");

  // A shutdown whose task fails (the guest ignores ACPI): failed, task_failed with PVE's text,
  // and the observer contradicts it.
  (*pve)->SetTaskExitStatus("command 'qm shutdown' failed: timeout");
  const Reply planned_db =
      Send(port, "POST", "/api/actions/plan", alice,
           R"({"requestId":"e2e-pve-3","resourceId":"vm:102","capabilityName":"shutdown",)"
           R"("params":{},"reason":"proxmox e2e timeout","requestedBy":"x"})");
  INFO(planned_db.body);
  REQUIRE(planned_db.status == 200);
  const std::string db_id = Str(Json(planned_db.body), "actionId");
  REQUIRE(Send(port, "POST", "/api/actions/" + db_id + "/decision", bob,
               R"({"outcome":"approved","reason":"proxmox e2e timeout"})")
              .status == 200);
  Send(port, "POST", "/api/actions/" + db_id + "/execute", bob, "{}");
  // The observer waits for a stopped VM that never comes, then contradicts.
  Reply db_detail;
  for (int i = 0; i < 300; ++i) {
    db_detail = Send(port, "GET", "/api/actions/" + db_id, bob);
    REQUIRE(db_detail.status == 200);
    if (Str(Json(db_detail.body)["audit"], "state") != "executing") {
      break;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  INFO(db_detail.body);
  const rapidjson::Document db_body = Json(db_detail.body);
  const rapidjson::Value& db_result = db_body["audit"]["result"];
  CHECK(Str(db_result["execution"], "status") == "failed");
  CHECK(Str(db_result["execution"], "reasonCode") == "task_failed");
  CHECK(db_detail.body.find("command 'qm shutdown' failed: timeout") != std::string::npos);
  CHECK((*pve)->GuestStatus(102) == "running");

  // The token is revoked while the server runs: the source is down (PVE's 401 named), its
  // resources stay listed as unknown.
  (*pve)->RevokeToken("pulse@pve!pulse");
  const Reply down = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(down.body);
  REQUIRE(down.status == 200);
  const rapidjson::Document down_doc = Json(down.body);
  REQUIRE(down_doc["sources"].Size() == 2);  // and the host agents' source, up
  CHECK(Str(down_doc["sources"][0], "state") == "down");
  CHECK(Str(down_doc["sources"][0], "error").find("401") != std::string::npos);
  CHECK(Str(down_doc["sources"][0], "error").find(kSecret) == std::string::npos);
  CHECK(down.body.find("vm:101") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

// Three nodes; "data" on pve1 is 50 % used and grew by 2.1 % of its size a day (days to full:
// 50 / 2.1 = 23.8, so 24); vm:103 is stopped although HA wants it started; VM 101's backup job
// failed its last run; a snapshot task started five hours ago still holds VM 105's lock; pve3's
// job missed its run three hours ago.
constexpr char kFaultScenario[] = R"({
  "version": "8.2.4",
  "tokens": {"pulse@pve!pulse": "0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"},
  "nodes": [{"node": "pve1", "status": "online", "cpu": 0.1, "maxcpu": 8, "mem": 4294967296,
             "maxmem": 34359738368, "disk": 1073741824, "maxdisk": 107374182400,
             "uptime": 86400},
            {"node": "pve2", "status": "online", "cpu": 0.1, "maxcpu": 8, "mem": 4294967296,
             "maxmem": 34359738368, "disk": 1073741824, "maxdisk": 107374182400,
             "uptime": 86400},
            {"node": "pve3", "status": "online", "cpu": 0.1, "maxcpu": 8, "mem": 4294967296,
             "maxmem": 34359738368, "disk": 1073741824, "maxdisk": 107374182400,
             "uptime": 86400}],
  "guests": [{"type": "qemu", "vmid": 101, "node": "pve1", "name": "web", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296,
              "uptime": 3600},
             {"type": "qemu", "vmid": 103, "node": "pve1", "name": "mail", "status": "stopped",
              "cpus": 2, "maxmem": 4294967296},
             {"type": "qemu", "vmid": 105, "node": "pve1", "name": "files", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296,
              "uptime": 3600, "lock": "snapshot"},
             {"type": "qemu", "vmid": 104, "node": "pve3", "name": "ci", "status": "running",
              "cpus": 2, "cpu": 0.05, "mem": 1073741824, "maxmem": 4294967296,
              "uptime": 3600}],
  "storage": [{"node": "pve1", "storage": "data", "type": "dir", "content": "images",
               "total": 107374182400, "used": 53687091200, "growth_per_day": 2254857830},
              {"node": "pve3", "storage": "local", "type": "dir", "content": "iso",
               "total": 107374182400, "used": 10737418240}],
  "ha": [{"sid": "vm:103", "state": "started"}, {"sid": "vm:104", "state": "started"}],
  "backup_jobs": [{"id": "backup-web", "schedule": "21:00", "vmid": "101", "storage": "data",
                   "next_run_ago": -3600},
                  {"id": "backup-ci", "schedule": "sat 02:00", "vmid": "104", "node": "pve3",
                   "storage": "local", "next_run_ago": 10800}],
  "tasks": [{"node": "pve1", "type": "vzdump", "id": "101", "start_ago": 7200, "end_ago": 7000,
             "status": "ERROR: Backup of VM 101 failed - no space left on device"},
            {"node": "pve3", "type": "vzdump", "id": "104", "start_ago": 700000,
             "end_ago": 699000, "status": "OK"},
            {"node": "pve1", "type": "qmsnapshot", "id": "105", "start_ago": 18000}],
  "task_polls": 1
})";

// The active finding `id` from the findings list (null when there is none).
std::optional<std::string> FindingDescription(int port, const std::string& token,
                                              const std::string& id) {
  const Reply list = Send(port, "GET", "/api/ai/patrol/findings", token);
  REQUIRE(list.status == 200);
  const rapidjson::Document findings = Json(list.body);
  for (const rapidjson::Value& f : findings.GetArray()) {
    if (Str(f, "id") == id) {
      return Str(f, "description");
    }
  }
  return std::nullopt;
}

TEST_CASE("Patrol finds the staged faults of a proxmox-ve source through pulse-server",
          "[e2e][server][fleet][proxmox][patrol]") {
  TempDir dir;
  absl::StatusOr<TestCertificate> cert = MakeTestCertificate(dir.path());
  REQUIRE(cert.ok());
  absl::StatusOr<std::unique_ptr<FakePveServer>> pve = FakePveServer::Start(kFaultScenario, *cert);
  REQUIRE(pve.ok());
  const std::string fleet = SourcesFile(dir, **pve, cert->fingerprint);
  REQUIRE(SetSecret(dir.path(), kSecret).exit_code == 0);
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string patrol = MintToken(dir.path(), "ai:execute,monitoring:read", "patrol");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet}});
  const int port = server.port();

  // The storage's forecast: the recorder's first round copies a day of rrddata, so the first
  // Patrol run after it reads "filling" with 24 days to full although the server just started.
  const std::string filling =
      core::FindingIdFor("storage:pve1/data", core::Category::kCapacity, "storage-capacity");
  const std::string ha =
      core::FindingIdFor("vm:103", core::Category::kReliability, "guest-ha-stopped");
  bool found = false;
  for (int i = 0; i < 20 && !found; ++i) {
    found = PatrolFinds(port, patrol, filling);
  }
  REQUIRE(found);
  const std::optional<std::string> forecast = FindingDescription(port, patrol, filling);
  REQUIRE(forecast.has_value());
  INFO(*forecast);
  CHECK(forecast->find("50.0% used") != std::string::npos);
  CHECK(forecast->find("full in about 24 days") != std::string::npos);
  bool rrd_read = false;
  for (const FakePveRequest& r : (*pve)->Requests()) {
    rrd_read = rrd_read ||
               r.target == "/api2/json/nodes/pve1/storage/data/rrddata?timeframe=day&cf=AVERAGE";
  }
  CHECK(rrd_read);
  CHECK(FindingDescription(port, patrol, ha).has_value());
  const std::string failed =
      core::FindingIdFor("backup-job:pve/backup-web", core::Category::kBackup, "backup-failed");
  const std::string overdue =
      core::FindingIdFor("backup-job:pve/backup-ci", core::Category::kBackup, "backup-overdue");
  const std::string locked =
      core::FindingIdFor("vm:105", core::Category::kReliability, "guest-locked");
  CHECK(FindingDescription(port, patrol, failed).has_value());
  const std::optional<std::string> late = FindingDescription(port, patrol, overdue);
  REQUIRE(late.has_value());
  CHECK(late->find("3.0 hours ago") != std::string::npos);
  const std::optional<std::string> stuck = FindingDescription(port, patrol, locked);
  REQUIRE(stuck.has_value());
  CHECK(stuck->find("snapshot lock") != std::string::npos);

  // A task that ends while the server runs reaches the agent event stream as a fleet.change of
  // the VM it ran on, naming the source; the tasks that ended before it started do not.
  EventSubscriber events(port, reader);
  REQUIRE(events.WaitFor("stream.connected"));
  (*pve)->AddTask("pve1", "vzdump", "101", "ERROR: Backup of VM 101 failed - got timeout", 120, 2);
  std::string change;
  for (int i = 0; i < 100 && change.empty(); ++i) {
    REQUIRE(Send(port, "GET", "/api/agent/fleet-context", reader).status == 200);  // a listing
    for (const AgentEventFrame& f : events.Frames()) {
      if (f.event == "fleet.change" && Str(Json(f.data)["payload"], "change") == "task_failed") {
        change = f.data;
      }
    }
    if (change.empty()) {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  INFO(change);
  REQUIRE_FALSE(change.empty());
  const rapidjson::Document change_doc = Json(change);
  CHECK(Str(change_doc["payload"], "resourceId") == "vm:101");
  CHECK(Str(change_doc["payload"], "source") == "pve");
  CHECK(Str(change_doc["payload"], "detail") ==
        "vzdump: ERROR: Backup of VM 101 failed - got timeout");
  std::size_t task_changes = 0;
  for (const AgentEventFrame& f : events.Frames()) {
    task_changes += f.event == "fleet.change" ? 1 : 0;
  }
  CHECK(task_changes == 1);

  // pve2's proxy breaks (596) and the cluster loses pve3.
  (*pve)->SetNodeProxyBroken("pve2", true);
  (*pve)->SetNodeOnline("pve3", false);
  const std::string unreachable =
      core::FindingIdFor("node:pve2", core::Category::kReliability, "node-offline");
  const std::string lost =
      core::FindingIdFor("node:pve3", core::Category::kReliability, "node-offline");
  CHECK(PatrolFinds(port, patrol, lost));
  const std::optional<std::string> broken = FindingDescription(port, patrol, unreachable);
  REQUIRE(broken.has_value());
  CHECK(broken->find("596") != std::string::npos);

  // The source stays up with every node's resources; pve3's show their node is offline.
  const Reply context = Send(port, "GET", "/api/agent/fleet-context", reader);
  INFO(context.body);
  REQUIRE(context.status == 200);
  const rapidjson::Document doc = Json(context.body);
  REQUIRE(doc["sources"].Size() == 2);  // and the host agents' source
  CHECK(Str(doc["sources"][0], "state") == "up");
  CHECK(context.body.find("vm:101") != std::string::npos);
  CHECK(context.body.find("vm:104") != std::string::npos);
  const Reply ci = Send(port, "GET", "/api/agent/resource-context/vm:104", reader);
  INFO(ci.body);
  REQUIRE(ci.status == 200);
  CHECK(ci.body.find(R"("node_status":"offline")") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a fingerprint mismatch or a missing secret stops pulse-server before the token is sent",
          "[e2e][server][fleet][proxmox]") {
  TempDir dir;
  absl::StatusOr<TestCertificate> cert = MakeTestCertificate(dir.path());
  REQUIRE(cert.ok());
  absl::StatusOr<std::unique_ptr<FakePveServer>> pve = FakePveServer::Start(kScenario, *cert);
  REQUIRE(pve.ok());
  const std::string data = dir.File("data");

  const std::string good = SourcesFile(dir, **pve, cert->fingerprint);
  Captured missing =
      RunCommand({ServerBinary(), "--data-dir", data, "--listen", "127.0.0.1:0", "--fleet", good});
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("fleet-credential set") != std::string::npos);

  REQUIRE(SetSecret(data, kSecret).exit_code == 0);
  const std::string wrong = SourcesFile(dir, **pve, std::string(64, 'b'));
  Captured mismatch =
      RunCommand({ServerBinary(), "--data-dir", data, "--listen", "127.0.0.1:0", "--fleet", wrong});
  CHECK(mismatch.exit_code != 0);
  CHECK(mismatch.err.find("fleet source \"pve\"") != std::string::npos);
  CHECK(mismatch.err.find("pinned fingerprint") != std::string::npos);
  CHECK(mismatch.err.find(kSecret) == std::string::npos);
  CHECK((*pve)->Requests().empty());
}

}  // namespace
}  // namespace pulse::testing::e2e
