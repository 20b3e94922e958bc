// SqliteNotificationChannels: the notification channels an operator configured (PUT
// /api/settings/notifications; docs/notifications.md), in the shared SQLite database
// (migration 13), with their secrets sealed by the credential store: a channel's secret (the
// webhook's HMAC key, ntfy's access token, Gotify's application token) as notify.<name>, and the
// webhook URL of a Slack or Discord channel (which is itself the credential) as
// notify.<name>.url. Plaintext secrets are never listed.
// Thread-safety: safe from any thread. Borrows the database and the credential store.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_credential_store.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/model/notification.h"

namespace pulse::adapters::storage {

// Whether a channel kind's URL is a credential (sealed, never answered): Slack and Discord.
bool ChannelUrlIsSecret(core::NotificationChannelKind kind);

// A channel as listed: its URL in plaintext only when the URL is no credential.
struct StoredNotificationChannel {
  core::NotificationChannel channel;
  std::string url;  // "" when sealed
  bool url_set = false;
  bool secret_set = false;
  absl::Time updated_at;
  std::string updated_by;
};

// Where and how to deliver to one channel: what the sender needs, secrets opened.
struct NotificationTarget {
  core::NotificationChannel channel;
  std::string url;
  std::string secret;  // "" when none is set
};

// One channel of a Replace. `url` and `secret`: nullopt keeps the stored one (the channel must
// exist with the same kind); for `secret`, an inner nullopt removes it.
struct NotificationChannelWrite {
  core::NotificationChannel channel;
  std::optional<std::string> url;
  std::optional<std::optional<std::string>> secret;
};

class SqliteNotificationChannels final {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteNotificationChannels>> Open(
      SqliteDatabase& database, SqliteCredentialStore& credentials);

  SqliteNotificationChannels(SqliteDatabase& database, SqliteCredentialStore& credentials)
      : database_(database), credentials_(credentials) {}

  // Every channel, by name.
  [[nodiscard]] absl::StatusOr<std::vector<StoredNotificationChannel>> List() const;

  // The channel `name` with its URL and secret opened. NotFound when there is none.
  [[nodiscard]] absl::StatusOr<NotificationTarget> Target(std::string_view name) const;

  // Makes `channels` the whole configuration (channels not named are removed with their
  // secrets). InvalidArgument (nothing changed) for a duplicate or malformed name, more than
  // kMaxNotificationChannels, or a kept URL or secret of a channel that is new or changed kind.
  [[nodiscard]] absl::Status Replace(const std::vector<NotificationChannelWrite>& channels,
                                     absl::Time now, const std::string& updated_by);

 private:
  SqliteDatabase& database_;
  SqliteCredentialStore& credentials_;
};

}  // namespace pulse::adapters::storage
