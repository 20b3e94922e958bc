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

TEST_CASE("PVE rrddata rows decode with the members PVE leaves out absent",
          "[adapters][proxmox][rrd]") {
  // A storage's day series as PVE 8.2 sends it: the oldest row predates the storage (no
  // values), the newest is not consolidated yet (time only), numbers may be strings.
  absl::StatusOr<std::vector<PveRrdRow>> storage = DecodeRrdData(
      R"({"data":[{"time":1764633600},
      {"time":1764635400,"used":53687091200,"total":"107374182400"},
      {"time":1764637200,"used":5.4e10,"total":107374182400},
      {"time":"1764639000"}]})");
  INFO(storage.status().ToString());
  REQUIRE(storage.ok());
  REQUIRE(storage->size() == 4);
  CHECK_FALSE((*storage)[0].used.has_value());
  CHECK((*storage)[1].total == 107374182400.0);
  CHECK((*storage)[2].used == 5.4e10);
  CHECK((*storage)[3].time == 1764639000);
  CHECK_FALSE((*storage)[3].total.has_value());
  absl::StatusOr<std::vector<PveRrdRow>> node = DecodeRrdData(
      R"({"data":[{"time":1764639000,"cpu":0.0251,"maxcpu":8,"iowait":0.001,"loadavg":0.2,
      "memused":4294967296,"memtotal":34359738368,"rootused":1e9,"roottotal":1e11,
      "netin":1234.5,"netout":null,"swaptotal":0}]})");
  REQUIRE(node.ok());
  CHECK(node->front().cpu == 0.0251);
  CHECK(node->front().memused == 4294967296.0);
  CHECK(node->front().roottotal == 1e11);
  absl::StatusOr<std::vector<PveRrdRow>> guest = DecodeRrdData(
      R"({"data":[{"time":1764639000,"cpu":"0.5","mem":1,"maxmem":2,"disk":0,"maxdisk":4}]})");
  REQUIRE(guest.ok());
  CHECK(guest->front().mem == 1.0);
  CHECK(guest->front().disk == 0.0);
  CHECK(DecodeRrdData(R"({"data":[]})")->empty());
}

TEST_CASE("PVE cluster tasks and backup jobs decode as PVE 8 lists them",
          "[adapters][proxmox][tasks]") {
  absl::StatusOr<std::vector<PveTask>> tasks = DecodeClusterTasks(
      R"({"data":[{"upid":"UPID:pve1:0000A1B2:0001C3D4:6752F0A0:vzdump::root@pam:","node":"pve1",
      "pid":41394,"pstart":"115668","starttime":1733488800,"type":"vzdump","id":"",
      "user":"root@pam","endtime":1733489400,"status":"WARNINGS: 1","saved":"1"},
      {"upid":"UPID:pve1:0000A1B3:0001C3D5:6752F0A1:qmstart:101:root@pam:","node":"pve1",
      "starttime":"1733488801","type":"qmstart","id":101,"user":"root@pam"}]})");
  INFO(tasks.status().ToString());
  REQUIRE(tasks.ok());
  REQUIRE(tasks->size() == 2);
  CHECK((*tasks)[0].endtime == 1733489400);
  CHECK((*tasks)[0].status == "WARNINGS: 1");
  CHECK((*tasks)[0].id.empty());
  CHECK((*tasks)[1].id == "101");
  CHECK((*tasks)[1].starttime == 1733488801);
  CHECK((*tasks)[1].endtime == 0);
  CHECK((*tasks)[1].status.empty());

  absl::StatusOr<std::vector<PveBackupJob>> jobs = DecodeBackupJobs(
      R"({"data":[{"id":"backup-6a1b2c3d-0e1f","type":"vzdump","schedule":"21:00",
      "vmid":"101,102","storage":"local","mode":"snapshot","next-run":1733511600},
      {"id":"backup-old","type":"vzdump","starttime":"02:30","dow":"sat","all":1,
       "enabled":"0","storage":"pbs"},
      {"id":"backup-n","enabled":null,"schedule":"*/4:00"},
      {"id":"repl-1","type":"replication"}]})");
  INFO(jobs.status().ToString());
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 3);
  CHECK((*jobs)[0].enabled);
  CHECK((*jobs)[0].vmid == "101,102");
  CHECK((*jobs)[0].next_run == 1733511600);
  CHECK((*jobs)[1].schedule == "sat 02:30");
  CHECK((*jobs)[1].all);
  CHECK_FALSE((*jobs)[1].enabled);
  CHECK((*jobs)[2].enabled);
}

TEST_CASE("hostile task and backup job answers are DataLoss", "[adapters][proxmox][tasks]") {
  for (const char* body :
       {"", "{\"data\":{}}", "{\"data\":[1]}", "{\"data\":[{}]}",
        "{\"data\":[{\"upid\":\"UPID:x\",\"node\":\"pve1\"}]}",
        "{\"data\":[{\"upid\":\"UPID:x\",\"node\":\"pve1\",\"type\":\"vzdump\",\"starttime\":"
        "\"soon\"}]}",
        "{\"data\":[{\"upid\":\"UPID:x\",\"node\":\"pve1\",\"type\":\"vzdump\",\"status\":[]}]}"}) {
    INFO(body);
    CHECK(absl::IsDataLoss(DecodeClusterTasks(body).status()));
  }
  for (const char* body :
       {"", "{\"data\":{}}", "{\"data\":[1]}", "{\"data\":[{\"type\":\"vzdump\"}]}",
        "{\"data\":[{\"id\":\"b\",\"enabled\":\"maybe\"}]}",
        "{\"data\":[{\"id\":\"b\",\"vmid\":{}}]}",
        "{\"data\":[{\"id\":\"b\",\"next-run\":1e300}]}"}) {
    INFO(body);
    CHECK(absl::IsDataLoss(DecodeBackupJobs(body).status()));
  }
}

TEST_CASE("hostile rrddata answers are DataLoss naming the member", "[adapters][proxmox][rrd]") {
  for (const char* body :
       {"", "{\"data\":{}}", "{\"data\":[1]}", "{\"data\":[{}]}", "{\"data\":[{\"time\":0}]}",
        "{\"data\":[{\"time\":-60}]}", "{\"data\":[{\"time\":\"soon\"}]}",
        "{\"data\":[{\"time\":1,\"used\":-1}]}", "{\"data\":[{\"time\":1,\"cpu\":\"NaN\"}]}",
        "{\"data\":[{\"time\":1,\"total\":{}}]}", "{\"data\":[{\"time\":1,\"mem\":[1]}]}",
        "{\"data\":[{\"time\":1e300}]}"}) {
    INFO(body);
    CHECK(absl::IsDataLoss(DecodeRrdData(body).status()));
  }
  CHECK(DecodeRrdData("{\"data\":[{\"time\":1,\"used\":-1}]}")
            .status()
            .message()
            .find("rrddata.used") != absl::string_view::npos);
  std::string many = "{\"data\":[";
  for (std::size_t i = 0; i <= kMaxPveEntries; ++i) {
    many += i == 0 ? "{\"time\":1}" : ",{\"time\":1}";
  }
  many += "]}";
  CHECK(absl::IsDataLoss(DecodeRrdData(many).status()));
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
