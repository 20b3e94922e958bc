#include "pulse/core/loop/handlers/builtin_handlers.h"

#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/loop/handlers/capability_handlers.h"
#include "pulse/core/loop/handlers/finding_handlers.h"
#include "pulse/core/loop/handlers/metrics_handler.h"
#include "pulse/core/loop/handlers/pulse_control_handler.h"
#include "pulse/core/loop/handlers/query_handler.h"
#include "pulse/core/loop/handlers/question_handler.h"
#include "pulse/core/loop/handlers/read_handler.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::unique_ptr<ToolHandler> MakeBuiltinToolHandler(std::string_view name,
                                                    const BuiltinToolPorts& p) {
  if (name == kToolPulseQuery) {
    return std::make_unique<PulseQueryHandler>(p.fleet, p.actions, p.requester);
  }
  if (name == kToolPulseRead) {
    return std::make_unique<PulseReadHandler>(p.fleet);
  }
  if (name == kToolPulseMetrics) {
    return std::make_unique<PulseMetricsHandler>(p.fleet, p.clock, p.metrics_history);
  }
  if (name == kToolPulseControl) {
    return std::make_unique<PulseControlHandler>(p.actions, p.ids, p.requester);
  }
  if (name == kToolPulseQuestion) {
    return std::make_unique<QuestionToolHandler>();
  }
  if (name == kToolPatrolGetFindings) {
    return std::make_unique<PatrolGetFindingsHandler>(p.findings, p.clock);
  }
  if (name == kToolPatrolReportFinding) {
    return std::make_unique<PatrolReportFindingHandler>(p.findings, p.fleet);
  }
  if (name == kToolPatrolAssessFinding) {
    return std::make_unique<PatrolAssessFindingHandler>(p.findings);
  }
  if (name == kToolPatrolResolveFinding) {
    return std::make_unique<PatrolResolveFindingHandler>(p.findings);
  }
  if (name == kToolPatrolActionCapabilities) {
    return std::make_unique<PatrolActionCapabilitiesHandler>(p.fleet, p.actions, p.requester);
  }
  if (name == kToolPatrolProposeAction) {
    return std::make_unique<PatrolProposeActionHandler>(p.fleet, p.actions, p.clock, p.requester);
  }
  return nullptr;
}

absl::Status BindBuiltinToolHandlers(ToolExecutor& executor, const BuiltinToolPorts& ports) {
  for (std::string_view name : kBuiltinToolNames) {
    std::unique_ptr<ToolHandler> handler = MakeBuiltinToolHandler(name, ports);
    if (handler == nullptr) {
      return absl::InternalError(
          absl::StrCat("built-in tool ", AV(name), " has no handler to bind"));
    }
    absl::Status bound = executor.Bind(name, std::move(handler));
    if (absl::IsNotFound(bound)) {
      continue;  // this registry does not offer the tool
    }
    if (!bound.ok()) {
      return bound;
    }
  }
  return absl::OkStatus();
}

}  // namespace pulse::core
