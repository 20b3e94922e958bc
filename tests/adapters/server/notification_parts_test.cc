// The notification sender's pure parts (adapters/server/src/notification_*.h): the webhook
// signature against RFC 4231's HMAC-SHA256 vector, each channel's request shape, header values
// that a finding's text cannot break, and quiet-hours windows across midnight and time zones.
#include <catch2/catch.hpp>
#include <string>

#include "absl/time/civil_time.h"
#include "notification_formats.h"
#include "notification_sender.h"
#include "pulse/core/json/json.h"

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
