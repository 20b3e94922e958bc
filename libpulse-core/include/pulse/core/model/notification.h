// Notifications (docs/notifications.md): the events Pulse tells people about, the channels it
// tells them through, and the durable outbox rows in between. Plain values, thread-compatible.
// An event is derived from the write that caused it (notifications/notification_events.h) and
// becomes one outbox row per channel that wants it, in the same transaction as that write; a sender
// then delivers each row at least once, with the row's idempotency key in every payload and header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/model/finding_types.h"

namespace pulse::core {

enum class NotificationEventKind {
  kFindingCreated,
  kFindingRegressed,
  kFindingEscalated,
  kApprovalPending,
  kActionCompleted,
  kActionFailed,
  kActionInconclusive,
  kPatrolRunError,
  kProviderUnusable,
  kTest,  // "send test": never enqueued, never filtered by a channel's event kinds
};
// Wire: finding.created, finding.regressed, finding.escalated, approval.pending,
// action.completed, action.failed, action.inconclusive, patrol.run_error, provider.unusable,
// test.
std::string_view ToString(NotificationEventKind kind);
std::optional<NotificationEventKind> ParseNotificationEventKind(std::string_view text);
// Every kind a channel may subscribe to (all but kTest), in declaration order.
const std::vector<NotificationEventKind>& SubscribableEventKinds();

enum class NotificationChannelKind { kWebhook, kSlack, kDiscord, kNtfy, kGotify, kEmail };
// Wire: webhook, slack, discord, ntfy, gotify, email.
std::string_view ToString(NotificationChannelKind kind);
std::optional<NotificationChannelKind> ParseNotificationChannelKind(std::string_view text);

enum class OutboxState { kPending, kDelivered, kDead };
// Wire: pending, delivered, dead.
std::string_view ToString(OutboxState state);
std::optional<OutboxState> ParseOutboxState(std::string_view text);

// One thing that happened. `key` names the occurrence (a finding created once, its third
// regression, one action's failure): a channel is told about one key at most once.
struct NotificationEvent {
  NotificationEventKind kind = NotificationEventKind::kFindingCreated;
  std::string key;  // "<kind>:<subject>[:<occurrence>]", at most kMaxEventKeyBytes
  Severity severity = Severity::kWarning;
  std::string title;        // one line
  std::string message;      // a few lines, bounded
  std::string resource_id;  // "" when the event concerns no resource
  std::string subject_id;   // the finding, action or run id
  absl::Time occurred_at;

  friend bool operator==(const NotificationEvent&, const NotificationEvent&) = default;
};

inline constexpr std::size_t kMaxEventKeyBytes = 512;
inline constexpr std::size_t kMaxNotificationTitleBytes = 256;
inline constexpr std::size_t kMaxNotificationMessageBytes = 2048;

// A daily window in which a channel stays silent; rows that fall due inside it wait for its end.
// Minutes after local midnight in `time_zone` (an IANA name, "UTC" by default); a window whose
// end is before its start spans midnight. start == end is refused.
struct QuietHours {
  int start_minute = 0;
  int end_minute = 0;
  std::string time_zone = "UTC";

  friend bool operator==(const QuietHours&, const QuietHours&) = default;
};

// Where an email channel's mail goes (kind email): the envelope and header sender, the
// recipients, and the SMTP user name when the server wants authentication (the password is the
// channel's sealed secret). Each address is a bare addr-spec, local@domain (ValidateEmailAddress).
struct EmailAddressing {
  std::string from;
  std::vector<std::string> to;  // 1..kMaxEmailRecipients, distinct
  std::string username;         // "" = no AUTH

  friend bool operator==(const EmailAddressing&, const EmailAddressing&) = default;
};

inline constexpr std::size_t kMaxEmailRecipients = 10;
inline constexpr std::size_t kMaxEmailAddressBytes = 254;

// OK, or InvalidArgument saying why `address` is not a bare addr-spec Pulse sends to: 3 to 254
// bytes, one '@' with a non-empty local part (at most 64 bytes) and a domain of dot-separated
// labels (letters, digits, '-'), printable ASCII without spaces, quotes, angle brackets, commas,
// semicolons, parentheses or backslashes (nothing that could end an SMTP command or a header).
absl::Status ValidateEmailAddress(std::string_view address);

// OK, or InvalidArgument for addressing that cannot be sent: a bad from or to address, no or
// more than kMaxEmailRecipients recipients, a recipient named twice, a user name over 256 bytes
// or with control characters.
absl::Status ValidateEmailAddressing(const EmailAddressing& email);

// A channel as configured, without its secrets (those are sealed; see docs/security.md).
struct NotificationChannel {
  std::string name;  // [a-z0-9_-]{1,48}
  NotificationChannelKind kind = NotificationChannelKind::kWebhook;
  bool enabled = true;
  Severity min_severity = Severity::kWarning;
  std::vector<NotificationEventKind> events;  // empty: every subscribable kind
  std::optional<QuietHours> quiet_hours;
  int rate_per_minute = 30;              // deliveries at most, 1..600
  std::optional<EmailAddressing> email;  // set exactly when kind is kEmail

  friend bool operator==(const NotificationChannel&, const NotificationChannel&) = default;
};

inline constexpr std::size_t kMaxNotificationChannels = 32;
inline constexpr int kMaxRatePerMinute = 600;

// OK, or InvalidArgument naming what is wrong with `name` ([a-z0-9_-]{1,48}).
absl::Status ValidateChannelName(std::string_view name);

// Whether `channel` wants `event`: enabled, at or above its severity floor, and of a kind it
// subscribes to (all kinds when its list is empty).
bool ChannelWants(const NotificationChannel& channel, const NotificationEvent& event);

// One outbox row: one event for one channel.
struct OutboxEntry {
  std::int64_t id = 0;
  std::string channel;
  NotificationEvent event;
  std::string idempotency_key;  // "ntf_" + 32 hex of (channel, event key)
  std::string payload_json;     // NotificationPayloadJson, fixed at enqueue
  std::int64_t attempts = 0;
  absl::Time next_attempt_at;
  OutboxState state = OutboxState::kPending;
  std::string last_error;
  absl::Time created_at;
  std::optional<absl::Time> delivered_at;

  friend bool operator==(const OutboxEntry&, const OutboxEntry&) = default;
};

// The idempotency key of `event_key` for `channel`: stable across restarts and retries.
std::string NotificationIdempotencyKey(std::string_view channel, std::string_view event_key);

// The generic JSON payload of an entry (docs/notifications.md), which the webhook channel
// sends as is and the others reformat: {idempotency_key, channel, event, event_key, severity,
// title, message, resource_id, subject_id, occurred_at}.
std::string NotificationPayloadJson(std::string_view channel, std::string_view idempotency_key,
                                    const NotificationEvent& event);

// Retries: attempt n (1-based) that failed waits base * 2^(n-1), at most `max_delay`, scaled by
// a jitter factor in [0.5, 1.0] (`jitter` in [0, 1) picks it); after `max_attempts` failed
// attempts the row is dead.
struct RetryPolicy {
  int max_attempts = 8;
  absl::Duration base_delay = absl::Seconds(2);
  absl::Duration max_delay = absl::Minutes(10);
};

// The wait after `failed_attempts` (>= 1) failed attempts, or nullopt when the row is dead.
std::optional<absl::Duration> RetryDelay(const RetryPolicy& policy, std::int64_t failed_attempts,
                                         double jitter);

}  // namespace pulse::core
