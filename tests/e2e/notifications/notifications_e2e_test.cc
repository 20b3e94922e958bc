// Notifications end to end (docs/notifications.md): the real pulse-server with the demo fleet,
// its channels configured over PUT /api/settings/notifications, and loopback receivers playing
// a webhook endpoint, Slack, Discord, ntfy and Gotify. Events come from real writes: a
// deterministic Patrol run's findings, or findings written through the SQLite store while the
// server is down. Faults: a receiver that answers 500 before 200, one that is down for a while,
// one that never accepts (dead letter), and a server SIGKILLed with undelivered rows.
#include <signal.h>
#include <sodium.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "notification_receiver.h"
#include "notification_test_support.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/json/json.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kSecret[] = "whsec-test-0123456789";

std::string WebhookChannel(const NotificationReceiver& receiver, const std::string& extra = "") {
  return absl::StrCat(R"([{"name":"ops","kind":"webhook","url":")", receiver.Url("/hook"),
                      R"(","secret":")", kSecret,
                      R"(","min_severity":"warning","events":["finding.created"])", extra, "}]");
}

std::string Hmac(const std::string& key, const std::string& body) {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(body.data()),
                                body.size());
  crypto_auth_hmacsha256_final(&state, mac);
  char hex[2 * crypto_auth_hmacsha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
  return std::string("sha256=") + hex;
}

// The payloads' idempotency keys, each once, with how often each arrived.
std::map<std::string, int> KeyCounts(const std::vector<ReceivedRequest>& requests) {
  std::map<std::string, int> out;
  for (const ReceivedRequest& r : requests) {
    ++out[r.Header("X-Pulse-Idempotency-Key")];
  }
  return out;
}

TEST_CASE("a webhook channel gets each new finding once, signed, with its idempotency key",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();

  const Reply put = PutChannels(port, token, WebhookChannel(receiver));
  INFO(put.body);
  REQUIRE(put.status == 200);
  // The secret is write-only: the answer and GET say it is set and never show it.
  CHECK(put.body.find(kSecret) == std::string::npos);
  rapidjson::Document settings = Settings(port, token);
  CHECK(settings["channels"][0]["secret_set"].GetBool());
  CHECK(Str(settings["channels"][0], "url") == receiver.Url("/hook"));
  CHECK(core::ToJsonString(settings).find(kSecret) == std::string::npos);

  const std::vector<std::string> created = RunPatrol(port, token);
  REQUIRE(created.size() >= 3);
  REQUIRE(receiver.WaitFor(created.size(), absl::Seconds(15)));
  absl::SleepFor(absl::Milliseconds(500));  // nothing more is coming
  const std::vector<ReceivedRequest> got = receiver.Requests();
  REQUIRE(got.size() == created.size());
  std::set<std::string> subjects;
  for (const ReceivedRequest& r : got) {
    INFO(r.body);
    CHECK(r.path == "/hook");
    CHECK(r.Header("Content-Type") == "application/json");
    CHECK(r.Header("X-Pulse-Signature") == Hmac(kSecret, r.body));
    CHECK(r.Header("X-Pulse-Event") == "finding.created");
    rapidjson::Document payload = Json(r.body);
    CHECK(Str(payload, "idempotency_key") == r.Header("X-Pulse-Idempotency-Key"));
    CHECK(Str(payload, "idempotency_key").rfind("ntf_", 0) == 0);
    CHECK(Str(payload, "event") == "finding.created");
    CHECK(Str(payload, "channel") == "ops");
    CHECK(Str(payload, "severity") != "info");
    CHECK_FALSE(Str(payload, "title").empty());
    subjects.insert(Str(payload, "subject_id"));
  }
  CHECK(subjects == std::set<std::string>(created.begin(), created.end()));
  CHECK(KeyCounts(got).size() == got.size());

  // A second run re-detects the same findings: heartbeats, nothing new to tell.
  CHECK(RunPatrol(port, token).empty());
  absl::SleepFor(absl::Seconds(1));
  CHECK(receiver.Requests().size() == got.size());
  settings = Settings(port, token);
  CHECK(settings["outbox"]["delivered"].GetInt64() == static_cast<std::int64_t>(got.size()));
  CHECK(settings["outbox"]["pending"].GetInt64() == 0);
}

