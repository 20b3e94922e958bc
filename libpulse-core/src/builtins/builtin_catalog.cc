#include "pulse/core/builtins/builtin_catalog.h"

#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/builtins/capability_handlers.h"
#include "pulse/core/builtins/finding_handlers.h"
#include "pulse/core/builtins/metrics_handler.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/builtins/query_handler.h"
#include "pulse/core/builtins/question_handler.h"
#include "pulse/core/builtins/read_handler.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

using P = const BuiltinToolPorts&;

struct Passes {
  bool watch = false;
  bool investigation = false;
};
constexpr Passes kChatOnly{false, false};
constexpr Passes kEvidence{true, true};        // the evidence reads
constexpr Passes kWatch{true, false};          // the finding lifecycle
constexpr Passes kInvestigation{false, true};  // the capability listing and the proposal

BuiltinTool Row(std::string_view name, Passes passes, BuiltinHandlerFactory factory) {
  BuiltinTool row;
  row.name = name;
  for (const ToolSpec& spec : BuiltinTools()) {
    if (spec.name == name) {
      row.spec = &spec;
    }
  }
  row.make_handler = factory;
  row.patrol_watch = passes.watch;
  row.patrol_investigation = passes.investigation;
  return row;
}

std::vector<BuiltinTool> BuildCatalog() {
  return {
      Row(kToolPulseQuery, kEvidence,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PulseQueryHandler>(p.fleet, p.actions, p.requester);
          }),
      Row(kToolPulseRead, kEvidence,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PulseReadHandler>(p.fleet);
          }),
      Row(kToolPulseMetrics, kEvidence,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PulseMetricsHandler>(p.fleet, p.clock, p.metrics_history);
          }),
      Row(kToolPulseControl, kChatOnly,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PulseControlHandler>(p.actions, p.ids, p.requester);
          }),
      Row(kToolPulseQuestion, kChatOnly,
          [](P) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<QuestionToolHandler>();
          }),
      Row(kToolPatrolGetFindings, kWatch,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PatrolGetFindingsHandler>(p.findings, p.clock);
          }),
      Row(kToolPatrolReportFinding, kWatch,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PatrolReportFindingHandler>(p.findings, p.fleet);
          }),
      Row(kToolPatrolAssessFinding, kWatch,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PatrolAssessFindingHandler>(p.findings);
          }),
      Row(kToolPatrolResolveFinding, kWatch,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PatrolResolveFindingHandler>(p.findings);
          }),
      Row(kToolPatrolActionCapabilities, kInvestigation,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PatrolActionCapabilitiesHandler>(p.fleet, p.actions,
                                                                     p.requester);
          }),
      Row(kToolPatrolProposeAction, kInvestigation,
          [](P p) -> std::unique_ptr<ToolHandler> {
            return std::make_unique<PatrolProposeActionHandler>(p.fleet, p.actions, p.clock,
                                                                p.requester);
          }),
  };
}

}  // namespace

const std::vector<BuiltinTool>& BuiltinCatalog() {
  // Immutable after construction; function-local statics initialize thread-safely.
  static const std::vector<BuiltinTool> catalog = BuildCatalog();
  return catalog;
}

const BuiltinTool* FindBuiltin(std::string_view name) {
  for (const BuiltinTool& row : BuiltinCatalog()) {
    if (row.name == name) {
      return &row;
    }
  }
  return nullptr;
}

std::unique_ptr<ToolHandler> MakeBuiltinToolHandler(std::string_view name,
                                                    const BuiltinToolPorts& ports) {
  const BuiltinTool* row = FindBuiltin(name);
  return row == nullptr || row->make_handler == nullptr ? nullptr : row->make_handler(ports);
}

absl::Status BindBuiltinToolHandlers(ToolExecutor& executor, const BuiltinToolPorts& ports) {
  for (std::string_view name : kBuiltinToolNames) {
    std::unique_ptr<ToolHandler> handler = MakeBuiltinToolHandler(name, ports);
    if (handler == nullptr) {
      return absl::InternalError(
          absl::StrCat("built-in tool ", ToAbsl(name), " has no handler to bind"));
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
