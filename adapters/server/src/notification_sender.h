// Private to pulse-server: the notification sender (docs/notifications.md "Delivery"). One
// thread takes the outbox's due rows in order and delivers each to its channel: a 2xx answer
// marks it delivered; a transport failure, 408, 429 or 5xx schedules a retry with exponential
// backoff and jitter (core::RetryDelay; a 429's Retry-After is honoured as a floor) until the
// policy's last attempt, after which the row is dead; any other answer is permanent and makes
// it dead at once. A channel in its quiet hours, or over its per-minute rate, defers its rows
// without counting an attempt. Rows stay pending until marked, so a server killed mid-delivery
// delivers them again after a restart (at least once: receivers drop repeats by the
// idempotency key).
// Thread-safety: Start/Stop from one thread; Deliver and Wake from any.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_notification_channels.h"
#include "pulse/core/model/notification.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/notification_outbox.h"

namespace pulse::server {

// The outcome of one delivery attempt.
struct DeliveryOutcome {
  bool delivered = false;
  bool permanent = false;  // retrying cannot help (a 4xx other than 408 and 429)
  int http_status = 0;     // 0: no answer; for email, the SMTP server's last reply code
  std::string error;       // "" when delivered; never a URL or secret
  std::optional<absl::Duration> retry_after;
};

// When the quiet hours of `channel` that hold `now` end; nullopt when `now` is not in them
// (or the channel has none). An unknown time zone reads as UTC.
std::optional<absl::Time> QuietUntil(const core::NotificationChannel& channel, absl::Time now);

struct NotificationSenderOptions {
  core::RetryPolicy retry;
  absl::Duration poll = absl::Milliseconds(200);  // the longest a due row waits for the thread
  absl::Duration timeout = absl::Seconds(15);     // one attempt, end to end
  std::string ca_file;  // the CA bundle receivers and SMTP servers chain to; "" = system store
  // Delivered rows are kept this long, dead ones this long after they were queued; the sender
  // deletes older ones at start and once per prune_interval.
  absl::Duration keep_delivered = absl::Hours(24 * 7);
  absl::Duration keep_dead = absl::Hours(24 * 30);
  absl::Duration prune_interval = absl::Hours(1);
};

class NotificationSender {
 public:
  NotificationSender(core::NotificationOutbox& outbox,
                     const adapters::storage::SqliteNotificationChannels& channels,
                     const core::Clock& clock, NotificationSenderOptions options);
  ~NotificationSender();
  NotificationSender(const NotificationSender&) = delete;
  NotificationSender& operator=(const NotificationSender&) = delete;

  void Start();
  // Stops the thread after the attempt in flight (bounded by options.timeout).
  void Stop();
  // Looks at the outbox now instead of at the next poll.
  void Wake();

  // One attempt to deliver `entry` to `target`, now (the loop's and the send-test route's).
  DeliveryOutcome Deliver(const adapters::storage::NotificationTarget& target,
                          const core::OutboxEntry& entry) const;

 private:
  void Run();
  // One message to an email channel's SMTP server.
  DeliveryOutcome DeliverEmail(const adapters::storage::NotificationTarget& target,
                               const core::OutboxEntry& entry) const;
  // Delivers, defers or fails one due row.
  void Handle(const core::OutboxEntry& entry, absl::Time now);

  core::NotificationOutbox& outbox_;
  const adapters::storage::SqliteNotificationChannels& channels_;
  const core::Clock& clock_;
  const NotificationSenderOptions options_;
  absl::Mutex mu_;
  absl::CondVar wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  // Per channel, the times of its deliveries in the last minute (the sender thread only).
  std::map<std::string, std::deque<absl::Time>> sent_;
  absl::BitGen bitgen_;                           // retry jitter (the sender thread only)
  absl::Time last_prune_ = absl::InfinitePast();  // the sender thread only
  std::thread thread_;
};

}  // namespace pulse::server