TEST_CASE("a receiver answering 500 then 200 gets the notification once, after a retry",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(),
                       {.args = {"--patrol-interval", "0", "--notify-retry-base", "200ms"}});
  REQUIRE(PutChannels(server.port(), token, WebhookChannel(receiver)).status == 200);
  receiver.Script({500, 503});
  const std::vector<std::string> created = RunPatrol(server.port(), token);
  // Two refused attempts, then every finding once.
  REQUIRE(receiver.WaitFor(created.size() + 2, absl::Seconds(20)));
  absl::SleepFor(absl::Seconds(1));
  const std::map<std::string, int> keys = KeyCounts(receiver.Requests());
  CHECK(keys.size() == created.size());
  int repeated = 0;
  for (const auto& [key, count] : keys) {
    repeated += count - 1;
  }
  CHECK(repeated == 2);  // the refused attempts, retried
  CHECK(Settings(server.port(), token)["outbox"]["delivered"].GetInt64() ==
        static_cast<std::int64_t>(created.size()));
}

TEST_CASE("a receiver down for a while then back gets each notification once, late",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  // The rows are attempted while the Patrol run still writes them, so how far their backoff
  // has grown when the receiver returns depends on how long the run took: under ASan on a loaded
  // machine the next attempt came more than 30 s after it (a local full ASan suite with clang-tidy
  // beside it, 2026-12-04). Enough attempts that none dies, and a wait that covers a 64 s backoff.
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0", "--notify-retry-base",
                                             "500ms", "--notify-max-attempts", "30"}});
  REQUIRE(PutChannels(server.port(), token, WebhookChannel(receiver)).status == 200);
  receiver.Stop();
  const absl::Time down_at = absl::Now();
  const std::vector<std::string> created = RunPatrol(server.port(), token);
  absl::SleepFor(absl::Seconds(4));
  // Still pending, with attempts counted against a refused connection.
  rapidjson::Document settings = Settings(server.port(), token);
  CHECK(settings["outbox"]["pending"].GetInt64() == static_cast<std::int64_t>(created.size()));
  CHECK(settings["outbox"]["delivered"].GetInt64() == 0);
  receiver.Start();
  const absl::Time back_at = absl::Now();
  REQUIRE(receiver.WaitFor(created.size(), absl::Seconds(90)));
  absl::SleepFor(absl::Seconds(1));
  const std::vector<ReceivedRequest> got = receiver.Requests();
  CHECK(got.size() == created.size());
  CHECK(KeyCounts(got).size() == created.size());
  for (const ReceivedRequest& r : got) {
    CHECK(r.at >= back_at);
    CHECK(r.at - down_at >= absl::Seconds(4));
  }
}

TEST_CASE("a notification no receiver accepts is dead after the attempt limit",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0", "--notify-retry-base",
                                             "100ms", "--notify-max-attempts", "3"}});
  REQUIRE(PutChannels(server.port(), token, WebhookChannel(receiver)).status == 200);
  receiver.Script(std::vector<int>(1000, 502));
  const std::vector<std::string> created = RunPatrol(server.port(), token);
  REQUIRE(receiver.WaitFor(3 * created.size(), absl::Seconds(20)));
  absl::SleepFor(absl::Seconds(2));
  CHECK(receiver.Requests().size() == 3 * created.size());  // three attempts each, no more
  rapidjson::Document settings = Settings(server.port(), token);
  CHECK(settings["outbox"]["dead"].GetInt64() == static_cast<std::int64_t>(created.size()));
  CHECK(settings["outbox"]["pending"].GetInt64() == 0);
  const rapidjson::Value& dead = settings["outbox"]["dead_letters"][0];
  CHECK(dead["attempts"].GetInt64() == 3);
  CHECK(Str(dead, "last_error").find("502") != std::string::npos);
  CHECK(Str(dead, "event") == "finding.created");

  // A permanent refusal (404) is dead at once.
  NotificationReceiver gone;
  gone.Script(std::vector<int>(10, 404));
  REQUIRE(PutChannels(server.port(), token,
                      absl::StrCat(R"([{"name":"gone","kind":"webhook","url":")", gone.Url("/x"),
                                   R"(","min_severity":"info"}])"))
              .status == 200);
  const Reply test = Send(server.port(), "POST", "/api/settings/notifications/gone/test", token);
  INFO(test.body);
  REQUIRE(test.status == 200);
  CHECK_FALSE(Json(test.body)["delivered"].GetBool());
  CHECK(Json(test.body)["http_status"].GetInt() == 404);
}

