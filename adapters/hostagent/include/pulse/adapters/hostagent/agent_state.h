// AgentStateFile: pulse-agent's record of the dispatches it began and finished (state.json in
// its state directory, docs/agent.md "Exactly once"). It makes each (action id, attempt id) run
// at most once across reconnects, crashes and restarts: the key is written as `started`
// durably (temp file, fsync, rename, fsync of the directory) before the capability runs, and
// as `done` with the outcome after. A key found `done` is answered from the record; one found
// `started` means the agent died mid-command and is never run again. The newest
// kMaxStateAttempts keys are kept. A file that cannot be read back exactly is refused at Open,
// never reset: forgetting it could run an action twice. Holds an exclusive lock on the
// directory (state.lock) so two agents cannot share it.
// Thread-safe: one mutex serializes every read and write.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/model/action_types.h"

namespace pulse::adapters::hostagent {

inline constexpr std::size_t kMaxStateAttempts = 1000;
inline constexpr std::size_t kMaxStateFileBytes = std::size_t{8} << 20;
inline constexpr std::size_t kMaxStateIdBytes = 256;
inline constexpr std::size_t kMaxStateSummaryBytes = 4096;
// The stable code a refused state file's message starts with ("state_corrupt: ...").
inline constexpr std::string_view kStateCorrupt = "state_corrupt";

enum class AttemptState { kStarted, kDone };

struct AttemptRecord {
  std::string action_id;
  std::string attempt_id;
  AttemptState state = AttemptState::kStarted;
  // The outcome, once done.
  core::ExecutionStatus status = core::ExecutionStatus::kInconclusive;
  std::string reason_code;
  std::string summary;

  friend bool operator==(const AttemptRecord&, const AttemptRecord&) = default;
};

// The file's text for `records` (oldest first), and its strict reader: InvalidArgument naming
// the problem for anything else (unknown members, wrong types, over-long ids, a repeated key,
// more than kMaxStateAttempts records, a started record carrying an outcome).
std::string EncodeStateFile(const std::deque<AttemptRecord>& records);
[[nodiscard]] absl::StatusOr<std::deque<AttemptRecord>> DecodeStateFile(std::string_view json);

class AgentStateFile {
 public:
  // Opens (creating, mode 0700) `dir` and reads dir/state.json when it exists.
  // FailedPrecondition "state_corrupt: <path>: ..." for a file DecodeStateFile refuses or one
  // over kMaxStateFileBytes; FailedPrecondition when another process holds the lock;
  // PermissionDenied/Unavailable when the directory or file cannot be used.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AgentStateFile>> Open(std::string dir);

  ~AgentStateFile();
  AgentStateFile(const AgentStateFile&) = delete;
  AgentStateFile& operator=(const AgentStateFile&) = delete;

  // Claims the key: nullopt when it was unknown and is now recorded `started` on disk (the
  // caller runs the capability, then calls Finish); the existing record when the key was seen
  // before (the caller must not run it). InvalidArgument for an empty or over-long id;
  // Unavailable when the record cannot be made durable (nothing is run then either).
  [[nodiscard]] absl::StatusOr<std::optional<AttemptRecord>> Begin(std::string_view action_id,
                                                                   std::string_view attempt_id);

  // Records the outcome of a key Begin claimed, durably. NotFound when the key is not
  // `started` (it was never claimed, or aged out).
  [[nodiscard]] absl::Status Finish(std::string_view action_id, std::string_view attempt_id,
                                    core::ExecutionStatus status, std::string_view reason_code,
                                    std::string_view summary);

  // The record of a key, if any.
  std::optional<AttemptRecord> Find(std::string_view action_id, std::string_view attempt_id) const;
  std::size_t size() const;
  const std::string& path() const { return path_; }

 private:
  AgentStateFile(std::string dir, int lock_fd, std::deque<AttemptRecord> records);
  // Writes every record durably (temp, fsync, rename, fsync dir). Unavailable on failure.
  absl::Status Persist() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const std::string path_;
  const int lock_fd_;
  mutable absl::Mutex mu_;
  std::deque<AttemptRecord> records_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace pulse::adapters::hostagent
