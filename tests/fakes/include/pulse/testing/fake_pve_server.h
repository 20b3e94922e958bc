// FakePveServer: a loopback fake of the Proxmox VE API (issue 24) speaking HTTPS on 127.0.0.1
// with a certificate made at test time (MakeTestCertificate), for the proxmox-ve fleet source's
// tests. It follows the shapes of Proxmox VE 8.2 (pve-manager 8.2.4, API /api2/json, as the
// Proxmox API viewer documents them and as public Go clients decode them):
//   * every answer is an envelope {"data": ...}; a refused parameter is 400 with
//     {"data": null, "errors": {"<param>": "<why>"}} and the reason line "Parameter verification
//     failed."; other failures carry their message in the HTTP reason line, as pveproxy does
//     ("HTTP/1.1 500 VM 101 is locked (backup)"), with {"data": null};
//   * authentication by `Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET`: missing is 401
//     "No ticket", an unknown token 401 "no such token 'ID' for user 'USER@REALM'", a wrong or
//     revoked secret 401 "invalid token value!";
//   * a node whose proxy is broken answers every /nodes/{node}/... call that reaches another
//     node's endpoint with 596 "Broken pipe" (pveproxy's status for a failed proxied request);
//     its own endpoint (ServeNode) answers them; an offline node shows "offline" in
//     /cluster/resources (its guests and storage "unknown", as PVE lists what it cannot see)
//     and answers 595 "No route to host";
//   * numbers as PVE sends them: cpu as a fraction of the node (0..1), bytes as integers,
//     booleans as 0/1 integers, node loadavg as strings, vmid as an integer;
//   * GET /version, /cluster/resources[?type=vm|node|storage], /nodes/{node}/status,
//     /nodes/{node}/qemu|lxc/{vmid}/status/current, /nodes/{node}/storage,
//     /cluster/ha/status/current, /cluster/status (members, their ip, online, local),
//     /nodes/{node}/certificates/info (pve-root-ca.pem, pve-ssl.pem with its SHA-256
//     fingerprint), /cluster/tasks (newest first; endtime and status once ended;
//     the POSTed tasks among them), /cluster/backup (enabled left out when 1, vmid left out
//     with all, next-run for enabled jobs), /nodes/{node}/tasks/{upid}/status, the rrddata of a
//     node, a guest and a storage (?timeframe=hour|day|week&cf=AVERAGE|MAX: 70 rows at PVE's steps
//     of 60 s, 30 min, 3 h, the newest row time only as PVE sends the row it has not consolidated
//     yet; a storage's `used` falls back in time by its growth_per_day); POST
//     /nodes/{node}/qemu|lxc/{vmid}/status/start|shutdown|stop|reboot returning a UPID
//     ("UPID:node:PID:PSTART:STARTTIME:qmstart:101:user@realm!token:"). A task reads
//     {"status":"running"} for `task_polls` reads, then {"status":"stopped","exitstatus":...};
//     when it stops with "OK" the guest takes its new state (reboot: running with uptime 0).
// The scenario is JSON:
//   {"version": "8.2.4", "cluster": "lab",
//    "tokens": {"pulse@pve!pulse": "SECRET"},
//    "nodes": [{"node": "pve1", "status": "online", "cpu": 0.05, "maxcpu": 8,
//               "mem": ..., "maxmem": ..., "disk": ..., "maxdisk": ..., "uptime": ...}],
//    "guests": [{"type": "qemu"|"lxc", "vmid": 101, "node": "pve1", "name": "web",
//                "status": "running"|"stopped", "cpus": 2, "cpu": 0.1, "mem": ..., "maxmem": ...,
//                "disk": ..., "maxdisk": ..., "uptime": ..., "lock": "", "template": 0,
//                "tags": ""}],
//    "storage": [{"node": "pve1", "storage": "local", "type": "dir", "content": "iso,backup",
//                 "shared": 0, "total": ..., "used": ..., "growth_per_day": <bytes>}],
//    "ha": [{"sid": "vm:101", "state": "started"}],
//    "backup_jobs": [{"id": "backup-6a1b2c3d-0e1f", "schedule": "21:00", "enabled": 1,
//                     "all": 0, "vmid": "101,102", "storage": "local", "node": "",
//                     "next_run_ago": -3600}],
//    "tasks": [{"node": "pve1", "type": "vzdump", "id": "101", "status": "OK",
//               "start_ago": 90000, "end_ago": 89400}],   // no end_ago: still running
//    "task_polls": 1}
// Thread-safety: the control methods may be called from any thread while the server runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::testing {