TEST_CASE("a server SIGKILLed with 100 undelivered rows delivers all after restart, none lost",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  {
    ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
    REQUIRE(PutChannels(
                server.port(), token,
                absl::StrCat(R"([{"name":"ops","kind":"webhook","url":")", receiver.Url("/hook"),
                             R"(","min_severity":"info","rate_per_minute":600}])"))
                .status == 200);
    CHECK(server.Stop() == "exited 0");
  }
  // 100 findings written through the real store while the server is down: each write queues
  // its notification in its own transaction.
  {
    absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> storage =
        adapters::storage::OpenSqliteStorage(dir.path());
    REQUIRE(storage.ok());
    for (int i = 0; i < 100; ++i) {
      core::Finding f;
      f.id = absl::StrCat("kill-", i);
      f.key = f.id;
      f.severity = core::Severity::kWarning;
      f.category = core::Category::kReliability;
      f.resource_id = absl::StrCat("vm:", 1000 + i);
      f.title = absl::StrCat("finding ", i);
      f.detected_at = absl::Now();
      f.last_seen_at = f.detected_at;
      f.times_raised = 1;
      REQUIRE((*storage)->findings->Put(f, 0).ok());
    }
    absl::StatusOr<core::OutboxCounts> counts = (*storage)->notifications->Counts();
    REQUIRE(counts.ok());
    REQUIRE(counts->pending == 100);
  }
  receiver.SetDelay(absl::Milliseconds(30));
  {
    ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
    REQUIRE(receiver.WaitFor(20, absl::Seconds(20)));
    ::kill(server.pid(), SIGKILL);
    server.Stop();
  }
  const std::size_t before_restart = receiver.Requests().size();
  CHECK(before_restart < 100);
  receiver.SetDelay(absl::ZeroDuration());
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (KeyCounts(receiver.Requests()).size() < 100 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  absl::SleepFor(absl::Milliseconds(500));
  const std::map<std::string, int> keys = KeyCounts(receiver.Requests());
  CHECK(keys.size() == 100);  // every row delivered
  // At least once: only the delivery in flight when the server died may arrive twice, and its
  // idempotency key says so.
  int repeated = 0;
  for (const auto& [key, count] : keys) {
    CHECK(count <= 2);
    repeated += count - 1;
  }
  CHECK(repeated <= 1);
  CHECK(Settings(server.port(), token)["outbox"]["delivered"].GetInt64() == 100);
}

