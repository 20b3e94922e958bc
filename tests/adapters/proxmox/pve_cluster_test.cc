// Following a Proxmox VE cluster across its nodes (PveClient::Follow, docs/fleet.md "A cluster,
// not a node"): the members' addresses from /cluster/status, each pinned to the certificate the
// configured node names for it, and calls that go on to another member when one cannot be
// reached. The fake serves pve2 and pve3 on 127.0.0.2 and 127.0.0.3 at the main listener's port,
// each with its own certificate, as the nodes of a real cluster listen on 8006 at their own
// addresses.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/adapters/proxmox/pve_client.h"
#include "pulse/adapters/proxmox/pve_source.h"
#include "pve_test_support.h"

namespace pulse::proxmox::testing {
namespace {

using pulse::testing::FakePveRequest;
using pulse::testing::TestCertificate;

constexpr char kThreeNodes[] = R"({
  "version": "8.2.4",
  "tokens": {"pulse@pve!pulse": "5f0c4a4e-2f3b-4c1d-9a7e-0d9b8a6c1e21"},
  "nodes": [
    {"node": "pve1", "status": "online", "cpu": 0.1, "maxcpu": 8, "mem": 1, "maxmem": 8,
     "disk": 1, "maxdisk": 8, "uptime": 100},
    {"node": "pve2", "status": "online", "cpu": 0.2, "maxcpu": 8, "mem": 1, "maxmem": 8,
     "disk": 1, "maxdisk": 8, "uptime": 100},
    {"node": "pve3", "status": "online", "cpu": 0.3, "maxcpu": 8, "mem": 1, "maxmem": 8,
     "disk": 1, "maxdisk": 8, "uptime": 100}
  ],
  "guests": [
    {"type": "qemu", "vmid": 101, "node": "pve1", "name": "web", "status": "running",
     "cpus": 2, "cpu": 0.25, "mem": 1, "maxmem": 2, "uptime": 7200},
    {"type": "qemu", "vmid": 102, "node": "pve2", "name": "db", "status": "stopped", "cpus": 2,
     "maxmem": 2}
  ],
  "storage": [],
  "task_polls": 1
})";

// Three nodes: pve1 on the main listener (the configured URL), pve2 and pve3 on their own.
struct Cluster : PveHarness {
  std::map<std::string, TestCertificate> certs;
  std::map<std::string, std::string> urls;

  Cluster() : PveHarness(kThreeNodes) {
    urls["pve1"] = server->url();
    for (const auto& [node, ip] :
         {std::pair<const char*, const char*>{"pve2", "127.0.0.2"}, {"pve3", "127.0.0.3"}}) {
      absl::StatusOr<TestCertificate> made =
          pulse::testing::MakeTestCertificate(dir.path(), node, ip);
      REQUIRE(made.ok());
      certs[node] = *made;
      absl::StatusOr<std::string> url = server->ServeNode(node, ip, *made);
      INFO(url.status().ToString());
      REQUIRE(url.ok());
      urls[node] = *url;
    }
  }

  // The requests that reached `node`'s listener.
  std::vector<FakePveRequest> At(const std::string& node) const {
    std::vector<FakePveRequest> out;
    for (const FakePveRequest& r : server->Requests()) {
      if (r.endpoint == node) {
        out.push_back(r);
      }
    }
    return out;
  }
};

std::string Attribute(PveFleet& fleet, const std::string& node, const std::string& key) {
  absl::StatusOr<core::FleetResource> r = fleet.GetResource("node:" + node);
  REQUIRE(r.ok());
  const auto it = r->attributes.find(key);
  return it == r->attributes.end() ? "" : it->second;
}

PveClientOptions ClientOptions(const Cluster& c) { return c.Options().client; }

TEST_CASE("a cluster is discovered from one node: each member pinned to its own certificate",
          "[adapters][proxmox]") {
  Cluster c;
  absl::StatusOr<std::unique_ptr<PveClient>> client = PveClient::Open(ClientOptions(c));
  REQUIRE(client.ok());
  REQUIRE((*client)->Endpoints().size() == 1);
  absl::StatusOr<PveClient::FollowResult> followed = (*client)->Follow();
  INFO(followed.status().ToString());
  REQUIRE(followed.ok());
  CHECK(followed->skipped.empty());
  const std::vector<PveEndpoint>& e = followed->endpoints;
  REQUIRE(e.size() == 3);
  CHECK(e[0].url == c.urls["pve1"]);
  CHECK(e[0].node == "pve1");  // the member /cluster/status marked local
  CHECK(e[0].fingerprint.empty());
  CHECK(e[0].current);
  CHECK(e[1].node == "pve2");
  CHECK(e[1].url == c.urls["pve2"]);
  CHECK(e[1].fingerprint == c.certs["pve2"].fingerprint);  // pve-ssl.pem, not the root CA's
  CHECK(e[2].node == "pve3");
  CHECK(e[2].fingerprint == c.certs["pve3"].fingerprint);
  // Discovery asked the configured node only.
  CHECK(c.At("pve2").empty());
  CHECK(c.At("pve3").empty());
  // Following again changes nothing.
  absl::StatusOr<PveClient::FollowResult> again = (*client)->Follow();
  REQUIRE(again.ok());
  CHECK(again->endpoints.size() == 3);
}

