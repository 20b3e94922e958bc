// The per-run tool surface of a Patrol model pass: the real built-in handlers, bound by
// LoopAssembly (loop/loop_assembly.h) for the Patrol flavours, each wrapped so the run records
// its tool calls (bounded) and, for the finding tools, what the model was shown, reported and
// assessed (FindingRunLedger), and so an investigation captures at most one proposal (a second,
// different proposal invalidates the capture). Internal to src/patrol.
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
#include "pulse/core/loop/loop_assembly.h"
#include "pulse/core/model/patrol_run.h"

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

// The decorator (loop/loop_assembly.h) that wraps each handler of a Patrol flavour's tools so
// the run records its calls into `state`: every call (bounded); for patrol_get_findings what the
// model was shown, for the report, assess and resolve tools what it reported and its verdicts
// (one per finding: a second is refused), for patrol_propose_action the captured proposal.
// `state` must outlive the handlers.
HandlerDecorator RecordingDecorator(PatrolRunState& state);

}  // namespace pulse::core::patrol_internal