TEST_CASE("slack, discord, ntfy and gotify receivers get their documented payloads",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  const std::string channels = absl::StrCat(
      R"([{"name":"slack","kind":"slack","url":")", receiver.Url("/services/T0/B0/xyz"),
      R"("},{"name":"discord","kind":"discord","url":")", receiver.Url("/api/webhooks/1/tok"),
      R"("},{"name":"ntfy","kind":"ntfy","url":")", receiver.Url("/pulse-alerts"),
      R"(","secret":"tk_ntfy"},{"name":"gotify","kind":"gotify","url":")", receiver.Url(""),
      R"(","secret":"AppTok.1"}])");
  const Reply put = PutChannels(port, token, channels);
  INFO(put.body);
  REQUIRE(put.status == 200);
  // Slack and Discord URLs are the credential: never answered.
  CHECK(put.body.find("/services/T0") == std::string::npos);
  CHECK(put.body.find("/api/webhooks/1") == std::string::npos);
  CHECK(put.body.find("AppTok") == std::string::npos);

  for (const char* name : {"slack", "discord", "ntfy", "gotify"}) {
    const Reply test =
        Send(port, "POST", absl::StrCat("/api/settings/notifications/", name, "/test"), token);
    INFO(test.body);
    REQUIRE(test.status == 200);
    CHECK(Json(test.body)["delivered"].GetBool());
  }
  REQUIRE(receiver.WaitFor(4, absl::Seconds(5)));
  std::map<std::string, ReceivedRequest> by_path;
  for (const ReceivedRequest& r : receiver.Requests()) {
    by_path[r.path] = r;
  }
  const ReceivedRequest& slack = by_path["/services/T0/B0/xyz"];
  rapidjson::Document slack_body = Json(slack.body);
  CHECK(Str(slack_body, "text").find("Pulse test notification") != std::string::npos);
  CHECK(Str(slack_body, "text").find(slack.Header("X-Pulse-Idempotency-Key")) != std::string::npos);

  const ReceivedRequest& discord = by_path["/api/webhooks/1/tok"];
  rapidjson::Document discord_body = Json(discord.body);
  CHECK(Str(discord_body, "content").find("Pulse test notification") != std::string::npos);
  CHECK(Str(discord_body["embeds"][0]["footer"], "text") ==
        discord.Header("X-Pulse-Idempotency-Key"));
  CHECK(discord_body["allowed_mentions"]["parse"].Empty());

  const ReceivedRequest& ntfy = by_path["/pulse-alerts"];
  CHECK(ntfy.Header("Title") == "Pulse test notification");
  CHECK(ntfy.Header("Authorization") == "Bearer tk_ntfy");
  CHECK(ntfy.Header("Priority") == "2");
  CHECK(ntfy.body.find(ntfy.Header("X-Pulse-Idempotency-Key")) != std::string::npos);

  const ReceivedRequest& gotify = by_path["/message"];
  CHECK(gotify.Header("X-Gotify-Key") == "AppTok.1");
  rapidjson::Document gotify_body = Json(gotify.body);
  CHECK(Str(gotify_body, "title") == "Pulse test notification");
  CHECK(Str(gotify_body["extras"], "pulse::idempotency_key") ==
        gotify.Header("X-Pulse-Idempotency-Key"));

  // A PUT that names the channels without url or secret keeps both.
  REQUIRE(PutChannels(port, token,
                      R"([{"name":"slack","kind":"slack"},{"name":"gotify","kind":"gotify"}])")
              .status == 200);
  CHECK(Json(Send(port, "POST", "/api/settings/notifications/slack/test", token).body)["delivered"]
            .GetBool());
  CHECK(Json(Send(port, "POST", "/api/settings/notifications/gotify/test", token).body)["delivered"]
            .GetBool());
  // The removed channels are gone.
  CHECK(ErrorCode(Send(port, "POST", "/api/settings/notifications/ntfy/test", token).body) ==
        "invalid_request");
}

TEST_CASE("pulse-cli notify test reports delivery and exits 1 when the receiver refuses",
          "[e2e][notifications][cli]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  REQUIRE(PutChannels(server.port(), token, WebhookChannel(receiver)).status == 200);
  const std::string url = absl::StrCat("http://127.0.0.1:", server.port());
  ::setenv("PULSE_API_TOKEN", token.c_str(), 1);
  const Captured ok = RunCommand({PULSE_CLI_BINARY, "--server", url, "notify", "test", "ops"});
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("delivered a test notification to ops (HTTP 200") != std::string::npos);
  REQUIRE(receiver.WaitFor(1, absl::Seconds(5)));
  CHECK(ok.out.find(receiver.Requests()[0].Header("X-Pulse-Idempotency-Key")) != std::string::npos);

  receiver.Script({500});
  const Captured refused =
      RunCommand({PULSE_CLI_BINARY, "--server", url, "--json", "notify", "test", "ops"});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK_FALSE(Json(refused.out)["delivered"].GetBool());
  CHECK(Json(refused.out)["http_status"].GetInt() == 500);
  CHECK(refused.err.find("notification_not_delivered") != std::string::npos);

  const Captured unknown =
      RunCommand({PULSE_CLI_BINARY, "--server", url, "notify", "test", "nope"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("invalid_request") != std::string::npos);
  const Captured usage = RunCommand({PULSE_CLI_BINARY, "--server", url, "notify", "test"});
  CHECK(usage.exit_code == 2);
  ::unsetenv("PULSE_API_TOKEN");
}

