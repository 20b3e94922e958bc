#include "pulse/adapters/storage/sqlite_notification_channels.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "notification_rows.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

std::string SecretName(std::string_view channel) {
  return absl::StrCat("notify.", ToAbsl(channel));
}
std::string UrlName(std::string_view channel) {
  return absl::StrCat("notify.", ToAbsl(channel), ".url");
}

std::string EncodeEvents(const std::vector<core::NotificationEventKind>& events) {
  core::JsonWriter w;
  w.StartArray();
  for (const core::NotificationEventKind kind : events) {
    w.String(core::ToString(kind));
  }
  w.EndArray();
  return w.Take();
}

struct Row {
  core::NotificationChannel channel;
  std::string url;
  absl::Time updated_at;
  std::string updated_by;
};

absl::StatusOr<std::vector<Row>> LoadRows(const SqliteDatabase& database) {
  std::vector<Row> rows;
  absl::Status status = ReadTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    absl::StatusOr<std::vector<core::NotificationChannel>> channels = LoadChannels(db);
    if (!channels.ok()) {
      return channels.status();
    }
    Prepared prepared_q(db,
                        "SELECT url, updated_at_ns, updated_by FROM notification_channels "
                        "ORDER BY name");
    SQLite::Statement& q = *prepared_q;
    rows.clear();
    for (core::NotificationChannel& c : *channels) {
      if (!q.executeStep()) {
        return absl::InternalError("notification channels changed while read");
      }
      rows.push_back(Row{std::move(c), q.getColumn(0).getString(),
                         DecodeTime(q.getColumn(1).getInt64()), q.getColumn(2).getString()});
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return rows;
}

// Removes a credential that may not exist.
absl::Status Forget(SqliteCredentialStore& credentials, const std::string& name) {
  absl::Status s = credentials.Delete(name);
  return absl::IsNotFound(s) ? absl::OkStatus() : s;
}

}  // namespace

bool ChannelUrlIsSecret(core::NotificationChannelKind kind) {
  return kind == core::NotificationChannelKind::kSlack ||
         kind == core::NotificationChannelKind::kDiscord;
}

absl::StatusOr<std::unique_ptr<SqliteNotificationChannels>> SqliteNotificationChannels::Open(
    SqliteDatabase& database, SqliteCredentialStore& credentials) {
  return std::make_unique<SqliteNotificationChannels>(database, credentials);
}

