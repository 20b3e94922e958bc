// The Proxmox Backup Server API answers the proxmox-backup fleet source reads (docs/fleet.md,
// "proxmox-backup"), decoded from their envelopes ({"data": ...}) into plain values. Field names
// follow PBS 3.2 (pbs-api-types: DataStoreStatusListItem, SnapshotListItem, TaskListItem); as
// with PVE a number may arrive as a JSON number or a numeric string, and members PBS adds later
// are ignored. A body that is not JSON, too deep, without "data", or with a member of a type PBS
// never sends is DataLoss naming the member, never a crash (tests/fuzz/pbs_api_fuzz.cc). Bounds
// are pve_api.h's. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::proxmox {

struct PbsVersion {
  std::string version;  // 3.2
  std::string release;  // 7 (3.2.7)
};

// One entry of /status/datastore-usage.
struct PbsDatastoreUsage {
  std::string store;
  std::uint64_t total = 0, used = 0, avail = 0;
  std::string error;  // set when PBS could not read the datastore (then the sizes are 0)
};

// One entry of /admin/datastore/{store}/snapshots (root namespace).
struct PbsSnapshot {
  std::string backup_type;  // vm, ct, host (other types are skipped)
  std::string backup_id;    // the guest's vmid for vm and ct, a host name for host
  std::int64_t backup_time = 0;
  std::uint64_t size = 0;
  std::string verify_state;  // ok, failed, or "" when never verified
  bool is_protected = false;
};

// One entry of /nodes/localhost/tasks.
struct PbsTask {
  std::string upid;
  std::string worker_type;  // garbage_collection, verificationjob, prunejob, syncjob, backup, ...
  std::string worker_id;    // the datastore (GC), STORE:JOB (verify, prune jobs), ...
  std::int64_t starttime = 0;
  std::int64_t endtime = 0;  // 0 while running
  std::string status;        // OK, WARNINGS: N, or the error text; "" while running
};

[[nodiscard]] absl::StatusOr<PbsVersion> DecodePbsVersion(std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PbsDatastoreUsage>> DecodeDatastoreUsage(
    std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PbsSnapshot>> DecodeSnapshots(std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PbsTask>> DecodeTasks(std::string_view body);

// PBS's message in the body of a refusal (plain text, as proxmox-rest-server's JSON formatter
// writes it, e.g. "authentication failed - invalid API token"; or a "message" member), printable
// and at most 200 bytes; "" when there is none.
std::string DecodePbsError(std::string_view body);

}  // namespace pulse::proxmox