TEST_CASE("when the configured node goes down, reads and actions go on through another member",
          "[adapters][proxmox]") {
  Cluster c;
  std::unique_ptr<PveFleet> fleet = c.Open();
  CHECK(Attribute(*fleet, "pve1", "api_in_use") == "true");
  CHECK(Attribute(*fleet, "pve2", "api_endpoint") == c.urls["pve2"]);
  CHECK(Attribute(*fleet, "pve2", "api_in_use") == "false");

  c.server->SetEndpointUp("pve1", false);
  c.server->SetNodeOnline("pve1", false);   // what the other members now report
  absl::SleepFor(absl::Milliseconds(250));  // past max_staleness
  absl::StatusOr<std::vector<core::FleetResource>> listed =
      fleet->ListResources(core::FleetResourceQuery{});
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  absl::StatusOr<core::FleetStatus> pve1 = fleet->GetStatus("node:pve1");
  REQUIRE(pve1.ok());
  CHECK(pve1->status == "offline");
  CHECK_FALSE(c.At("pve2").empty());  // the next member in order took over
  CHECK(Attribute(*fleet, "pve2", "api_in_use") == "true");

  // A start of the stopped VM on pve2 is one POST, sent to the member in use.
  absl::StatusOr<core::DispatchReceipt> started = fleet->Dispatch(Request("vm:102", "start"));
  INFO(started.status().ToString());
  REQUIRE(started.ok());
  std::size_t posts = 0;
  for (const FakePveRequest& r : c.server->Requests()) {
    if (r.method == "POST") {
      ++posts;
      CHECK(r.endpoint == "pve2");
    }
  }
  CHECK(posts == 1);
  CHECK(c.server->GuestStatus(102) == "running");

  // Every member down: the error is the first one's, with the others named.
  c.server->SetEndpointUp("pve2", false);
  c.server->SetEndpointUp("pve3", false);
  absl::SleepFor(absl::Milliseconds(250));
  absl::Status down = fleet->ListResources(core::FleetResourceQuery{}).status();
  CHECK(absl::IsUnavailable(down));
  CHECK(absl::StrContains(down.message(), "the cluster's other nodes"));
  CHECK(absl::StrContains(down.message(), "pve3"));
  CHECK_FALSE(absl::StrContains(down.message(), kSecret));

  // The configured node back: calls stay with the member that last answered until it fails.
  c.server->SetEndpointUp("pve1", true);
  c.server->SetNodeOnline("pve1", true);
  absl::SleepFor(absl::Milliseconds(250));
  CHECK(fleet->ListResources(core::FleetResourceQuery{}).ok());
}

TEST_CASE("a member whose certificate is not the one the cluster named never gets the token",
          "[adapters][proxmox]") {
  Cluster c;
  // The configured node names a certificate pve2 does not present (a machine in its place).
  c.server->SetReportedFingerprint("pve2", c.certs["pve3"].fingerprint);
  PveFleetOptions options = c.Options();
  absl::StatusOr<std::unique_ptr<PveFleet>> opened = PveFleet::Open(options);
  REQUIRE(opened.ok());
  std::unique_ptr<PveFleet> fleet = *std::move(opened);
  c.server->SetEndpointUp("pve1", false);
  const std::uint64_t failed_before = c.server->FailedHandshakes();
  absl::SleepFor(absl::Milliseconds(250));
  REQUIRE(fleet->ListResources(core::FleetResourceQuery{}).ok());  // through pve3
  CHECK(c.server->FailedHandshakes() > failed_before);             // pve2 was refused
  CHECK(c.At("pve2").empty());                                     // no request reached it
  CHECK_FALSE(c.At("pve3").empty());
}

TEST_CASE("a node proxy answering 596 is read through the node's own endpoint",
          "[adapters][proxmox]") {
  Cluster c;
  std::unique_ptr<PveFleet> fleet = c.Open();
  c.server->SetNodeProxyBroken("pve2", true);
  absl::StatusOr<core::FleetStatus> pve2 = fleet->GetStatus("node:pve2");
  INFO(pve2.status().ToString());
  REQUIRE(pve2.ok());
  CHECK(pve2->status == "online");
  bool direct = false;
  for (const FakePveRequest& r : c.At("pve2")) {
    direct = direct || r.target == "/api2/json/nodes/pve2/status";
  }
  CHECK(direct);
}

