#include "notification_formats.h"

#include <sodium/crypto_auth_hmacsha256.h>

#include <algorithm>
#include <array>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::server {
namespace {

using core::NotificationChannelKind;
using core::ToAbsl;

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

// RFC 2047 "B" encoded-words of `text` (UTF-8) for a header, each at most 75 characters, folded
// onto continuation lines; never splitting a UTF-8 sequence between two words.
std::string EncodedWords(std::string_view text) {
  constexpr std::size_t kChunk = 45;  // 45 bytes -> 60 base64 characters; 72 with the wrapper
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = std::min(text.size(), i + kChunk);
    while (end < text.size() && end > i + 1 &&
           (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
      --end;  // back to the start of the sequence that would be cut
    }
    if (!out.empty()) {
      out += "\r\n ";
    }
    absl::StrAppend(&out, "=?UTF-8?B?", absl::Base64Escape(ToAbsl(text.substr(i, end - i))), "?=");
    i = end;
  }
  return out;
}

// A header's value: as is when it is short printable ASCII, else encoded (so a title can never
// end the header or start another).
std::string MailHeaderText(std::string_view text) {
  const bool plain = text.size() <= 200 && std::all_of(text.begin(), text.end(), [](char c) {
                       const auto u = static_cast<unsigned char>(c);
                       return u >= 0x20 && u < 0x7f;
                     });
  return plain ? std::string(text) : EncodedWords(text);
}

std::string Base64Lines(std::string_view bytes) {
  const std::string encoded = absl::Base64Escape(ToAbsl(bytes));
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); i += 76) {
    absl::StrAppend(&out, encoded.substr(i, 76), "\r\n");
  }
  return out;
}

}  // namespace

std::string FormatEmail(const adapters::storage::NotificationTarget& target,
                        const core::OutboxEntry& entry) {
  const core::EmailAddressing email = target.channel.email.value_or(core::EmailAddressing{});
  const core::NotificationEvent& e = entry.event;
  const std::string domain = email.from.substr(email.from.find('@') + 1);
  std::string text =
      absl::StrCat(core::SanitizeUtf8(e.title), "\n\n", core::SanitizeUtf8(e.message), "\n\n");
  absl::StrAppend(&text, "Severity: ", ToAbsl(core::ToString(e.severity)), "\n");
  if (!e.resource_id.empty()) {
    absl::StrAppend(&text, "Resource: ", core::SanitizeUtf8(e.resource_id), "\n");
  }
  absl::StrAppend(
      &text, "Event: ", ToAbsl(core::ToString(e.kind)), " (", core::SanitizeUtf8(e.key), ")\n",
      "Occurred: ", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", e.occurred_at, absl::UTCTimeZone()),
      "\n", "Idempotency key: ", entry.idempotency_key, "\n");
  std::string lines;  // the body with CRLF line ends, as SMTP carries it
  for (const char c : text) {
    if (c == '\n') {
      lines += "\r\n";
    } else if (c != '\r') {
      lines.push_back(c);
    }
  }
  std::string to;
  for (const std::string& address : email.to) {
    absl::StrAppend(&to, to.empty() ? "" : ", ", address);
  }
  std::string m;
  absl::StrAppend(&m, "From: Pulse <", email.from, ">\r\n");
  absl::StrAppend(&m, "To: ", to, "\r\n");
  absl::StrAppend(
      &m, "Subject: ",
      MailHeaderText(absl::StrCat("[Pulse] [", Upper(core::ToString(e.severity)), "] ",
                                  core::TruncateUtf8(core::SanitizeUtf8(e.title), 200))),
      "\r\n");
  absl::StrAppend(
      &m,
      "Date: ", absl::FormatTime("%a, %d %b %Y %H:%M:%S +0000", e.occurred_at, absl::UTCTimeZone()),
      "\r\n");
  // The same Message-ID on every retry: a mail system that sees a message twice can drop it.
  absl::StrAppend(&m, "Message-ID: <", entry.idempotency_key, ".pulse@", domain, ">\r\n");
  absl::StrAppend(&m, "Auto-Submitted: auto-generated\r\n");
  absl::StrAppend(&m, kIdempotencyHeader, ": ", entry.idempotency_key, "\r\n");
  absl::StrAppend(&m, kEventHeader, ": ", ToAbsl(core::ToString(e.kind)), "\r\n");
  absl::StrAppend(&m, "MIME-Version: 1.0\r\n");
  absl::StrAppend(&m, "Content-Type: text/plain; charset=utf-8\r\n");
  absl::StrAppend(&m, "Content-Transfer-Encoding: base64\r\n\r\n");
  absl::StrAppend(&m, Base64Lines(lines));
  return m;
}

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
    case NotificationChannelKind::kEmail:
      break;  // mail, not HTTP: FormatEmail
  }
  if (target.channel.kind != NotificationChannelKind::kNtfy) {
    r.headers.emplace_back("Content-Type", "application/json");
  } else {
    r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  }
  return r;
}

}  // namespace pulse::server
