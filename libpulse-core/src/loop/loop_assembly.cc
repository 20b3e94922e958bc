#include "pulse/core/loop/loop_assembly.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/loop/handlers/builtin_handlers.h"
#include "pulse/core/policy/control_level.h"
#include "pulse/core/policy/scope.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Patrol's Watch pass: the evidence reads and the finding lifecycle.
constexpr std::array<std::string_view, 7> kWatchTools = {
    kToolPulseQuery,           kToolPulseRead,           kToolPulseMetrics,
    kToolPatrolGetFindings,    kToolPatrolReportFinding, kToolPatrolAssessFinding,
    kToolPatrolResolveFinding,
};
// Patrol's investigation: the evidence reads, the capability listing and one proposal.
constexpr std::array<std::string_view, 5> kInvestigationTools = {
    kToolPulseQuery,          kToolPulseRead, kToolPulseMetrics, kToolPatrolActionCapabilities,
    kToolPatrolProposeAction,
};

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
  switch (flavour) {
    case LoopFlavour::kChat:
      return kBuiltinToolNames;
    case LoopFlavour::kPatrolWatch:
      return kWatchTools;
    case LoopFlavour::kPatrolInvestigation:
      return kInvestigationTools;
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
    std::unique_ptr<ToolHandler> handler = MakeBuiltinToolHandler(name, handler_ports);
    if (handler == nullptr) {
      return absl::InternalError(
          absl::StrCat("built-in tool ", AV(name), " has no handler to bind"));
    }
    if (options.decorate) {
      handler = options.decorate(name, std::move(handler));
      if (handler == nullptr) {
        return absl::InternalError(
            absl::StrCat("the handler decorator returned no handler for ", AV(name)));
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
