#include "notification_formats.h"

#include <sodium/crypto_auth_hmacsha256.h>

#include <array>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::server {
namespace {

using core::NotificationChannelKind;

// A header value: printable ASCII only (no CR/LF, so no header can be injected through a
// finding's title; ntfy reads non-ASCII titles only RFC 2047-encoded), at most 250 bytes.
std::string HeaderText(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= 250) {
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    }
  }
  return out;
}

// ntfy and Gotify priorities: info 2, watch 3, warning 4, critical 5 (ntfy's "high" / "max";
// Gotify shows 4..7 as notable, 8+ as urgent: 2, 4, 6, 8).
int NtfyPriority(core::Severity s) { return 2 + core::SeverityRank(s); }
int GotifyPriority(core::Severity s) { return 2 + 2 * core::SeverityRank(s); }

// Discord embed colours by severity.
int DiscordColour(core::Severity s) {
  static constexpr std::array<int, 4> kColours = {0x5b8def, 0xf2c94c, 0xf2994a, 0xeb5757};
  return kColours[static_cast<std::size_t>(core::SeverityRank(s)) % kColours.size()];
}

std::string ChatText(const core::OutboxEntry& e) {
  return absl::StrCat("[", Upper(core::ToString(e.event.severity)), "] ", e.event.title, "\n",
                      e.event.message);
}

}  // namespace

std::string SignatureOf(std::string_view secret, std::string_view body) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(secret.data()),
                              secret.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(body.data()),
                                body.size());
  std::array<unsigned char, crypto_auth_hmacsha256_BYTES> mac{};
  crypto_auth_hmacsha256_final(&state, mac.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256=";
  for (const unsigned char b : mac) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0x0f]);
  }
  return out;
}

NotificationRequest FormatNotification(const adapters::storage::NotificationTarget& target,
                                       const core::OutboxEntry& entry) {
  NotificationRequest r;
  r.url = target.url;
  r.headers = {{kIdempotencyHeader, entry.idempotency_key},
               {kEventHeader, std::string(core::ToString(entry.event.kind))}};
  core::JsonWriter w;
  switch (target.channel.kind) {
    case NotificationChannelKind::kWebhook:
      r.body = entry.payload_json;
      if (!target.secret.empty()) {
        r.headers.emplace_back(kSignatureHeader, SignatureOf(target.secret, r.body));
      }
      break;
    case NotificationChannelKind::kSlack:
      // Slack's incoming webhook: {"text"} (mrkdwn), the key in the text's last line.
      w.StartObject();
      w.Member("text", absl::StrCat(ChatText(entry), "\n_", entry.idempotency_key, "_"));
      w.EndObject();
      r.body = w.Take();
      break;
    case NotificationChannelKind::kDiscord:
      // Discord's execute-webhook: content (at most 2000) and one embed (title at most 256,
      // description at most 4096), the key in the embed's footer.
      w.StartObject();
      w.Member("username", "Pulse");
      w.Member("content",
               core::TruncateUtf8(absl::StrCat("[", Upper(core::ToString(entry.event.severity)),
                                               "] ", entry.event.title),
                                  2000));
      w.Key("embeds");
      w.StartArray();
      w.StartObject();
      w.Member("title", core::TruncateUtf8(entry.event.title, 256));
      w.Member("description", core::TruncateUtf8(entry.event.message, 4096));
      w.Member("color", DiscordColour(entry.event.severity));
      w.Key("footer");
      w.StartObject();
      w.Member("text", entry.idempotency_key);
      w.EndObject();
      w.EndObject();
      w.EndArray();
      w.Key("allowed_mentions");  // a finding's text never pings anyone
      w.StartObject();
      w.Key("parse");
      w.StartArray();
      w.EndArray();
      w.EndObject();
      w.EndObject();
      r.body = w.Take();
      break;
    case NotificationChannelKind::kNtfy:
      // ntfy's publish: the body is the message; title, priority and tags as headers.
      r.body = absl::StrCat(entry.event.message, "\n\n", entry.idempotency_key);
      r.headers.emplace_back("Title", HeaderText(entry.event.title));
      r.headers.emplace_back("Priority", absl::StrCat(NtfyPriority(entry.event.severity)));
      r.headers.emplace_back(
          "Tags", absl::StrCat("pulse,", core::ToAbsl(core::ToString(entry.event.severity))));
      if (!target.secret.empty()) {
        r.headers.emplace_back("Authorization", absl::StrCat("Bearer ", target.secret));
      }
      break;
    case NotificationChannelKind::kGotify:
      // Gotify's POST /message with the application token; the key in extras.
      r.url = target.url;
      while (!r.url.empty() && r.url.back() == '/') {
        r.url.pop_back();
      }
      r.url += "/message";
      w.StartObject();
      w.Member("title", entry.event.title);
      w.Member("message", entry.event.message);
      w.Member("priority", GotifyPriority(entry.event.severity));
      w.Key("extras");
      w.StartObject();
      w.Member("pulse::idempotency_key", entry.idempotency_key);
      w.Member("pulse::event", core::ToString(entry.event.kind));
      w.EndObject();
      w.EndObject();
      r.body = w.Take();
      r.headers.emplace_back("X-Gotify-Key", target.secret);
      break;
  }
  if (target.channel.kind != NotificationChannelKind::kNtfy) {
    r.headers.emplace_back("Content-Type", "application/json");
  } else {
    r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  }
  return r;
}

}  // namespace pulse::server
