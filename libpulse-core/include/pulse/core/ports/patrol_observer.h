// PatrolObserver: what a Patrol run tells a live watcher while it runs (pulse-server's Patrol
// stream, docs/patrol.md "The Patrol stream"): the phase it entered and each event of its Watch
// pass model loop. The run's start and end are its stored records (PatrolRunStore), so an
// observer of the store sees those. Calls come from the run's thread, in order for one run;
// runs of different scopes may call concurrently, so an implementation synchronizes itself.
// They cannot fail and must not block for long: the run waits for them.
#pragma once

#include <string_view>

#include "pulse/core/model/loop_event.h"

namespace pulse::core {

// Phases of a run, in the order a run enters them (an entered phase may do nothing).
inline constexpr std::string_view kPatrolPhaseTriage = "triage";
inline constexpr std::string_view kPatrolPhaseWatch = "watch";
inline constexpr std::string_view kPatrolPhaseReconcile = "reconcile";
inline constexpr std::string_view kPatrolPhaseRemediate = "remediate";

class PatrolObserver {
 public:
  virtual ~PatrolObserver() = default;

  // Run `run_id` entered `phase` (one of kPatrolPhase*).
  virtual void OnPhase(std::string_view run_id, std::string_view phase) = 0;
  // One event of run `run_id`'s Watch pass, as the loop emitted it (loop/loop_event.h).
  virtual void OnModelEvent(std::string_view run_id, const LoopEvent& event) = 0;
};

}  // namespace pulse::core
