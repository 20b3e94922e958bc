// PveFleet against the loopback fake PVE (HTTPS, pinned certificate): resources and ids, status
// facts, metrics, governed capabilities followed to their task's exit status and confirmed by
// an independent read, and the faults a real cluster shows (bad or revoked token, fingerprint
// mismatch before any request, a broken node proxy, a locked guest, a failed task).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "pve_test_support.h"

namespace pulse::proxmox::testing {
namespace {

std::vector<std::string> Ids(PveFleet& fleet) {
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

bool AnyPost(const pulse::testing::FakePveServer& server) {
  for (const pulse::testing::FakePveRequest& r : server.Requests()) {
    if (r.method == "POST") {
      return true;
    }
  }
  return false;
}

TEST_CASE("the proxmox-ve source lists nodes, guests and storage with canonical ids",
          "[adapters][proxmox]") {
  PveHarness pve;
  std::unique_ptr<PveFleet> fleet = pve.Open();
  CHECK(fleet->version() == "8.2.4");
  CHECK(Ids(*fleet) == std::vector<std::string>{"lxc:201", "node:pve1", "node:pve2",
                                                "storage:pve1/local", "storage:pve1/local-zfs",
                                                "storage:pve2/local", "vm:101", "vm:102",
                                                "vm:9000"});
  absl::StatusOr<core::FleetResource> web = fleet->GetResource("vm:101");
  REQUIRE(web.ok());
  CHECK(web->type == "vm");
  CHECK(web->name == "web");
  CHECK(web->status == "running");
  CHECK(web->technology == "proxmox");
  CHECK(web->parent_id == "node:pve1");
  CHECK(web->attributes.at("ha_state") == "started");
  absl::StatusOr<core::FleetResource> dns = fleet->GetResource("lxc:201");
  REQUIRE(dns.ok());
  CHECK(dns->type == "lxc");
  core::FleetTopologyQuery around;
  around.root_id = "node:pve1";
  absl::StatusOr<core::FleetTopology> topology = fleet->GetTopology(around);
  REQUIRE(topology.ok());
  CHECK(std::count(topology->relationships.begin(), topology->relationships.end(),
                   core::FleetRelationship{"vm:101", "node:pve1", "runs_on"}) == 1);
  CHECK(std::count(topology->relationships.begin(), topology->relationships.end(),
                   core::FleetRelationship{"storage:pve1/local", "node:pve1", "member_of"}) == 1);
  // Every request carried the token, and only over TLS the pin accepted.
  for (const pulse::testing::FakePveRequest& r : pve.server->Requests()) {
    CHECK(r.authorization == std::string("PVEAPIToken=") + kTokenId + "=" + kSecret);
  }
}

TEST_CASE("proxmox-ve status reads carry the facts Patrol's rules read", "[adapters][proxmox]") {
  PveHarness pve;
  std::unique_ptr<PveFleet> fleet = pve.Open();
  absl::StatusOr<core::FleetStatus> node = fleet->GetStatus("node:pve1");
  REQUIRE(node.ok());
  CHECK(node->status == "online");
  CHECK(node->facts.at("cpu_pct") == "12.0");
  CHECK(node->facts.at("memory_pct") == "25.0");
  CHECK(node->facts.at("load_1m") == "0.12");
  absl::StatusOr<core::FleetStatus> web = fleet->GetStatus("vm:101");
  REQUIRE(web.ok());
  CHECK(web->status == "running");
  CHECK(web->facts.at("memory_pct") == "50.0");
  CHECK(web->facts.at("ha_state") == "started");
  absl::StatusOr<core::FleetStatus> local = fleet->GetStatus("storage:pve1/local");
  REQUIRE(local.ok());
  CHECK(local->facts.at("usage_pct") == "90.0");
  core::FleetMetricQuery usage;
  usage.metric = "usage";
  usage.start = absl::Now() - absl::Hours(1);
  usage.end = absl::Now() + absl::Seconds(1);
  absl::StatusOr<core::FleetMetricSeries> series =
      fleet->ReadMetricHistory("storage:pve1/local", usage);
  REQUIRE(series.ok());
  REQUIRE_FALSE(series->points.empty());
  CHECK(series->points.back().value == Approx(90.0));
  usage.metric = "cpu";
  CHECK(absl::IsNotFound(fleet->ReadMetricHistory("storage:pve1/local", usage).status()));
}

TEST_CASE("proxmox-ve capabilities follow the guest's state and risk", "[adapters][proxmox]") {
  PveHarness pve;
  std::unique_ptr<PveFleet> fleet = pve.Open();
  absl::StatusOr<std::vector<core::Capability>> running = fleet->ListCapabilities("vm:101");
  REQUIRE(running.ok());
  REQUIRE(running->size() == 3);
  const core::Capability* stop = core::FindCapability(*running, "stop");
  REQUIRE(stop != nullptr);
  CHECK(stop->risk == core::ActionRisk::kHigh);
  CHECK(stop->auto_authorization == core::AutoAuthorization::kNever);
  const core::Capability* shutdown = core::FindCapability(*running, "shutdown");
  REQUIRE(shutdown != nullptr);
  CHECK(shutdown->risk == core::ActionRisk::kMedium);
  CHECK(shutdown->auto_authorization == core::AutoAuthorization::kElevated);
  CHECK(core::FindCapability(*running, "reboot") != nullptr);
  absl::StatusOr<std::vector<core::Capability>> stopped = fleet->ListCapabilities("vm:102");
  REQUIRE(stopped.ok());
  REQUIRE(stopped->size() == 1);
  CHECK(stopped->front().name == "start");
  CHECK(stopped->front().risk == core::ActionRisk::kLow);
  CHECK(stopped->front().minimum_approval == core::ApprovalLevel::kAdmin);
  CHECK(fleet->ListCapabilities("vm:9000")->empty());  // a template
  CHECK(fleet->ListCapabilities("node:pve1")->empty());
  std::unique_ptr<PveFleet> read_only = pve.Open(false);
  CHECK(read_only->ListCapabilities("vm:101")->empty());
}

TEST_CASE("a proxmox-ve shutdown follows its task to OK and is confirmed by a status read",
          "[adapters][proxmox]") {
  PveHarness pve;
  pve.server->SetTaskPolls(3);
  std::unique_ptr<PveFleet> fleet = pve.Open();
  const absl::Time before = absl::Now();
  absl::StatusOr<core::DispatchReceipt> receipt = fleet->Dispatch(Request("vm:101", "shutdown"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kSucceeded);
  CHECK(absl::StrContains(receipt->summary, "UPID:pve1:"));
  CHECK(pve.server->GuestStatus(101) == "stopped");
  bool posted_with_timeout = false;
  for (const pulse::testing::FakePveRequest& r : pve.server->Requests()) {
    if (r.method == "POST") {
      CHECK(r.target == "/api2/json/nodes/pve1/qemu/101/status/shutdown");
      posted_with_timeout = r.body == "timeout=90";
    }
  }
  CHECK(posted_with_timeout);
  core::PostconditionQuery query;
  query.resource_id = "vm:101";
  query.capability_name = "shutdown";
  query.dispatched_at = before;
  absl::StatusOr<core::PostconditionObservation> seen = fleet->ObservePostcondition(query);
  REQUIRE(seen.ok());
  CHECK(seen->status == core::VerificationStatus::kConfirmed);
  CHECK(seen->observer_trust_domain != receipt->executor_trust_domain);
  // The same attempt again: the first receipt, nothing sent.
  const std::size_t requests = pve.server->Requests().size();
  absl::StatusOr<core::DispatchReceipt> again = fleet->Dispatch(Request("vm:101", "shutdown"));
  REQUIRE(again.ok());
  CHECK(again->summary == receipt->summary);
  CHECK(pve.server->Requests().size() == requests);
  // Start it again, then reboot it; a container too.
  REQUIRE(fleet->Dispatch(Request("vm:101", "start", "a2"))->status ==
          core::ExecutionStatus::kSucceeded);
  CHECK(pve.server->GuestStatus(101) == "running");
  const absl::Time reboot_at = absl::Now();
  REQUIRE(fleet->Dispatch(Request("vm:101", "reboot", "a3"))->status ==
          core::ExecutionStatus::kSucceeded);
  query.capability_name = "reboot";
  query.dispatched_at = reboot_at;
  CHECK(fleet->ObservePostcondition(query)->status == core::VerificationStatus::kConfirmed);
  REQUIRE(fleet->Dispatch(Request("lxc:201", "stop", "a4"))->status ==
          core::ExecutionStatus::kSucceeded);
  CHECK(pve.server->GuestStatus(201) == "stopped");
}

TEST_CASE("a proxmox-ve task that ends with an error is a failed dispatch the observer contradicts",
          "[adapters][proxmox]") {
  PveHarness pve;
  pve.server->SetTaskExitStatus("command 'qm shutdown' failed: timeout");
  std::unique_ptr<PveFleet> fleet = pve.Open();
  absl::StatusOr<core::DispatchReceipt> receipt = fleet->Dispatch(Request("vm:101", "shutdown"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kFailed);
  CHECK(receipt->reason_code == kReasonTaskFailed);
  CHECK(absl::StrContains(receipt->summary, "command 'qm shutdown' failed: timeout"));
  core::PostconditionQuery query;
  query.resource_id = "vm:101";
  query.capability_name = "shutdown";
  query.dispatched_at = absl::Now();
  absl::StatusOr<core::PostconditionObservation> seen = fleet->ObservePostcondition(query);
  REQUIRE(seen.ok());
  CHECK(seen->status == core::VerificationStatus::kContradicted);
  CHECK(pve.server->GuestStatus(101) == "running");
}

TEST_CASE("a task that never ends within the deadline is inconclusive", "[adapters][proxmox]") {
  PveHarness pve;
  pve.server->SetTaskPolls(1000000);
  PveFleetOptions options = pve.Options();
  options.action_deadline = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<PveFleet>> fleet = PveFleet::Open(options);
  REQUIRE(fleet.ok());
  absl::StatusOr<core::DispatchReceipt> receipt = (*fleet)->Dispatch(Request("vm:102", "start"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kInconclusive);
  CHECK(receipt->reason_code == kReasonTaskDeadline);
}

TEST_CASE("a guest locked by a backup is refused before anything is sent", "[adapters][proxmox]") {
  PveHarness pve;
  pve.server->SetGuestLock(101, "backup");
  std::unique_ptr<PveFleet> fleet = pve.Open();
  absl::StatusOr<core::DispatchReceipt> receipt = fleet->Dispatch(Request("vm:101", "stop"));
  REQUIRE(receipt.ok());
  CHECK(receipt->status == core::ExecutionStatus::kNotRun);
  CHECK(receipt->reason_code == kReasonGuestLocked);
  CHECK(absl::StrContains(receipt->summary, "backup"));
  CHECK_FALSE(AnyPost(*pve.server));
  CHECK(pve.server->GuestStatus(101) == "running");
  absl::StatusOr<core::FleetStatus> status = fleet->GetStatus("vm:101");
  REQUIRE(status.ok());
  CHECK(status->facts.at("lock") == "backup");
  // A capability the state does not offer is refused as not started.
  CHECK(absl::IsFailedPrecondition(fleet->Dispatch(Request("vm:102", "stop", "b2")).status()));
  CHECK_FALSE(AnyPost(*pve.server));
}

TEST_CASE("a fingerprint mismatch is refused before any request carries the token",
          "[adapters][proxmox]") {
  PveHarness pve;
  PveFleetOptions options = pve.Options();
  options.client.fingerprint = std::string(64, 'A');
  absl::StatusOr<std::unique_ptr<PveFleet>> fleet = PveFleet::Open(options);
  REQUIRE_FALSE(fleet.ok());
  CHECK(absl::IsFailedPrecondition(fleet.status()));
  CHECK(absl::StrContains(fleet.status().message(), "pinned fingerprint"));
  CHECK_FALSE(absl::StrContains(fleet.status().message(), kSecret));
  CHECK(pve.server->Requests().empty());
  CHECK(pve.server->Handshakes() == 0);
  // The CA file that signed it is trusted instead.
  options.client.fingerprint.clear();
  options.client.ca_file = pve.cert.cert_file;
  CHECK(PveFleet::Open(options).ok());
  // Neither: the system store does not know the self-signed certificate.
  options.client.ca_file.clear();
  const std::size_t seen = pve.server->Requests().size();
  CHECK(absl::IsFailedPrecondition(PveFleet::Open(options).status()));
  CHECK(pve.server->Requests().size() == seen);
}

TEST_CASE("a bad or revoked token is Unauthenticated with PVE's reason", "[adapters][proxmox]") {
  PveHarness pve;
  PveFleetOptions options = pve.Options();
  options.client.token_secret = "bad-secret-0000";
  absl::StatusOr<std::unique_ptr<PveFleet>> wrong = PveFleet::Open(options);
  REQUIRE_FALSE(wrong.ok());
  CHECK(absl::IsUnauthenticated(wrong.status()));
  CHECK(absl::StrContains(wrong.status().message(), "401"));
  CHECK(absl::StrContains(wrong.status().message(), "invalid token value!"));
  CHECK_FALSE(absl::StrContains(wrong.status().message(), "bad-secret-0000"));
  options.client.token_id = "pulse@pve!nosuch";
  absl::StatusOr<std::unique_ptr<PveFleet>> unknown = PveFleet::Open(options);
  CHECK(absl::StrContains(unknown.status().message(), "no such token 'nosuch'"));

  std::unique_ptr<PveFleet> fleet = pve.Open();
  pve.server->RevokeToken(kTokenId);
  absl::SleepFor(absl::Milliseconds(250));  // past max_staleness
  core::FleetResourceQuery all;
  absl::Status revoked = fleet->ListResources(all).status();
  CHECK(absl::IsUnauthenticated(revoked));
  CHECK(absl::IsUnauthenticated(fleet->Dispatch(Request("vm:102", "start")).status()));
}

TEST_CASE("a node whose proxy breaks answers 596 and an offline node shows offline",
          "[adapters][proxmox]") {
  PveHarness pve;
  std::unique_ptr<PveFleet> fleet = pve.Open();
  pve.server->SetNodeProxyBroken("pve2", true);
  // The node is unreachable, an observation rather than a failed read; its guests' own reads
  // fail with PVE's 596.
  absl::StatusOr<core::FleetStatus> broken = fleet->GetStatus("node:pve2");
  REQUIRE(broken.ok());
  CHECK(broken->status == "unreachable");
  CHECK(absl::StrContains(broken->facts.at("api_error"), "596"));
  CHECK(absl::StrContains(broken->summary, "Broken pipe"));
  absl::Status guest = fleet->GetStatus("vm:102").status();
  CHECK(absl::IsUnavailable(guest));
  CHECK(absl::StrContains(guest.message(), "596"));
  CHECK(fleet->GetStatus("node:pve1").ok());  // the other node still answers
  pve.server->SetNodeProxyBroken("pve2", false);
  pve.server->SetNodeOnline("pve2", false);
  absl::SleepFor(absl::Milliseconds(250));
  absl::StatusOr<core::FleetStatus> offline = fleet->GetStatus("node:pve2");
  REQUIRE(offline.ok());
  CHECK(offline->status == "offline");
  // Its guests and storage stay listed, "unknown" as PVE lists them, and say why; the other
  // node's resources are as before.
  absl::StatusOr<core::FleetResource> db = fleet->GetResource("vm:102");
  REQUIRE(db.ok());
  CHECK(db->status == "unknown");
  CHECK(db->attributes.at("node_status") == "offline");
  absl::StatusOr<core::FleetResource> store = fleet->GetResource("storage:pve2/local");
  REQUIRE(store.ok());
  CHECK(store->attributes.at("node_status") == "offline");
  absl::StatusOr<core::FleetResource> web = fleet->GetResource("vm:101");
  REQUIRE(web.ok());
  CHECK(web->status == "running");
  CHECK(web->attributes.count("node_status") == 0);
}

TEST_CASE("proxmox-ve metric history starts with PVE's rrddata", "[adapters][proxmox][rrd]") {
  // local-zfs grew by 2 % of its size a day to 20 %; the node and the VM are steady.
  std::string scenario = kScenario;
  const std::string from = R"("total": 536870912000, "used": 107374182400})";
  REQUIRE(scenario.find(from) != std::string::npos);
  scenario.replace(scenario.find(from), from.size(),
                   R"("total": 536870912000, "used": 107374182400,
                      "growth_per_day": 10737418240})");
  PveHarness pve(scenario.c_str());
  PveFleetOptions options = pve.Options();
  options.max_staleness = absl::Hours(1);  // one listing: its samples are the newest points
  absl::StatusOr<std::unique_ptr<PveFleet>> opened = PveFleet::Open(options);
  REQUIRE(opened.ok());
  PveFleet& fleet = **opened;
  const absl::Time now = absl::Now();
  core::FleetMetricQuery day;
  day.metric = "usage";
  day.start = now - absl::Hours(24);
  day.end = now + absl::Seconds(1);
  day.max_points = core::kFleetMaxMetricPoints;
  absl::StatusOr<core::FleetMetricSeries> usage =
      fleet.ReadMetricHistory("storage:pve1/local-zfs", day);
  INFO(usage.status().ToString());
  REQUIRE(usage.ok());
  // The day's rows at 30-minute steps (the newest, unconsolidated one has no value), then the
  // listing's sample.
  REQUIRE(usage->points.size() >= 45);
  CHECK(usage->points.back().value == Approx(20.0));
  const core::FleetMetricPoint& first = usage->points.front();
  const double days = absl::ToDoubleHours(usage->points.back().at - first.at) / 24;
  CHECK(first.value == Approx(20.0 - 2.0 * days).margin(0.05));
  for (std::size_t i = 1; i < usage->points.size(); ++i) {
    CHECK(usage->points[i - 1].at < usage->points[i].at);
  }
  std::size_t day_reads = 0;
  for (const pulse::testing::FakePveRequest& r : pve.server->Requests()) {
    day_reads += r.target ==
                         "/api2/json/nodes/pve1/storage/local-zfs/rrddata?timeframe=day&cf="
                         "AVERAGE"
                     ? 1
                     : 0;
  }
  CHECK(day_reads == 1);
  // A second read within rrd_max_age answers from the cached rows.
  REQUIRE(fleet.ReadMetricHistory("storage:pve1/local-zfs", day).ok());
  std::size_t requests = pve.server->Requests().size();

  // A window within the last hour reads the hour series; node and guest metrics too.
  core::FleetMetricQuery hour;
  hour.start = now - absl::Minutes(50);
  hour.end = now + absl::Seconds(1);
  hour.metric = "memory";
  absl::StatusOr<core::FleetMetricSeries> node = fleet.ReadMetricHistory("node:pve1", hour);
  REQUIRE(node.ok());
  CHECK(node->points.size() >= 45);
  CHECK(node->points.front().value == Approx(25.0));
  hour.metric = "cpu";
  absl::StatusOr<core::FleetMetricSeries> vm = fleet.ReadMetricHistory("vm:101", hour);
  REQUIRE(vm.ok());
  CHECK(vm->points.size() >= 45);
  CHECK(vm->points.front().value == Approx(25.0));
  CHECK(pve.server->Requests().back().target ==
        "/api2/json/nodes/pve1/qemu/101/rrddata?timeframe=hour&cf=AVERAGE");
  CHECK(pve.server->Requests().size() > requests);

  // A node whose proxy is broken leaves its storage's history to the samples alone.
  pve.server->SetNodeProxyBroken("pve2", true);
  absl::StatusOr<core::FleetMetricSeries> broken =
      fleet.ReadMetricHistory("storage:pve2/local", day);
  REQUIRE(broken.ok());
  CHECK(broken->points.size() == 1);
  CHECK(broken->points.front().value == Approx(10.0));
}

TEST_CASE("backup jobs are resources whose facts give the last run and whether it is overdue",
          "[adapters][proxmox][tasks]") {
  // backup-a1 backs up VM 101, whose last vzdump failed; backup-b2 backs up every guest of pve2,
  // ran a day ago and missed its run two hours ago; backup-c3 is disabled. A running vzdump
  // has held container 201's lock for four hours.
  std::string scenario = kScenario;
  const std::string polls = R"("task_polls": 1)";
  scenario.replace(scenario.find(polls), polls.size(), R"(
    "backup_jobs": [
      {"id": "backup-a1", "schedule": "21:00", "vmid": "101", "storage": "local",
       "comment": "web nightly", "next_run_ago": -3600},
      {"id": "backup-b2", "schedule": "sat 02:00", "all": 1, "node": "pve2",
       "storage": "local", "next_run_ago": 7200},
      {"id": "backup-c3", "schedule": "21:00", "vmid": "102", "enabled": 0}],
    "tasks": [
      {"node": "pve1", "type": "vzdump", "id": "101", "start_ago": 7200, "end_ago": 7000,
       "status": "ERROR: Backup of VM 101 failed - unable to open file '/mnt/backup/dump'"},
      {"node": "pve2", "type": "vzdump", "id": "", "start_ago": 93600, "end_ago": 93000,
       "status": "OK"},
      {"node": "pve1", "type": "vzdump", "id": "201", "start_ago": 14400}],
    "task_polls": 1)");
  PveHarness pve(scenario.c_str());
  pve.server->SetGuestLock(201, "backup");
  std::unique_ptr<PveFleet> fleet = pve.Open();

  absl::StatusOr<core::FleetResource> a1 = fleet->GetResource("backup-job:pve/backup-a1");
  REQUIRE(a1.ok());
  CHECK(a1->type == "backup-job");
  CHECK(a1->name == "web nightly");
  CHECK(a1->status == "failed");
  CHECK(a1->attributes.at("guests") == "101");
  absl::StatusOr<core::FleetStatus> a1_status = fleet->GetStatus("backup-job:pve/backup-a1");
  REQUIRE(a1_status.ok());
  CHECK(a1_status->facts.at("last_result") == "failed");
  CHECK(absl::StrContains(a1_status->facts.at("last_status"), "unable to open file"));
  CHECK(absl::StartsWith(a1_status->facts.at("last_task"), "UPID:pve1:"));
  CHECK(a1_status->facts.count("overdue_seconds") == 0);
  CHECK(absl::StrContains(a1_status->summary, "failed"));
  core::FleetTopologyQuery around;
  around.root_id = "backup-job:pve/backup-a1";
  absl::StatusOr<core::FleetTopology> topology = fleet->GetTopology(around);
  REQUIRE(topology.ok());
  CHECK(std::count(topology->relationships.begin(), topology->relationships.end(),
                   core::FleetRelationship{"backup-job:pve/backup-a1", "vm:101", "backs_up"}) == 1);

  absl::StatusOr<core::FleetStatus> b2 = fleet->GetStatus("backup-job:pve/backup-b2");
  REQUIRE(b2.ok());
  CHECK(b2->status == "ok");
  CHECK(b2->facts.at("last_result") == "ok");
  std::int64_t overdue = 0;
  REQUIRE(absl::SimpleAtoi(b2->facts.at("overdue_seconds"), &overdue));
  CHECK(overdue >= 7200);
  CHECK(overdue < 7260);
  CHECK(fleet->GetStatus("backup-job:pve/backup-c3")->status == "disabled");
  CHECK(absl::IsNotFound(
      fleet
          ->ReadMetricHistory(
              "backup-job:pve/backup-a1",
              core::FleetMetricQuery{"cpu", absl::Now() - absl::Hours(1), absl::Now(), 10})
          .status()));

  // The lock's start comes from the running vzdump on the container.
  absl::StatusOr<core::FleetStatus> dns = fleet->GetStatus("lxc:201");
  REQUIRE(dns.ok());
  CHECK(dns->facts.at("lock") == "backup");
  std::int64_t locked = 0;
  REQUIRE(absl::SimpleAtoi(dns->facts.at("locked_seconds"), &locked));
  CHECK(locked >= 14400);
  CHECK(locked < 14460);
  CHECK(absl::StrContains(dns->facts.at("lock_task"), ":vzdump:201:"));
  CHECK(dns->facts.count("lock_since") == 1);
}

TEST_CASE("tasks that end become the source's changes, the ones before it opened do not",
          "[adapters][proxmox][tasks]") {
  std::string scenario = kScenario;
  const std::string polls = R"("task_polls": 1)";
  scenario.replace(scenario.find(polls), polls.size(), R"(
    "tasks": [{"node": "pve1", "type": "vzdump", "id": "101", "start_ago": 7200,
               "end_ago": 7000, "status": "OK"}],
    "task_polls": 1)");
  PveHarness pve(scenario.c_str());
  PveFleetOptions options = pve.Options();
  options.max_staleness = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<PveFleet>> opened = PveFleet::Open(options);
  REQUIRE(opened.ok());
  PveFleet& fleet = **opened;
  CHECK(fleet.ChangesSince(0, 100).empty());

  pve.server->AddTask("pve1", "vzdump", "101", "OK", 60, 10);
  pve.server->AddTask("pve2", "qmshutdown", "102", "command 'qm shutdown' failed: timeout", 30, 5);
  pve.server->AddTask("pve1", "qmstart", "201", "", 5, -1);  // still running: not yet a change
  REQUIRE(fleet.GetResource("vm:101").ok());                 // a listing
  std::vector<core::FleetChange> changes = fleet.ChangesSince(0, 100);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].seq == 1);
  CHECK(changes[0].resource_id == "vm:101");
  CHECK(changes[0].kind == "task");
  CHECK(changes[0].detail == "vzdump: OK");
  CHECK(changes[1].seq == 2);
  CHECK(changes[1].resource_id == "vm:102");
  CHECK(changes[1].kind == "task_failed");
  CHECK(changes[1].detail == "qmshutdown: command 'qm shutdown' failed: timeout");
  CHECK(changes[0].at < changes[1].at);
  // Read again: nothing new; after seq 1 only the second; max bounds the answer.
  REQUIRE(fleet.GetResource("vm:101").ok());
  CHECK(fleet.ChangesSince(0, 100).size() == 2);
  CHECK(fleet.ChangesSince(1, 100).size() == 1);
  CHECK(fleet.ChangesSince(0, 1).size() == 1);

  // A task on a node (no guest id) is about the node.
  pve.server->AddTask("pve2", "aptupdate", "", "OK", 20, 1);
  REQUIRE(fleet.GetResource("vm:101").ok());
  changes = fleet.ChangesSince(2, 100);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].resource_id == "node:pve2");
}

TEST_CASE("a guest that stops and a storage that fills past 90 % become changes once",
          "[adapters][proxmox][tasks]") {
  PveHarness pve;
  PveFleetOptions options = pve.Options();
  options.max_staleness = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<PveFleet>> opened = PveFleet::Open(options);
  REQUIRE(opened.ok());
  PveFleet& fleet = **opened;
  REQUIRE(fleet.GetResource("vm:101").ok());  // the first view: the starting point
  CHECK(fleet.ChangesSince(0, 100).empty());

  pve.server->SetGuestStatus(101, "stopped");
  // local-zfs is 20 % used (pve1's local is at 90 % from the start: no crossing).
  absl::StatusOr<core::FleetStatus> zfs = fleet.GetStatus("storage:pve1/local-zfs");
  REQUIRE(zfs.ok());
  const std::int64_t total = std::stoll(zfs->facts.at("total_bytes"));
  pve.server->SetStorageUsed("pve1", "local-zfs", total / 100 * 95);
  REQUIRE(fleet.GetResource("vm:101").ok());
  std::vector<core::FleetChange> changes = fleet.ChangesSince(0, 100);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].resource_id == "vm:101");
  CHECK(changes[0].kind == "stop");
  CHECK(changes[0].detail == "running -> stopped");
  CHECK(changes[1].resource_id == "storage:pve1/local-zfs");
  CHECK(changes[1].kind == "storage_threshold");
  CHECK(changes[1].detail == "usage 95.0 % crossed 90.0 %");
  // Still stopped and still full: no new change; started and stopped again: one more.
  REQUIRE(fleet.GetResource("vm:101").ok());
  CHECK(fleet.ChangesSince(0, 100).size() == 2);
  pve.server->SetGuestStatus(101, "running");
  REQUIRE(fleet.GetResource("vm:101").ok());
  pve.server->SetGuestStatus(101, "stopped");
  REQUIRE(fleet.GetResource("vm:101").ok());
  changes = fleet.ChangesSince(2, 100);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].kind == "stop");
}

}  // namespace
}  // namespace pulse::proxmox::testing