absl::StatusOr<std::vector<StoredNotificationChannel>> SqliteNotificationChannels::List() const {
  absl::StatusOr<std::vector<Row>> rows = LoadRows(database_);
  if (!rows.ok()) {
    return rows.status();
  }
  absl::StatusOr<std::vector<CredentialInfo>> sealed = credentials_.List();
  if (!sealed.ok()) {
    return sealed.status();
  }
  std::set<std::string> names;
  for (const CredentialInfo& info : *sealed) {
    names.insert(info.provider);
  }
  std::vector<StoredNotificationChannel> out;
  for (Row& row : *rows) {
    StoredNotificationChannel c;
    c.url_set = ChannelUrlIsSecret(row.channel.kind) ? names.count(UrlName(row.channel.name)) != 0
                                                     : !row.url.empty();
    c.secret_set = names.count(SecretName(row.channel.name)) != 0;
    c.url = ChannelUrlIsSecret(row.channel.kind) ? "" : row.url;
    c.channel = std::move(row.channel);
    c.updated_at = row.updated_at;
    c.updated_by = std::move(row.updated_by);
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<NotificationTarget> SqliteNotificationChannels::Target(std::string_view name) const {
  absl::StatusOr<std::vector<Row>> rows = LoadRows(database_);
  if (!rows.ok()) {
    return rows.status();
  }
  for (Row& row : *rows) {
    if (row.channel.name != name) {
      continue;
    }
    NotificationTarget target;
    target.url = row.url;
    if (ChannelUrlIsSecret(row.channel.kind)) {
      absl::StatusOr<std::string> url = credentials_.Get(UrlName(name));
      if (!url.ok()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the URL of channel ", ToAbsl(name), " cannot be opened: ", url.status().message()));
      }
      target.url = *std::move(url);
    }
    absl::StatusOr<std::string> secret = credentials_.Get(SecretName(name));
    if (secret.ok()) {
      target.secret = *std::move(secret);
    } else if (!absl::IsNotFound(secret.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat("the secret of channel ", ToAbsl(name),
                       " cannot be opened: ", secret.status().message()));
    }
    target.channel = std::move(row.channel);
    return target;
  }
  return absl::NotFoundError(absl::StrCat("no notification channel ", ToAbsl(name)));
}

absl::Status SqliteNotificationChannels::Replace(
    const std::vector<NotificationChannelWrite>& channels, absl::Time now,
    const std::string& updated_by) {
  if (channels.size() > core::kMaxNotificationChannels) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", core::kMaxNotificationChannels, " channels"));
  }
  absl::StatusOr<std::vector<Row>> before = LoadRows(database_);
  if (!before.ok()) {
    return before.status();
  }
  const auto previous = [&](const std::string& name) -> const Row* {
    for (const Row& row : *before) {
      if (row.channel.name == name) {
        return &row;
      }
    }
    return nullptr;
  };
  // Checked whole before anything is written.
  std::set<std::string> names;
  for (const NotificationChannelWrite& w : channels) {
    const core::NotificationChannel& c = w.channel;
    if (absl::Status s = core::ValidateChannelName(c.name); !s.ok()) {
      return s;
    }
    if (!names.insert(c.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("channel ", c.name, " is named twice"));
    }
    const Row* old = previous(c.name);
    const bool same_kind = old != nullptr && old->channel.kind == c.kind;
    if (!w.url.has_value() && !same_kind) {
      return absl::InvalidArgumentError(
          absl::StrCat("channel ", c.name, " needs a url (it is new or changed kind)"));
    }
    if (w.url.has_value() && w.url->empty()) {
      return absl::InvalidArgumentError(absl::StrCat("channel ", c.name, " has an empty url"));
    }
    if (c.email.has_value() != (c.kind == core::NotificationChannelKind::kEmail)) {
      return absl::InvalidArgumentError(
          absl::StrCat("channel ", c.name,
                       ": email addressing is for email channels only, and "
                       "an email channel needs it"));
    }
    if (c.email.has_value()) {
      if (absl::Status s = core::ValidateEmailAddressing(*c.email); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("channel ", c.name, ": ", s.message()));
      }
    }
    if (!w.secret.has_value() && old != nullptr && !same_kind) {
      return absl::InvalidArgumentError(absl::StrCat(
          "channel ", c.name, " changed kind: give its secret again, or null for none"));
    }
  }
  // Secrets first: a failure leaves the channel rows as they were.
  for (const NotificationChannelWrite& w : channels) {
    const std::string& name = w.channel.name;
    if (w.url.has_value() && ChannelUrlIsSecret(w.channel.kind)) {
      if (absl::Status s = credentials_.Put(UrlName(name), *w.url, now); !s.ok()) {
        return s;
      }
    }
    if (w.secret.has_value()) {
      absl::Status s = w.secret->has_value() ? credentials_.Put(SecretName(name), **w.secret, now)
                                             : Forget(credentials_, SecretName(name));
      if (!s.ok()) {
        return s;
      }
    }
  }
  const std::int64_t now_ns = absl::ToUnixNanos(now);
  absl::Status written = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    db.exec("DELETE FROM notification_channels");
    Prepared prepared_insert(db,
                             "INSERT INTO notification_channels (name, kind, url, enabled, "
                             "min_severity, events_json, quiet_json, rate_per_minute, "
                             "updated_at_ns, updated_by, email_json) VALUES (?, ?, ?, ?, ?, ?, "
                             "?, ?, ?, ?, ?)");
    SQLite::Statement& insert = *prepared_insert;
    for (const NotificationChannelWrite& w : channels) {
      const core::NotificationChannel& c = w.channel;
      std::string url;
      if (!ChannelUrlIsSecret(c.kind)) {
        url = w.url.has_value() ? *w.url : previous(c.name)->url;
      }
      insert.reset();
      insert.bind(1, c.name);
      insert.bind(2, std::string(core::ToString(c.kind)));
      insert.bind(3, url);
      insert.bind(4, c.enabled ? 1 : 0);
      insert.bind(5, std::string(core::ToString(c.min_severity)));
      insert.bind(6, EncodeEvents(c.events));
      insert.bind(7, EncodeQuietHours(c.quiet_hours));
      insert.bind(8, std::clamp(c.rate_per_minute, 1, core::kMaxRatePerMinute));
      insert.bind(9, static_cast<std::int64_t>(now_ns));
      insert.bind(10, updated_by);
      insert.bind(11, EncodeEmail(c.email));
      insert.exec();
    }
    return absl::OkStatus();
  });
  if (!written.ok()) {
    return written;
  }
  // Secrets of removed channels, and sealed URLs a kind change left behind.
  for (const Row& old : *before) {
    if (names.count(old.channel.name) == 0) {
      PULSE_RETURN_IF_ERROR(Forget(credentials_, SecretName(old.channel.name)));
      PULSE_RETURN_IF_ERROR(Forget(credentials_, UrlName(old.channel.name)));
    }
  }
  for (const NotificationChannelWrite& w : channels) {
    if (!ChannelUrlIsSecret(w.channel.kind)) {
      PULSE_RETURN_IF_ERROR(Forget(credentials_, UrlName(w.channel.name)));
    }
  }
  return absl::OkStatus();
}

}  // namespace pulse::adapters::storage