TEST_CASE("follow_cluster off: the configured node only", "[adapters][proxmox]") {
  Cluster c;
  PveFleetOptions options = c.Options();
  options.follow_cluster = false;
  absl::StatusOr<std::unique_ptr<PveFleet>> opened = PveFleet::Open(options);
  REQUIRE(opened.ok());
  std::unique_ptr<PveFleet> fleet = *std::move(opened);
  for (const FakePveRequest& r : c.server->Requests()) {
    CHECK(r.target != "/api2/json/cluster/status");
  }
  c.server->SetEndpointUp("pve1", false);
  absl::SleepFor(absl::Milliseconds(250));
  CHECK(absl::IsUnavailable(fleet->ListResources(core::FleetResourceQuery{}).status()));
  CHECK(c.At("pve2").empty());

  absl::StatusOr<PveFleetOptions> parsed =
      ParsePveSource(R"({"name":"pve","kind":"proxmox-ve","url":"https://pve1:8006",
                         "token_id":"pulse@pve!pulse","follow_cluster":false})",
                     PveFleetOptions{});
  REQUIRE(parsed.ok());
  CHECK_FALSE(parsed->follow_cluster);
  CHECK(ParsePveSource(R"({"name":"pve","kind":"proxmox-ve","url":"https://pve1:8006",
                           "token_id":"pulse@pve!pulse"})",
                       PveFleetOptions{})
            ->follow_cluster);
  CHECK(absl::IsInvalidArgument(
      ParsePveSource(R"({"name":"pve","kind":"proxmox-ve","url":"https://pve1:8006",
                         "token_id":"pulse@pve!pulse","follow_cluster":"yes"})",
                     PveFleetOptions{})
          .status()));
}

TEST_CASE("cluster status and certificate answers decode, and hostile ones are DataLoss",
          "[adapters][proxmox]") {
  absl::StatusOr<std::vector<PveClusterMember>> members = DecodeClusterStatus(R"({"data":[
    {"type":"cluster","id":"cluster","name":"lab","nodes":2,"quorate":1,"version":4},
    {"type":"node","id":"node/pve1","name":"pve1","ip":"10.0.0.1","nodeid":1,"online":1,
     "local":1,"level":""},
    {"type":"node","id":"node/pve2","name":"pve2","ip":"fd00::2","nodeid":"2","online":"0",
     "local":0}]})");
  REQUIRE(members.ok());
  REQUIRE(members->size() == 2);
  CHECK((*members)[0].name == "pve1");
  CHECK((*members)[0].ip == "10.0.0.1");
  CHECK((*members)[0].local);
  CHECK((*members)[0].online);
  CHECK((*members)[1].ip == "fd00::2");
  CHECK((*members)[1].nodeid == 2);
  CHECK_FALSE((*members)[1].online);
  // A single node without a cluster lists itself only.
  CHECK(DecodeClusterStatus(R"({"data":[{"type":"node","name":"pve","ip":"192.168.1.5",
        "online":1,"local":1}]})")
            ->size() == 1);

  absl::StatusOr<std::vector<PveCertificate>> certs = DecodeCertificateInfo(R"({"data":[
    {"filename":"pve-root-ca.pem","fingerprint":"5A:0C:34:95:29:37:4E:A8:B2:46:C4:29:42:7A:D1:71:54:A7:4D:58:2B:26:7F:4C:E8:A3:3F:25:64:55:0A:D1"},
    {"filename":"pve-ssl.pem","fingerprint":"AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99","notafter":1763072000}]})");
  REQUIRE(certs.ok());
  const PveCertificate* presented = ProxyCertificate(*certs);
  REQUIRE(presented != nullptr);
  CHECK(presented->filename == "pve-ssl.pem");
  certs->push_back({"pveproxy-ssl.pem", std::string(95, 'A')});
  CHECK(ProxyCertificate(*certs)->filename == "pveproxy-ssl.pem");  // a custom one wins
  CHECK(ProxyCertificate({}) == nullptr);

  // An address becomes part of a URL: only IP literals pass.
  for (const char* ip : {"evil.example:443", "10.0.0.1/x", "10.0.0.1@evil", "[::1]", "10.0.0.256",
                         "pve2", " 10.0.0.1", "10.0.0.1\\n"}) {
    INFO(ip);
    const std::string body =
        std::string(R"({"data":[{"type":"node","name":"pve2","ip":")") + ip + R"(","online":1}]})";
    CHECK(absl::IsDataLoss(DecodeClusterStatus(body).status()));
  }
  for (const char* bad :
       {"", "{}", R"({"data":{}})", R"({"data":[1]})", R"({"data":[{"type":"node"}]})",
        R"({"data":[{"type":"node","name":"pve2","online":"yes"}]})",
        R"({"data":[{"type":"node","name":["pve2"]}]})"}) {
    INFO(bad);
    CHECK(absl::IsDataLoss(DecodeClusterStatus(bad).status()));
  }
  for (
      const char* bad :
      {R"({"data":[{"filename":"pve-ssl.pem","fingerprint":"AB:CD"}]})",
       R"({"data":[{"filename":"pve-ssl.pem"}]})",
       R"({"data":[{"filename":"pve-ssl.pem","fingerprint":"GG:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99"}]})",
       R"({"data":[{"filename":"pve-ssl.pem","fingerprint":"AABBCCDDEEFF00112233445566778899AABBCCDDEEFF00112233445566778899"}]})",
       R"({"data":"x"})"}) {
    INFO(bad);
    CHECK(absl::IsDataLoss(DecodeCertificateInfo(bad).status()));
  }
}

}  // namespace
}  // namespace pulse::proxmox::testing
