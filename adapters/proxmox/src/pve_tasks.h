// The proxmox-ve source's reading of the cluster's tasks and backup jobs (/cluster/tasks,
// /cluster/backup; docs/fleet.md, "proxmox-ve"): a backup job as a `backup-job:` resource whose
// facts give its last run's result and time and whether it is overdue, the task that holds a
// guest's lock, and the fleet change a task's end makes. Internal to the adapter. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::proxmox {

// The canonical id of the guest with `vmid` ("vm:101", "lxc:201"), or "" when it is not listed.
using GuestIdOf = std::function<std::string(std::int64_t vmid)>;

// "ok" (exit status OK), "warnings" (WARNINGS: n), "running" (no end yet), or "failed".
std::string TaskResult(const PveTask& task);

struct BackupJobResource {
  core::FleetResource resource;
  core::FleetStatus status;
  std::vector<core::FleetRelationship> backs_up;  // job -> each listed guest it includes
};

// The resource of one backup job, observed at `now`; nullopt when its id cannot be part of a
// canonical id. Its last run is the newest vzdump task that ran it: PVE names the guest in the
// id of a task that backs up one guest, and none in a run of several (a scheduled job runs as
// one task per node), so a task counts when it ran on a node the job runs on (every node when
// the job names none) and its id is one of the job's guests (any guest for an `all` job) or it
// has none. Status: the last run's result, "never-run", or "disabled".
std::optional<BackupJobResource> ReadBackupJob(std::string_view source, const PveBackupJob& job,
                                               const std::vector<PveTask>& tasks,
                                               const GuestIdOf& guest_id, absl::Time now);

// The task that explains a guest's lock: the newest task on `vmid` still running, else the
// newest that ran on it (a lock a failed task left behind). nullptr when the list has none.
const PveTask* LockTask(const std::vector<PveTask>& tasks, std::int64_t vmid);

// The change a task's end makes: at its end time, about its guest (or its node), kind "task"
// (ok or warnings) or "task_failed", detail "<type>: <exit status>". nullopt while it runs.
std::optional<core::FleetChange> TaskChange(const PveTask& task, const GuestIdOf& guest_id);

}  // namespace pulse::proxmox
