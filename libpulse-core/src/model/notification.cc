#include "pulse/core/model/notification.h"

#include <sodium/crypto_hash_sha256.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<NotificationEventKind>, 10> kEventKinds = {{
    {NotificationEventKind::kFindingCreated, "finding.created"},
    {NotificationEventKind::kFindingRegressed, "finding.regressed"},
    {NotificationEventKind::kFindingEscalated, "finding.escalated"},
    {NotificationEventKind::kApprovalPending, "approval.pending"},
    {NotificationEventKind::kActionCompleted, "action.completed"},
    {NotificationEventKind::kActionFailed, "action.failed"},
    {NotificationEventKind::kActionInconclusive, "action.inconclusive"},
    {NotificationEventKind::kPatrolRunError, "patrol.run_error"},
    {NotificationEventKind::kProviderUnusable, "provider.unusable"},
    {NotificationEventKind::kTest, "test"},
}};

constexpr std::array<WireName<NotificationChannelKind>, 6> kChannelKinds = {{
    {NotificationChannelKind::kWebhook, "webhook"},
    {NotificationChannelKind::kSlack, "slack"},
    {NotificationChannelKind::kDiscord, "discord"},
    {NotificationChannelKind::kNtfy, "ntfy"},
    {NotificationChannelKind::kGotify, "gotify"},
    {NotificationChannelKind::kEmail, "email"},
}};

constexpr std::array<WireName<OutboxState>, 3> kOutboxStates = {{
    {OutboxState::kPending, "pending"},
    {OutboxState::kDelivered, "delivered"},
    {OutboxState::kDead, "dead"},
}};

}  // namespace

std::string_view ToString(NotificationEventKind kind) { return WireNameOf(kEventKinds, kind); }
std::optional<NotificationEventKind> ParseNotificationEventKind(std::string_view text) {
  return WireValueOf(kEventKinds, text);
}

const std::vector<NotificationEventKind>& SubscribableEventKinds() {
  static const std::vector<NotificationEventKind> kinds = [] {
    std::vector<NotificationEventKind> out = WireValues(kEventKinds);
    out.erase(std::remove(out.begin(), out.end(), NotificationEventKind::kTest), out.end());
    return out;
  }();
  return kinds;
}

std::string_view ToString(NotificationChannelKind kind) { return WireNameOf(kChannelKinds, kind); }
std::optional<NotificationChannelKind> ParseNotificationChannelKind(std::string_view text) {
  return WireValueOf(kChannelKinds, text);
}

std::string_view ToString(OutboxState state) { return WireNameOf(kOutboxStates, state); }
std::optional<OutboxState> ParseOutboxState(std::string_view text) {
  return WireValueOf(kOutboxStates, text);
}

absl::Status ValidateChannelName(std::string_view name) {
  if (name.empty() || name.size() > 48) {
    return absl::InvalidArgumentError("a channel name is 1 to 48 characters");
  }
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(
          "a channel name holds only lower-case letters, digits, '_' and '-'");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateEmailAddress(std::string_view address) {
  if (address.size() < 3 || address.size() > kMaxEmailAddressBytes) {
    return absl::InvalidArgumentError("an email address is 3 to 254 characters");
  }
  const std::size_t at = address.find('@');
  if (at == std::string_view::npos || address.find('@', at + 1) != std::string_view::npos) {
    return absl::InvalidArgumentError("an email address has exactly one '@'");
  }
  const std::string_view local = address.substr(0, at);
  const std::string_view domain = address.substr(at + 1);
  if (local.empty() || local.size() > 64) {
    return absl::InvalidArgumentError("an email address's local part is 1 to 64 characters");
  }
  for (const char c : local) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f ||
        std::string_view("\"<>(),;:[]\\").find(c) != std::string_view::npos) {
      return absl::InvalidArgumentError(
          "an email address's local part holds printable ASCII without spaces, quotes, angle "
          "brackets, commas, semicolons, colons, parentheses, square brackets or backslashes");
    }
  }
  if (domain.empty() || domain.front() == '.' || domain.back() == '.' ||
      domain.find("..") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        "an email address's domain is dot-separated labels, none empty");
  }
  for (const char c : domain) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.';
    if (!ok) {
      return absl::InvalidArgumentError(
          "an email address's domain holds only letters, digits, '-' and '.'");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateEmailAddressing(const EmailAddressing& email) {
  if (absl::Status s = ValidateEmailAddress(email.from); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("email.from: ", s.message()));
  }
  if (email.to.empty() || email.to.size() > kMaxEmailRecipients) {
    return absl::InvalidArgumentError(
        absl::StrCat("email.to lists 1 to ", kMaxEmailRecipients, " recipients"));
  }
  for (std::size_t i = 0; i < email.to.size(); ++i) {
    if (absl::Status s = ValidateEmailAddress(email.to[i]); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("email.to[", i, "]: ", s.message()));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (email.to[j] == email.to[i]) {
        return absl::InvalidArgumentError(absl::StrCat("email.to names ", email.to[i], " twice"));
      }
    }
  }
  if (email.username.size() > 256) {
    return absl::InvalidArgumentError("email.username is at most 256 characters");
  }
  for (const char c : email.username) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return absl::InvalidArgumentError("email.username holds no control characters");
    }
  }
  return absl::OkStatus();
}

bool ChannelWants(const NotificationChannel& channel, const NotificationEvent& event) {
  if (event.kind == NotificationEventKind::kTest) {
    return true;
  }
  if (!channel.enabled || SeverityRank(event.severity) < SeverityRank(channel.min_severity)) {
    return false;
  }
  return channel.events.empty() || std::find(channel.events.begin(), channel.events.end(),
                                             event.kind) != channel.events.end();
}

std::string NotificationIdempotencyKey(std::string_view channel, std::string_view event_key) {
  // Length-prefixed, so no (channel, key) pair can collide with another by concatenation.
  const std::string preimage =
      absl::StrCat(channel.size(), ":", std::string(channel), "\n", std::string(event_key));
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(preimage.data()),
                     preimage.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "ntf_";
  for (std::size_t i = 0; i < 16; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0f]);
  }
  return out;
}

std::string NotificationPayloadJson(std::string_view channel, std::string_view idempotency_key,
                                    const NotificationEvent& event) {
  JsonWriter w;
  w.StartObject();
  w.Member("idempotency_key", idempotency_key);
  w.Member("channel", channel);
  w.Member("event", ToString(event.kind));
  w.Member("event_key", event.key);
  w.Member("severity", ToString(event.severity));
  w.Member("title", event.title);
  w.Member("message", event.message);
  w.Member("resource_id", event.resource_id);
  w.Member("subject_id", event.subject_id);
  w.TimeMember("occurred_at", event.occurred_at);
  w.EndObject();
  return w.Take();
}

std::optional<absl::Duration> RetryDelay(const RetryPolicy& policy, std::int64_t failed_attempts,
                                         double jitter) {
  if (failed_attempts >= policy.max_attempts) {
    return std::nullopt;
  }
  absl::Duration delay = policy.base_delay;
  for (std::int64_t i = 1; i < failed_attempts && delay < policy.max_delay; ++i) {
    delay *= 2;
  }
  delay = std::min(delay, policy.max_delay);
  // Full-range jitter would let a retry storm line up again; half-range keeps the backoff.
  const double factor = 0.5 + 0.5 * std::clamp(std::isfinite(jitter) ? jitter : 0.0, 0.0, 1.0);
  return delay * factor;
}

}  // namespace pulse::core
