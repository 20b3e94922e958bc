// LocalHostFleet's mutations and command execution: systemctl start/stop/restart for
// allowlisted units (when local actions are on), the systemd-backed postcondition observer,
// reference resolution and classifier-approved read-only commands.
#include <array>
#include <climits>
#include <cstdlib>
#include <ctime>

#include "absl/time/clock.h"
#include "fleet_queries.h"
#include "fmt/format.h"
#include "local_host_internal.h"
#include "local_probes.h"
#include "process_runner.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::adapters::agents {
namespace {

// A file a reader may open: under the readable roots, or distribution data that /etc links
// into (/etc/os-release -> /usr/lib/os-release, /etc/localtime -> /usr/share/zoneinfo/...).
bool IsReadableTarget(std::string_view canonical) {
  const bool system_data =
      (canonical.rfind("/usr/lib/", 0) == 0 || canonical.rfind("/usr/share/", 0) == 0) &&
      !core::IsSensitiveExecPath(canonical);
  return system_data || core::IsReadableExecPath(canonical);
}

// The program printed the descriptor paths it was given (wc's totals, head's ==> headers,
// error messages): show the operands the command named instead.
std::string RestoreOperandNames(std::string_view output, const core::ExecVerdict& verdict) {
  std::string out(output);
  for (std::size_t i = verdict.file_operands.size(); i > 0; --i) {
    const std::string fd_path = internal::PassedFdPath(i - 1);
    const std::string& name = verdict.argv[verdict.file_operands[i - 1]];
    for (std::size_t at = out.find(fd_path); at != std::string::npos; at = out.find(fd_path, at)) {
      const std::size_t end = at + fd_path.size();
      if (end < out.size() && out[end] >= '0' && out[end] <= '9') {
        at = end;  // /proc/self/fd/31 is not /proc/self/fd/3
        continue;
      }
      out.replace(at, fd_path.size(), name);
      at += name.size();
    }
  }
  return out;
}

}  // namespace

// ---- dispatch and observation -----------------------------------------------------------

absl::StatusOr<core::DispatchReceipt> LocalHostFleet::Dispatch(
    const core::DispatchRequest& request) {
  if (request.attempt_id.empty()) {
    return absl::InvalidArgumentError("a dispatch needs an attempt id");
  }
  {
    absl::MutexLock lock(&mu_);
    auto done = receipts_.find(request.attempt_id);
    if (done != receipts_.end()) {
      return done->second;
    }
  }
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  if (s.resources.count(request.resource_id) == 0) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", request.resource_id));
  }
  const std::vector<core::Capability> catalogue = CatalogueFor(s, request.resource_id);
  const core::Capability* capability = core::FindCapability(catalogue, request.capability_name);
  if (capability == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("{} does not offer '{}' here{}", request.resource_id, request.capability_name,
                    options_.allow_local_actions ? "" : " (local actions are disabled)"));
  }
  if (!core::ValidateParams(*capability, request.params_json).ok()) {
    return absl::InvalidArgumentError("these capabilities take no params");
  }
  const std::string unit = s.units.at(request.resource_id).unit;
  // Claim the attempt before running, so a concurrent duplicate cannot run it twice.
  {
    absl::MutexLock lock(&mu_);
    if (receipts_.count(request.attempt_id) != 0) {
      return receipts_.at(request.attempt_id);
    }
    core::DispatchReceipt running;
    running.status = core::ExecutionStatus::kInconclusive;
    running.reason_code = "in_progress";
    running.summary = "this attempt is already running";
    running.executor_id = fmt::format("local-exec:{}", host_name_);
    running.executor_trust_domain = std::string(internal::kLocalExecutorDomain);
    receipts_[request.attempt_id] = running;
  }
  core::DispatchReceipt receipt;
  receipt.executor_id = fmt::format("local-exec:{}", host_name_);
  receipt.executor_trust_domain = std::string(internal::kLocalExecutorDomain);
  absl::StatusOr<internal::ProcessResult> run =
      RunSystemctl({request.capability_name, "--no-pager", unit}, options_.action_timeout);
  if (!run.ok()) {
    receipt.status = core::ExecutionStatus::kNotRun;
    receipt.reason_code = "executor_unavailable";
    receipt.summary = std::string(run.status().message());
  } else if (run->timed_out) {
    receipt.status = core::ExecutionStatus::kInconclusive;
    receipt.reason_code = "timeout";
    receipt.summary =
        fmt::format("systemctl {} {} did not finish in time", request.capability_name, unit);
  } else {
    receipt.status =
        run->exit_code == 0 ? core::ExecutionStatus::kSucceeded : core::ExecutionStatus::kFailed;
    receipt.reason_code =
        run->exit_code == 0 ? "" : fmt::format("systemctl_exit_{}", run->exit_code);
    receipt.summary =
        fmt::format("systemctl {} {} exited {}", request.capability_name, unit, run->exit_code);
  }
  absl::MutexLock lock(&mu_);
  receipts_[request.attempt_id] = receipt;
  unit_listing_at_ = absl::InfinitePast();  // the unit's state just changed
  return receipt;
}

