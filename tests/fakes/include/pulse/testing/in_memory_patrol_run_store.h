// InMemoryPatrolRunStore: the PatrolRunStore fake. Keeps records in a map, prunes to the
// newest kPatrolRunHistoryLimit on every Put exactly as a real adapter must. Thread-safe.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/patrol_run_store.h"

namespace pulse::testing {

class InMemoryPatrolRunStore final : public core::PatrolRunStore {
 public:
  absl::Status Put(const core::PatrolRunRecord& record) override {
    if (record.id.empty()) {
      return absl::InvalidArgumentError("a patrol run needs an id");
    }
    absl::MutexLock lock(&mu_);
    records_[record.id] = record;
    std::vector<const core::PatrolRunRecord*> all = SortedLocked();
    for (std::size_t i = core::kPatrolRunHistoryLimit; i < all.size(); ++i) {
      const std::string id = all[i]->id;
      records_.erase(id);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<core::PatrolRunRecord> Get(std::string_view id) const override {
    absl::MutexLock lock(&mu_);
    auto it = records_.find(std::string(id));
    if (it == records_.end()) {
      return absl::NotFoundError("no patrol run has this id");
    }
    return it->second;
  }

  absl::StatusOr<std::vector<core::PatrolRunRecord>> List(std::size_t limit) const override {
    if (limit == 0 || limit > core::kPatrolRunHistoryLimit) {
      return absl::InvalidArgumentError("limit must be 1..100");
    }
    absl::MutexLock lock(&mu_);
    std::vector<core::PatrolRunRecord> out;
    for (const core::PatrolRunRecord* r : SortedLocked()) {
      if (out.size() == limit) {
        break;
      }
      out.push_back(*r);
    }
    return out;
  }

  absl::StatusOr<core::AutonomySettings> LoadAutonomy() const override {
    absl::MutexLock lock(&mu_);
    if (!autonomy_.has_value()) {
      return absl::NotFoundError("no autonomy settings saved");
    }
    return *autonomy_;
  }

  absl::Status SaveAutonomy(const core::AutonomySettings& settings) override {
    absl::MutexLock lock(&mu_);
    autonomy_ = settings;
    return absl::OkStatus();
  }

  absl::StatusOr<core::PatrolThresholdSettings> LoadThresholds() const override {
    absl::MutexLock lock(&mu_);
    if (!thresholds_.has_value()) {
      return absl::NotFoundError("no thresholds saved");
    }
    return *thresholds_;
  }

  absl::Status SaveThresholds(const core::PatrolThresholdSettings& settings) override {
    absl::MutexLock lock(&mu_);
    thresholds_ = settings;
    return absl::OkStatus();
  }

 private:
  // Newest first: started_at descending, then id descending.
  std::vector<const core::PatrolRunRecord*> SortedLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<const core::PatrolRunRecord*> all;
    for (const auto& [id, r] : records_) {
      all.push_back(&r);
    }
    std::sort(all.begin(), all.end(), [](const auto* a, const auto* b) {
      if (a->started_at != b->started_at) {
        return a->started_at > b->started_at;
      }
      return a->id > b->id;
    });
    return all;
  }

  mutable absl::Mutex mu_;
  std::map<std::string, core::PatrolRunRecord> records_ ABSL_GUARDED_BY(mu_);
  std::optional<core::AutonomySettings> autonomy_ ABSL_GUARDED_BY(mu_);
  std::optional<core::PatrolThresholdSettings> thresholds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