// A self-signed certificate for 127.0.0.1 and localhost (the openssl command) and its SHA-256
// fingerprint as `openssl x509 -fingerprint -sha256` prints it (AB:CD:...). Files in `dir`.
struct TestCertificate {
  std::string cert_file;
  std::string key_file;
  std::string fingerprint;
};
[[nodiscard]] absl::StatusOr<TestCertificate> MakeTestCertificate(
    const std::string& dir, std::string_view name = "pve", std::string_view ip = "127.0.0.1");

// One request as the fake read it (after a completed TLS handshake).
struct FakePveRequest {
  std::string method;
  std::string target;         // path and query as sent
  std::string authorization;  // the header's value, "" when absent
  std::string body;
  std::string endpoint;  // the node whose endpoint (listener) it reached
};

class FakePveServer {
 public:
  // InvalidArgument for a scenario that does not parse; errors opening the certificate.
  // `port`: on 127.0.0.1; 0 picks a free one.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FakePveServer>> Start(
      std::string_view scenario_json, const TestCertificate& certificate, int port = 0);
  ~FakePveServer();
  FakePveServer(const FakePveServer&) = delete;
  FakePveServer& operator=(const FakePveServer&) = delete;

  // https://127.0.0.1:PORT
  std::string url() const;

  // Another member's API endpoint (a cluster of several nodes): `node` listens on `ip` (a
  // loopback address such as 127.0.0.2) at url()'s port with its own certificate, and
  // /cluster/status gives that address for it (the others: 127.0.0.1, the main listener's,
  // which is the first scenario node's). Returns https://IP:PORT.
  [[nodiscard]] absl::StatusOr<std::string> ServeNode(std::string_view node, std::string_view ip,
                                                      const TestCertificate& certificate);
  // Closes (or reopens) `node`'s listener, the main one included: connections are refused, as
  // when the node is down or pveproxy stopped. Returns once it is done.
  void SetEndpointUp(std::string_view node, bool up);
  // What /nodes/{node}/certificates/info says pve-ssl.pem's fingerprint is (a lie, for tests).
  void SetReportedFingerprint(std::string_view node, std::string_view fingerprint);

  // Faults and state changes.
  void RevokeToken(std::string_view token_id);
  void SetNodeProxyBroken(std::string_view node, bool broken);
  void SetNodeOnline(std::string_view node, bool online);
  void SetGuestLock(int vmid, std::string_view lock);
  void SetGuestStatus(int vmid, std::string_view status);
  // The used bytes of a storage the scenario lists (its total stays).
  void SetStorageUsed(std::string_view node, std::string_view storage, std::int64_t used);
  // The exit status of the tasks started from now on ("OK" by default).
  void SetTaskExitStatus(std::string_view exitstatus);
  void SetTaskPolls(int polls);
  // A task in the cluster's history (/cluster/tasks), started `started_seconds_ago`, ended
  // `ended_seconds_ago` with exit status `status` (negative: still running), as user root@pam.
  void AddTask(std::string_view node, std::string_view type, std::string_view id,
               std::string_view status, std::int64_t started_seconds_ago,
               std::int64_t ended_seconds_ago);

  std::string GuestStatus(int vmid) const;
  std::vector<FakePveRequest> Requests() const;
  // TLS handshakes that completed / failed (a client refusing the certificate fails one).
  std::uint64_t Handshakes() const;
  std::uint64_t FailedHandshakes() const;

 private:
  class Impl;
  explicit FakePveServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pulse::testing
