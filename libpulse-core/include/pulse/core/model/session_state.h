// The values of the per-session safety state machine that outlive it: its state vocabulary and
// the snapshot a session record persists (the machine itself is fsm/session_fsm.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace pulse::core {

// Wire strings: RESOLVING, READING, WRITING, VERIFYING. WRITING is vocabulary only: no
// transition enters it and Restore refuses it, so a live SessionFsm is never in it. Should one
// ever be in WRITING (or an out-of-range value), writes and the final answer are refused with
// recoverable=false until Reset; the reference permits everything there, we fail closed.
enum class SessionState { kResolving, kReading, kWriting, kVerifying };

// Wire string of a state; "UNKNOWN" for a value outside the enum.
std::string_view ToString(SessionState state);
// Exact-match parse of a wire string (case and whitespace matter); anything else is nullopt.
std::optional<SessionState> ParseSessionState(std::string_view text);

// A blocked operation awaiting a successful retry of the same tool. Telemetry only: whether
// one exists never changes what the FSM allows.
struct PendingRecovery {
  std::string recovery_id;
  std::string error_code;
  std::string tool;
  absl::Time created_at;
  int attempts = 1;

  friend bool operator==(const PendingRecovery&, const PendingRecovery&) = default;
};

// Everything SessionFsm persists, as plain values. Pending recoveries are not part of it: they
// are process-local telemetry with a 10-minute life. Times are Unix nanoseconds; nullopt means
// "never".
struct SessionSnapshot {
  std::string state = "RESOLVING";
  bool wrote_this_episode = false;
  bool read_after_write = false;
  std::int64_t consecutive_verify_blocks = 0;
  std::string last_write_tool;
  std::optional<std::int64_t> last_write_at_unix_nanos;
  std::string last_read_tool;
  std::optional<std::int64_t> last_read_at_unix_nanos;

  friend bool operator==(const SessionSnapshot&, const SessionSnapshot&) = default;
};

}  // namespace pulse::core
