// The PVE answer decoders (pve_api.h) on the shapes PVE 8 sends, on the loose spellings it is
// known for (numbers as strings, 0/1 booleans, vmid as a string), and on hostile bodies.
#include "pulse/adapters/proxmox/pve_api.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "pulse/adapters/proxmox/pve_client.h"

namespace pulse::proxmox {
namespace {

TEST_CASE("PVE cluster resources decode with PVE's loose types", "[adapters][proxmox]") {
  const char* body = R"({"data":[
    {"id":"node/pve1","type":"node","node":"pve1","status":"online","cpu":0.0123,"maxcpu":8,
     "mem":1024,"maxmem":4096,"disk":"10","maxdisk":100,"uptime":99,"level":""},
    {"id":"qemu/101","type":"qemu","node":"pve1","vmid":"101","name":"web","status":"running",
     "template":0,"lock":"backup","hastate":"started","tags":"prod;web","cpu":0.5,"maxcpu":2},
    {"id":"lxc/201","type":"lxc","node":"pve1","vmid":201,"name":123,"status":"stopped",
     "template":"1"},
    {"id":"storage/pve1/local","type":"storage","node":"pve1","storage":"local",
     "plugintype":"dir","shared":0,"status":"available","disk":5,"maxdisk":10},
    {"id":"pool/ops","type":"pool","pool":"ops"},
    {"id":"sdn/pve1/localnetwork","type":"sdn","sdn":"localnetwork","node":"pve1"}
  ]})";
  absl::StatusOr<std::vector<PveClusterResource>> resources = DecodeClusterResources(body);
  INFO(resources.status().ToString());
  REQUIRE(resources.ok());
  REQUIRE(resources->size() == 4);
  CHECK((*resources)[0].disk == 10);
  CHECK((*resources)[1].vmid == 101);
  CHECK((*resources)[1].lock == "backup");
  CHECK((*resources)[1].hastate == "started");
  CHECK((*resources)[2].name == "123");
  CHECK((*resources)[2].is_template);
  CHECK((*resources)[3].storage == "local");
}

TEST_CASE("PVE status, storage, HA, task and UPID answers decode", "[adapters][proxmox]") {
  absl::StatusOr<PveNodeStatus> node = DecodeNodeStatus(
      R"({"data":{"cpu":0.1,"loadavg":["0.50","0.25",0.1],"memory":{"total":100,"used":25},
      "rootfs":{"total":10,"used":5,"avail":5},"cpuinfo":{"cpus":4,"mhz":"2399.998"},
      "uptime":10,"pveversion":"pve-manager/8.2.4/faa83925"}})");
  REQUIRE(node.ok());
  CHECK(node->loadavg == std::vector<double>{0.5, 0.25, 0.1});
  CHECK(node->mem_used == 25);
  CHECK(node->cpus == 4);
  absl::StatusOr<PveGuestStatus> guest = DecodeGuestStatus(
      R"({"data":{"status":"running","qmpstatus":"running","lock":"snapshot",
      "ha":{"managed":1,"state":"started"},"cpus":2,"mem":1,"maxmem":2,"agent":1}})");
  REQUIRE(guest.ok());
  CHECK(guest->lock == "snapshot");
  CHECK(guest->ha_managed);
  absl::StatusOr<std::vector<PveStorage>> storage = DecodeStorageList(
      R"({"data":[{"storage":"local","type":"dir","active":1,"enabled":"1","shared":0,
      "total":10,"used":4,"avail":6,"used_fraction":0.4}]})");
  REQUIRE(storage.ok());
  CHECK(storage->front().enabled);
  absl::StatusOr<std::vector<PveHaService>> ha = DecodeHaStatus(
      R"({"data":[{"id":"quorum","type":"quorum","quorate":1},
      {"id":"service:vm:101","type":"service","sid":"vm:101","node":"pve1",
       "state":"started","request_state":"stopped"}]})");
  REQUIRE(ha.ok());
  REQUIRE(ha->size() == 1);
  CHECK(ha->front().request_state == "stopped");
  absl::StatusOr<PveTaskStatus> task = DecodeTaskStatus(
      R"({"data":{"status":"stopped","exitstatus":"OK","upid":"UPID:pve1:1:2:3:qmstart:101:a@pve!t:"}})");
  REQUIRE(task.ok());
  CHECK(task->exitstatus == "OK");
  CHECK(DecodeUpid(R"({"data":"UPID:pve1:0000ABCD:0001:65F1A2B3:qmshutdown:101:pulse@pve!pulse:"})")
            .ok());
  CHECK(DecodeErrors(R"({"data":null,"errors":{"vmid":"type check ('integer') failed"}})") ==
        "vmid: type check ('integer') failed");
}

