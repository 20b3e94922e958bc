// PatrolScheduler: the one thread that runs Patrol in pulse-server. It starts a full scheduled
// run every `interval` (none when the interval is zero; a scheduled run whose scope is busy is
// skipped, not queued) and executes the manual runs the HTTP route reserved, in arrival order.
// Stop cancels the run in progress (its model calls end at the next boundary), records every
// queued run as abandoned and joins the thread, so shutdown is prompt. A second thread ends
// investigations that outlive the investigation timeout (PatrolService::
// EnforceInvestigationDeadlines), once a second.
// Thread-safety: Enqueue, Status and Stop from any thread. Borrows the service and the clock.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/ports/clock.h"

namespace pulse::server {

struct PatrolSchedule {
  bool enabled = false;  // a non-zero interval
  absl::Duration interval;
  std::optional<absl::Time> next_run_at;
};

class PatrolScheduler {
 public:
  // `run_at_start`: with a schedule (interval > 0), the first run is due at Start.
  PatrolScheduler(core::PatrolService& patrol, const core::Clock& clock, absl::Duration interval,
                  bool run_at_start = false);
  ~PatrolScheduler();  // Stop()
  PatrolScheduler(const PatrolScheduler&) = delete;
  PatrolScheduler& operator=(const PatrolScheduler&) = delete;

  // Starts the thread; the first scheduled run is now (run_at_start) or one interval from now.
  void Start();
  // Queues a reserved run. False (the run is abandoned) once Stop was called.
  bool Enqueue(core::PatrolTicket ticket);
  PatrolSchedule Schedule() const;
  // Cancels, abandons what is queued, joins. Idempotent.
  void Stop();

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Once a second until Stop: ends investigations past their timeout (the core keeps no timer).
  void Watchdog() ABSL_LOCKS_EXCLUDED(mu_);

  core::PatrolService& patrol_;
  const core::Clock& clock_;
  const absl::Duration interval_;
  const bool run_at_start_;
  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  std::deque<core::PatrolTicket> queue_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> next_run_at_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set by Start (under mu_), joined by Stop (outside it, so the threads can take mu_ to leave).
  std::thread thread_;
  std::thread watchdog_;
};

}  // namespace pulse::server
