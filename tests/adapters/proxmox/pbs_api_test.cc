// The Proxmox Backup Server decoders (pbs_api.h): PBS 3.2's shapes with the loose number
// spellings Proxmox uses, members PBS may add ignored, and hostile answers DataLoss.
#include "pulse/adapters/proxmox/pbs_api.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace pulse::proxmox {
namespace {

TEST_CASE("PBS version, datastore usage, snapshots and tasks decode", "[adapters][proxmox][pbs]") {
  absl::StatusOr<PbsVersion> version =
      DecodePbsVersion(R"({"data":{"version":"3.2","release":"7","repoid":"8cd3a5f3"}})");
  REQUIRE(version.ok());
  CHECK(version->version == "3.2");
  CHECK(version->release == "7");

  absl::StatusOr<std::vector<PbsDatastoreUsage>> usage = DecodeDatastoreUsage(
      R"({"data":[{"store":"main","total":1000,"used":"930","avail":70,"history":[0.5,null],
         "gc-status":{"upid":"UPID:pbs1:1:2:3:4:garbage_collection:main:root@pam:"}},
        {"store":"usb","error":"datastore is not mounted"}]})");
  REQUIRE(usage.ok());
  REQUIRE(usage->size() == 2);
  CHECK(usage->at(0).store == "main");
  CHECK(usage->at(0).total == 1000);
  CHECK(usage->at(0).used == 930);
  CHECK(usage->at(0).avail == 70);
  CHECK(usage->at(0).error.empty());
  CHECK(usage->at(1).error == "datastore is not mounted");
  CHECK(usage->at(1).total == 0);

  absl::StatusOr<std::vector<PbsSnapshot>> snapshots = DecodeSnapshots(
      R"({"data":[{"backup-type":"vm","backup-id":"101","backup-time":1733200000,"size":5,
         "protected":false,"files":[{"filename":"index.json.blob"}],
         "verification":{"state":"failed","upid":"UPID:..."}},
        {"backup-type":"ct","backup-id":201,"backup-time":"1733100000","protected":1},
        {"backup-type":"host","backup-id":"files1","backup-time":1733000000,
         "verification":"ok"},
        {"backup-type":"future","backup-id":"x","backup-time":1}]})");
  REQUIRE(snapshots.ok());
  REQUIRE(snapshots->size() == 3);  // a type a later PBS adds is skipped
  CHECK(snapshots->at(0).verify_state == "failed");
  CHECK(snapshots->at(0).backup_time == 1733200000);
  CHECK(snapshots->at(1).backup_id == "201");
  CHECK(snapshots->at(1).backup_time == 1733100000);
  CHECK(snapshots->at(1).is_protected);
  CHECK(snapshots->at(1).verify_state.empty());
  CHECK(snapshots->at(2).verify_state == "ok");

  absl::StatusOr<std::vector<PbsTask>> tasks = DecodeTasks(
      R"({"data":[{"upid":"UPID:pbs1:...","node":"pbs1","pid":1000,"pstart":4660,
         "starttime":1733200000,"worker_type":"verificationjob","worker_id":"main:v-daily",
         "user":"root@pam","endtime":1733200060,"status":"verification failed"},
        {"upid":"UPID:pbs1:...","starttime":1733200100,"worker-type":"garbage_collection",
         "worker-id":"main"}]})");
  REQUIRE(tasks.ok());
  REQUIRE(tasks->size() == 2);
  CHECK(tasks->at(0).worker_type == "verificationjob");
  CHECK(tasks->at(0).worker_id == "main:v-daily");
  CHECK(tasks->at(0).endtime == 1733200060);
  CHECK(tasks->at(0).status == "verification failed");
  CHECK(tasks->at(1).worker_type == "garbage_collection");
  CHECK(tasks->at(1).endtime == 0);  // still running
  CHECK(tasks->at(1).status.empty());
}

