// FakePbsServer: a loopback fake of the Proxmox Backup Server API (issue 24) speaking HTTPS on
// 127.0.0.1 (FakeTlsListener, a certificate made by MakeTestCertificate), for the
// proxmox-backup fleet source's tests. It follows the shapes of Proxmox Backup Server 3.2
// (proxmox-backup-server 3.2.7, API /api2/json; pbs-api-types' DataStoreStatusListItem,
// SnapshotListItem and TaskListItem, as the API viewer documents them):
//   * every answer is an envelope {"data": ...};
//   * authentication by `Authorization: PBSAPIToken=USER@REALM!TOKENID:SECRET`. A refusal is
//     401 with the standard reason line and the error's text as the body, as
//     proxmox-rest-server's JSON formatter sends it: no header is "authentication failed - no
//     authentication credentials provided.", an unknown or removed token "authentication
//     failed - user account or token disabled or expired.", a wrong secret "authentication
//     failed - invalid API token". (PBS delays every refusal by 3 s; the fake by
//     `unauthorized_delay_ms`, 0 unless the scenario says otherwise, so tests stay fast.)
//   * GET /version; /status/datastore-usage (total/used/avail in bytes, or only "error" for a
//     datastore PBS cannot read); /admin/datastore/{store}/snapshots (backup-type vm|ct|host,
//     backup-id, backup-time, size, protected, verification {"state": "ok"|"failed", "upid"});
//     an unknown store is 400 "datastore 'X' does not exist";
//     /nodes/localhost/tasks[?typefilter=T&limit=N], newest first, the tasks whose worker_type
//     contains T, at most N (50 by default): upid, node, pid, pstart, starttime, worker_type,
//     worker_id, user, and for a finished task endtime and status ("OK", "WARNINGS: N" or the
//     error's text).
//     Anything else is 404 "Path '/api2/json/...' not found.".
// The scenario is JSON (times as Unix seconds, or "age_seconds" before now):
//   {"version": "3.2", "release": "7", "hostname": "pbs1",
//    "tokens": {"pulse@pbs!pulse": "SECRET"},
//    "datastores": [{"store": "store1", "total": ..., "used": ..., "avail": ...},
//                   {"store": "usb", "error": "datastore is not mounted"}],
//    "snapshots": [{"store": "store1", "backup-type": "vm", "backup-id": "101",
//                   "backup-time": ... | "age_seconds": 3600, "size": ...,
//                   "verification": "ok" | "failed" | ""}],
//    "tasks": [{"worker_type": "verificationjob", "worker_id": "store1:v-daily",
//               "starttime": ... | "age_seconds": 600, "duration": 60,
//               "status": "OK" | "<error text>" | "" (running)}],
//    "unauthorized_delay_ms": 0}
// Thread-safety: the control methods may be called from any thread while the server runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/testing/fake_pve_server.h"

namespace pulse::testing {

class FakePbsServer {
 public:
  // InvalidArgument for a scenario that does not parse; errors opening the certificate.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FakePbsServer>> Start(
      std::string_view scenario_json, const TestCertificate& certificate);
  ~FakePbsServer();
  FakePbsServer(const FakePbsServer&) = delete;
  FakePbsServer& operator=(const FakePbsServer&) = delete;

  // https://127.0.0.1:PORT
  std::string url() const;

  // Faults and state changes.
  void RevokeToken(std::string_view token_id);
  void SetDatastoreUsed(std::string_view store, std::int64_t used);
  // A task that ends now with `status` ("OK", or an error's text).
  void AddFinishedTask(std::string_view worker_type, std::string_view worker_id,
                       std::string_view status);

  std::vector<FakePveRequest> Requests() const;
  // TLS handshakes that completed / failed (a client refusing the certificate fails one).
  std::uint64_t Handshakes() const;
  std::uint64_t FailedHandshakes() const;

 private:
  class Impl;
  explicit FakePbsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pulse::testing
