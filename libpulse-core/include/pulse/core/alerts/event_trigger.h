// Event-triggered Patrol (docs/patrol.md "Runs the fleet starts"): fleet changes that say
// something broke (a container died or ran out of memory, went unhealthy, a guest stopped, a
// backup failed, a storage crossed its threshold) start a scoped Patrol run over the resources
// they concern. Changes are coalesced for a window (one run for a burst), each resource has a
// cooldown after a run it triggered, and all event-triggered runs share a rate limit per hour,
// so a flapping service cannot burn the model budget. Every change offered is in the trigger
// ledger with what became of it and why (the newest kTriggerLedgerSize entries).
// Thread-safety: safe from any thread; `start_run` is called without the lock held.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

inline constexpr std::size_t kTriggerLedgerSize = 200;

struct EventTriggerOptions {
  absl::Duration window = absl::Seconds(30);    // changes within it start one run
  absl::Duration cooldown = absl::Minutes(10);  // per resource, after a run it triggered
  int max_runs_per_hour = 6;                    // all event-triggered runs together
};

// Whether a change is one that starts an investigation: die, oom, kill (a container ended),
// health_status with "unhealthy" in its detail, stop (a guest or container stopped),
// task_failed (a Proxmox VE task failed: a backup, a migration, a start), backup_failed,
// storage_threshold; and only for a change about one resource.
bool IsTriggeringChange(const FleetChange& change);

// One ledger line: a change offered, and what became of it.
struct TriggerLedgerEntry {
  absl::Time at;  // when the trigger decided
  std::uint64_t seq = 0;
  std::string resource_id;
  std::string change;  // the change's kind
  std::string detail;
  // ignored (not a triggering change), pending (waiting for its window), started,
  // cooldown, rate_limited, already_running, failed.
  std::string decision;
  std::string reason;  // why, in words
  std::string run_id;  // the run it started or joined ("" otherwise)
};

class PatrolEventTrigger {
 public:
  // Starts a Patrol run of `scope` (trigger event) and answers its run id; FailedPrecondition
  // when a run of that scope is already running.
  using StartRun = std::function<absl::StatusOr<std::string>(const PatrolScope& scope)>;

  PatrolEventTrigger(const Clock& clock, StartRun start_run, EventTriggerOptions options = {});

  // Records the change in the ledger; a triggering one joins the pending window (opening it
  // when none is open).
  void Offer(const FleetChange& change);
  // Starts the pending window's run once the window has passed: its resources out of their
  // cooldown, when the hourly limit has room. Returns the run id ("" when none started).
  std::string Tick();

  // The ledger, oldest first.
  std::vector<TriggerLedgerEntry> Ledger() const;
  // Event-triggered runs started in the last hour.
  int RunsInLastHour() const;

 private:
  void Record(TriggerLedgerEntry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock& clock_;
  StartRun start_run_;
  const EventTriggerOptions options_;
  mutable absl::Mutex mu_;
  absl::Mutex tick_mu_;  // one Tick at a time (start_run_ runs outside mu_)
  std::deque<TriggerLedgerEntry> ledger_ ABSL_GUARDED_BY(mu_);
  // The open window: when it opened, and its changes (ledger entries still "pending").
  absl::Time window_opened_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::vector<FleetChange> pending_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> cooled_until_ ABSL_GUARDED_BY(mu_);  // by resource id
  std::deque<absl::Time> started_ ABSL_GUARDED_BY(mu_);  // run start times, the last hour
};

}  // namespace pulse::core
