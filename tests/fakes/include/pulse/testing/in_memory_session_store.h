// InMemorySessionStore: the SessionStore fake. One mutex makes every method atomic; writes are
// validated with ValidateSessionRecord exactly as a real adapter must, so it is a faithful
// reference for the contract suite (tests/contracts/session_store_contract.h).
// Test hook: FailNext injects one error into the next call of any method. Thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/ports/session_store.h"

namespace pulse::testing {

class InMemorySessionStore final : public core::SessionStore {
 public:
  absl::StatusOr<core::SessionRecord> Create(const core::SessionRecord& record) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (absl::Status s = core::ValidateSessionRecord(record); !s.ok()) {
      return s;
    }
    absl::MutexLock lock(&mu_);
    if (sessions_.count(record.id) != 0) {
      return absl::AlreadyExistsError("session exists");
    }
    core::SessionRecord stored = record;
    stored.revision = 1;
    sessions_.emplace(stored.id, stored);
    return stored;
  }

  absl::StatusOr<core::SessionRecord> Get(std::string_view id) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (absl::Status s = core::ValidateSessionId(id); !s.ok()) {
      return s;
    }
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(std::string(id));
    if (it == sessions_.end()) {
      return absl::NotFoundError("no such session");
    }
    return it->second;
  }

  absl::StatusOr<core::SessionRecord> Update(const core::SessionRecord& record) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (absl::Status s = core::ValidateSessionRecord(record); !s.ok()) {
      return s;
    }
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(record.id);
    if (it == sessions_.end()) {
      return absl::NotFoundError("no such session");
    }
    if (it->second.revision != record.revision) {
      return absl::AbortedError("stale session revision");
    }
    core::SessionRecord stored = record;
    stored.revision = record.revision + 1;
    stored.created_at = it->second.created_at;
    stored.kind = it->second.kind;
    stored.owner = it->second.owner;
    it->second = stored;
    ++updates_;
    return stored;
  }

  absl::StatusOr<std::vector<core::SessionSummary>> List(
      const core::SessionListQuery& query) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    const std::size_t limit = query.limit;
    if (limit == 0 || limit > core::kMaxSessionListLimit) {
      return absl::InvalidArgumentError("limit must be 1..1000");
    }
    absl::MutexLock lock(&mu_);
    std::vector<core::SessionSummary> out;
    for (const auto& [id, r] : sessions_) {
      if ((query.kind.has_value() && r.kind != *query.kind) ||
          (query.owner_token_id.has_value() && r.owner.token_id != *query.owner_token_id)) {
        continue;
      }
      if (query.after.has_value() &&
          (r.updated_at > query.after->updated_at ||
           (r.updated_at == query.after->updated_at && id <= query.after->id))) {
        continue;
      }
      out.push_back(core::SessionSummary{id, r.status, r.transcript.size(), r.updated_at, r.kind,
                                         r.owner.token_id});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.updated_at != b.updated_at ? a.updated_at > b.updated_at : a.id < b.id;
    });
    if (out.size() > limit) {
      out.resize(limit);
    }
    return out;
  }

  absl::Status Delete(std::string_view id) override {
    if (absl::Status injected = TakeInjected(); !injected.ok()) {
      return injected;
    }
    if (absl::Status s = core::ValidateSessionId(id); !s.ok()) {
      return s;
    }
    absl::MutexLock lock(&mu_);
    if (sessions_.erase(std::string(id)) == 0) {
      return absl::NotFoundError("no such session");
    }
    return absl::OkStatus();
  }

  // The next call of any method fails with `status` (and changes nothing).
  void FailNext(absl::Status status) {
    absl::MutexLock lock(&mu_);
    injected_ = std::move(status);
  }
  // Successful Update calls so far.
  int updates() const {
    absl::MutexLock lock(&mu_);
    return updates_;
  }

 private:
  absl::Status TakeInjected() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    absl::Status s = std::move(injected_);
    injected_ = absl::OkStatus();
    return s;
  }

  mutable absl::Mutex mu_;
  std::map<std::string, core::SessionRecord> sessions_ ABSL_GUARDED_BY(mu_);
  absl::Status injected_ ABSL_GUARDED_BY(mu_);
  int updates_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::testing
