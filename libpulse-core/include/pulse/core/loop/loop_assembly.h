// LoopAssembly: the one place where a tool registry, its executor with the built-in handlers
// (each made by its catalog row, builtins/builtin_catalog.h) and an AgenticLoop are put
// together, for each way Pulse runs a model (a LoopFlavour): the Assistant's chat
// (adapters/server), Patrol's Watch pass and Patrol's investigation of one finding
// (patrol/patrol_service.cc, patrol/patrol_investigation.cc). What differs between
// them is declared here, as data and options, not as three copies of the wiring:
//   * the built-in tools a flavour binds handlers for (FlavourTools). The registry always holds
//     every built-in; a tool outside the set is registered but unbound, so the executor's
//     projection never offers it and a call to it is refused NOT_FOUND (tool_unavailable);
//   * the execution profile its runs have (FlavourProfile) and, for Patrol, the whole fixed
//     authority (FlavourRunPolicy); a chat run's authority is its caller's token, built per
//     request (InvocationPolicy::FromRequest with the chat profile);
//   * an optional decorator around each bound handler (Patrol records its runs' tool calls);
//   * the identity the handlers request actions as, and the loop's options (prompt, budgets,
//     route, local-only source), which stay the caller's.
// Pure: no I/O. The assembly borrows the ports, which must outlive it; it owns the registry, the
// executor and the loop. Thread-safety: as AgenticLoop (Run and Resume may run concurrently).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/policy/execution_profile.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/id_source.h"
#include "pulse/core/ports/llm_provider.h"
#include "pulse/core/ports/metrics_history.h"
#include "pulse/core/ports/session_store.h"
#include "pulse/core/ports/task_runner.h"
#include "pulse/core/tools/tool_registry.h"

namespace pulse::core {

enum class LoopFlavour {
  kChat,                 // the Assistant: every built-in, the caller's authority
  kPatrolWatch,          // Patrol's Watch pass: evidence reads and the finding lifecycle
  kPatrolInvestigation,  // Patrol's investigation: evidence reads and one typed proposal
};
std::string_view ToString(LoopFlavour flavour);

// The built-in tools a flavour binds handlers for, in catalog order, as the catalog rows
// (builtins/builtin_catalog.h) declare them:
//   chat: every built-in (kBuiltinToolNames);
//   Patrol Watch: pulse_query, pulse_read, pulse_metrics and patrol_get/report/assess/
//     resolve_finding;
//   Patrol investigation: pulse_query, pulse_read, pulse_metrics, patrol_action_capabilities,
//     patrol_propose_action.
std::span<const std::string_view> FlavourTools(LoopFlavour flavour);

// The execution profile of a flavour's runs: interactive, patrol_detection or
// patrol_investigation.
ExecutionProfile FlavourProfile(LoopFlavour flavour);

// The fixed authority of a Patrol flavour's runs: monitoring:read, ai:chat and ai:execute at
// read_only under the flavour's profile (so no infrastructure mutation, whatever the tools).
// nullopt for chat, whose runs carry their caller's authority.
std::optional<InvocationPolicy> FlavourRunPolicy(LoopFlavour flavour);

// Everything the loop and the built-in handlers borrow.
struct LoopPorts {
  LlmProvider& provider;
  TaskRunner& runner;  // a turn's tool calls run here
  const Clock& clock;
  SessionStore& sessions;
  ActionService& actions;  // the loop's Resume; pulse_control, action queries and proposals
  IdSource& ids;           // session and request ids
  Fleet& fleet;
  FindingsService& findings;
  // Nullable: metric history the fleet does not record is read here when set.
  const MetricsHistory* metrics_history = nullptr;
};

// Wraps the handler of built-in `tool` before it is bound; returns the handler to bind (never
// null). Called once per bound tool while assembling.
using HandlerDecorator = std::function<std::unique_ptr<ToolHandler>(
    std::string_view tool, std::unique_ptr<ToolHandler> handler)>;

struct LoopAssemblyOptions {
  LoopFlavour flavour = LoopFlavour::kChat;
  // The identity the handlers request actions as (pulse_control plans, the approval
  // requirement capability listings and proposals show).
  ActionActor requester{ActorKind::kAgent, "pulse-agent"};
  HandlerDecorator decorate;  // unset: the handlers are bound as they are
  LoopOptions loop;
};

class LoopAssembly {
 public:
  // The registry of every built-in, an executor with the flavour's handlers bound over `ports`
  // (decorated when options.decorate is set) and the loop over both. Fails with the registry's
  // error (an invalid catalog), Internal when a flavour's tool has no handler or the decorator
  // returns none, or the executor's Bind error; nothing is returned then.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LoopAssembly>> Assemble(
      const LoopPorts& ports, LoopAssemblyOptions options);

  ~LoopAssembly();
  LoopAssembly(const LoopAssembly&) = delete;
  LoopAssembly& operator=(const LoopAssembly&) = delete;

  LoopFlavour flavour() const { return flavour_; }
  const ToolRegistry& registry() const { return registry_; }
  const ToolExecutor& executor() const { return executor_; }
  AgenticLoop& loop() { return *loop_; }

 private:
  LoopAssembly(LoopFlavour flavour, ToolRegistry registry);

  const LoopFlavour flavour_;
  ToolRegistry registry_;
  ToolExecutor executor_;  // over registry_
  std::optional<AgenticLoop> loop_;
};

}  // namespace pulse::core
