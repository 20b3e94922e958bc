#include "patrol_scheduler.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server_context.h"

namespace pulse::server {

PatrolScheduler::PatrolScheduler(core::PatrolService& patrol, const core::Clock& clock,
                                 absl::Duration interval)
    : patrol_(patrol), clock_(clock), interval_(interval) {}

PatrolScheduler::~PatrolScheduler() { Stop(); }

void PatrolScheduler::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) {
    return;
  }
  if (interval_ > absl::ZeroDuration()) {
    next_run_at_ = clock_.Now() + interval_;
  }
  thread_ = std::thread([this] { Loop(); });
  watchdog_ = std::thread([this] { Watchdog(); });
}

bool PatrolScheduler::Enqueue(core::PatrolTicket ticket) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(ticket));
      wake_.notify_all();
      return true;
    }
  }
  patrol_.Abandon(std::move(ticket), "the server is shutting down");
  return false;
}

PatrolSchedule PatrolScheduler::Schedule() const {
  std::lock_guard<std::mutex> lock(mu_);
  return PatrolSchedule{interval_ > absl::ZeroDuration(), interval_, next_run_at_};
}

void PatrolScheduler::Stop() {
  std::deque<core::PatrolTicket> abandoned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) {
      return;
    }
    stopping_ = true;
    abandoned.swap(queue_);
    wake_.notify_all();
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
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (!queue_.empty()) {
      core::PatrolTicket ticket = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      patrol_.Execute(std::move(ticket));
      lock.lock();
      continue;
    }
    if (next_run_at_.has_value() && clock_.Now() >= *next_run_at_) {
      next_run_at_ = clock_.Now() + interval_;
      lock.unlock();
      absl::StatusOr<core::PatrolBegin> begun =
          patrol_.Begin(core::PatrolScope{}, core::PatrolTrigger::kScheduled);
      if (!begun.ok()) {
        LogLine(absl::StrCat("scheduled Patrol run not started: ", begun.status().message()));
      } else if (begun->ticket.has_value()) {
        patrol_.Execute(*std::move(begun->ticket));
      }
      lock.lock();
      continue;
    }
    if (next_run_at_.has_value()) {
      const absl::Duration wait = *next_run_at_ - clock_.Now();
      wake_.wait_for(lock, absl::ToChronoMilliseconds(wait) + std::chrono::milliseconds(1));
    } else {
      wake_.wait(lock);
    }
  }
}

void PatrolScheduler::Watchdog() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (stopping_) {
      break;
    }
    lock.unlock();
    patrol_.EnforceInvestigationDeadlines();
    lock.lock();
  }
}

}  // namespace pulse::server
