// DockerFleet::RunReadOnlyCommand: read-only exec in a container (docs/docker.md, "Read-only
// exec"). Off unless the source allows it; then only the exec classifier's verdict argv runs,
// through the Engine's exec API (EngineClient::Exec), never a shell.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::docker {
namespace {

constexpr std::string_view kContainerPrefix = "app-container:";

// The path a file operand names inside the container, resolved there (readlink -f, every
// symbolic link followed), so the classifier's readable-path rule is applied to what the
// program will open. FailedPrecondition when it cannot be resolved (no readlink in the image,
// a missing file).
absl::StatusOr<std::string> ResolveInContainer(const EngineClient& engine,
                                               const std::string& container,
                                               const std::string& path, absl::Duration deadline) {
  ExecRequest resolve;
  resolve.argv = {"readlink", "-f", path};
  resolve.deadline = deadline;
  resolve.max_output_bytes = 4096;
  PULSE_ASSIGN_OR_RETURN(ExecResult r, engine.Exec(container, resolve));
  std::string resolved(absl::StripTrailingAsciiWhitespace(r.stdout_text));
  if (r.exit_code != 0 || resolved.empty() || r.truncated ||
      resolved.find('\n') != std::string::npos) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot resolve ", path,
                     " inside the container (readlink -f failed: is the file there, and does "
                     "the image have readlink?)"));
  }
  return resolved;
}

}  // namespace

absl::StatusOr<core::ExecOutput> DockerFleet::RunReadOnlyCommand(std::string_view resource_id,
                                                                 std::string_view command) {
  if (!options_.allow_exec) {
    return absl::PermissionDeniedError(
        "commands are disabled for this Docker source (set \"allow_exec\": true to allow "
        "read-only commands)");
  }
  const core::ExecVerdict verdict = core::ClassifyExecCommand(command);
  if (!verdict.allowed) {
    return absl::PermissionDeniedError(absl::StrCat(
        "command refused (", core::ToAbsl(core::ToString(verdict.refusal)), "): ", verdict.reason));
  }
  if (resource_id.rfind(kContainerPrefix, 0) != 0) {
    PULSE_RETURN_IF_ERROR(GetResource(resource_id).status());
    return absl::FailedPreconditionError(
        absl::StrCat(core::ToAbsl(resource_id),
                     " has nowhere to run a command here: commands run inside a container"));
  }
  PULSE_ASSIGN_OR_RETURN(ContainerDetails d, ContainerOf(resource_id));
  if (!d.running || d.state != "running") {
    return absl::FailedPreconditionError(absl::StrCat("container ", d.name, " is ", d.state,
                                                      ": commands run only in a running "
                                                      "container"));
  }
  const absl::Time deadline = absl::Now() + options_.exec_deadline;
  std::vector<std::string> argv = verdict.argv;
  for (const std::size_t index : verdict.file_operands) {
    if (deadline <= absl::Now()) {
      return absl::DeadlineExceededError("the exec deadline passed while resolving file operands");
    }
    PULSE_ASSIGN_OR_RETURN(std::string resolved,
                           ResolveInContainer(*engine_, d.id, argv[index], deadline - absl::Now()));
    if (!core::IsReadableExecPath(resolved)) {
      return absl::PermissionDeniedError(
          absl::StrCat("command refused (sensitive_path): ", argv[index], " resolves to ", resolved,
                       " inside the container, outside the readable files"));
    }
    argv[index] = std::move(resolved);
  }
  ExecRequest run;
  run.argv = argv;
  run.deadline = deadline - absl::Now();
  run.max_output_bytes = core::kMaxExecOutputBytes;
  if (run.deadline <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError("the exec deadline passed while resolving file operands");
  }
  PULSE_ASSIGN_OR_RETURN(ExecResult r, engine_->Exec(d.id, run));
  core::ExecOutput out;
  // Still running when the output bound stopped reading: no exit code; report it as 124 as a
  // timed-out local command would.
  out.exit_code = r.exit_code.value_or(124);
  std::string text = std::move(r.stdout_text);
  text += r.stderr_text;
  if (text.size() > core::kMaxExecOutputBytes) {
    text.resize(core::kMaxExecOutputBytes);
    r.truncated = true;
  }
  out.output = core::MaskExecOutput(argv, text);
  out.truncated = r.truncated;
  return out;
}

}  // namespace pulse::docker
