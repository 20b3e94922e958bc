// PveFleet's governed capabilities: the catalogue, dispatch (preflight, POST, task follow) and
// the independent postcondition read (pve_fleet.h).
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/adapters/proxmox/pve_fleet.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

constexpr char kExecutorDomain[] = "pve-task";
constexpr char kObserverDomain[] = "pve-status-read";

core::Capability Make(const char* name, const char* description, core::ActionRisk risk,
                      core::AutoAuthorization automatic) {
  core::Capability c;
  c.name = name;
  c.description = description;
  c.minimum_approval = core::ApprovalLevel::kAdmin;
  c.auto_authorization = automatic;
  c.risk = risk;
  return c;
}

core::Capability Start() {
  return Make("start", "Start the guest (Proxmox VE status/start, followed to its task's end).",
              core::ActionRisk::kLow, core::AutoAuthorization::kLowRisk);
}
core::Capability Shutdown() {
  return Make("shutdown",
              "Shut the guest down cleanly (ACPI or the container's init) within the source's "
              "shutdown timeout; the task fails if it does not stop in time.",
              core::ActionRisk::kMedium, core::AutoAuthorization::kElevated);
}
core::Capability Reboot() {
  return Make("reboot", "Reboot the guest cleanly (Proxmox VE status/reboot).",
              core::ActionRisk::kMedium, core::AutoAuthorization::kElevated);
}
core::Capability Stop() {
  return Make("stop",
              "Stop the guest at once, like pulling the power (Proxmox VE status/stop): "
              "unsaved data in the guest is lost.",
              core::ActionRisk::kHigh, core::AutoAuthorization::kNever);
}

// The state the capability leaves the guest in.
std::string_view Expected(std::string_view capability) {
  return capability == "start" || capability == "reboot" ? "running" : "stopped";
}

core::DispatchReceipt Receipt(core::ExecutionStatus status, std::string_view reason,
                              std::string summary, const std::string& executor) {
  core::DispatchReceipt r;
  r.status = status;
  r.reason_code = std::string(reason);
  r.summary = std::move(summary);
  r.executor_id = executor;
  r.executor_trust_domain = kExecutorDomain;
  return r;
}

}  // namespace

std::vector<core::Capability> PveFleet::CatalogueFor(const Guest& guest,
                                                     std::string_view status) const {
  if (!options_.allow_actions || guest.is_template) {
    return {};
  }
  if (status == "running") {
    return {Reboot(), Shutdown(), Stop()};
  }
  if (status == "stopped") {
    return {Start()};
  }
  if (status == "paused" || status == "suspended") {
    return {Stop()};
  }
  return {};
}

absl::StatusOr<std::vector<core::Capability>> PveFleet::ListCapabilities(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto it = view->resources.find(std::string(id));
  if (it == view->resources.end()) {
    return absl::NotFoundError("no such Proxmox VE resource");
  }
  const auto guest = view->guests.find(it->first);
  if (guest == view->guests.end()) {
    return std::vector<core::Capability>{};
  }
  return CatalogueFor(guest->second, it->second.status);
}

absl::StatusOr<core::DispatchReceipt> PveFleet::Dispatch(const core::DispatchRequest& request) {
  if (request.attempt_id.empty()) {
    return absl::InvalidArgumentError("a dispatch needs an attempt id");
  }
  {
    absl::MutexLock lock(&mu_);
    if (const auto it = receipts_.find(request.attempt_id); it != receipts_.end()) {
      if (it->second.reason_code == "in_flight") {
        return absl::FailedPreconditionError("this attempt is already running");
      }
      return it->second;
    }
  }
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  if (view->resources.count(request.resource_id) == 0) {
    return absl::NotFoundError("no such Proxmox VE resource");
  }
  {
    absl::MutexLock lock(&mu_);
    if (!receipts_
             .emplace(request.attempt_id,
                      Receipt(core::ExecutionStatus::kInconclusive, "in_flight", "", executor_id_))
             .second) {
      return absl::FailedPreconditionError("this attempt is already running");
    }
  }
  absl::StatusOr<core::DispatchReceipt> receipt = Run(request);
  absl::MutexLock lock(&mu_);
  if (receipt.ok()) {
    receipts_[request.attempt_id] = *receipt;
  } else {
    receipts_.erase(request.attempt_id);
  }
  return receipt;
}

