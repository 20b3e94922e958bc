// The one wiring call for the built-in tools: BindBuiltinToolHandlers binds a real handler,
// over the real ports, to every built-in tool the executor's registry holds, so an app (the
// server, Patrol, the CLI) wires the whole model-facing surface at once and a built-in added
// to the catalog without a handler fails the wiring instead of answering NOT_FOUND at run time.
// Lifetime: the ports are borrowed by the handlers and must outlive the executor.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/id_source.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::core {

// The borrowed ports behind the built-in tools.
struct BuiltinToolPorts {
  Fleet& fleet;               // pulse_query, pulse_read, pulse_metrics, patrol_* reads
  FindingsService& findings;  // patrol_get/report/assess/resolve_finding
  ActionService& actions;     // pulse_control, pulse_query action=action, proposals' policy
  const Clock& clock;         // metric windows, finding loop states, proposal checks
  IdSource& ids;              // pulse_control request ids
  // The agent identity the engine requests actions as (pulse_control plans; the approval
  // requirement capability listings and proposals show).
  ActionActor requester{ActorKind::kAgent, "pulse-agent"};
  // Nullable: metric history the fleet does not record is read here when set.
  const MetricsHistory* metrics_history = nullptr;
};

// The real handler of the built-in tool `name` over `ports`, or null when `name` is not a
// built-in with a handler here. LoopAssembly (loop/loop_assembly.h) binds a flavour's tools
// with it.
std::unique_ptr<ToolHandler> MakeBuiltinToolHandler(std::string_view name,
                                                    const BuiltinToolPorts& ports);

// Binds every built-in tool that `executor`'s registry holds (kBuiltinToolNames) to its
// handler over `ports`; built-ins the registry does not hold are skipped. Fails, possibly
// after binding some, with AlreadyExists when a built-in already has a handler, and Internal
// when a built-in has no handler here (a catalog entry added without one).
[[nodiscard]] absl::Status BindBuiltinToolHandlers(ToolExecutor& executor,
                                                   const BuiltinToolPorts& ports);

}  // namespace pulse::core