absl::StatusOr<core::PostconditionObservation> LocalHostFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  auto unit = s.units.find(query.resource_id);
  if (unit == s.units.end()) {
    return absl::NotFoundError(fmt::format("no service with id '{}'", query.resource_id));
  }
  const absl::Time deadline = Now() + options_.observe_timeout;
  for (;;) {
    absl::StatusOr<internal::ProcessResult> run =
        RunSystemctl({"show", "--no-pager", "-p", "ActiveState", "-p",
                      "ActiveEnterTimestampMonotonic", unit->second.unit},
                     options_.command_timeout);
    if (!run.ok() || run->exit_code != 0) {
      return absl::UnavailableError("systemctl show failed");
    }
    std::string active;
    std::int64_t entered_us = 0;
    for (const std::string& line : internal::SplitLines(run->output)) {
      if (line.rfind("ActiveState=", 0) == 0) {
        active = line.substr(12);
      } else if (line.rfind("ActiveEnterTimestampMonotonic=", 0) == 0) {
        entered_us = std::atoll(line.c_str() + 30);
      }
    }
    // The dispatch time on the monotonic clock systemd reports activation on.
    timespec mono{};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    const std::int64_t now_us =
        static_cast<std::int64_t>(mono.tv_sec) * 1'000'000 + mono.tv_nsec / 1000;
    const std::int64_t dispatched_us =
        now_us - absl::ToInt64Microseconds(Now() - query.dispatched_at) - 1'000'000;
    core::PostconditionObservation obs;
    obs.observer_id = fmt::format("systemd:{}", host_name_);
    obs.observer_trust_domain = std::string(internal::kLocalObserverDomain);
    obs.observed_at = Now();
    bool holds = false;
    if (query.capability_name == "stop") {
      holds = active == "inactive" || active == "failed";
    } else if (query.capability_name == "start") {
      holds = active == "active";
    } else if (query.capability_name == "restart") {
      holds = active == "active" && entered_us >= dispatched_us;
    }
    const bool settling =
        active == "activating" || active == "deactivating" || active == "reloading";
    if (holds || !settling || Now() >= deadline) {
      obs.status = holds      ? core::VerificationStatus::kConfirmed
                   : settling ? core::VerificationStatus::kInconclusive
                              : core::VerificationStatus::kContradicted;
      obs.reason_code = holds      ? "postcondition_holds"
                        : settling ? "still_in_progress"
                                   : "postcondition_failed";
      obs.summary = fmt::format("{} is {}", unit->second.unit, active);
      return obs;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
}

// ---- identity and exec ------------------------------------------------------------------

absl::StatusOr<std::string> LocalHostFleet::ResolveReference(std::string_view reference) {
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  std::vector<internal::ReferenceCandidate> candidates;
  for (const auto& [id, r] : s.resources) {
    internal::ReferenceCandidate c{id, {r.name}};
    auto unit = s.units.find(id);
    if (unit != s.units.end()) {
      c.aliases.push_back(unit->second.unit);
    }
    candidates.push_back(std::move(c));
  }
  return internal::ResolveAmong(reference, candidates);
}

absl::StatusOr<core::ExecOutput> LocalHostFleet::RunReadOnlyCommand(std::string_view resource_id,
                                                                    std::string_view command) {
  if (!options_.allow_exec) {
    return absl::PermissionDeniedError("commands are disabled on this host");
  }
  const core::ExecVerdict verdict = core::ClassifyExecCommand(command);
  if (!verdict.allowed) {
    return absl::PermissionDeniedError(
        fmt::format("{}: {}", core::ToString(verdict.refusal), verdict.reason));
  }
  // Every local resource runs its commands on the node; the id only has to exist.
  PULSE_RETURN_IF_ERROR(GetResource(resource_id).status());
  std::vector<std::string> argv = verdict.argv;
  // Each file operand is resolved and opened here, then read by the program through the
  // descriptor it inherits: a link cannot lead it out of the roots, and nothing can be
  // swapped in between the check and the read.
  std::vector<internal::CheckedFile> files;
  std::vector<int> fds;
  for (const std::size_t index : verdict.file_operands) {
    PULSE_ASSIGN_OR_RETURN(internal::CheckedFile file,
                           internal::OpenCheckedFile(verdict.argv[index], IsReadableTarget));
    argv[index] = internal::PassedFdPath(files.size());
    fds.push_back(file.fd.get());
    files.push_back(std::move(file));
  }
  std::optional<std::string> path = internal::FindProgram(verdict.argv[0]);
  core::ExecOutput out;
  if (!path.has_value()) {
    out.exit_code = 127;
    out.output = fmt::format("{}: command not found\n", verdict.argv[0]);
    return out;
  }
  argv[0] = *path;
  PULSE_ASSIGN_OR_RETURN(
      internal::ProcessResult run,
      internal::RunProcess(argv, options_.command_timeout, core::kMaxExecOutputBytes, fds));
  out.exit_code = run.timed_out ? 124 : run.exit_code;
  out.output = core::MaskExecOutput(verdict.argv, RestoreOperandNames(run.output, verdict));
  out.truncated = run.truncated;
  return out;
}

}  // namespace pulse::adapters::agents