absl::StatusOr<core::DispatchReceipt> PveFleet::Run(const core::DispatchRequest& request) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto guest_it = view->guests.find(request.resource_id);
  if (guest_it == view->guests.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat(request.resource_id, " offers no capabilities"));
  }
  const Guest& guest = guest_it->second;
  const absl::Time deadline = absl::Now() + options_.action_deadline;
  // Preflight: the guest's state now, not the listing's.
  PULSE_ASSIGN_OR_RETURN(const std::string status_path, GuestPath(guest, "/status/current"));
  PULSE_ASSIGN_OR_RETURN(const std::string status_body, client_->Get(status_path));
  PULSE_ASSIGN_OR_RETURN(const PveGuestStatus current, DecodeGuestStatus(status_body));
  if (!current.lock.empty()) {
    return Receipt(core::ExecutionStatus::kNotRun, kReasonGuestLocked,
                   absl::StrCat(request.resource_id, " is locked (", Printable(current.lock, 32),
                                "): nothing was sent; retry when the ", Printable(current.lock, 32),
                                " is over"),
                   executor_id_);
  }
  if (core::FindCapability(CatalogueFor(guest, current.status), request.capability_name) ==
      nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(request.resource_id, " (", Printable(current.status, 32), ") does not offer ",
                     Printable(request.capability_name, 64)));
  }
  const std::string form =
      request.capability_name == "shutdown"
          ? absl::StrCat("timeout=", absl::ToInt64Seconds(options_.shutdown_timeout))
          : "";
  PULSE_ASSIGN_OR_RETURN(const std::string command_path,
                         GuestPath(guest, absl::StrCat("/status/", request.capability_name)));
  absl::StatusOr<std::string> posted = client_->Post(command_path, form);
  if (!posted.ok()) {
    if (absl::IsFailedPrecondition(posted.status()) &&
        absl::StrContains(posted.status().message(), "is locked")) {
      return Receipt(core::ExecutionStatus::kNotRun, kReasonGuestLocked,
                     absl::StrCat(request.resource_id, " is locked: ", posted.status().message()),
                     executor_id_);
    }
    return posted.status();  // 4xx/500: PVE refused before a task started; else unknown
  }
  absl::StatusOr<std::string> upid = DecodeUpid(*posted);
  if (!upid.ok()) {
    return absl::UnknownError(absl::StrCat("the command was sent but its answer is unreadable: ",
                                           upid.status().message()));
  }
  const std::string task_path =
      absl::StrCat("/nodes/", guest.node, "/tasks/", EncodePathSegment(*upid), "/status");
  std::string last_error;
  for (;;) {
    absl::StatusOr<std::string> body = client_->Get(task_path);
    absl::StatusOr<PveTaskStatus> task =
        body.ok() ? DecodeTaskStatus(*body) : absl::StatusOr<PveTaskStatus>(body.status());
    if (task.ok() && task->status == "stopped") {
      if (task->exitstatus == "OK") {
        return Receipt(core::ExecutionStatus::kSucceeded, "",
                       absl::StrCat(request.capability_name, " of ", request.resource_id, ": task ",
                                    *upid, " ended OK"),
                       executor_id_);
      }
      return Receipt(core::ExecutionStatus::kFailed, kReasonTaskFailed,
                     absl::StrCat(request.capability_name, " of ", request.resource_id,
                                  ": task ended with \"", Printable(task->exitstatus, 200), "\""),
                     executor_id_);
    }
    if (!task.ok()) {
      last_error = std::string(task.status().message());
    }
    if (absl::Now() + options_.task_poll_interval > deadline) {
      return Receipt(core::ExecutionStatus::kInconclusive, kReasonTaskDeadline,
                     absl::StrCat("task ", *upid, " did not end within the action's deadline",
                                  last_error.empty() ? "" : absl::StrCat(" (", last_error, ")")),
                     executor_id_);
    }
    absl::SleepFor(options_.task_poll_interval);
  }
}

absl::StatusOr<core::PostconditionObservation> PveFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto guest_it = view->guests.find(query.resource_id);
  if (guest_it == view->guests.end()) {
    return absl::NotFoundError("no such Proxmox VE guest");
  }
  if (query.capability_name != "start" && query.capability_name != "shutdown" &&
      query.capability_name != "stop" && query.capability_name != "reboot") {
    return absl::InvalidArgumentError("no postcondition for this capability");
  }
  PULSE_ASSIGN_OR_RETURN(const std::string path, GuestPath(guest_it->second, "/status/current"));
  const std::string_view expected = Expected(query.capability_name);
  const absl::Time until = absl::Now() + options_.observe_timeout;
  core::PostconditionObservation obs;
  obs.observer_id = absl::StrCat("pve-observer:", observer_->host());
  obs.observer_trust_domain = kObserverDomain;
  for (;;) {
    absl::StatusOr<std::string> body = observer_->Get(path);
    absl::StatusOr<PveGuestStatus> status =
        body.ok() ? DecodeGuestStatus(*body) : absl::StatusOr<PveGuestStatus>(body.status());
    obs.observed_at = absl::Now();
    if (status.ok()) {
      // A reboot must show a guest that came up after the dispatch.
      const bool fresh = query.capability_name != "reboot" ||
                         absl::Seconds(static_cast<double>(status->uptime)) <=
                             obs.observed_at - query.dispatched_at + absl::Seconds(5);
      if (status->status == expected && fresh) {
        obs.status = core::VerificationStatus::kConfirmed;
        obs.summary =
            absl::StrCat(query.resource_id, " is ", core::ToAbsl(expected), " (status/current)");
        return obs;
      }
      obs.status = core::VerificationStatus::kContradicted;
      obs.reason_code = "state_mismatch";
      obs.summary = absl::StrCat(query.resource_id, " is ", Printable(status->status, 32),
                                 ", expected ", core::ToAbsl(expected));
    } else {
      obs.status = core::VerificationStatus::kInconclusive;
      obs.reason_code = "status_unreadable";
      obs.summary = std::string(status.status().message());
    }
    if (absl::Now() + options_.observe_poll_interval > until) {
      return obs;
    }
    absl::SleepFor(options_.observe_poll_interval);
  }
}

}  // namespace pulse::proxmox
