// The built-in tool catalog: one row per built-in model-facing tool, in kBuiltinToolNames
// order. A row carries the tool's spec (descriptor, closed input schema, placement hints and
// the traits the loop reads; declared in tools/tool_catalog.cc, which the registry, the
// classifier and the manifest below this module read too), the Patrol passes that offer it, and
// the factory of its handler over the real ports. LoopAssembly (loop/loop_assembly.h) wires a
// flavour's rows into the executor; BindBuiltinToolHandlers wires every row a registry holds, so
// a built-in added to the tools catalog without a row here fails the wiring instead of answering
// NOT_FOUND at run time. docs/architecture.md ("Where new things go") says how to add one.
// The catalog is immutable and built once on first use; safe to read from any thread.
// Lifetime: the ports are borrowed by the handlers and must outlive the executor.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/id_source.h"
#include "pulse/core/ports/metrics_history.h"
#include "pulse/core/tools/tool_catalog.h"

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

// Makes a built-in's handler over `ports`; never null.
using BuiltinHandlerFactory = std::unique_ptr<ToolHandler> (*)(const BuiltinToolPorts& ports);

struct BuiltinTool {
  std::string_view name;
  const ToolSpec* spec = nullptr;  // the tools catalog's row; valid for the program's life
  BuiltinHandlerFactory make_handler = nullptr;
  // The Patrol passes that bind it (the Assistant's chat binds every built-in).
  bool patrol_watch = false;
  bool patrol_investigation = false;
};

// Every built-in row, in kBuiltinToolNames order. The reference stays valid for the life of
// the program.
const std::vector<BuiltinTool>& BuiltinCatalog();

// The row of the built-in named exactly `name`, or null.
const BuiltinTool* FindBuiltin(std::string_view name);

// The real handler of the built-in tool `name` over `ports`, or null when `name` is not a
// built-in.
std::unique_ptr<ToolHandler> MakeBuiltinToolHandler(std::string_view name,
                                                    const BuiltinToolPorts& ports);

// Binds every built-in tool that `executor`'s registry holds (kBuiltinToolNames) to its
// handler over `ports`; built-ins the registry does not hold are skipped. Fails, possibly
// after binding some, with AlreadyExists when a built-in already has a handler, and Internal
// when a built-in has no row here (a catalog entry added without one).
[[nodiscard]] absl::Status BindBuiltinToolHandlers(ToolExecutor& executor,
                                                   const BuiltinToolPorts& ports);

}  // namespace pulse::core
