#include "pulse/core/loop/loop_assembly.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/builtins/builtin_catalog.h"
#include "pulse/core/policy/control_level.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

// The names of the catalog rows `offered` selects, in catalog order.
std::vector<std::string_view> RowsWhere(bool (*offered)(const BuiltinTool&)) {
  std::vector<std::string_view> names;
  for (const BuiltinTool& row : BuiltinCatalog()) {
    if (offered(row)) {
      names.push_back(row.name);
    }
  }
  return names;
}

}  // namespace

std::string_view ToString(LoopFlavour flavour) {
  switch (flavour) {
    case LoopFlavour::kChat:
      return "chat";
    case LoopFlavour::kPatrolWatch:
      return "patrol_watch";
    case LoopFlavour::kPatrolInvestigation:
      return "patrol_investigation";
  }
  return "unknown";
}

std::span<const std::string_view> FlavourTools(LoopFlavour flavour) {
  // Built once from the catalog rows; immutable afterwards.
  static const std::vector<std::string_view> chat =
      RowsWhere([](const BuiltinTool&) { return true; });
  static const std::vector<std::string_view> watch =
      RowsWhere([](const BuiltinTool& row) { return row.patrol_watch; });
  static const std::vector<std::string_view> investigation =
      RowsWhere([](const BuiltinTool& row) { return row.patrol_investigation; });
  switch (flavour) {
    case LoopFlavour::kChat:
      return chat;
    case LoopFlavour::kPatrolWatch:
      return watch;
    case LoopFlavour::kPatrolInvestigation:
      return investigation;
  }
  return {};  // an out-of-range value binds nothing (fails closed)
}

ExecutionProfile FlavourProfile(LoopFlavour flavour) {
  switch (flavour) {
    case LoopFlavour::kChat:
      return ExecutionProfile::kInteractive;
    case LoopFlavour::kPatrolWatch:
      return ExecutionProfile::kPatrolDetection;
    case LoopFlavour::kPatrolInvestigation:
      return ExecutionProfile::kPatrolInvestigation;
  }
  return ExecutionProfile::kUnknown;
}

std::optional<InvocationPolicy> FlavourRunPolicy(LoopFlavour flavour) {
  if (flavour != LoopFlavour::kPatrolWatch && flavour != LoopFlavour::kPatrolInvestigation) {
    return std::nullopt;
  }
  PolicyInputs inputs;
  inputs.scopes = ScopeSet::Of({Scope::kMonitoringRead, Scope::kAiChat, Scope::kAiExecute});
  inputs.configured_max = ControlLevel::kReadOnly;
  inputs.profile = FlavourProfile(flavour);
  return InvocationPolicy::Create(inputs);
}

LoopAssembly::LoopAssembly(LoopFlavour flavour, ToolRegistry registry)
    : flavour_(flavour), registry_(std::move(registry)), executor_(registry_) {}

LoopAssembly::~LoopAssembly() = default;

absl::StatusOr<std::unique_ptr<LoopAssembly>> LoopAssembly::Assemble(const LoopPorts& ports,
                                                                     LoopAssemblyOptions options) {
  PULSE_ASSIGN_OR_RETURN(ToolRegistry registry, ToolRegistry::WithBuiltins());
  std::unique_ptr<LoopAssembly> assembly(new LoopAssembly(options.flavour, std::move(registry)));
  BuiltinToolPorts handler_ports{ports.fleet, ports.findings, ports.actions, ports.clock,
                                 ports.ids};
  handler_ports.requester = options.requester;
  handler_ports.metrics_history = ports.metrics_history;
  for (std::string_view name : FlavourTools(options.flavour)) {
    const BuiltinTool* row = FindBuiltin(name);
    std::unique_ptr<ToolHandler> handler =
        row == nullptr || row->make_handler == nullptr ? nullptr : row->make_handler(handler_ports);
    if (handler == nullptr) {
      return absl::InternalError(
          absl::StrCat("built-in tool ", ToAbsl(name), " has no handler to bind"));
    }
    if (options.decorate) {
      handler = options.decorate(name, std::move(handler));
      if (handler == nullptr) {
        return absl::InternalError(
            absl::StrCat("the handler decorator returned no handler for ", ToAbsl(name)));
      }
    }
    PULSE_RETURN_IF_ERROR(assembly->executor_.Bind(name, std::move(handler)));
  }
  assembly->loop_.emplace(ports.provider, assembly->registry_, assembly->executor_, ports.runner,
                          ports.clock, ports.sessions, ports.actions, ports.ids,
                          std::move(options.loop));
  return assembly;
}

}  // namespace pulse::core
