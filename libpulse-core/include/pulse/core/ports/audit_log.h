// AuditLog: an append-only trail of governance decisions for operators and auditors — plans,
// decisions, refused attempts (also those that changed no record), dispatches, results and
// recoveries. It complements the action store's lifecycle events, which stay the authoritative
// per-action history: an entry never carries params, secrets or command output.
// Thread-safety: Append must be safe to call concurrently; entries keep their append order.
// Codes: Unavailable (the entry was not recorded; callers decide whether that blocks them),
// InvalidArgument (an entry without category, event or time).
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pulse::core {

struct AuditEntry {
  absl::Time at;
  std::string category;    // "action", ...
  std::string event;       // planned, decided, refused, expired, dispatch_started, completed,
                           // failed, reconciled
  std::string subject_id;  // the action id ("" when the subject does not exist)
  std::string resource_id;
  std::string actor_kind;  // human, agent, policy ("" for the engine itself)
  std::string actor_id;
  std::string code;  // agent error code of a refusal, else ""
  std::string message;
  std::map<std::string, std::string> details;  // small, secret-free facts

  friend bool operator==(const AuditEntry&, const AuditEntry&) = default;
};

class AuditLog {
 public:
  virtual ~AuditLog() = default;

  // Appends one entry durably.
  [[nodiscard]] virtual absl::Status Append(const AuditEntry& entry) = 0;
};

}  // namespace pulse::core
