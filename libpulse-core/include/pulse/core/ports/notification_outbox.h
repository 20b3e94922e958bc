// NotificationOutbox: the durable queue of notifications (docs/notifications.md). A row is one
// event for one channel, written in the same transaction as the write that caused it (the
// SQLite stores do that themselves; Enqueue is for events with no store write of their own)
// and unique per (channel, event key), so an event is queued once however often its write is
// retried. A sender takes due rows, delivers them and marks each delivered, failed (retried at
// a later time) or dead; a row stays pending until then, so a sender killed mid-delivery
// delivers it again after a restart (at least once; the idempotency key lets a receiver drop
// the repeat).
// Thread-safety: implementations must be safe to call from any thread; each method is atomic.
// Codes: NotFound (unknown row id), FailedPrecondition (the row is not pending), InvalidArgument
// (a malformed argument), Unavailable or Internal (the backing store failed; nothing written).
// Real implementation: adapters/storage (SqliteNotificationOutbox).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/notification.h"

namespace pulse::core {

// Rows by state, for /metrics and the settings view.
struct OutboxCounts {
  std::int64_t pending = 0;
  std::int64_t delivered = 0;
  std::int64_t dead = 0;

  friend bool operator==(const OutboxCounts&, const OutboxCounts&) = default;
};

class NotificationOutbox {
 public:
  virtual ~NotificationOutbox() = default;

  // Queues `event` for every configured channel that wants it (ChannelWants), due at once.
  // Returns how many rows were added (a channel that already has the event key adds none).
  [[nodiscard]] virtual absl::StatusOr<int> Enqueue(const NotificationEvent& event,
                                                    absl::Time now) = 0;

  // Pending rows due at `now` (next attempt at or before it), earliest due first, at most
  // `limit`.
  [[nodiscard]] virtual absl::StatusOr<std::vector<OutboxEntry>> Due(absl::Time now,
                                                                     std::size_t limit) const = 0;

  // When the earliest pending row falls due; nullopt when none is pending.
  [[nodiscard]] virtual absl::StatusOr<std::optional<absl::Time>> NextDue() const = 0;

  // The row was delivered at `at`: it leaves the queue for good.
  [[nodiscard]] virtual absl::Status MarkDelivered(std::int64_t id, absl::Time at) = 0;

  // An attempt failed with `error`: the attempt is counted and the row is tried again at
  // `retry_at`, or, with nullopt, becomes dead (never tried again).
  [[nodiscard]] virtual absl::Status MarkFailed(std::int64_t id, const std::string& error,
                                                std::optional<absl::Time> retry_at) = 0;

  // Moves the row's next attempt to `until` without counting an attempt (quiet hours, rate
  // limit).
  [[nodiscard]] virtual absl::Status Defer(std::int64_t id, absl::Time until) = 0;

  // Rows in `state` (every state when nullopt), newest first, at most `limit`.
  [[nodiscard]] virtual absl::StatusOr<std::vector<OutboxEntry>> List(
      std::optional<OutboxState> state, std::size_t limit) const = 0;

  [[nodiscard]] virtual absl::StatusOr<OutboxCounts> Counts() const = 0;

  // Deletes delivered rows delivered before `delivered_before` and dead rows queued before
  // `dead_before`; pending rows are never deleted. Returns how many went. (A deleted row's
  // event key could be queued again; keys name one occurrence, so none recurs in practice.)
  [[nodiscard]] virtual absl::StatusOr<std::int64_t> Prune(absl::Time delivered_before,
                                                           absl::Time dead_before) = 0;
};

}  // namespace pulse::core
