// The Proxmox VE API answers the proxmox-ve fleet source reads (docs/fleet.md, "proxmox-ve"),
// decoded from their envelopes ({"data": ...}) into plain values. PVE is loose with types (a
// number may arrive as a JSON number or as a numeric string, a boolean as 0/1 or "1", vmid as a
// string on some versions), so every decoder accepts those spellings and nothing else; unknown
// members are ignored. A body that is not JSON, too deep, without "data", or with a member of
// a type PVE never sends is DataLoss naming the member, never a crash (tests/fuzz/pve_api_fuzz.cc).
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::proxmox {

// Bounds on a decoded answer (hostile input).
inline constexpr std::size_t kMaxPveAnswerBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxPveEntries = 20000;
inline constexpr std::size_t kMaxPveStringBytes = 4096;

struct PveVersion {
  std::string version;  // 8.2.4
  std::string release;  // 8.2
};

// One entry of /cluster/resources: type node, qemu, lxc, storage (others are skipped).
struct PveClusterResource {
  std::string id;    // node/pve1, qemu/101, lxc/102, storage/pve1/local
  std::string type;  // node, qemu, lxc, storage
  std::string node;
  std::string name;
  std::string status;  // online/offline, running/stopped, available/unknown
  std::string storage;
  std::string plugintype;
  std::string content;
  std::string lock;
  std::string hastate;
  std::string tags;
  std::int64_t vmid = 0;
  bool is_template = false;
  bool shared = false;
  double cpu = 0;  // fraction of the allotted CPUs, 0..1 (can exceed 1 briefly)
  std::int64_t maxcpu = 0;
  std::uint64_t mem = 0, maxmem = 0, disk = 0, maxdisk = 0, uptime = 0;
};

struct PveNodeStatus {
  double cpu = 0;
  double wait = 0;
  std::uint64_t uptime = 0;
  std::int64_t cpus = 0;
  std::string cpu_model;
  std::uint64_t mem_total = 0, mem_used = 0;
  std::uint64_t rootfs_total = 0, rootfs_used = 0;
  std::vector<double> loadavg;
  std::string pveversion;
  std::string kversion;
};

// /nodes/{node}/qemu|lxc/{vmid}/status/current.
struct PveGuestStatus {
  std::string status;  // running, stopped
  std::string qmpstatus;
  std::string name;
  std::string lock;  // backup, migrate, snapshot, ... ("" when none)
  bool ha_managed = false;
  std::string ha_state;
  double cpu = 0;
  std::int64_t cpus = 0;
  std::uint64_t mem = 0, maxmem = 0, disk = 0, maxdisk = 0, uptime = 0;
};

// One entry of /nodes/{node}/storage.
struct PveStorage {
  std::string storage;
  std::string type;
  std::string content;
  bool active = false;
  bool enabled = false;
  bool shared = false;
  std::uint64_t total = 0, used = 0, avail = 0;
};

// A service entry of /cluster/ha/status/current (quorum, master and lrm entries are skipped).
struct PveHaService {
  std::string sid;  // vm:101, ct:102
  std::string node;
  std::string state;  // started, stopped, error, fence, ...
  std::string request_state;
};

// A node entry of /cluster/status (the "cluster" entry is skipped): how to reach each member.
struct PveClusterMember {
  std::string name;  // pve2
  std::string ip;    // the address the cluster knows the node by (IPv4 or IPv6, no brackets)
  std::int64_t nodeid = 0;
  bool online = false;
  bool local = false;  // the node that answered
};

// One entry of /nodes/{node}/certificates/info.
struct PveCertificate {
  std::string filename;     // pve-ssl.pem (the cluster CA's), pveproxy-ssl.pem (a custom one)
  std::string fingerprint;  // SHA-256, AB:CD:... (64 hex digits)
};

// One row of an rrddata answer (/nodes/{node}/rrddata, /nodes/{node}/qemu|lxc/{vmid}/rrddata,
// /nodes/{node}/storage/{storage}/rrddata; cf=AVERAGE). PVE leaves out every member the RRD has
// no value for (a row before the resource existed, the newest row not yet consolidated, a
// guest that was stopped), so each value is optional; only `time` is always there. Node rows
// name memory and root filesystem memused/memtotal and rootused/roottotal, guest rows
// mem/maxmem and disk/maxdisk, storage rows used/total; cpu is a fraction (0..1 of the node's
// or the guest's CPUs).
struct PveRrdRow {
  std::int64_t time = 0;  // seconds since the epoch
  std::optional<double> cpu;
  std::optional<double> memused, memtotal, rootused, roottotal;  // node
  std::optional<double> mem, maxmem, disk, maxdisk;              // guest
  std::optional<double> used, total;                             // storage
};

// One entry of /cluster/tasks: the cluster's recent tasks (newest first, as PVE keeps them).
struct PveTask {
  std::string upid;
  std::string node;
  std::string type;  // vzdump, qmstart, qmshutdown, vzstart, ...
  std::string id;    // the guest's vmid for most tasks; "" for a vzdump run of several guests
  std::string user;
  std::int64_t starttime = 0;
  std::int64_t endtime = 0;  // 0 while it runs
  std::string status;        // OK, "WARNINGS: n", or the error once it ended; "" while it runs
};

// One scheduled job of /cluster/backup. PVE leaves out `enabled` for an enabled job and
// `vmid` for one that backs up all guests (`all` 1); jobs written before PVE 7.1 have
// `starttime` and `dow` instead of `schedule` (read as "<dow> <starttime>").
struct PveBackupJob {
  std::string id;  // backup-<hex>
  std::string schedule;
  bool enabled = true;
  bool all = false;
  std::string vmid;  // 101,102 ("" with all)
  std::string storage;
  std::string node;  // "" for any node
  std::string mode;
  std::string comment;
  std::int64_t next_run = 0;  // "next-run", seconds since the epoch; 0 when PVE gives none
};

struct PveTaskStatus {
  std::string upid;
  std::string status;      // running, stopped
  std::string exitstatus;  // OK, or the error text, when stopped
};

[[nodiscard]] absl::StatusOr<PveVersion> DecodeVersion(std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PveClusterResource>> DecodeClusterResources(
    std::string_view body);
[[nodiscard]] absl::StatusOr<PveNodeStatus> DecodeNodeStatus(std::string_view body);
[[nodiscard]] absl::StatusOr<PveGuestStatus> DecodeGuestStatus(std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PveStorage>> DecodeStorageList(std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PveHaService>> DecodeHaStatus(std::string_view body);
// DataLoss as for every decoder, and for a member without a name, an ip that is not an IPv4 or
// IPv6 literal (it becomes part of a URL), or a certificate whose fingerprint is not 64 hex
// digits in pairs.
[[nodiscard]] absl::StatusOr<std::vector<PveClusterMember>> DecodeClusterStatus(
    std::string_view body);
[[nodiscard]] absl::StatusOr<std::vector<PveCertificate>> DecodeCertificateInfo(
    std::string_view body);
// The certificate pveproxy presents: pveproxy-ssl.pem when the node has one (a custom or ACME
// certificate replaces the cluster CA's), else pve-ssl.pem; nullptr when neither is listed.
const PveCertificate* ProxyCertificate(const std::vector<PveCertificate>& certificates);
// The recent tasks of /cluster/tasks. DataLoss for an entry that is not an object or lacks
// its upid, node or type, or a member of the wrong type.
[[nodiscard]] absl::StatusOr<std::vector<PveTask>> DecodeClusterTasks(std::string_view body);
// The jobs of /cluster/backup (entries of another type than vzdump are skipped). DataLoss for an
// entry that is not an object, lacks its id, or has a member of the wrong type.
[[nodiscard]] absl::StatusOr<std::vector<PveBackupJob>> DecodeBackupJobs(std::string_view body);
// The rows of an rrddata answer, oldest first as PVE sends them. DataLoss for a row that is not
// an object, has no positive integer `time`, or a value that is not a finite non-negative
// number (or numeric string); a member PVE left out is simply absent.
[[nodiscard]] absl::StatusOr<std::vector<PveRrdRow>> DecodeRrdData(std::string_view body);
[[nodiscard]] absl::StatusOr<PveTaskStatus> DecodeTaskStatus(std::string_view body);
// The UPID a POST status/<command> answers ({"data": "UPID:..."}); DataLoss unless it has the
// UPID shape (UPID:node:pid:pstart:starttime:type:id:user:).
[[nodiscard]] absl::StatusOr<std::string> DecodeUpid(std::string_view body);
// The "errors" object of a refusal as "param: why; ..." (bounded, printable); "" when none.
std::string DecodeErrors(std::string_view body);

// Printable ASCII of `text`, at most `max` bytes (control and non-ASCII bytes become '?'): for
// PVE's reason lines and task exit statuses in messages.
std::string Printable(std::string_view text, std::size_t max = 200);

}  // namespace pulse::proxmox
