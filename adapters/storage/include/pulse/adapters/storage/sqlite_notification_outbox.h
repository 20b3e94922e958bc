// SqliteNotificationOutbox: the durable notification queue (core/ports/notification_outbox.h)
// in the shared SQLite database (migration 13). The finding, action and Patrol run stores queue
// their rows themselves, inside their own write transactions (notification_rows.h); this adapter
// queues events that have no store write of their own and serves the sender.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/notification_outbox.h"

namespace pulse::adapters::storage {

class SqliteNotificationOutbox final : public core::NotificationOutbox {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteNotificationOutbox>> Open(
      SqliteDatabase& database);

  explicit SqliteNotificationOutbox(SqliteDatabase& database) : database_(database) {}

  absl::StatusOr<int> Enqueue(const core::NotificationEvent& event, absl::Time now) override;
  absl::StatusOr<std::vector<core::OutboxEntry>> Due(absl::Time now,
                                                     std::size_t limit) const override;
  absl::StatusOr<std::optional<absl::Time>> NextDue() const override;
  absl::Status MarkDelivered(std::int64_t id, absl::Time at) override;
  absl::Status MarkFailed(std::int64_t id, const std::string& error,
                          std::optional<absl::Time> retry_at) override;
  absl::Status Defer(std::int64_t id, absl::Time until) override;
  absl::StatusOr<std::vector<core::OutboxEntry>> List(std::optional<core::OutboxState> state,
                                                      std::size_t limit) const override;
  absl::StatusOr<core::OutboxCounts> Counts() const override;
  absl::StatusOr<std::int64_t> Prune(absl::Time delivered_before, absl::Time dead_before) override;

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
