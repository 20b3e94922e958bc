// HostAgentStore: the durable registry of host agents (docs/agent.md): which agent token is
// bound to which host, and what the host last reported. A token identifies exactly one host and
// a host is served by exactly one token at a time, so a stolen token can never describe or
// receive commands for a second host. The registry survives restarts: after one, the server
// lists every known host from its last report (status unknown until the agent reports again)
// and never deletes a host by itself.
// Thread-safety: implementations must be safe to call concurrently; every method is atomic.
// Codes: NotFound (no such host or token), FailedPrecondition (Bind: the host is bound to
// another token, or the token to another host, and `replacing_token_id` does not name the
// current holder; SaveReport: the host is not bound to this token), InvalidArgument (a host
// name or token id of the wrong shape, a report over kMaxHostAgentReportBytes; nothing is
// stored), Unavailable (the store cannot be read or written: the server refuses the request).
// Real implementation: adapters/storage (SqliteHostAgentStore); every implementation passes
// tests/contracts/host_agent_store_contract.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::core {

inline constexpr std::size_t kMaxHostAgentReportBytes = std::size_t{4} << 20;

struct HostAgentRecord {
  std::string host;           // the agent protocol's host name (1..64 bytes of [A-Za-z0-9._-])
  std::string token_id;       // "tok_..." — the token bound to this host
  absl::Time bound_at;        // when this token was bound (creation with --host, or first report)
  std::string agent_version;  // from the last report, "" before one
  std::optional<absl::Time> last_report_at;  // when the last report was accepted
  std::uint64_t report_seq = 0;              // accepted reports since the binding, 1.. after one
  std::string last_report;                   // the last accepted report's wire JSON, "" before one

  friend bool operator==(const HostAgentRecord&, const HostAgentRecord&) = default;
};

class HostAgentStore {
 public:
  virtual ~HostAgentStore() = default;

  // Binds `token_id` to `host` at `at`. OK (and unchanged) when they are already bound to each
  // other. Creates the record when neither is bound. When the host is bound to another token,
  // the binding moves only if `replacing_token_id` names that token (the caller checked it was
  // revoked or expired); the host's last report is kept. FailedPrecondition otherwise, and
  // whenever the token is bound to another host. Returns the record as stored.
  [[nodiscard]] virtual absl::StatusOr<HostAgentRecord> Bind(
      std::string_view host, std::string_view token_id, absl::Time at,
      std::optional<std::string_view> replacing_token_id = std::nullopt) = 0;

  // The record of one host, or of the host a token is bound to. NotFound when there is none.
  [[nodiscard]] virtual absl::StatusOr<HostAgentRecord> Get(std::string_view host) = 0;
  [[nodiscard]] virtual absl::StatusOr<HostAgentRecord> FindByToken(std::string_view token_id) = 0;

  // Stores an accepted report (already decoded and checked by the caller) as the host's last:
  // sets agent_version, last_report_at, last_report and increments report_seq, which it
  // returns. FailedPrecondition when the host is not bound to `token_id`.
  [[nodiscard]] virtual absl::StatusOr<std::uint64_t> SaveReport(std::string_view host,
                                                                 std::string_view token_id,
                                                                 std::string_view agent_version,
                                                                 std::string_view report_json,
                                                                 absl::Time at) = 0;

  // Every record, ordered by host.
  [[nodiscard]] virtual absl::StatusOr<std::vector<HostAgentRecord>> List() = 0;

  // Every record without its last report (last_report empty), ordered by host: what a caller
  // that only wants the bindings reads. This default drops the reports List() read; a store
  // that can skip reading them should.
  [[nodiscard]] virtual absl::StatusOr<std::vector<HostAgentRecord>> ListBindings() {
    absl::StatusOr<std::vector<HostAgentRecord>> records = List();
    if (records.ok()) {
      for (HostAgentRecord& r : *records) {
        r.last_report.clear();
      }
    }
    return records;
  }
};

}  // namespace pulse::core
