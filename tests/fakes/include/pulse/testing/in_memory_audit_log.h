// InMemoryAuditLog: the AuditLog fake. Keeps entries in append order; FailAppends makes every
// Append fail until cleared. Thread-safe.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/audit_log.h"

namespace pulse::testing {

class InMemoryAuditLog final : public core::AuditLog {
 public:
  absl::Status Append(const core::AuditEntry& entry) override {
    absl::MutexLock lock(&mu_);
    if (fail_.has_value()) {
      return *fail_;
    }
    if (entry.category.empty() || entry.event.empty()) {
      return absl::InvalidArgumentError("an audit entry needs a category and an event");
    }
    entries_.push_back(entry);
    return absl::OkStatus();
  }

  std::vector<core::AuditEntry> entries() const {
    absl::MutexLock lock(&mu_);
    return entries_;
  }

  // Entries about one subject with the given event name.
  std::vector<core::AuditEntry> Find(std::string_view subject_id, std::string_view event) const {
    absl::MutexLock lock(&mu_);
    std::vector<core::AuditEntry> out;
    for (const core::AuditEntry& e : entries_) {
      if (e.subject_id == subject_id && e.event == event) {
        out.push_back(e);
      }
    }
    return out;
  }

  void FailAppends(absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_ = std::move(status);
  }
  void ClearFailAppends() {
    absl::MutexLock lock(&mu_);
    fail_.reset();
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<core::AuditEntry> entries_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> fail_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing
