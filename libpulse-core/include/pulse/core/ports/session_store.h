// SessionStore: durable Assistant sessions — transcripts, the safety FSM snapshot, extracted
// facts and suspended tool calls (loop/session_record.h). A run claims a session by moving it
// to `running` with a compare-and-swap on the revision, so two runs (or two resumes) of one
// session can never both proceed; the loser gets Aborted.
// Thread-safety: implementations must be safe to call concurrently; every method is atomic.
// A session's kind and owner (session_record.h) are fixed at Create: Update keeps the stored
// ones, so no write can move a session to another token.
// Codes: InvalidArgument (a record failing ValidateSessionRecord, an invalid id, a limit
// outside 1..1000; nothing written), NotFound (unknown id), AlreadyExists (Create of an
// existing id), Aborted (Update with a stale revision; nothing written), Unavailable (the
// store cannot be reached; nothing written).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/session_record.h"

namespace pulse::core {

inline constexpr std::size_t kMaxSessionListLimit = 1000;

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // Stores a new session and returns it as stored (revision 1; record.revision is ignored).
  [[nodiscard]] virtual absl::StatusOr<SessionRecord> Create(const SessionRecord& record) = 0;

  // The stored session.
  [[nodiscard]] virtual absl::StatusOr<SessionRecord> Get(std::string_view id) = 0;

  // Replaces the session when record.revision equals the stored revision, and returns it as
  // stored (revision + 1). created_at, kind and owner are kept from the stored record.
  // Aborted otherwise.
  [[nodiscard]] virtual absl::StatusOr<SessionRecord> Update(const SessionRecord& record) = 0;

  // Summaries matching the query's filters, most recently updated first (ties by id), at most
  // query.limit.
  [[nodiscard]] virtual absl::StatusOr<std::vector<SessionSummary>> List(
      const SessionListQuery& query) = 0;

  // Removes the session.
  [[nodiscard]] virtual absl::Status Delete(std::string_view id) = 0;
};

}  // namespace pulse::core
