// PveFleet against the loopback fake PVE (HTTPS, pinned certificate): resources and ids, status
// facts, metrics, governed capabilities followed to their task's exit status and confirmed by
// an independent read, and the faults a real cluster shows (bad or revoked token, fingerprint
// mismatch before any request, a broken node proxy, a locked guest, a failed task).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
  absl::Status broken = fleet->GetStatus("node:pve2").status();
  CHECK(absl::IsUnavailable(broken));
  CHECK(absl::StrContains(broken.message(), "596"));
  CHECK(absl::StrContains(broken.message(), "Broken pipe"));
  CHECK(fleet->GetStatus("node:pve1").ok());  // the other node still answers
  pve.server->SetNodeProxyBroken("pve2", false);
  pve.server->SetNodeOnline("pve2", false);
  absl::SleepFor(absl::Milliseconds(250));
  absl::StatusOr<core::FleetStatus> offline = fleet->GetStatus("node:pve2");
  REQUIRE(offline.ok());
  CHECK(offline->status == "offline");
  CHECK(fleet->GetResource("vm:102").ok());  // its guests stay listed
}

}  // namespace
}  // namespace pulse::proxmox::testing