TEST_CASE("quiet hours hold notifications back without losing them, a send-test goes through",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  // A quiet window around now in UTC (at least 100 minutes either side).
  const absl::CivilMinute now = absl::ToCivilMinute(absl::Now(), absl::UTCTimeZone());
  const auto clock = [](absl::CivilMinute m) {
    return absl::StrFormat("%02d:%02d", m.hour(), m.minute());
  };
  const std::string quiet =
      absl::StrCat(R"(,"quiet_hours":{"start":")", clock(now - 100), R"(","end":")",
                   clock(now + 100), R"(","time_zone":"UTC"})");
  REQUIRE(PutChannels(port, token, WebhookChannel(receiver, quiet)).status == 200);
  const std::vector<std::string> created = RunPatrol(port, token);
  absl::SleepFor(absl::Seconds(2));
  CHECK(receiver.Requests().empty());
  CHECK(Settings(port, token)["outbox"]["pending"].GetInt64() ==
        static_cast<std::int64_t>(created.size()));
  // Send-test is an operator's explicit act: quiet hours do not hold it.
  CHECK(Json(Send(port, "POST", "/api/settings/notifications/ops/test", token).body)["delivered"]
            .GetBool());
  REQUIRE(receiver.WaitFor(1, absl::Seconds(5)));
}

TEST_CASE("a channel's rate limit holds the rest of a burst for the next minute",
          "[e2e][notifications]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  REQUIRE(PutChannels(port, token, WebhookChannel(receiver, R"(,"rate_per_minute":2)")).status ==
          200);
  const std::vector<std::string> created = RunPatrol(port, token);
  REQUIRE(created.size() >= 3);
  REQUIRE(receiver.WaitFor(2, absl::Seconds(5)));
  absl::SleepFor(absl::Seconds(2));
  CHECK(receiver.Requests().size() == 2);
  rapidjson::Document settings = Settings(port, token);
  CHECK(settings["outbox"]["pending"].GetInt64() == static_cast<std::int64_t>(created.size() - 2));
  CHECK(settings["outbox"]["dead"].GetInt64() == 0);
}

