// InMemoryActionStore: the ActionStore fake. One mutex makes every method atomic, and
// Transition applies the shared pure checks (actions/action_transition.h) exactly as the SQL
// adapter does, so it is a faithful reference for the contract suite.
// Test hooks: FailNext injects one error into the next call of any method; SetBeforeTransition
// runs a callback (outside the lock) just before a transition is checked, to stage races.
// Thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/action_store.h"

namespace pulse::testing {

class InMemoryActionStore final : public core::ActionStore {
 public:
  absl::StatusOr<core::ActionInsertOutcome> InsertIfAbsent(
      const core::ActionRecord& record,
      const std::vector<core::ActionLifecycleEvent>& initial_events) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (absl::Status s = core::ValidateNewActionRecord(record, initial_events); !s.ok()) {
      return s;
    }
    absl::MutexLock lock(&mu_);
    auto it = records_.find(record.id());
    if (it != records_.end()) {
      if (it->second.plan.plan_hash != record.plan.plan_hash) {
        return absl::AlreadyExistsError("the action id exists with a different plan hash");
      }
      return core::ActionInsertOutcome{it->second, false};
    }
    records_.emplace(record.id(), record);
    AppendEventsLocked(record.id(), initial_events);
    return core::ActionInsertOutcome{record, true};
  }

  absl::StatusOr<core::ActionRecord> Get(std::string_view action_id) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    absl::MutexLock lock(&mu_);
    auto it = records_.find(std::string(action_id));
    if (it == records_.end()) {
      return absl::NotFoundError("no such action");
    }
    return it->second;
  }

  absl::StatusOr<core::ActionRecord> Transition(const core::ActionTransition& t) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (absl::Status s = core::ValidateActionTransition(t); !s.ok()) {
      return s;
    }
    std::function<void(const core::ActionTransition&)> hook;
    {
      absl::MutexLock lock(&mu_);
      hook = before_transition_;
    }
    if (hook) {
      hook(t);
    }
    absl::MutexLock lock(&mu_);
    auto it = records_.find(t.action_id);
    if (it == records_.end()) {
      return absl::NotFoundError("no such action");
    }
    if (absl::Status s = core::CheckCas(it->second, t); !s.ok()) {
      ++cas_conflicts_;
      return s;
    }
    if (absl::Status s = core::CheckTransitionAgainst(it->second, t); !s.ok()) {
      return s;
    }
    core::ApplyActionTransition(t, it->second);
    AppendEventsLocked(t.action_id, t.events);
    ++transitions_;
    return it->second;
  }

  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> ListEvents(
      std::string_view action_id) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    absl::MutexLock lock(&mu_);
    if (records_.find(std::string(action_id)) == records_.end()) {
      return absl::NotFoundError("no such action");
    }
    auto it = events_.find(std::string(action_id));
    return it == events_.end() ? std::vector<core::ActionLifecycleEvent>() : it->second;
  }

  absl::StatusOr<std::vector<core::ActionRecord>> ListByState(
      const std::vector<core::ActionState>& states, std::size_t limit) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (limit == 0 || limit > 1000) {
      return absl::InvalidArgumentError("limit must be 1..1000");
    }
    absl::MutexLock lock(&mu_);
    std::vector<core::ActionRecord> out;
    for (const auto& [id, record] : records_) {
      if (std::find(states.begin(), states.end(), record.state) != states.end()) {
        out.push_back(record);
      }
    }
    std::sort(out.begin(), out.end(), [](const core::ActionRecord& a, const core::ActionRecord& b) {
      return std::tie(a.created_at, a.id()) < std::tie(b.created_at, b.id());
    });
    if (out.size() > limit) {
      out.resize(limit);
    }
    return out;
  }

  // Sorts every record of the view: a fake, so the cost is the store; the SQLite store's is
  // the page.
  absl::StatusOr<std::vector<core::ActionRecord>> ListPage(
      const core::ActionPageQuery& query) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (query.limit == 0 || query.limit > 1000) {
      return absl::InvalidArgumentError("limit must be 1..1000");
    }
    const std::vector<core::ActionState>& states = core::ActionPageStates(query.view);
    absl::MutexLock lock(&mu_);
    std::vector<core::ActionRecord> out;
    for (const auto& [id, record] : records_) {
      if (std::find(states.begin(), states.end(), record.state) != states.end() &&
          (!query.after.has_value() ||
           core::IsAfterInActionPage(record, *query.after, query.view))) {
        out.push_back(record);
      }
    }
    std::sort(out.begin(), out.end(),
              [&query](const core::ActionRecord& a, const core::ActionRecord& b) {
                return core::IsAfterInActionPage(b, core::ActionPagePositionOf(a, query.view),
                                                 query.view);
              });
    if (out.size() > query.limit) {
      out.resize(query.limit);
    }
    return out;
  }

  // ---- test hooks -----------------------------------------------------------------------

  // The next call of any method returns `status` (once).
  void FailNext(absl::Status status) {
    absl::MutexLock lock(&mu_);
    injected_ = std::move(status);
  }

  // Runs before each transition's compare (outside the lock; may call the store).
  void SetBeforeTransition(std::function<void(const core::ActionTransition&)> hook) {
    absl::MutexLock lock(&mu_);
    before_transition_ = std::move(hook);
  }

  std::size_t size() const {
    absl::MutexLock lock(&mu_);
    return records_.size();
  }
  std::uint64_t transitions() const {
    absl::MutexLock lock(&mu_);
    return transitions_;
  }
  std::uint64_t cas_conflicts() const {
    absl::MutexLock lock(&mu_);
    return cas_conflicts_;
  }

 private:
  absl::Status TakeInjected() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (!injected_.has_value()) {
      return absl::OkStatus();
    }
    absl::Status s = std::move(*injected_);
    injected_.reset();
    return s;
  }

  void AppendEventsLocked(const std::string& action_id,
                          const std::vector<core::ActionLifecycleEvent>& events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<core::ActionLifecycleEvent>& log = events_[action_id];
    for (core::ActionLifecycleEvent e : events) {
      e.sequence = static_cast<std::int64_t>(log.size()) + 1;
      log.push_back(std::move(e));
    }
  }

  mutable absl::Mutex mu_;
  std::map<std::string, core::ActionRecord> records_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<core::ActionLifecycleEvent>> events_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> injected_ ABSL_GUARDED_BY(mu_);
  std::function<void(const core::ActionTransition&)> before_transition_ ABSL_GUARDED_BY(mu_);
  std::uint64_t transitions_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t cas_conflicts_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::testing
