// Private to pulse-server: how one outbox entry becomes one HTTP request (or, for email, one
// message) for its channel's
// service (docs/notifications.md "Channels"): the generic webhook (the payload as is, signed
// with HMAC-SHA256 of the body when the channel has a secret), Slack and Discord incoming
// webhooks, ntfy and Gotify. Every request carries the entry's idempotency key in the
// X-Pulse-Idempotency-Key header and in its body. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pulse/adapters/storage/sqlite_notification_channels.h"
#include "pulse/core/model/notification.h"

namespace pulse::server {

inline constexpr char kSignatureHeader[] = "X-Pulse-Signature";
inline constexpr char kIdempotencyHeader[] = "X-Pulse-Idempotency-Key";
inline constexpr char kEventHeader[] = "X-Pulse-Event";

struct NotificationRequest {
  std::string url;  // the full URL to POST to
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// "sha256=" + the lowercase hex HMAC-SHA256 of `body` under `secret`.
std::string SignatureOf(std::string_view secret, std::string_view body);

// The request delivering `entry` to `target`.
NotificationRequest FormatNotification(const adapters::storage::NotificationTarget& target,
                                       const core::OutboxEntry& entry);

// The RFC 5322 message delivering `entry` to an email channel (`target.channel.email`), CRLF
// line ends: From "Pulse <from>", To, a Subject "[Pulse] [SEVERITY] <title>" (RFC 2047-encoded
// when it is not short printable ASCII), Date (the event's), a Message-ID made of the
// idempotency key (the same on every retry), Auto-Submitted, the X-Pulse-Idempotency-Key and
// X-Pulse-Event headers, and a text/plain UTF-8 body in base64: the title, the message, then
// severity, resource, event, time and idempotency key.
std::string FormatEmail(const adapters::storage::NotificationTarget& target,
                        const core::OutboxEntry& entry);

}  // namespace pulse::server