TEST_CASE("the notification settings refuse hostile input and change nothing",
          "[e2e][notifications][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kNotifyScopes, "operator");
  const std::string agent = MintToken(dir.path(), kNotifyScopes, "bot", "agent");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  NotificationReceiver receiver;
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  REQUIRE(PutChannels(port, token, WebhookChannel(receiver)).status == 200);
  const std::string before = core::ToJsonString(Settings(port, token)["channels"]);
  const std::string url = receiver.Url("/h");
  const auto channel = [&](const std::string& members) {
    return absl::StrCat(R"([{"name":"x","kind":"webhook","url":")", url, R"(")", members, "}]");
  };
  const std::vector<std::string> bad_bodies = {
      "",
      "not json",
      "[]",
      R"({"channels":{}})",
      R"({"channels":[],"extra":1})",
      R"({"channels":[],"channels":[]})",
      absl::StrCat(R"({"channels":)", channel(R"(,"kind":"webhook")"), "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"unknown":true)"), "}"),
      R"({"channels":[{"name":"x","kind":"smtp","url":"http://127.0.0.1:1/"}]})",
      R"({"channels":[{"name":"Bad Name","kind":"webhook","url":"http://127.0.0.1:1/"}]})",
      R"({"channels":[{"name":"../x","kind":"webhook","url":"http://127.0.0.1:1/"}]})",
      R"({"channels":[{"name":"x","kind":"webhook","url":"ftp://127.0.0.1/"}]})",
      R"({"channels":[{"name":"x","kind":"webhook","url":"http://u:p@127.0.0.1/"}]})",
      R"({"channels":[{"name":"x","kind":"webhook","url":"http://127.0.0.1/a?b=c"}]})",
      R"({"channels":[{"name":"x","kind":"webhook","url":"http://127.0.0.1/\r\nX: y"}]})",
      R"({"channels":[{"name":"x","kind":"webhook"}]})",
      R"({"channels":[{"name":"x","kind":"gotify","url":"http://127.0.0.1:1"}]})",
      absl::StrCat(R"({"channels":)", channel(R"(,"min_severity":"severe")"), "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"events":["finding.deleted"])"), "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"events":["test"])"), "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"events":["finding.created","finding.created"])"),
                   "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"rate_per_minute":0)"), "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"rate_per_minute":601)"), "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"quiet_hours":{"start":"24:00","end":"07:00"})"),
                   "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"quiet_hours":{"start":"+1:00","end":"07:00"})"),
                   "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"quiet_hours":{"start":"07:00","end":"07:00"})"),
                   "}"),
      absl::StrCat(
          R"({"channels":)",
          channel(R"(,"quiet_hours":{"start":"22:00","end":"07:00","time_zone":"Mars/Olympus"})"),
          "}"),
      absl::StrCat(
          R"({"channels":)",
          channel(
              R"(,"quiet_hours":{"start":"22:00","end":"07:00","time_zone":"../../etc/passwd"})"),
          "}"),
      absl::StrCat(R"({"channels":)", channel(R"(,"secret":"")"), "}"),
      absl::StrCat(R"({"channels":)",
                   channel(absl::StrCat(R"(,"secret":")", std::string(5000, 'k'), R"(")")), "}"),
      absl::StrCat(R"({"channels":[)",
                   R"({"name":"x","kind":"webhook","url":"http://127.0.0.1:1/"},)",
                   R"({"name":"x","kind":"webhook","url":"http://127.0.0.1:2/"}]})"),
  };
  for (const std::string& body : bad_bodies) {
    INFO(body);
    const Reply reply = Send(port, "PUT", "/api/settings/notifications", token, body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_request");
  }
  // 33 channels: over the bound.
  std::string many = "[";
  for (int i = 0; i < 33; ++i) {
    absl::StrAppend(&many, i == 0 ? "" : ",", R"({"name":"c)", i,
                    R"(","kind":"webhook","url":"http://127.0.0.1:1/"})");
  }
  many += "]";
  CHECK(ErrorCode(PutChannels(port, token, many).body) == "invalid_request");
  // Oversized: a body announced over the limit is refused from its headers, unread.
  const std::string huge =
      Raw(port,
          "PUT /api/settings/notifications HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
          "X-API-Token: " +
              token + "\r\nContent-Type: application/json\r\nContent-Length: 4194304\r\n\r\n");
  CHECK(huge.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(huge.find("\"error\":\"request_too_large\"") != std::string::npos);
  // Not a human, or no scope.
  CHECK(ErrorCode(PutChannels(port, agent, "[]").body) == "human_token_required");
  CHECK(ErrorCode(Send(port, "GET", "/api/settings/notifications", agent).body) ==
        "human_token_required");
  CHECK(ErrorCode(Send(port, "POST", "/api/settings/notifications/ops/test", agent).body) ==
        "human_token_required");
  CHECK(ErrorCode(PutChannels(port, reader, "[]").body) == "missing_scope");
  const Reply anonymous = Send(port, "GET", "/api/settings/notifications");
  CHECK(anonymous.status == 401);
  CHECK(ErrorCode(anonymous.body) == "unauthorized");
  // Test of a channel that does not exist, or a hostile name.
  for (const std::string name : {"nope", "..%2F..", "%00", "a%0D%0AX:%20y"}) {
    const Reply test = Send(port, "POST", "/api/settings/notifications/" + name + "/test", token);
    INFO(name << " " << test.body);
    CHECK(test.status == 400);
    CHECK(ErrorCode(test.body) == "invalid_request");
  }
  // Nothing changed, nothing was sent.
  CHECK(core::ToJsonString(Settings(port, token)["channels"]) == before);
  CHECK(receiver.Requests().empty());
}

}  // namespace
}  // namespace pulse::testing::e2e