TEST_CASE("hostile PBS answers are DataLoss, never a crash", "[adapters][proxmox][pbs]") {
  for (const char* body :
       {"", "null", "[]", "{}", "{\"data\":null}", "{\"data\":{}}", "not json", "{\"data\":[1]}",
        "{\"data\":[{\"total\":5}]}", "{\"data\":[{\"store\":\"a\",\"used\":-1}]}",
        "{\"data\":[{\"store\":\"a\",\"total\":\"1e400\"}]}",
        "{\"data\":[{\"store\":{},\"total\":1}]}", "{\"data\":[{\"store\":\"a\",\"error\":[]}]}"}) {
    INFO(body);
    absl::Status s = DecodeDatastoreUsage(body).status();
    CHECK(absl::IsDataLoss(s));
    CHECK(absl::StrContains(s.message(), "Proxmox Backup Server"));
  }
  for (const char* body :
       {"{\"data\":[{\"backup-type\":\"vm\",\"backup-time\":1}]}",
        "{\"data\":[{\"backup-type\":\"vm\",\"backup-id\":\"1\"}]}",
        "{\"data\":[{\"backup-type\":\"vm\",\"backup-id\":\"1\",\"backup-time\":\"soon\"}]}",
        "{\"data\":[{\"backup-type\":\"vm\",\"backup-id\":\"1\",\"backup-time\":1,"
        "\"verification\":[]}]}",
        "{\"data\":[{\"backup-type\":\"vm\",\"backup-id\":\"1\",\"backup-time\":1,"
        "\"verification\":{\"state\":{}}}]}",
        "{\"data\":[{\"backup-type\":[],\"backup-id\":\"1\",\"backup-time\":1}]}"}) {
    INFO(body);
    CHECK(absl::IsDataLoss(DecodeSnapshots(body).status()));
  }
  for (const char* body : {"{\"data\":[{\"upid\":\"x\"}]}", "{\"data\":[{\"worker_type\":5.5}]}",
                           "{\"data\":[{\"worker_type\":\"gc\",\"endtime\":\"NaN\"}]}",
                           "{\"data\":[{\"worker_type\":\"gc\",\"status\":{}}]}"}) {
    INFO(body);
    CHECK(absl::IsDataLoss(DecodeTasks(body).status()));
  }
  CHECK(absl::IsDataLoss(DecodePbsVersion("{\"data\":{\"release\":\"7\"}}").status()));
  CHECK(absl::IsDataLoss(DecodePbsVersion("{\"data\":{\"version\":[]}}").status()));
  std::string deep = "{\"data\":";
  for (int i = 0; i < 100; ++i) {
    deep += "[";
  }
  CHECK(absl::IsDataLoss(DecodeSnapshots(deep).status()));
  std::string many = "{\"data\":[";
  for (int i = 0; i < 20001; ++i) {
    many += i == 0 ? "{}" : ",{}";
  }
  CHECK(absl::IsDataLoss(DecodeTasks(many + "]}").status()));
  const std::string long_id(5000, 'a');
  CHECK(absl::IsDataLoss(DecodeSnapshots("{\"data\":[{\"backup-type\":\"host\",\"backup-id\":\"" +
                                         long_id + "\",\"backup-time\":1}]}")
                             .status()));
}

TEST_CASE("PBS refusal bodies become a bounded printable message", "[adapters][proxmox][pbs]") {
  CHECK(DecodePbsError("authentication failed - invalid API token\n") ==
        "authentication failed - invalid API token");
  CHECK(DecodePbsError(R"({"data":null,"message":"permission check failed"})") ==
        "permission check failed");
  CHECK(DecodePbsError(R"({"data":null})").empty());
  CHECK(DecodePbsError("").empty());
  CHECK(DecodePbsError("bad\x01\x1b[31mred") == "bad??[31mred");
  CHECK(DecodePbsError(std::string(1000, 'x')).size() == 200);
}

}  // namespace
}  // namespace pulse::proxmox
