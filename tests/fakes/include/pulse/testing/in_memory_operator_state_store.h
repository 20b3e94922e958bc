// InMemoryOperatorStateStore: the OperatorStateStore fake. Validates on Set exactly as a real
// adapter must; FailGets makes every Get and GetMany fail (to model an unreadable remediation
// lock) until cleared, FailNext fails only the next call. Thread-safe.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::testing {

class InMemoryOperatorStateStore final : public core::OperatorStateStore {
 public:
  absl::StatusOr<core::OperatorState> Get(std::string_view resource_id) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = TakeInjectedLocked(); !s.ok()) {
      return s;
    }
    if (get_error_.has_value()) {
      return *get_error_;
    }
    auto it = states_.find(std::string(resource_id));
    if (it == states_.end()) {
      return absl::NotFoundError("no operator state is set");
    }
    return it->second;
  }

  // Fails like Get under FailGets: both read the remediation lock.
  absl::StatusOr<std::vector<core::OperatorState>> GetMany(
      const std::vector<std::string>& resource_ids) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = TakeInjectedLocked(); !s.ok()) {
      return s;
    }
    if (get_error_.has_value()) {
      return *get_error_;
    }
    std::vector<core::OperatorState> out;
    for (const auto& [id, state] : states_) {  // a std::map: sorted, each id once
      if (std::find(resource_ids.begin(), resource_ids.end(), id) != resource_ids.end()) {
        out.push_back(state);
      }
    }
    return out;
  }

  absl::Status Set(const core::OperatorState& state) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = TakeInjectedLocked(); !s.ok()) {
      return s;
    }
    if (absl::Status s = core::ValidateOperatorState(state); !s.ok()) {
      return s;
    }
    states_[state.resource_id] = state;
    return absl::OkStatus();
  }

  absl::Status Clear(std::string_view resource_id) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = TakeInjectedLocked(); !s.ok()) {
      return s;
    }
    states_.erase(std::string(resource_id));
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> LocalOnlyResourceIds() override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = TakeInjectedLocked(); !s.ok()) {
      return s;
    }
    std::vector<std::string> ids;
    for (const auto& [id, state] : states_) {  // a std::map: already sorted
      if (state.local_only) {
        ids.push_back(id);
      }
    }
    return ids;
  }

  absl::StatusOr<std::vector<core::OperatorState>> WithNotes() override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = TakeInjectedLocked(); !s.ok()) {
      return s;
    }
    std::vector<core::OperatorState> out;
    for (const auto& [id, state] : states_) {
      if (!state.note.empty() && out.size() < core::kMaxListedResourceNotes) {
        out.push_back(state);
      }
    }
    return out;
  }

  // Every Get answers `status` until ClearFailGets().
  void FailGets(absl::Status status) {
    absl::MutexLock lock(&mu_);
    get_error_ = std::move(status);
  }
  void ClearFailGets() {
    absl::MutexLock lock(&mu_);
    get_error_.reset();
  }
  // The next call of any method answers `status`.
  void FailNext(absl::Status status) {
    absl::MutexLock lock(&mu_);
    injected_ = std::move(status);
  }

 private:
  absl::Status TakeInjectedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!injected_.has_value()) {
      return absl::OkStatus();
    }
    absl::Status s = std::move(*injected_);
    injected_.reset();
    return s;
  }

  absl::Mutex mu_;
  std::map<std::string, core::OperatorState> states_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> get_error_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> injected_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