TEST_CASE("hostile PVE answers are DataLoss, never a crash", "[adapters][proxmox]") {
  for (const char* body : {"", "null", "[]", "{}", "{\"data\":null}", "{\"data\":{}}", "not json",
                           "{\"data\":[1,2]}", "{\"data\":[{\"type\":\"qemu\",\"node\":\"pve1\"}]}",
                           "{\"data\":[{\"type\":\"node\",\"node\":\"pve1\",\"cpu\":\"NaN\"}]}",
                           "{\"data\":[{\"type\":\"node\",\"node\":\"pve1\",\"mem\":-5}]}",
                           "{\"data\":[{\"type\":\"node\",\"node\":\"pve1\",\"mem\":1e300}]}",
                           "{\"data\":[{\"type\":\"node\",\"node\":{}}]}",
                           "{\"data\":[{\"type\":\"storage\",\"node\":\"pve1\"}]}"}) {
    INFO(body);
    absl::StatusOr<std::vector<PveClusterResource>> r = DecodeClusterResources(body);
    CHECK(absl::IsDataLoss(r.status()));
  }
  std::string deep = "{\"data\":";
  for (int i = 0; i < 100; ++i) {
    deep += "[";
  }
  CHECK(absl::IsDataLoss(DecodeClusterResources(deep).status()));
  CHECK(absl::IsDataLoss(DecodeGuestStatus("{\"data\":{\"status\":[]}}").status()));
  CHECK(absl::IsDataLoss(DecodeGuestStatus("{\"data\":{\"ha\":[]}}").status()));
  CHECK(absl::IsDataLoss(DecodeNodeStatus("{\"data\":{\"loadavg\":[\"x\"]}}").status()));
  CHECK(absl::IsDataLoss(DecodeTaskStatus("{\"data\":{\"status\":\"maybe\"}}").status()));
  CHECK(absl::IsDataLoss(DecodeUpid("{\"data\":\"UPID:x\"}").status()));
  CHECK(absl::IsDataLoss(DecodeUpid("{\"data\":\"UPID:n:1:2:3:t:i:u\\n:\"}").status()));
  CHECK(absl::IsDataLoss(DecodeUpid("{\"data\":5}").status()));
  CHECK(DecodeErrors("{\"errors\":[1]}").empty());
  CHECK(Printable("a\x01\xff"
                  "b") == "a??b");
}

TEST_CASE("token ids and path segments are checked and encoded", "[adapters][proxmox]") {
  CHECK(IsValidTokenId("pulse@pve!pulse"));
  CHECK(IsValidTokenId("root@pam!monitoring-2"));
  for (const char* bad : {"", "pulse@pve", "pulse!tok", "@pve!t", "p@!t", "p@pve!", "p@pve!1t",
                          "p@pve!t=x", "p u@pve!t", "p@pve!t\n"}) {
    INFO(bad);
    CHECK_FALSE(IsValidTokenId(bad));
  }
  CHECK(EncodePathSegment("UPID:pve1:0A:qmstart:101:pulse@pve!pulse:") ==
        "UPID%3Apve1%3A0A%3Aqmstart%3A101%3Apulse%40pve%21pulse%3A");
  CHECK(EncodePathSegment("../x") == "..%2Fx");
}

}  // namespace
}  // namespace pulse::proxmox
