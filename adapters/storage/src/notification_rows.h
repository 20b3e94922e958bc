// Private to adapters/storage: the rows of migrations 13 and 14 — notification channels and the
// outbox — as the stores that queue notifications inside their own write transactions
// (finding, action and Patrol run stores) and the outbox and channel adapters read and write
// them. Every function runs on a connection already inside a transaction; SQLiteCpp
// exceptions propagate to the caller's transaction runner.
#pragma once

#include <SQLiteCpp/Database.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/core/model/notification.h"

namespace pulse::adapters::storage {

// Every configured channel (enabled or not), by name. DataLoss for a row that does not decode.
absl::StatusOr<std::vector<core::NotificationChannel>> LoadChannels(SQLite::Database& db);

// Queues `event` for each enabled channel that wants it (core::ChannelWants), due at `now`;
// a (channel, event key) already queued adds nothing. Returns the rows added. Cheap when no
// channel is configured: one indexed read.
absl::StatusOr<int> QueueNotification(SQLite::Database& db, const core::NotificationEvent& event,
                                      absl::Time now);

// As QueueNotification for an optional event (nothing to do for nullopt), at the event's own
// time: what the stores call after their write.
absl::Status QueueIfAny(SQLite::Database& db, const std::optional<core::NotificationEvent>& event);

// The quiet hours column: "" for none, else {"start":M,"end":M,"time_zone":"..."}.
std::string EncodeQuietHours(const std::optional<core::QuietHours>& quiet);
absl::StatusOr<std::optional<core::QuietHours>> DecodeQuietHours(const std::string& json);

// The email column (migration 14): "" for a channel of another kind, else
// {"from":"...","to":["..."],"username":"..."}. Decoding checks the addressing again
// (core::ValidateEmailAddressing): DataLoss for a row that does not hold.
std::string EncodeEmail(const std::optional<core::EmailAddressing>& email);
absl::StatusOr<std::optional<core::EmailAddressing>> DecodeEmail(const std::string& json);

}  // namespace pulse::adapters::storage
