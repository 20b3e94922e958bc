// OperatorStateStore: durable per-resource operator declarations (remediation lock,
// maintenance window, monitoring mode, local-only data handling), keyed by canonical resource
// id.
// Thread-safety: implementations must be safe to call concurrently; each call is atomic.
// Codes: NotFound (Get: no state set — the API answers operator_state_not_set),
// InvalidArgument (Set: the state fails ValidateOperatorState — operator_state_invalid; nothing
// is stored), Unavailable (the store cannot be read or written; callers that gate a dispatch
// on the lock must treat this as "lock state unknown").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/operator_state.h"

namespace pulse::core {

// The most notes WithNotes answers (the rest are not listed, and Patrol does not see them).
inline constexpr std::size_t kMaxListedResourceNotes = 500;

class OperatorStateStore {
 public:
  virtual ~OperatorStateStore() = default;

  // The state of one resource, exactly as last Set. NotFound when none is set.
  [[nodiscard]] virtual absl::StatusOr<OperatorState> Get(std::string_view resource_id) = 0;

  // The states of those of `resource_ids` that have one, exactly as last Set, sorted by
  // resource id ascending (duplicates in `resource_ids` answer once; a resource without state
  // is left out, it is not an error). One consistent read: the fleet context asks for every
  // listed resource at once instead of calling Get per resource.
  [[nodiscard]] virtual absl::StatusOr<std::vector<OperatorState>> GetMany(
      const std::vector<std::string>& resource_ids) = 0;

  // Replaces the resource's whole state (the declaration is one document, not a record with
  // history). Implementations must call ValidateOperatorState first.
  [[nodiscard]] virtual absl::Status Set(const OperatorState& state) = 0;

  // Removes the resource's state. OK when none was set (idempotent).
  [[nodiscard]] virtual absl::Status Clear(std::string_view resource_id) = 0;

  // The ids of every resource whose state has local_only set, sorted ascending (the outbound
  // context policy withholds them from non-local models). A caller that gets Unavailable does
  // not know what to withhold and must fail closed.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> LocalOnlyResourceIds() = 0;

  // The states whose note is not empty (the operator's notes on resources, docs/patrol.md
  // "Operator notes"), sorted by resource id ascending, at most kMaxListedResourceNotes.
  [[nodiscard]] virtual absl::StatusOr<std::vector<OperatorState>> WithNotes() = 0;

  // For caches of views over operator state (AgentViews' fleet context): a number that changes
  // after every Set or Clear made through this store object has returned (successful or not),
  // so two equal readings bracket no write made through it. nullopt (the default) when the
  // store does not track writes; a caller must not cache then. Writes made by another store
  // object or another process are not seen: only use it where this object is the one writer.
  [[nodiscard]] virtual std::optional<std::uint64_t> WriteGeneration() const {
    return std::nullopt;
  }
};

}  // namespace pulse::core
