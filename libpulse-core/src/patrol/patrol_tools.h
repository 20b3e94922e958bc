// The per-run tool surface of a Patrol model pass: the real built-in handlers, each wrapped so
// the run records its tool calls (bounded) and, for the finding tools, what the model was shown,
// reported and assessed (FindingRunLedger), and so an investigation captures at most one
// proposal (a second, different proposal invalidates the capture). Internal to src/patrol.
// Thread-safe: the wrappers may run concurrently; PatrolRunState is guarded by its mutex.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/findings/run_ledger.h"
#include "pulse/core/patrol/patrol_run.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/metrics_history.h"

namespace pulse::core::patrol_internal {

struct Proposal {
  std::string resource_id;
  std::string capability;
  std::string params_json;  // canonical
  std::string reason;
};

struct PatrolRunState {
  absl::Mutex mu;
  FindingRunLedger ledger ABSL_GUARDED_BY(mu);
  std::vector<PatrolToolCall> calls ABSL_GUARDED_BY(mu);
  std::int64_t call_count ABSL_GUARDED_BY(mu) = 0;
  std::vector<PatrolAssessment> assessments ABSL_GUARDED_BY(mu);
  std::vector<std::string> reported_new ABSL_GUARDED_BY(mu);       // ids the model created
  std::vector<std::string> reported_existing ABSL_GUARDED_BY(mu);  // ids the model re-reported
  std::int64_t rejected_reports ABSL_GUARDED_BY(mu) = 0;
  std::optional<Proposal> proposal ABSL_GUARDED_BY(mu);
  bool proposal_invalidated ABSL_GUARDED_BY(mu) = false;
};

struct PatrolToolPorts {
  Fleet& fleet;
  FindingsService& findings;
  ActionService& actions;
  const Clock& clock;
  const MetricsHistory* metrics;
  ActionActor requester;
};

// Binds the Watch pass tools (pulse_query, pulse_read, pulse_metrics and the four finding
// tools) to `executor`, recording into `state`.
[[nodiscard]] absl::Status BindWatchTools(ToolExecutor& executor, const PatrolToolPorts& ports,
                                          PatrolRunState& state);
// Binds the investigation tools (pulse_query, pulse_read, pulse_metrics,
// patrol_action_capabilities, patrol_propose_action with capture).
[[nodiscard]] absl::Status BindInvestigationTools(ToolExecutor& executor,
                                                  const PatrolToolPorts& ports,
                                                  PatrolRunState& state);

}  // namespace pulse::core::patrol_internal
