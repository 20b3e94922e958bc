#include "pve_tasks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

constexpr char kTechnology[] = "proxmox";

std::string Rfc3339(std::int64_t seconds) {
  return absl::FormatTime(absl::RFC3339_sec, absl::FromUnixSeconds(seconds), absl::UTCTimeZone());
}

std::vector<std::int64_t> JobGuests(const PveBackupJob& job) {
  std::vector<std::int64_t> out;
  for (absl::string_view part : absl::StrSplit(job.vmid, ',', absl::SkipWhitespace())) {
    std::int64_t vmid = 0;
    if (absl::SimpleAtoi(part, &vmid) && vmid > 0) {
      out.push_back(vmid);
    }
  }
  return out;
}

bool RanJob(const PveTask& task, const PveBackupJob& job, const std::vector<std::int64_t>& guests) {
  if (task.type != "vzdump" || (!job.node.empty() && job.node != task.node)) {
    return false;
  }
  if (task.id.empty()) {
    return true;
  }
  std::int64_t vmid = 0;
  if (!absl::SimpleAtoi(task.id, &vmid)) {
    return false;
  }
  return job.all || std::find(guests.begin(), guests.end(), vmid) != guests.end();
}

}  // namespace

std::string TaskResult(const PveTask& task) {
  if (task.endtime == 0 && task.status.empty()) {
    return "running";
  }
  if (task.status == "OK") {
    return "ok";
  }
  return absl::StartsWith(task.status, "WARNINGS") ? "warnings" : "failed";
}

std::optional<BackupJobResource> ReadBackupJob(std::string_view source, const PveBackupJob& job,
                                               const std::vector<PveTask>& tasks,
                                               const GuestIdOf& guest_id, absl::Time now) {
  const std::string id = absl::StrCat("backup-job:", core::ToAbsl(source), "/", job.id);
  if (!core::IsCanonicalResourceId(id)) {
    return std::nullopt;
  }
  const std::vector<std::int64_t> guests = JobGuests(job);
  const PveTask* last = nullptr;
  for (const PveTask& t : tasks) {
    if (RanJob(t, job, guests) && (last == nullptr || t.starttime > last->starttime)) {
      last = &t;
    }
  }
  BackupJobResource out;
  core::FleetResource& r = out.resource;
  r.id = id;
  r.type = "backup-job";
  r.name = job.comment.empty() ? job.id : Printable(job.comment, 100);
  r.technology = kTechnology;
  r.status = !job.enabled ? "disabled" : last == nullptr ? "never-run" : TaskResult(*last);
  r.attributes["job_id"] = job.id;
  r.attributes["schedule"] = Printable(job.schedule, 100);
  r.attributes["storage"] = Printable(job.storage, 64);
  r.attributes["guests"] = job.all ? "all" : Printable(job.vmid, 200);
  if (!job.node.empty()) {
    r.attributes["node"] = Printable(job.node, 64);
  }
  if (!job.mode.empty()) {
    r.attributes["mode"] = Printable(job.mode, 32);
  }
  core::FleetStatus& s = out.status;
  s.resource_id = id;
  s.status = r.status;
  s.observed_at = now;
  s.facts["schedule"] = r.attributes["schedule"];
  s.facts["enabled"] = job.enabled ? "1" : "0";
  s.facts["last_result"] = last == nullptr ? "none" : TaskResult(*last);
  std::string when = "it has not run";
  if (last != nullptr) {
    s.facts["last_run_at"] = Rfc3339(last->starttime);
    s.facts["last_task"] = Printable(last->upid, 200);
    if (!last->status.empty()) {
      s.facts["last_status"] = Printable(last->status, 200);
    }
    if (last->endtime > 0) {
      s.facts["last_run_end_at"] = Rfc3339(last->endtime);
    }
    when = absl::StrCat("last run ", s.facts["last_run_at"], ": ", s.facts["last_result"],
                        last->status.empty() || last->status == "OK"
                            ? ""
                            : absl::StrCat(" (", s.facts["last_status"], ")"));
  }
  // PVE's next-run is the schedule's next event after the last run the scheduler recorded:
  // when it lies in the past, the run it promised has not happened.
  if (job.enabled && job.next_run > 0) {
    s.facts["next_run_at"] = Rfc3339(job.next_run);
    const std::int64_t late = absl::ToUnixSeconds(now) - job.next_run;
    if (late > 0) {
      s.facts["overdue_seconds"] = absl::StrCat(late);
    }
  }
  s.summary = absl::StrCat("backup job ", job.id, " (", s.facts["schedule"], " to ",
                           r.attributes["storage"], ", guests ", r.attributes["guests"],
                           "): ", job.enabled ? when : "disabled");
  for (const std::int64_t vmid : guests) {
    if (std::string guest = guest_id(vmid); !guest.empty()) {
      out.backs_up.push_back({id, std::move(guest), "backs_up"});
    }
  }
  return out;
}

const PveTask* LockTask(const std::vector<PveTask>& tasks, std::int64_t vmid) {
  const std::string id = absl::StrCat(vmid);
  const PveTask* running = nullptr;
  const PveTask* newest = nullptr;
  for (const PveTask& t : tasks) {
    if (t.id != id) {
      continue;
    }
    const PveTask*& slot = TaskResult(t) == "running" ? running : newest;
    if (slot == nullptr || t.starttime > slot->starttime) {
      slot = &t;
    }
  }
  return running != nullptr ? running : newest;
}

std::optional<core::FleetChange> TaskChange(const PveTask& task, const GuestIdOf& guest_id) {
  const std::string result = TaskResult(task);
  if (result == "running") {
    return std::nullopt;
  }
  core::FleetChange c;
  c.at = absl::FromUnixSeconds(task.endtime > 0 ? task.endtime : task.starttime);
  std::int64_t vmid = 0;
  if (absl::SimpleAtoi(task.id, &vmid)) {
    c.resource_id = guest_id(vmid);
  }
  if (c.resource_id.empty()) {
    const std::string node = absl::StrCat("node:", task.node);
    c.resource_id = core::IsCanonicalResourceId(node) ? node : "";
  }
  c.kind = result == "failed" ? "task_failed" : "task";
  c.detail = absl::StrCat(Printable(task.type, 32), ": ", Printable(task.status, 200));
  return c;
}

}  // namespace pulse::proxmox
