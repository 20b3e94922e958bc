// The pulse_read tool handler: live reads of one resource over the Fleet port. It never
// changes anything. Every text block is redacted (RedactSecrets) and bounded (tool_output.h).
// Results:
//   status {"resource_id","action","status","summary","observed_at"?,"facts":{...}}
//   logs   {"resource_id","action","lines":[oldest..newest],"line_count","more_available",
//           "redacted","truncated","lines_omitted"?}: `lines` (default 100) newest lines; when
//           they do not fit kMaxToolTextBytes the oldest are dropped (truncated, lines_omitted)
//   config {"resource_id","action","format","content","redacted","truncated"}
//   exec   {"resource_id","action","command","exit_code","output","redacted","truncated",
//           "simulated"}: a non-zero exit is a result, not a failure
// exec runs `command` only after ClassifyExecCommand proved it read-only; anything else is
// POLICY_BLOCKED (details refusal, reason) and the fleet is never called. The Fleet
// implementation classifies again before running it (ports/fleet.h).
// Failures: INVALID_INPUT for an argument that does not apply to the action, a missing
// command, or a non-canonical resource id; NOT_FOUND for an unknown resource; NO_AGENT when
// the fleet runs no commands; EXECUTION_CONTEXT_UNAVAILABLE (blocked, details resource_id)
// when exec targets a resource with nowhere to run a command (the port's FailedPrecondition);
// other port failures as PortStatusToToolError.
// Stateless besides the borrowed fleet; thread-safe when the fleet is.
#pragma once

#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::core {

// Log lines returned when the model gives no `lines`.
inline constexpr int kDefaultLogLines = 100;

class PulseReadHandler final : public ToolHandler {
 public:
  // Borrows `fleet`, which must outlive the handler.
  explicit PulseReadHandler(Fleet& fleet);

  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  ToolResult Status(std::string_view id);
  ToolResult Logs(std::string_view id, const rapidjson::Value& args);
  ToolResult Config(std::string_view id);
  ToolResult Exec(std::string_view id, const rapidjson::Value& args);

  Fleet& fleet_;
};

}  // namespace pulse::core
