// SessionLevels: the control level each session's last chat ran at, so a resume or an answer
// continues the session with no more authority than its chat asked for (a chat may lower the
// server's configured level; its continuation must not quietly raise it back). Kept in memory:
// after a restart a continuation falls back to the configured level, which a request may still
// lower. Bounded (kMaxSessionLevels; the oldest entries go first). Thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "pulse/core/policy/control_level.h"

namespace pulse::server {

inline constexpr std::size_t kMaxSessionLevels = 10000;

class SessionLevels {
 public:
  void Remember(const std::string& session_id, core::ControlLevel level) {
    if (session_id.empty()) {
      return;
    }
    absl::MutexLock lock(&mu_);
    if (levels_.insert_or_assign(session_id, level).second) {
      order_.push_back(session_id);
      while (order_.size() > kMaxSessionLevels) {
        levels_.erase(order_.front());
        order_.pop_front();
      }
    }
  }

  std::optional<core::ControlLevel> Get(std::string_view session_id) const {
    absl::MutexLock lock(&mu_);
    auto it = levels_.find(std::string(session_id));
    return it == levels_.end() ? std::nullopt : std::optional<core::ControlLevel>(it->second);
  }

  void Forget(std::string_view session_id) {
    absl::MutexLock lock(&mu_);
    levels_.erase(std::string(session_id));  // its order_ entry expires with the others
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, core::ControlLevel> levels_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::server
