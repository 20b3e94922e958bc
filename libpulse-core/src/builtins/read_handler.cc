#include "pulse/core/builtins/read_handler.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "handler_support.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/exec_classifier.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

using handlers_internal::CheckResourceId;
using handlers_internal::InvalidInput;
using handlers_internal::RejectInapplicable;
using handlers_internal::ShortText;
using handlers_internal::StringArg;

// Asked of the port; the handler's own text bound is smaller and applied after redaction.
constexpr std::size_t kLogQueryBytes = 64 * 1024;
// A log line in the result costs its text plus quotes and a separator.
constexpr std::size_t kLogLineOverhead = 3;

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    lines.push_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return lines;
}

ToolResult RefusedCommand(const ExecVerdict& verdict) {
  ToolError error;
  error.code = ToolErrorCode::kPolicyBlocked;
  error.blocked = true;
  error.message = absl::StrCat(
      "command refused before dispatch (", ToAbsl(ToString(verdict.refusal)),
      "): ", ShortText(verdict.reason, 256),
      ". pulse_read exec runs only commands proven read-only: an allowlisted program with "
      "plain arguments, no shell metacharacters, pipes, redirection, substitution or chaining. "
      "To change something, use pulse_control.");
  error.details.emplace_back("refusal", std::string(ToString(verdict.refusal)));
  error.details.emplace_back("reason", ShortText(verdict.reason, 256));
  return ToolResult::Failure(std::move(error));
}

}  // namespace

PulseReadHandler::PulseReadHandler(Fleet& fleet) : fleet_(fleet) {}

ToolResult PulseReadHandler::Run(const rapidjson::Value& args, const ToolContext& /*context*/) {
  const std::string_view action = StringArg(args, kArgAction);
  std::optional<ToolResult> bad;
  if (action == kReadActionStatus || action == kReadActionConfig) {
    bad = RejectInapplicable(args, kToolPulseRead, action, {kArgAction, kArgResourceId});
  } else if (action == kReadActionLogs) {
    bad = RejectInapplicable(args, kToolPulseRead, action, {kArgAction, kArgResourceId, kArgLines});
  } else if (action == kReadActionExec) {
    bad =
        RejectInapplicable(args, kToolPulseRead, action, {kArgAction, kArgResourceId, kArgCommand});
  } else {
    return InvalidInput("pulse_read needs action status, logs, config or exec",
                        {{"argument", std::string(kArgAction)}});
  }
  if (bad.has_value()) {
    return *std::move(bad);
  }
  const std::string_view id = StringArg(args, kArgResourceId);
  if (auto bad_id = CheckResourceId(id)) {
    return *bad_id;
  }
  if (action == kReadActionStatus) {
    return Status(id);
  }
  if (action == kReadActionLogs) {
    return Logs(id, args);
  }
  if (action == kReadActionConfig) {
    return Config(id);
  }
  return Exec(id, args);
}

