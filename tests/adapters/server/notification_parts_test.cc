// The notification sender's pure parts (adapters/server/src/notification_*.h): the webhook
// signature against RFC 4231's HMAC-SHA256 vector, each channel's request shape, header values
// that a finding's text cannot break, the email's RFC 5322 message, and quiet-hours windows across
// midnight and time zones.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/time/civil_time.h"
#include "notification_formats.h"
#include "notification_sender.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"

namespace pulse::server {
namespace {

using adapters::storage::NotificationTarget;

core::OutboxEntry Entry() {
  core::OutboxEntry e;
  e.channel = "ops";
  e.event.kind = core::NotificationEventKind::kFindingCreated;
  e.event.key = "finding.created:f-1";
  e.event.severity = core::Severity::kCritical;
  e.event.title = "Disk full\r\nX-Injected: yes";
  e.event.message = "vm:101 @everyone";
  e.idempotency_key = "ntf_0123";
  e.payload_json = R"({"idempotency_key":"ntf_0123"})";
  return e;
}

std::string HeaderOf(const NotificationRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) {
      return v;
    }
  }
  return "<none>";
}

TEST_CASE("the webhook signature is HMAC-SHA256 of the body (RFC 4231 case 2)",
          "[adapters][server][notifications]") {
  CHECK(SignatureOf("Jefe", "what do ya want for nothing?") ==
        "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  NotificationTarget t;
  t.channel.kind = core::NotificationChannelKind::kWebhook;
  t.url = "http://127.0.0.1:9/hook";
  t.secret = "Jefe";
  const NotificationRequest signed_request = FormatNotification(t, Entry());
  CHECK(signed_request.body == Entry().payload_json);
  CHECK(HeaderOf(signed_request, "X-Pulse-Signature") == SignatureOf("Jefe", Entry().payload_json));
  CHECK(HeaderOf(signed_request, "X-Pulse-Idempotency-Key") == "ntf_0123");
  t.secret.clear();
  CHECK(HeaderOf(FormatNotification(t, Entry()), "X-Pulse-Signature") == "<none>");
}

TEST_CASE("each channel kind gets its service's shape, and no text breaks a header",
          "[adapters][server][notifications]") {
  NotificationTarget t;
  t.url = "https://example.test/x/";
  t.secret = "tok";
  t.channel.kind = core::NotificationChannelKind::kNtfy;
  const NotificationRequest ntfy = FormatNotification(t, Entry());
  CHECK(HeaderOf(ntfy, "Title") == "Disk full??X-Injected: yes");
  CHECK(HeaderOf(ntfy, "Priority") == "5");
  CHECK(HeaderOf(ntfy, "Authorization") == "Bearer tok");
  t.channel.kind = core::NotificationChannelKind::kGotify;
  const NotificationRequest gotify = FormatNotification(t, Entry());
  CHECK(gotify.url == "https://example.test/x/message");
  CHECK(HeaderOf(gotify, "X-Gotify-Key") == "tok");
  CHECK((*core::ParseJson(gotify.body))["priority"].GetInt() == 8);
  t.channel.kind = core::NotificationChannelKind::kDiscord;
  core::OutboxEntry long_entry = Entry();
  long_entry.event.message = std::string(5000, 'm');
  rapidjson::Document discord = *core::ParseJson(FormatNotification(t, long_entry).body);
  CHECK(discord["embeds"][0]["description"].GetStringLength() == 4096);
  CHECK(discord["allowed_mentions"]["parse"].Empty());
  t.channel.kind = core::NotificationChannelKind::kSlack;
  rapidjson::Document slack = *core::ParseJson(FormatNotification(t, Entry()).body);
  CHECK(std::string(slack["text"].GetString()).rfind("[CRITICAL] Disk full", 0) == 0);
}

// The header lines of an RFC 5322 message (before the blank line), unfolded.
std::vector<std::string> MailHeaders(const std::string& message) {
  std::vector<std::string> out;
  const std::string head = message.substr(0, message.find("\r\n\r\n"));
  std::size_t at = 0;
  while (at <= head.size()) {
    const std::size_t end = std::min(head.find("\r\n", at), head.size());
    const std::string line = head.substr(at, end - at);
    if (!line.empty() && line[0] == ' ' && !out.empty()) {
      out.back() += line.substr(1);
    } else {
      out.push_back(line);
    }
    at = end + 2;
  }
  return out;
}

TEST_CASE("an email is RFC 5322: encoded subject, stable Message-ID, base64 body, no injection",
          "[adapters][server][notifications][email]") {
  NotificationTarget t;
  t.channel.kind = core::NotificationChannelKind::kEmail;
  t.channel.email =
      core::EmailAddressing{"pulse@lab.example", {"a@lab.example", "b@lab.example"}, ""};
  t.url = "smtp://mail.lab.example";
  core::OutboxEntry e = Entry();  // its title tries to inject a header
  e.event.resource_id = "vm:101";
  e.event.occurred_at = absl::FromUnixSeconds(1764763200);  // 2025-12-03 12:00:00 UTC
  const std::string mail = FormatEmail(t, e);
  // CRLF line ends only, and no line over 998 characters (RFC 5322 2.1.1).
  for (std::size_t i = 0; i < mail.size(); ++i) {
    if (mail[i] == '\n') {
      REQUIRE(i > 0);
      CHECK(mail[i - 1] == '\r');
    }
  }
  const std::vector<std::string> headers = MailHeaders(mail);
  std::map<std::string, std::string> by_name;
  for (const std::string& h : headers) {
    const std::size_t colon = h.find(": ");
    REQUIRE(colon != std::string::npos);
    CHECK(by_name.emplace(h.substr(0, colon), h.substr(colon + 2)).second);  // each once
  }
  CHECK(by_name.count("X-Injected") == 0);
  CHECK(by_name["From"] == "Pulse <pulse@lab.example>");
  CHECK(by_name["To"] == "a@lab.example, b@lab.example");
  CHECK(by_name["Date"] == "Wed, 03 Dec 2025 12:00:00 +0000");
  CHECK(by_name["Message-ID"] == "<ntf_0123.pulse@lab.example>");
  CHECK(by_name["X-Pulse-Idempotency-Key"] == "ntf_0123");
  CHECK(by_name["X-Pulse-Event"] == "finding.created");
  CHECK(by_name["Content-Transfer-Encoding"] == "base64");
  // The title's CR LF forced the encoded form; decoded, the words give the subject back.
  const std::string subject = by_name["Subject"];
  CHECK(subject.find('\r') == std::string::npos);
  std::string decoded;
  std::size_t at = 0;
  while ((at = subject.find("=?UTF-8?B?", at)) != std::string::npos) {
    const std::size_t end = subject.find("?=", at + 10);
    REQUIRE(end != std::string::npos);
    std::string word;
    REQUIRE(absl::Base64Unescape(subject.substr(at + 10, end - at - 10), &word));
    CHECK(word.size() <= 45);
    decoded += word;
    at = end + 2;
  }
  CHECK(decoded == "[Pulse] [CRITICAL] Disk full\r\nX-Injected: yes");
  std::string body;
  std::string encoded;
  for (const char c : mail.substr(mail.find("\r\n\r\n") + 4)) {
    if (c != '\r' && c != '\n') {
      encoded.push_back(c);
    }
  }
  REQUIRE(absl::Base64Unescape(encoded, &body));
  CHECK(body.find("vm:101 @everyone") != std::string::npos);
  CHECK(body.find("Resource: vm:101\r\n") != std::string::npos);
  CHECK(body.find("Idempotency key: ntf_0123") != std::string::npos);

  // A long non-ASCII title splits into words without cutting a UTF-8 sequence.
  e.event.title =
      std::string(40, 'x') + "\xc3\xa9\xc3\xa9\xc3\xa9 \xe2\x82\xac" + std::string(300, 'y');
  const std::string long_subject = MailHeaders(FormatEmail(t, e))[2];
  REQUIRE(long_subject.rfind("Subject: ", 0) == 0);
  std::string whole;
  at = 0;
  while ((at = long_subject.find("=?UTF-8?B?", at)) != std::string::npos) {
    const std::size_t end = long_subject.find("?=", at + 10);
    std::string word;
    REQUIRE(absl::Base64Unescape(long_subject.substr(at + 10, end - at - 10), &word));
    CHECK(core::IsValidUtf8(word));
    whole += word;
    at = end + 2;
  }
  CHECK(whole.rfind("[Pulse] [CRITICAL] " + std::string(40, 'x') + "\xc3\xa9", 0) == 0);
  // A plain ASCII title stays readable.
  e.event.title = "Disk full";
  CHECK(MailHeaders(FormatEmail(t, e))[2] == "Subject: [Pulse] [CRITICAL] Disk full");
}

TEST_CASE("quiet hours hold until the window's end, across midnight and in the channel's zone",
          "[adapters][server][notifications]") {
  core::NotificationChannel c;
  const absl::TimeZone utc = absl::UTCTimeZone();
  const auto at = [&](int h, int m) {
    return absl::FromCivil(absl::CivilMinute(2027, 1, 15, h, m), utc);
  };
  CHECK_FALSE(QuietUntil(c, at(23, 0)).has_value());
  c.quiet_hours = core::QuietHours{22 * 60, 7 * 60, "UTC"};
  CHECK(*QuietUntil(c, at(23, 0)) == absl::FromCivil(absl::CivilMinute(2027, 1, 16, 7, 0), utc));
  CHECK(*QuietUntil(c, at(3, 0)) == at(7, 0));
  CHECK_FALSE(QuietUntil(c, at(7, 0)).has_value());
  CHECK_FALSE(QuietUntil(c, at(12, 0)).has_value());
  c.quiet_hours = core::QuietHours{9 * 60, 17 * 60, "UTC"};
  CHECK(*QuietUntil(c, at(9, 0)) == at(17, 0));
  CHECK_FALSE(QuietUntil(c, at(8, 59)).has_value());
  // 22:00-07:00 in Berlin (UTC+1 in January) is 21:00-06:00 UTC.
  absl::TimeZone berlin;
  if (absl::LoadTimeZone("Europe/Berlin", &berlin)) {
    c.quiet_hours = core::QuietHours{22 * 60, 7 * 60, "Europe/Berlin"};
    CHECK(QuietUntil(c, at(21, 30)).has_value());
    CHECK(*QuietUntil(c, at(21, 30)) == at(6, 0) + absl::Hours(24));
    CHECK_FALSE(QuietUntil(c, at(6, 30)).has_value());
  }
}

}  // namespace
}  // namespace pulse::server
