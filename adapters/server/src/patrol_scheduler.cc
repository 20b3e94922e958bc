#include "patrol_scheduler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server_context.h"

namespace pulse::server {

PatrolScheduler::PatrolScheduler(core::PatrolService& patrol, const core::Clock& clock,
                                 absl::Duration interval, bool run_at_start)
    : patrol_(patrol), clock_(clock), interval_(interval), run_at_start_(run_at_start) {}

PatrolScheduler::~PatrolScheduler() { Stop(); }

void PatrolScheduler::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) {
    return;
  }
  if (interval_ > absl::ZeroDuration()) {
    next_run_at_ = run_at_start_ ? clock_.Now() : clock_.Now() + interval_;
  }
  thread_ = std::thread([this] { Loop(); });
  watchdog_ = std::thread([this] { Watchdog(); });
}

bool PatrolScheduler::Enqueue(core::PatrolTicket ticket) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      queue_.push_back(std::move(ticket));
      wake_.SignalAll();
      return true;
    }
  }
  patrol_.Abandon(std::move(ticket), "the server is shutting down");
  return false;
}

PatrolSchedule PatrolScheduler::Schedule() const {
  absl::MutexLock lock(&mu_);
  return PatrolSchedule{interval_ > absl::ZeroDuration(), interval_, next_run_at_};
}

void PatrolScheduler::Stop() {
  std::deque<core::PatrolTicket> abandoned;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) {
      return;
    }
    stopping_ = true;
    abandoned.swap(queue_);
    wake_.SignalAll();
  }
  patrol_.Cancel();
  if (thread_.joinable()) {
    thread_.join();
  }
  if (watchdog_.joinable()) {
    watchdog_.join();
  }
  for (core::PatrolTicket& ticket : abandoned) {
    patrol_.Abandon(std::move(ticket), "the server is shutting down");
  }
}

void PatrolScheduler::Loop() {
  mu_.Lock();
  while (!stopping_) {
    if (!queue_.empty()) {
      core::PatrolTicket ticket = std::move(queue_.front());
      queue_.pop_front();
      mu_.Unlock();
      patrol_.Execute(std::move(ticket));
      mu_.Lock();
      continue;
    }
    if (next_run_at_.has_value() && clock_.Now() >= *next_run_at_) {
      next_run_at_ = clock_.Now() + interval_;
      mu_.Unlock();
      absl::StatusOr<core::PatrolBegin> begun =
          patrol_.Begin(core::PatrolScope{}, core::PatrolTrigger::kScheduled);
      if (!begun.ok()) {
        LogLine(absl::StrCat("scheduled Patrol run not started: ", begun.status().message()));
      } else if (begun->ticket.has_value()) {
        patrol_.Execute(*std::move(begun->ticket));
      }
      mu_.Lock();
      continue;
    }
    if (next_run_at_.has_value()) {
      const absl::Duration wait = *next_run_at_ - clock_.Now();
      wake_.WaitWithTimeout(&mu_, wait + absl::Milliseconds(1));
    } else {
      wake_.Wait(&mu_);
    }
  }
  mu_.Unlock();
}

void PatrolScheduler::Watchdog() {
  mu_.Lock();
  while (!stopping_) {
    wake_.WaitWithTimeout(&mu_, absl::Seconds(1));
    if (stopping_) {
      break;
    }
    mu_.Unlock();
    patrol_.EnforceInvestigationDeadlines();
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace pulse::server