ToolResult PulseReadHandler::Status(std::string_view id) {
  absl::StatusOr<FleetStatus> status = fleet_.GetStatus(id);
  if (!status.ok()) {
    return ToolResult::Failure(PortStatusToToolError(status.status(), id));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("resource_id", id);
  out.Member("action", kReadActionStatus);
  out.Member("status", ShortText(status->status, 64));
  out.Member("summary", ShortText(status->summary, 512));
  if (status->observed_at != absl::Time()) {
    out.TimeMember("observed_at", status->observed_at);
  }
  handlers_internal::WriteFacts(out, "facts", status->facts);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

ToolResult PulseReadHandler::Logs(std::string_view id, const rapidjson::Value& args) {
  FleetLogQuery query;
  // The schema bounds `lines` to 1..1000 (kFleetMaxLogLines).
  query.max_lines = static_cast<std::size_t>(GetInt64(args, kArgLines).value_or(kDefaultLogLines));
  query.max_bytes = kLogQueryBytes;
  absl::StatusOr<FleetLogExcerpt> excerpt = fleet_.ReadLogs(id, query);
  if (!excerpt.ok()) {
    return ToolResult::Failure(PortStatusToToolError(excerpt.status(), id));
  }
  // Redacted as one text, so a secret spanning lines (a PEM block) is still recognised.
  const std::string joined = absl::StrJoin(excerpt->lines, "\n");
  const std::string redacted = RedactSecrets(joined);
  const std::string clean = BoundedCleanText(redacted, redacted.size());
  const std::vector<std::string_view> lines = SplitLines(clean);
  // The newest lines matter most: keep as many of them as fit.
  std::vector<std::string> kept;
  std::size_t bytes = 0;
  bool cut_line = false;
  for (std::size_t i = lines.size(); i > 0; --i) {
    const std::string_view line = lines[i - 1];
    if (bytes + line.size() + kLogLineOverhead > kMaxToolTextBytes) {
      if (kept.empty()) {
        // The newest line alone is too long: keep its start.
        kept.push_back(absl::StrCat(
            TruncateUtf8(line, kMaxToolTextBytes - kTruncationMarker.size() - kLogLineOverhead),
            " ", ToAbsl(kTruncationMarker.substr(1))));
        cut_line = true;
      }
      break;
    }
    bytes += line.size() + kLogLineOverhead;
    kept.emplace_back(line);
  }
  std::reverse(kept.begin(), kept.end());
  const std::size_t omitted = lines.size() - kept.size();
  JsonWriter out;
  out.StartObject();
  out.Member("resource_id", id);
  out.Member("action", kReadActionLogs);
  out.Key("lines");
  out.StringArray(kept);
  out.Member("line_count", kept.size());
  out.Member("more_available", excerpt->truncated);
  out.Member("redacted", redacted != joined);
  out.Member("truncated", omitted > 0 || cut_line);
  if (omitted > 0) {
    out.Member("lines_omitted", omitted);
  }
  out.EndObject();
  return ToolResult::Success(out.Take());
}

ToolResult PulseReadHandler::Config(std::string_view id) {
  absl::StatusOr<FleetConfig> config = fleet_.ReadConfig(id);
  if (!config.ok()) {
    return ToolResult::Failure(PortStatusToToolError(config.status(), id));
  }
  const ModelText content = ToModelText(config->content);
  JsonWriter out;
  out.StartObject();
  out.Member("resource_id", id);
  out.Member("action", kReadActionConfig);
  out.Member("format", ShortText(config->format, 32));
  out.Member("content", content.text);
  out.Member("redacted", config->redacted || content.redacted);
  out.Member("truncated", config->truncated || content.truncated);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

ToolResult PulseReadHandler::Exec(std::string_view id, const rapidjson::Value& args) {
  const std::string_view command = StringArg(args, kArgCommand);
  if (command.empty()) {
    return InvalidInput("pulse_read action=exec needs a `command`",
                        {{"argument", std::string(kArgCommand)}});
  }
  // The structural proof comes first: a refused command never reaches the fleet.
  const ExecVerdict verdict = ClassifyExecCommand(command);
  if (!verdict.allowed) {
    return RefusedCommand(verdict);
  }
  absl::StatusOr<ExecOutput> run = fleet_.RunReadOnlyCommand(id, command);
  if (absl::IsFailedPrecondition(run.status())) {
    // The port's "nowhere to run a command": the target exists, nothing ran.
    ToolError error = PortStatusToToolError(run.status(), id);
    error.code = ToolErrorCode::kExecutionContextUnavailable;
    error.blocked = true;
    error.failed = false;
    error.retryable = false;
    error.details.emplace_back("resource_id", std::string(id));
    return ToolResult::Failure(std::move(error));
  }
  if (!run.ok()) {
    return ToolResult::Failure(PortStatusToToolError(run.status(), id));
  }
  const ModelText output = ToModelText(run->output);
  JsonWriter out;
  out.StartObject();
  out.Member("resource_id", id);
  out.Member("action", kReadActionExec);
  out.Member("command", ShortText(command, kMaxExecCommandBytes));
  out.Member("exit_code", run->exit_code);
  out.Member("output", output.text);
  out.Member("redacted", output.redacted);
  out.Member("truncated", run->truncated || output.truncated);
  out.Member("simulated", run->simulated);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

}  // namespace pulse::core
