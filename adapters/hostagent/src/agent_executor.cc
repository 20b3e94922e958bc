#include "pulse/adapters/hostagent/agent_executor.h"

#include <algorithm>
#include <array>
#include <utility>

#include "fmt/format.h"
#include "pulse/core/json/utf8.h"

namespace pulse::adapters::hostagent {
namespace {

constexpr std::array<std::string_view, 3> kKnownCapabilities = {"restart", "start", "stop"};

Result Refuse(Result result, std::string_view reason, const std::string& summary) {
  result.status = core::ExecutionStatus::kNotRun;
  result.reason_code = std::string(reason);
  result.summary = core::BoundedCleanText(summary, kMaxTextBytes);
  return result;
}

// The answer to a key the state file already holds: never run again.
Result Replay(Result result, const AttemptRecord& record) {
  result.replayed = true;
  if (record.state == AttemptState::kDone) {
    result.status = record.status;
    result.reason_code = record.reason_code;
    result.summary = record.summary;
  } else {
    result.status = core::ExecutionStatus::kInconclusive;
    result.reason_code = std::string(kReasonInterrupted);
    result.summary =
        "the agent stopped while this attempt ran; it is not run again (check the service)";
  }
  return result;
}

}  // namespace

agents::LocalHostFleetOptions FleetOptionsFor(const AgentAllowlist& allowlist,
                                              std::string host_name) {
  agents::LocalHostFleetOptions options;
  options.allow_local_actions = !allowlist.capabilities.empty() && !allowlist.services.empty();
  options.action_allowlist = allowlist.services;
  options.allow_exec = allowlist.exec;
  options.host_name = std::move(host_name);
  return options;
}

Result AgentExecutor::Execute(const Command& command) {
  Result result;
  result.host = host_;
  result.command_id = command.command_id;
  result.kind = command.kind;
  if (command.kind == CommandKind::kDispatch) {
    result.action_id = command.action_id;
    result.attempt_id = command.attempt_id;
    return Dispatch(command, std::move(result));
  }
  if (command.kind == CommandKind::kExec) {
    return Exec(command, std::move(result));
  }
  // A report command is answered with a report, never with a result.
  result.kind = CommandKind::kExec;
  return Refuse(std::move(result), kReasonUnknownCapability,
                "a report command is answered with a report");
}

Result AgentExecutor::Dispatch(const Command& command, Result result) {
  // A key seen before is answered from the state file whatever else changed since (the
  // deadline included: a replay runs nothing).
  if (std::optional<AttemptRecord> seen = state_.Find(command.action_id, command.attempt_id)) {
    return Replay(std::move(result), *seen);
  }
  if (clock_.Now() > command.deadline) {
    return Refuse(std::move(result), kReasonDeadlinePassed,
                  fmt::format("the deadline {} passed before the agent could start it",
                              absl::FormatTime(command.deadline, absl::UTCTimeZone())));
  }
  if (!ResourceBelongsToHost(command.resource_id, host_)) {
    return Refuse(std::move(result), kReasonWrongHost,
                  fmt::format("{} is not a resource of {}", command.resource_id, host_));
  }
  if (std::find(kKnownCapabilities.begin(), kKnownCapabilities.end(), command.capability) ==
      kKnownCapabilities.end()) {
    return Refuse(
        std::move(result), kReasonUnknownCapability,
        fmt::format("the agent knows restart, start and stop, not '{}'", command.capability));
  }
  if (!allowlist_.AllowsCapability(command.capability)) {
    return Refuse(std::move(result), kReasonAgentAllowlist,
                  fmt::format("'{}' is not in allow.json's capabilities", command.capability));
  }
  if (std::optional<std::string> docker_id = HostIdToDocker(command.resource_id, host_)) {
    return DispatchContainer(command, std::move(result), *docker_id);
  }
  absl::StatusOr<core::FleetResource> resource = fleet_.GetResource(command.resource_id);
  if (!resource.ok()) {
    return Refuse(std::move(result), kReasonUnknownResource,
                  fmt::format("{} is not a resource of this host", command.resource_id));
  }
  if (resource->type != "service") {
    return Refuse(std::move(result), kReasonUnknownCapability,
                  fmt::format("{} offers no capabilities", command.resource_id));
  }
  const auto unit = resource->attributes.find("unit");
  if (unit == resource->attributes.end() || !allowlist_.AllowsService(unit->second)) {
    return Refuse(std::move(result), kReasonAgentAllowlist,
                  fmt::format("{} is not in allow.json's services", resource->name));
  }
  core::DispatchRequest request;
  request.resource_id = command.resource_id;
  return RunClaimed(command, std::move(result), fleet_, std::move(request));
}

Result AgentExecutor::DispatchContainer(const Command& command, Result result,
                                        const std::string& docker_id) {
  if (!allowlist_.docker) {
    return Refuse(std::move(result), kReasonAgentAllowlist,
                  "allow.json does not let the agent act on containers (\"docker\": false)");
  }
  docker::DockerFleet* docker = docker_ != nullptr ? docker_->Fleet() : nullptr;
  if (docker == nullptr) {
    return Refuse(std::move(result), kReasonUnknownResource,
                  fmt::format("{} is not a resource of this host (no Docker daemon answers)",
                              command.resource_id));
  }
  absl::StatusOr<core::FleetResource> resource = docker->GetResource(docker_id);
  if (!resource.ok()) {
    return Refuse(std::move(result), kReasonUnknownResource,
                  fmt::format("{} is not a container of this host: {}", command.resource_id,
                              std::string(resource.status().message())));
  }
  if (resource->type != "app-container") {
    return Refuse(std::move(result), kReasonUnknownCapability,
                  fmt::format("{} offers no capabilities", command.resource_id));
  }
  core::DispatchRequest request;
  request.resource_id = docker_id;
  return RunClaimed(command, std::move(result), *docker, std::move(request));
}

Result AgentExecutor::RunClaimed(const Command& command, Result result, core::Fleet& fleet,
                                 core::DispatchRequest request) {
  absl::StatusOr<std::optional<AttemptRecord>> claim =
      state_.Begin(command.action_id, command.attempt_id);
  if (!claim.ok()) {
    return Refuse(std::move(result), kReasonStateUnavailable,
                  fmt::format("the agent could not record the attempt before running it: {}",
                              std::string(claim.status().message())));
  }
  if (claim->has_value()) {
    return Replay(std::move(result), **claim);  // a concurrent copy claimed it first
  }
  request.action_id = command.action_id;
  request.attempt_id = command.attempt_id;
  request.capability_name = command.capability;
  request.params_json = command.params_json;
  request.plan_hash = command.plan_hash;
  absl::StatusOr<core::DispatchReceipt> receipt = fleet.Dispatch(request);
  if (receipt.ok()) {
    result.status = receipt->status;
    result.reason_code = receipt->reason_code;
    result.summary = core::BoundedCleanText(receipt->summary, kMaxTextBytes);
  } else if (absl::IsFailedPrecondition(receipt.status())) {
    result = Refuse(std::move(result), kReasonNotOffered, std::string(receipt.status().message()));
  } else if (absl::IsInvalidArgument(receipt.status())) {
    result = Refuse(std::move(result), "invalid_params", std::string(receipt.status().message()));
  } else if (absl::IsNotFound(receipt.status())) {
    result =
        Refuse(std::move(result), kReasonUnknownResource, std::string(receipt.status().message()));
  } else {
    result.status = core::ExecutionStatus::kInconclusive;
    result.reason_code = "executor_error";
    result.summary = core::BoundedCleanText(std::string(receipt.status().message()), kMaxTextBytes);
  }
  // When the outcome cannot be recorded the key stays `started`: a later copy of the command
  // is answered interrupted, never run again.
  state_
      .Finish(command.action_id, command.attempt_id, result.status, result.reason_code,
              result.summary)
      .IgnoreError();
  return result;
}

Result AgentExecutor::Exec(const Command& command, Result result) {
  if (clock_.Now() > command.deadline) {
    return Refuse(std::move(result), kReasonDeadlinePassed,
                  fmt::format("the deadline {} passed before the agent could start it",
                              absl::FormatTime(command.deadline, absl::UTCTimeZone())));
  }
  if (!allowlist_.exec) {
    return Refuse(std::move(result), kReasonAgentAllowlist,
                  "allow.json turns read-only commands off (\"exec\": false)");
  }
  if (!ResourceBelongsToHost(command.resource_id, host_)) {
    return Refuse(std::move(result), kReasonWrongHost,
                  fmt::format("{} is not a resource of {}", command.resource_id, host_));
  }
  absl::StatusOr<core::ExecOutput> out;
  if (std::optional<std::string> docker_id = HostIdToDocker(command.resource_id, host_)) {
    // Inside a container only when allow.json lets the agent at containers at all.
    if (!allowlist_.docker) {
      return Refuse(std::move(result), kReasonAgentAllowlist,
                    "allow.json does not let the agent at containers (\"docker\": false)");
    }
    docker::DockerFleet* docker = docker_ != nullptr ? docker_->Fleet() : nullptr;
    if (docker == nullptr) {
      return Refuse(std::move(result), kReasonUnknownResource,
                    fmt::format("{} is not a resource of this host (no Docker daemon answers)",
                                command.resource_id));
    }
    out = docker->RunReadOnlyCommand(*docker_id, command.exec_command);
  } else {
    out = fleet_.RunReadOnlyCommand(command.resource_id, command.exec_command);
  }
  if (absl::IsPermissionDenied(out.status())) {
    return Refuse(std::move(result), kReasonAgentClassifier, std::string(out.status().message()));
  }
  if (absl::IsNotFound(out.status())) {
    return Refuse(std::move(result), kReasonUnknownResource,
                  fmt::format("{} is not a resource of this host", command.resource_id));
  }
  if (!out.ok()) {
    result.status = core::ExecutionStatus::kFailed;
    result.reason_code = "exec_failed";
    result.summary = core::BoundedCleanText(std::string(out.status().message()), kMaxTextBytes);
    return result;
  }
  result.status = core::ExecutionStatus::kSucceeded;
  result.summary = fmt::format("exited {}{}", out->exit_code, out->truncated ? " (truncated)" : "");
  // Ill-formed bytes become U+FFFD, which may lengthen the text past the protocol's bound.
  std::string text = core::SanitizeUtf8(out->output);
  const bool cut = text.size() > kMaxExecTextBytes;
  if (cut) {
    text = core::TruncateUtf8(text, kMaxExecTextBytes);
  }
  result.exec = ExecResult{out->exit_code, std::move(text), out->truncated || cut};
  return result;
}

std::vector<std::string> AgentExecutor::AllowedCapabilities(std::string_view resource_id) {
  std::vector<std::string> out;
  absl::StatusOr<std::vector<core::Capability>> catalogue;
  if (std::optional<std::string> docker_id = HostIdToDocker(resource_id, host_)) {
    docker::DockerFleet* docker =
        allowlist_.docker && docker_ != nullptr ? docker_->Fleet() : nullptr;
    if (docker == nullptr) {
      return out;
    }
    catalogue = docker->ListCapabilities(*docker_id);
  } else {
    catalogue = fleet_.ListCapabilities(resource_id);
  }
  if (!catalogue.ok()) {
    return out;
  }
  for (const core::Capability& c : *catalogue) {
    if (allowlist_.AllowsCapability(c.name)) {
      out.push_back(c.name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace pulse::adapters::hostagent
